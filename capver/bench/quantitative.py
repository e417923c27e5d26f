"""Benchmark: quantitative model checking (Pmax / Pmin of F φ) on learned capability models, per engine.

Learns h∧ and h∨ of four agents (LAO* on First Responders with MCQS-S and on Blocksworld
with MCQS-E, the MiniGrid RL agent and the Crafter agent with MCQS-E; in memory, or read
from ``--runs DIR`` when it holds ``capver learn`` runs named by setting), then checks
Pmax and Pmin of ``F φ`` from the setting's initial state with every checker of
``capver verify --engine`` — explicit, sparse, storm, storm-float and auto — each check
in a fresh forked process (so that every time includes building the model, as one
``capver verify`` call does) with a timeout.  Per check it records the wall time, the
machine's 1-minute load average when the check started, the value and its precision
guarantee, and where the time went: for Storm the PRISM export, Storm's parse and build
and its solver; for the sparse engine its build, the float solution and the exactness
step.  Values of exact engines must be equal, storm-float's within its bound.

Writes ``table.md`` and ``checks.csv`` to ``--out`` (docs/bench/quantitative/ for the
recorded run).  Target: Pmax / Pmin on h∧ within seconds for every setting, and the
exact Pmax of First Responders' h∧ within 5 s under load."""

from __future__ import annotations

import csv
import multiprocessing as mp
import os
import platform
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from fractions import Fraction
from multiprocessing.connection import Connection
from pathlib import Path

from capver.bench.cli import BenchParser, summary
from capver.commands.argtypes import non_negative, positive, seconds

TARGET_SECONDS = 5.0


@dataclass(frozen=True, slots=True)
class QuantitativeSetting:
    """One learned setting: how ``capver learn`` makes it and the goal φ checked."""

    key: str
    agent: str
    domain: str | None
    method: str
    steps: int
    goal: str


SETTINGS: dict[str, QuantitativeSetting] = {
    "first_responders": QuantitativeSetting(
        "first_responders", "lao", "first_responders", "mcqs-s", 1500, "victim-healthy(z1) & victim-at(z1,l2)"
    ),
    "blocks": QuantitativeSetting("blocks", "lao", "blocks", "mcqs-e", 2000, "on(a,b) & on(b,c)"),
    "minigrid": QuantitativeSetting("minigrid", "minigrid-rl", None, "mcqs-e", 5000, "in_room(agent,se)"),
    "crafter": QuantitativeSetting("crafter", "crafter", None, "mcqs-e", 3000, "has_wood_pickaxe"),
}
ENGINES = ("explicit", "sparse", "storm", "storm-float", "auto")
QUICK = {"settings": ["first_responders"], "steps": 200, "models": "and", "timeout": 60.0}


@dataclass(frozen=True, slots=True)
class Check:
    """One timed check (a row of checks.csv)."""

    setting: str
    model: str  # "h∧" or "h∨"
    query: str  # "Pmax" or "Pmin"
    engine: str  # the --engine asked for
    answered_by: str  # the engine that answered (auto's choice)
    seconds: float | None  # None: timed out or failed
    load: float  # 1-minute load average when the check started
    value: str  # the exact fraction, or the float's repr; "" when none
    guarantee: str
    states: int | None
    transitions: int | None
    breakdown: str  # where the time went
    error: str = ""


def build_parser() -> BenchParser:
    p = BenchParser("quantitative", summary(__doc__))
    p.add_argument(
        "--settings",
        nargs="+",
        choices=tuple(SETTINGS),
        default=list(SETTINGS),
        help=f"the learned settings (default: {' '.join(SETTINGS)})",
    )
    p.add_argument(
        "--steps",
        type=positive,
        default=None,
        help="simulator steps of every learned run (default: each setting's own: "
        + ", ".join(f"{k} {s.steps}" for k, s in SETTINGS.items())
        + ")",
    )
    p.add_argument(
        "--models",
        choices=("and", "or", "both"),
        default="both",
        help="which models of each run are checked: h∧, h∨ or both (default: both)",
    )
    p.add_argument(
        "--engines",
        nargs="+",
        choices=ENGINES,
        default=list(ENGINES),
        help=f"the checkers timed (default: {' '.join(ENGINES)})",
    )
    p.add_argument(
        "--timeout", type=seconds, default=120.0, help="seconds one check may take before it is stopped (default 120)"
    )
    p.add_argument("--seed", type=non_negative, default=0, help="seed of the learned runs (default 0)")
    p.add_argument(
        "--runs",
        type=Path,
        default=None,
        help="a directory of capver learn runs named by setting (e.g. RUNS/first_responders) to read "
        "instead of learning (default: learn in memory)",
    )
    p.add_argument("--out", type=Path, default=None, help="directory for table.md and checks.csv (default: print only)")
    p.add_quick(QUICK, "a smoke run: First Responders' h∧ after 200 steps")
    return p


# -- one check, in a forked child ---------------------------------------------------------


def _check(model: object, init: int, text: str, engine: str, conn: Connection) -> None:
    """Child: check ``text`` with a fresh ``engine`` and send what was measured."""
    from capver.engines.verification import checkers, quantitative
    from capver.engines.verification.checkers import AutoChecker, StormChecker
    from capver.engines.verification.sparse import SparseChecker
    from capver.io.properties_text import parse_property
    from capver.model.capability_model import CompoundModel

    assert isinstance(model, CompoundModel)
    try:
        prop = parse_property(text, model.vocabulary, tuple(model))
        checker = checkers.make(engine)
        start = time.perf_counter()
        r = quantitative.check(prop, model, init, checker)
        seconds = time.perf_counter() - start
        states = transitions = None
        breakdown = ""
        inner = checker.sparse if isinstance(checker, AutoChecker) and r.engine == "sparse" else checker
        if isinstance(inner, SparseChecker):
            mdp = inner.built(model, init)
            states, transitions = len(mdp), mdp.nr_transitions
            sol = inner.last
            if sol is not None:
                breakdown = (
                    f"build {mdp.build_seconds:.2f} s, float {sol.float_seconds:.2f} s, exact "
                    f"{sol.exact_seconds:.2f} s ({sol.method})"
                )
        elif isinstance(checker, StormChecker):
            _, sm = checker.built(model, init)
            states, transitions = sm.nr_states, sm.nr_transitions
            t0 = time.perf_counter()
            from capver.engines.verification.prism import export_prism

            export_prism(model, init)  # timed again: the checker does not keep its export time
            breakdown = (
                f"export {time.perf_counter() - t0:.2f} s, parse+build {sm.build_seconds:.2f} s, "
                f"solve {sm.check_seconds:.2f} s"
            )
        elif r.engine == "explicit":
            from capver.engines.verification import explicit

            mdp_e = explicit.explore(model, init)
            states, transitions = len(mdp_e), mdp_e.nr_transitions
        assert r.value is not None  # a model's value was asked for
        value = str(r.value) if isinstance(r.value, Fraction) else repr(float(r.value))
        conn.send(("ok", seconds, r.engine, value, r.guarantee, states, transitions, breakdown))
    except Exception as exc:  # noqa: BLE001  # reported in the table: one failing engine must not end the run
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
    finally:
        conn.close()


def timed_check(model: object, init: int, text: str, engine: str, timeout: float) -> tuple[object, ...]:
    """Run :func:`_check` in a forked process; ``("timeout",)`` when it runs out."""
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_check, args=(model, init, text, engine, child), daemon=True)
    proc.start()
    child.close()
    ready = parent.poll(timeout)
    out: tuple[object, ...] = parent.recv() if ready else ("timeout",)
    if proc.is_alive():
        proc.kill()
    proc.join()
    parent.close()
    return out


# -- the run --------------------------------------------------------------------------------


def _models(
    spec: QuantitativeSetting, steps: int | None, seed: int, runs: Path | None
) -> tuple[dict[str, object], int, str]:
    """(h∧ and h∨, the initial state, how they were obtained)."""
    if runs is not None:
        from capver.io.run_dir import Run

        d = runs / spec.key
        run = Run.open(d)
        first, second = run.parsed("and"), run.parsed("or")
        init, _ = first.initial_state("")
        return {"and": first.model, "or": second.model}, init, f"read from {d}"
    from capver.api import learn, load_setting
    from capver.io import dsl

    options = {"domain": spec.domain} if spec.domain else {}
    a = load_setting(spec.agent, seed=seed, **options)
    n = steps if steps is not None else spec.steps
    t0 = time.perf_counter()
    result = learn(a, method=spec.method, max_steps=n, seed=seed)
    init = a.setting.alpha(a.setting.initial_states[0])
    learned = time.perf_counter() - t0
    # Written and read back, as capver learn and capver verify do: the learned objects
    # carry the caches learning filled, which would flatter the engines that use them.
    first = dsl.parse(dsl.emit(result.h_and, name="pessimistic", init=init))
    second = dsl.parse(dsl.emit(result.h_or, name="optimistic", init=init), ctx=first.ctx)
    return (
        {"and": first.model, "or": second.model},
        init,
        f"{spec.method} {n} steps, seed {seed}, learned in {learned:.0f} s",
    )


def _agree(rows: list[Check]) -> list[str]:
    """Disagreements between the engines' values for one query."""
    exact = {c.value for c in rows if c.seconds is not None and c.guarantee.startswith("exact")}
    bad = []
    if len(exact) > 1:
        bad.append(f"exact values differ: {sorted(exact)}")
    if exact:
        want = float(Fraction(next(iter(exact))))
        for c in rows:
            if c.seconds is not None and c.engine == "storm-float" and abs(float(c.value) - want) > 1e-9:
                bad.append(f"storm-float {c.value} vs exact {want}")
    return bad


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse(argv)
    from capver.engines.verification import storm

    engines = [e for e in args.engines if not e.startswith("storm") or storm.available()]
    checks: list[Check] = []
    notes: list[str] = []
    problems: list[str] = []
    for key in args.settings:
        spec = SETTINGS[key]
        models, init, how = _models(spec, args.steps, args.seed, args.runs)
        notes.append(f"{key}: {how}; φ = {spec.goal}")
        print(f"{key}: {how}", flush=True)
        for kind in ("and", "or") if args.models == "both" else (args.models,):
            label = "h∧" if kind == "and" else "h∨"
            timed_out: set[str] = set()
            for query in ("Pmax", "Pmin"):
                text = f"{query}=? [ F {spec.goal} ]"
                rows = []
                for engine in engines:
                    load = os.getloadavg()[0]
                    if engine in timed_out:
                        rows.append(
                            Check(
                                key,
                                label,
                                query,
                                engine,
                                "",
                                None,
                                load,
                                "",
                                "",
                                None,
                                None,
                                "",
                                "skipped: Pmax ran out of time or states",
                            )
                        )
                        continue
                    out = timed_check(models[kind], init, text, engine, args.timeout)
                    if out[0] == "ok":
                        _, s, by, value, guarantee, states, transitions, breakdown = out
                        assert isinstance(s, float)
                        row = Check(
                            key,
                            label,
                            query,
                            engine,
                            str(by),
                            s,
                            load,
                            str(value),
                            str(guarantee),
                            states if isinstance(states, int) else None,
                            transitions if isinstance(transitions, int) else None,
                            str(breakdown),
                        )
                    else:
                        # Pmin builds the same MDP: after a timeout or the state limit it would fail alike.
                        timed_out.add(engine)
                        err = f"timed out after {args.timeout:g} s" if out[0] == "timeout" else str(out[1])
                        row = Check(key, label, query, engine, "", None, load, "", "", None, None, "", err)
                    rows.append(row)
                    shown = f"{row.seconds:7.2f} s" if row.seconds is not None else row.error
                    print(
                        f"  {label} {query} {engine:<12} {shown}  {row.value[:24]}  {row.guarantee}  "
                        f"{row.breakdown} (load {load:.1f})",
                        flush=True,
                    )
                problems += [f"{key} {label} {query}: {p}" for p in _agree(rows)]
                checks.extend(rows)
    ok = not problems
    for p in problems:
        print("DISAGREEMENT:", p)
    target = _target(checks)
    print(target)
    if args.out is not None:
        write(args.out, checks, notes, problems, target, list(argv) if argv is not None else sys.argv[3:])
    return 0 if ok else 1


def _target(checks: list[Check]) -> str:
    fr = [
        c
        for c in checks
        if c.setting == "first_responders"
        and c.model == "h∧"
        and c.query == "Pmax"
        and c.engine == "auto"
        and c.seconds is not None
    ]
    if not fr:
        return "target (exact Pmax on First Responders' h∧ ≤ 5 s): not measured in this run"
    c = fr[0]
    met = c.seconds is not None and c.seconds <= TARGET_SECONDS and c.guarantee.startswith("exact")
    return (
        f"target (exact Pmax on First Responders' h∧ ≤ {TARGET_SECONDS:g} s, --engine auto): "
        f"{c.seconds:.2f} s at load {c.load:.1f}, {c.guarantee}: {'met' if met else 'NOT met'}"
    )


def write(
    out: Path, checks: list[Check], notes: list[str], problems: list[str], target: str, argv: Sequence[str]
) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with (out / "checks.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(Check.__dataclass_fields__))
        w.writeheader()
        for c in checks:
            w.writerow(asdict(c))
    lines = [
        "# capver bench quantitative",
        "",
        (
            f"Machine: {os.cpu_count()} cores, {platform.python_implementation()} {platform.python_version()}; "
            "every check in a fresh forked process from the models as read from their files (its time includes "
            "building the MDP, as one capver verify call does); load = the 1-minute load average when the check "
            "started (the machine is shared)."
        ),
        "",
    ]
    lines += [f"* {n}" for n in notes]
    lines += ["", target, ""]
    if problems:
        lines += ["**Disagreements:**", *[f"* {p}" for p in problems], ""]
    else:
        lines += ["Every exact engine gave the same fraction for every query; storm-float was within 1e-9 of it.", ""]
    lines += [
        (
            "| setting | model | states | transitions | query | engine | answered by | seconds | load | value | "
            "guarantee | where the time went |"
        ),
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    sizes: dict[tuple[str, str], tuple[int | None, int | None]] = {}
    for c in checks:
        if c.states is not None:
            sizes[(c.setting, c.model)] = (c.states, c.transitions)
    for c in checks:
        st, tr = sizes.get((c.setting, c.model), (None, None))
        value = c.value if len(c.value) <= 24 else f"{float(Fraction(c.value)):.10g} ({len(c.value)} chars)"
        seconds = f"{c.seconds:.2f}" if c.seconds is not None else c.error
        lines.append(
            f"| {c.setting} | {c.model} | {st if st is not None else '—'} | "
            f"{tr if tr is not None else '—'} | {c.query} | {c.engine} | {c.answered_by or '—'} | "
            f"{seconds} | {c.load:.1f} | {value or '—'} | {c.guarantee or '—'} | {c.breakdown or '—'} |"
        )
    lines += ["", f"Command: `{' '.join(['capver bench quantitative', *argv])}`", ""]
    (out / "table.md").write_text("\n".join(lines), encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())

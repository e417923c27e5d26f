"""Benchmark: the Occam model h̃ beside the pessimistic model h∧
(section 3.1's lattice h∧ ⪯ h̃ ⪯ h∨; h̃ from :mod:`capver.engines.occam`).

Part 1 (size).  MCQS-S on each ``--size-settings`` entry at a short step budget:
median and maximum literals per rule (of the irredundant cover the DSL prints) for
h∧ and h̃, which minimiser held-out prediction chose, the seconds to build h̃ and
z3's verdicts and time for h∧ ⪯ h̃ ⪯ h∨.

Part 2 (QACE setting).  The primitive-action agent on First Responders, whose true
model is known: mean |P_true − P_h| over all true transitions from the reachable
states, over the applicable (s, c) pairs and over the tried ones, for h∧ and h̃,
after ``--points`` simulator interactions, per method (mean over seeds).  Learning
seconds exclude evaluation; h̃'s build time is reported beside them.

Part 3 (held-out accuracy).  A model-backed agent whose hidden true model is the
exact primitive model of a PPDDL domain: at every reachable (s, c) the learner never
tried, is the set of successors h̃ predicts the true one?  Compared with a
majority-class baseline (the effects of the capability's block with most tried
states) and with h∧ (which predicts nothing there); z3 checks h∧ ⪯ h̃ ⪯ h∨, i.e.
that h̃ never contradicts the data.

Run: ``capver bench occam [--quick] [--jobs 2] [--out DIR]``; writes ``table.md``.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from capver.bench.cli import BenchParser, summary
from capver.bench.learning.cli import _csv_list
from capver.bench.learning.settings import applicable_transitions, build_setting, parse_setting, true_transitions
from capver.bench.markdown import markdown_table, table_row
from capver.commands.argtypes import non_negative, positive
from capver.core.dataset import TransitionDataset
from capver.core.state import State
from capver.engines.evaluation import mean_abs_error
from capver.engines.executors import LocalExecutor
from capver.engines.learning import LearnConfig, Learner
from capver.engines.lifting import LIFT_SALT, lifted_occam_model, lifted_rule_sizes
from capver.engines.occam import rule_sizes, run_occam_model
from capver.engines.verification.relations import refines
from capver.model.capability_model import CompoundModel
from capver.model.lifted import LiftedOccam
from capver.model.occam import OccamModel
from capver.settings import Assessment, SettingError, model_assessment

SIZE_BUDGETS: dict[str, int] = {
    "lao:first_responders": 500,
    "lao:blocks": 500,
    "lao:tireworld": 300,
    "minigrid-rl": 1000,
    "primitive:first_responders": 250,
}
QACE_SETTING = "primitive:first_responders"
QACE_POINTS = (100, 250, 500, 1000)
HELDOUT_DOMAINS = ("first_responders", "tireworld")
QUICK: dict[str, object] = {
    "seeds": 1,
    "points": [20, 40],
    "size_budget": 40,
    "heldout_steps": 40,
    "qace_methods": ["mcqs-s", "random"],
}


def _config(method: str, max_steps: int) -> LearnConfig:
    return LearnConfig.from_options(
        method, executions=2, iterations=100, horizon=10, xi_cap=1e-5, patience=0, max_steps=max_steps
    )


def _learner(a: Assessment, method: str, seed: int, max_steps: int) -> Learner:
    rng = np.random.default_rng([seed, 1212])
    a.setting.sim.reset(int(rng.integers(2**31 - 1)))
    return Learner(a.ctx, a.setting, _config(method, max_steps), rng, grow=a.grow)


def _advance(lr: Learner, steps: int, clock: list[float]) -> None:
    """Query until ``steps`` simulator steps are spent (or 200 queries pass without
    one: every remaining query is of inapplicable actions); adds the time to clock."""
    t = time.perf_counter()
    idle = 0
    while lr.progress.steps < steps and idle < 200:
        before = lr.progress.steps
        lr.query()
        idle = idle + 1 if lr.progress.steps == before else 0
    clock[0] += time.perf_counter() - t


def _tilde(h_and: CompoundModel, seed: int) -> tuple[CompoundModel, float, dict[str, int]]:
    model, seconds, chosen, _ = _occam(h_and, seed)
    return model, seconds, chosen


def _occam(h_and: CompoundModel, seed: int) -> tuple[CompoundModel, float, dict[str, int], OccamModel]:
    t = time.perf_counter()
    occ = run_occam_model(h_and, seed)
    chosen: dict[str, int] = {}
    for c in occ.choices.values():
        if c.minimiser:
            chosen[c.minimiser] = chosen.get(c.minimiser, 0) + 1
    return occ.model, time.perf_counter() - t, chosen, occ


def _lifted(h_and: CompoundModel, data: TransitionDataset, seed: int, ground: OccamModel) -> tuple[LiftedOccam, float]:
    """The lifted h̃ from the ground one (as run_lifted_model, without building the
    ground h̃ twice) and the seconds the lifting took on top of it."""
    t = time.perf_counter()
    occ = lifted_occam_model(h_and, data, np.random.default_rng([seed, LIFT_SALT]), ground)
    return occ, time.perf_counter() - t


# ------------------------------------------------------------------------------ part 1
@dataclass(frozen=True, slots=True)
class SizeResult:
    setting: str
    seed: int
    steps: int
    rules: int
    and_median: float
    and_max: int
    tilde_median: float
    tilde_max: int
    chosen: dict[str, int]
    build_seconds: float
    z3_seconds: float
    proved: bool
    lifted_median: float = 0.0
    lifted_max: int = 0
    lifted_groundings: int = 0  # capabilities predicted by lifted rules
    capabilities: int = 0
    lifted_proved: bool = True


def run_size(setting: str, seed: int, budget: int) -> SizeResult:
    a = build_setting(setting)
    lr = _learner(a, "mcqs-s", seed, budget)
    _advance(lr, budget, [0.0])
    tilde, build, chosen, occ = _occam(lr.h_and, seed)
    t = time.perf_counter()
    proved = refines(lr.h_and, tilde).holds and refines(tilde, lr.h_or).holds
    z3 = time.perf_counter() - t
    lifted, _ = _lifted(lr.h_and, lr.data, seed, occ)
    lifted_proved = refines(lr.h_and, lifted.model).holds and refines(lifted.model, lr.h_or).holds
    sa, st, sl = rule_sizes(lr.h_and), rule_sizes(tilde), lifted_rule_sizes(lifted)
    return SizeResult(
        setting,
        seed,
        lr.progress.steps,
        len(sa),
        statistics.median(sa) if sa else 0,
        max(sa, default=0),
        statistics.median(st) if st else 0,
        max(st, default=0),
        chosen,
        build,
        z3,
        proved,
        statistics.median(sl) if sl else 0,
        max(sl, default=0),
        len(lifted.lifted_names),
        len(lr.h_and),
        lifted_proved,
    )


# ------------------------------------------------------------------------------ part 2
@dataclass(frozen=True, slots=True)
class QacePoint:
    method: str
    seed: int
    target: int
    steps: int
    executions: int
    learn_seconds: float
    tilde_seconds: float
    errors: dict[str, float]  # "and"/"tilde"/"lifted"/"unchecked" × "all"/"applicable"/"tried"
    lift_seconds: float = 0.0
    kept_ground: tuple[tuple[str, str], ...] = ()  # groundings that kept their ground rules, and why
    lifted_groundings: int = 0
    proved: bool | None = None  # z3: h∧ ⪯ lifted h̃ ⪯ h∨ (checked at the last point only)


def run_qace_points(method: str, seed: int, points: Sequence[int]) -> list[QacePoint]:
    a = build_setting(QACE_SETTING)
    truth = a.truth
    assert truth is not None
    transitions = true_transitions(a)
    applicable = applicable_transitions(truth, transitions)
    lr = _learner(a, method, seed, max(points))
    clock = [0.0]
    out = []
    for target in points:
        _advance(lr, target, clock)
        tilde, build, _, occ = _occam(lr.h_and, seed)
        lifted, lift = _lifted(lr.h_and, lr.data, seed, occ)
        tried = [t for t in transitions if lr.data.count_sc(t.s, t.c)]
        errors = {}
        for name, h in (
            ("and", lr.h_and),
            ("tilde", tilde),
            ("lifted", lifted.model),
            ("unchecked", lifted.unchecked()),
        ):
            errors[f"{name}/all"] = mean_abs_error(h, truth, transitions)
            errors[f"{name}/applicable"] = mean_abs_error(h, truth, applicable)
            errors[f"{name}/tried"] = mean_abs_error(h, truth, tried)
        proved = None
        if target == max(points):
            proved = refines(lr.h_and, lifted.model).holds and refines(lifted.model, lr.h_or).holds
        p = lr.progress
        out.append(
            QacePoint(
                method,
                seed,
                target,
                p.steps,
                p.executions,
                clock[0],
                build,
                errors,
                lift,
                tuple(sorted(lifted.kept_ground.items())),
                len(lifted.lifted_names),
                proved,
            )
        )
    return out


# ------------------------------------------------------------------------------ part 3
@dataclass(frozen=True, slots=True)
class HeldOut:
    domain: str
    method: str
    seed: int
    steps: int
    pairs: int  # untried reachable (s, c) pairs scored
    tilde: float
    majority: float
    h_and: float
    proved: bool
    lifted: float = 0.0
    lifted_proved: bool = True
    unchecked: float = 0.0


def _support(m: CompoundModel, s: State, c: str) -> frozenset[State]:
    return frozenset(m.distribution(s, c))


def run_heldout(domain: str, method: str, seed: int, steps: int) -> HeldOut:
    from capver.agents.primitive import true_primitive_model
    from capver.envs.ppddl import load_task
    from capver.logic.condition import LogicContext

    task = load_task(domain, "problem1")
    hidden = true_primitive_model(task, LogicContext(task.vocabulary))
    a = model_assessment(hidden, task.initial_state, f"model:{domain}")
    assert a.truth is not None and a.reachable is not None
    lr = _learner(a, method, seed, steps)
    _advance(lr, steps, [0.0])
    tilde, _, _, occ = _occam(lr.h_and, seed)
    proved = refines(lr.h_and, tilde).holds and refines(tilde, lr.h_or).holds
    lifted, _ = _lifted(lr.h_and, lr.data, seed, occ)
    unchecked = lifted.unchecked()
    lifted_proved = refines(lr.h_and, lifted.model).holds and refines(lifted.model, lr.h_or).holds
    right = {"tilde": 0, "majority": 0, "and": 0, "lifted": 0, "unchecked": 0}
    n = 0
    for c, m in lr.h_and.items():
        tried = set(lr.data.states_of(c))
        # The majority class: the effects of the block with most tried states.
        top = max(m.rules, key=lambda r: len(r.condition.states), default=None)
        for s in sorted(a.reachable):
            if s in tried:
                continue
            n += 1
            want = _support(a.truth, s, c)
            right["tilde"] += _support(tilde, s, c) == want
            right["lifted"] += _support(lifted.model, s, c) == want
            right["unchecked"] += _support(unchecked, s, c) == want
            right["and"] += _support(lr.h_and, s, c) == want
            guess = frozenset() if top is None else frozenset(eta.apply(s) for _, eta in top.effects)
            right["majority"] += guess == want
    share = {k: v / n if n else 0.0 for k, v in right.items()}
    return HeldOut(
        domain,
        method,
        seed,
        lr.progress.steps,
        n,
        share["tilde"],
        share["majority"],
        share["and"],
        proved,
        share["lifted"],
        lifted_proved,
        share["unchecked"],
    )


# ------------------------------------------------------------------------------ driver
def _call(_context: object, job: tuple[Callable[..., object], tuple[object, ...]]) -> object:
    fn, args = job
    return fn(*args)


def _run_all(
    jobs: list[tuple[Callable[..., object], tuple[object, ...]]], n_procs: int, log: Callable[[str], None]
) -> list[object]:
    """The jobs' results in order, on capver's local executor (in this process, or a
    pool of ``n_procs`` spawned processes); one progress line per finished job."""
    done = [0]

    def progress(i: int, _result: object) -> None:
        done[0] += 1
        log(f"[{done[0]}/{len(jobs)}] {jobs[i][0].__name__}{jobs[i][1]}")

    with LocalExecutor(max(1, n_procs)) as executor:
        return executor.map(_call, jobs, on_result=progress)


def _mean(xs: Sequence[float]) -> float:
    return float(np.mean(xs)) if xs else float("nan")


def _verdict(flags: Sequence[bool | None]) -> str:
    checked = [f for f in flags if f is not None]
    return "—" if not checked else "proved" if all(checked) else "REFUTED"


def size_table(results: Sequence[SizeResult]) -> list[str]:
    head = [
        "setting",
        "seeds",
        "steps",
        "rules",
        "h∧ median lits",
        "h∧ max lits",
        "h̃ median lits",
        "h̃ max lits",
        "lifted h̃ median lits",
        "lifted h̃ max lits",
        "lifted groundings / capabilities",
        "minimisers chosen",
        "h̃ build s",
        "z3 s",
        "h∧ ⪯ h̃ ⪯ h∨",
        "h∧ ⪯ lifted h̃ ⪯ h∨",
    ]
    lines = markdown_table(head)
    for setting in dict.fromkeys(r.setting for r in results):
        rs = [r for r in results if r.setting == setting]
        chosen: dict[str, int] = {}
        for r in rs:
            for k, v in r.chosen.items():
                chosen[k] = chosen.get(k, 0) + v
        lines.append(
            table_row(
                [
                    setting,
                    str(len(rs)),
                    f"{_mean([r.steps for r in rs]):.0f}",
                    f"{_mean([r.rules for r in rs]):.0f}",
                    f"{_mean([r.and_median for r in rs]):.1f}",
                    str(max(r.and_max for r in rs)),
                    f"{_mean([r.tilde_median for r in rs]):.1f}",
                    str(max(r.tilde_max for r in rs)),
                    f"{_mean([r.lifted_median for r in rs]):.1f}",
                    str(max(r.lifted_max for r in rs)),
                    f"{_mean([r.lifted_groundings for r in rs]):.0f} / {_mean([r.capabilities for r in rs]):.0f}",
                    ", ".join(f"{k} {v}" for k, v in sorted(chosen.items())),
                    f"{_mean([r.build_seconds for r in rs]):.2f}",
                    f"{_mean([r.z3_seconds for r in rs]):.2f}",
                    _verdict([r.proved for r in rs]),
                    _verdict([r.lifted_proved for r in rs]),
                ]
            )
        )
    return lines


QACE_MODELS = (("and", "h∧"), ("tilde", "h̃"), ("lifted", "lifted h̃"), ("unchecked", "lifted, unchecked"))


def qace_table(points: Sequence[QacePoint]) -> list[str]:
    head = [
        "method",
        "interactions",
        "seeds",
        "steps",
        "executions",
        "learn s",
        "h̃ build s",
        "lifting s",
        "lifted groundings",
        "kept ground",
    ]
    head += [f"{label} {kind}" for kind in ("all", "applicable", "tried") for _, label in QACE_MODELS]
    head += ["h∧ ⪯ lifted h̃ ⪯ h∨"]
    lines = markdown_table(head)
    for method in dict.fromkeys(p.method for p in points):
        for target in dict.fromkeys(p.target for p in points):
            ps = [p for p in points if p.method == method and p.target == target]
            cells = [
                method,
                str(target),
                str(len(ps)),
                f"{_mean([p.steps for p in ps]):.0f}",
                f"{_mean([p.executions for p in ps]):.0f}",
                f"{_mean([p.learn_seconds for p in ps]):.1f}",
                f"{_mean([p.tilde_seconds for p in ps]):.2f}",
                f"{_mean([p.lift_seconds for p in ps]):.2f}",
                f"{_mean([p.lifted_groundings for p in ps]):.1f}",
                f"{_mean([len(p.kept_ground) for p in ps]):.1f}",
            ]
            for kind in ("all", "applicable", "tried"):
                for name, _ in QACE_MODELS:
                    cells.append(f"{_mean([p.errors[f'{name}/{kind}'] for p in ps]):.4f}")
            cells.append(_verdict([p.proved for p in ps]))
            lines.append(table_row(cells))
    return lines


def kept_lines(points: Sequence[QacePoint]) -> list[str]:
    """Which groundings kept their ground rules at each method's last point, and why."""
    lines = []
    for method in dict.fromkeys(p.method for p in points):
        last = max(p.target for p in points if p.method == method)
        for p in points:
            if p.method == method and p.target == last:
                lines.append(
                    f"- {method}, seed {p.seed}, {p.target} interactions: {len(p.kept_ground)} of "
                    f"{len(p.kept_ground) + p.lifted_groundings} pooled groundings keep ground rules where the lifted "
                    "ones contradict their data"
                )
                lines += [f"  - `{c}`: {why}" for c, why in p.kept_ground]
    return lines


def heldout_table(results: Sequence[HeldOut]) -> list[str]:
    head = [
        "hidden truth",
        "method",
        "seeds",
        "steps",
        "untried (s,c) scored",
        "h̃ right",
        "lifted h̃ right",
        "lifted, unchecked right",
        "majority right",
        "h∧ right",
        "h∧ ⪯ h̃ ⪯ h∨",
        "h∧ ⪯ lifted h̃ ⪯ h∨",
    ]
    lines = markdown_table(head)
    for key in dict.fromkeys((r.domain, r.method) for r in results):
        rs = [r for r in results if (r.domain, r.method) == key]
        lines.append(
            table_row(
                [
                    f"primitive {key[0]}",
                    key[1],
                    str(len(rs)),
                    f"{_mean([r.steps for r in rs]):.0f}",
                    f"{_mean([r.pairs for r in rs]):.0f}",
                    f"{_mean([r.tilde for r in rs]):.4f}",
                    f"{_mean([r.lifted for r in rs]):.4f}",
                    f"{_mean([r.unchecked for r in rs]):.4f}",
                    f"{_mean([r.majority for r in rs]):.4f}",
                    f"{_mean([r.h_and for r in rs]):.4f}",
                    _verdict([r.proved for r in rs]),
                    _verdict([r.lifted_proved for r in rs]),
                ]
            )
        )
    return lines


def build_parser() -> BenchParser:
    p = BenchParser("occam", summary(__doc__))
    p.add_argument("--seeds", type=positive, default=2, help="runs per setting and method (default 2)")
    p.add_argument(
        "--size-settings",
        type=_csv_list,
        default=list(SIZE_BUDGETS),
        help=f"settings of part 1 (default {','.join(SIZE_BUDGETS)})",
    )
    p.add_argument(
        "--size-budget",
        type=non_negative,
        default=0,
        help=f"step budget of every part-1 run (default 0: per setting, {SIZE_BUDGETS})",
    )
    p.add_argument(
        "--points",
        type=lambda s: [positive(x) for x in _csv_list(s)],
        default=list(QACE_POINTS),
        help=f"interactions at which part 2 scores (default {','.join(map(str, QACE_POINTS))})",
    )
    p.add_argument(
        "--qace-methods",
        type=_csv_list,
        default=["mcqs-s", "mcqs-e", "random"],
        help="methods of part 2 (default mcqs-s,mcqs-e,random)",
    )
    p.add_argument(
        "--heldout-domains",
        type=_csv_list,
        default=list(HELDOUT_DOMAINS),
        help=f"PPDDL domains whose primitive model is part 3's hidden truth (default {','.join(HELDOUT_DOMAINS)})",
    )
    p.add_argument("--heldout-steps", type=positive, default=250, help="step budget of part 3 (default 250)")
    p.add_argument("--jobs", type=positive, default=2, help="worker processes (default 2; 1: no pool)")
    p.add_argument("--out", type=Path, default=Path("bench-occam"), help="output directory (default bench-occam)")
    p.add_quick(QUICK, "a smoke run: tiny budgets, one seed")
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse(argv)
    if not args.points:  # "--points ," passes the type: it has no entry to check
        parser.error("--points: expected at least one positive integer")
    for s in args.size_settings:
        try:
            parse_setting(s)
        except SettingError as exc:
            parser.error(f"--size-settings: {exc}")

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    start = time.perf_counter()
    jobs: list[tuple[Callable[..., object], tuple[object, ...]]] = []
    for method in args.qace_methods:
        for seed in range(args.seeds):
            jobs.append((run_qace_points, (method, seed, tuple(sorted(args.points)))))
    for setting in args.size_settings:
        for seed in range(args.seeds):
            jobs.append((run_size, (setting, seed, args.size_budget or SIZE_BUDGETS.get(setting, 500))))
    for domain in args.heldout_domains:
        for method in ("mcqs-s", "random"):
            for seed in range(args.seeds):
                jobs.append((run_heldout, (domain, method, seed, args.heldout_steps)))
    results = _run_all(jobs, args.jobs, log)
    qace = [p for r in results if isinstance(r, list) for p in r]
    sizes = [r for r in results if isinstance(r, SizeResult)]
    held = [r for r in results if isinstance(r, HeldOut)]
    lines = [
        "# capver bench occam",
        "",
        "## Condition size (MCQS-S; literals per rule of the printed irredundant cover)",
        "",
        *size_table(sizes),
        "",
        f"## QACE setting ({QACE_SETTING}): mean |P_true − P_h| over all true transitions, applicable and tried pairs",
        "",
        *qace_table(qace),
        "",
        (
            "Lifted h̃: h̃'s conditions learned on the pooled observations of every grounding of a schema; "
            '"lifted, unchecked" grounds the lifted rules for every grounding, also where they contradict its data '
            "(outside h∨: never written or certified). Groundings whose data the lifted rules contradict, and why "
            "(they keep ground rules there and use the lifted rules restricted to their observed effects elsewhere):"
        ),
        "",
        *kept_lines(qace),
        "",
        "## Held-out accuracy at untried reachable (s, c) (successor set right), model-backed agent",
        "",
        *heldout_table(held),
        "",
        f"Total wall-clock {time.perf_counter() - start:.0f} s with {args.jobs} process(es).",
    ]
    text = "\n".join(lines) + "\n"
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "table.md").write_text(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: qualitative model checking at the scale of the paper's agents
(``capver bench verify --scale``): every engine on h∧ and h∨ learned by MCQS from the
agents of section 4 (First Responders and Blocksworld with LAO*, the MiniGrid RL
agent, Crafter, the Overcooked-like kitchen), after short and long runs, with time
and peak memory per check.

**Runs.**  Each setting is learned once per run length (``--lengths``, default 300
and 3,000 simulator steps) with the faster of MCQS-E and MCQS-S on it
(:data:`SETTINGS`: MCQS-E for the LAO* agents, MCQS-S for the others; measured in
docs/bench/learning and docs/bench/crafter, docs/bench/overcooked), patience off so
that the run spends its budget, through :func:`capver.api.learn`, and kept under
``--out``/runs (``h_and.capm``, ``h_or.capm`` with the initial state the properties
are about, ``dataset.jsonl`` and ``learned.json``), so that a re-run checks the same
models without learning again; a run directory this benchmark did not write is never
touched.

**Properties.**  Per setting a fixed list (:data:`SETTINGS`) of the safety queries
every engine answers: ``A [ G φ ]``, ``E [ F φ ]`` and their bounded forms
``A [ G<=k φ ]``, ``E [ F<=k φ ]`` (section 2's qualitative reading of h†: s → s′ when
Pr_h(s′ | s, c) > 0), chosen so that some hold and some fail on each model.

**Checks.**  Each (model, property, engine) is one child process (a fresh
interpreter: no engine's caches help another, and a check over ``--timeout`` is
killed), timed from the engine's construction on the model read from its file to the
verdict (the read is timed apart), with the child's peak resident set size from
``os.wait4`` (``ru_maxrss``, which includes the interpreter and the model: the
baseline after the read is recorded too).  Engines (:data:`ENGINES`): ``bdd``
(:class:`~capver.engines.verification.symbolic.SymbolicEngine`, its default forward
onion rings), ``ic3`` (:class:`~capver.engines.verification.ic3.IC3Engine` on z3's
Spacer, invariants re-checked by plain z3), ``abc``
(:class:`~capver.engines.verification.abc_pdr.ABCEngine`, ABC's ``pdr`` on an AIGER
encoding, when Debian's ``yosys-abc`` is installed; the unbounded properties only)
and ``bmc``
(:class:`~capver.engines.verification.bmc.BoundedModelChecker` up to ``--bmc-bound``
steps: exact for a bounded property or when it finds a run, otherwise a verdict
about runs of at most that length, marked ``≤k``), and ``auto``, ``capver verify``'s
own choice (the portfolio of :data:`AUTO_MODULE`: the BDD engine first, IC3 or BMC
beside it in a forked worker once the BDD's rings grow or it is slow; the workers
are reaped by the check, so its ``ru_maxrss`` is the largest of its processes) when
capver has it.  ``--add`` keeps the recorded checks and adds those of another
engine; ``--replot`` rewrites the outputs from ``checks.csv``.  Exact verdicts of different
engines that differ are errors (``DISAGREE`` in the table, exit status 1), and so is a
pair of verdicts against the lattice (Theorem 1: h∧ ⪯ h∨, so ``E [ F φ ]`` on h∧
implies it on h∨ and ``A [ G φ ]`` on h∨ implies it on h∧).

**Lattice verdict.**  What ``capver verify RUN`` says about the agent from the two
verdicts (:mod:`capver.engines.verification.agent_verdict`): holds / violated
*observed* when h∧ witnesses ``E F`` or refutes ``A G``; *on h∨* when h∨ refutes
``E F`` or proves ``A G`` (confident or unconfirmed: the tier needs the data's
frontier, not timed here); *unknown* when h∧ and h∨ disagree.

**Targets** (:data:`TARGET_SECONDS`): every qualitative verdict on every setting in
at most 10 s on the 2-core machine, Crafter after 3,000 steps included.  The table
says, per engine, how many checks it decided exactly within the target, and whether
the fastest engine of each check did (the choice an ``auto`` engine would have to
make).

Writes ``table.md``, ``checks.csv`` (one row per check) and ``time.png`` (seconds
and peak RSS against run length, one line per engine: the slowest check of each
setting) into ``--out``, after every run so that a long benchmark keeps what it has.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from capver.bench.cli import BenchParser, summary
from capver.bench.markdown import markdown_table, table_row
from capver.commands.argtypes import non_negative, positive, seconds
from capver.errors import UsageError
from capver.model import kinds
from capver.model.kinds import ModelKind

TARGET_SECONDS = 10.0
ENGINES = ("bdd", "ic3", "abc", "bmc", "auto")
# ``auto``: capver verify's own choice (capver.engines.verification.qualitative), in
# the table when that module is there.
AUTO_MODULE = "capver.engines.verification.qualitative"
MODELS = tuple(k.python for k in kinds.BOUNDS)
MODEL_LABEL = {k.python: k.symbol for k in kinds.BOUNDS}
DEFAULT_LENGTHS = (300, 3000)
MANIFEST = "bench-verify-scale.json"  # the files this benchmark wrote into --out
RUN_MARKER = "learned.json"  # the last file of a cached run: present = complete
CSV_NAME, TABLE_NAME, PLOT_NAME = "checks.csv", "table.md", "time.png"
# The child's command: this module's measure_child, without importing the learning
# machinery (capver.api) into the measured process.
CHILD = "import sys; from capver.bench.verify_scale import measure_child; measure_child(sys.argv[1], sys.argv[2])"
# Seconds the parent waits beyond --timeout before killing a child: the interpreter's
# start and the model's read are not part of the timed check.
GRACE = 20.0


@dataclass(frozen=True, slots=True)
class ScaleSetting:
    """One setting: how ``capver.api.load_setting`` builds it, the faster MCQS
    variant on it, the initial state its properties are about ("" = α of the
    setting's first initial state) and the properties, in the ``.props`` language."""

    key: str
    label: str
    agent: str
    options: tuple[tuple[str, str], ...]
    method: str
    init: str
    properties: str


SETTINGS: dict[str, ScaleSetting] = {
    s.key: s
    for s in (
        # problem1: fires at l1 and l2; z1 hurt and z2 dying at l2 (the hospital and the
        # medical unit are there); the fire unit at l1.
        ScaleSetting(
            "lao:first_responders",
            "First Responders (LAO*)",
            "lao",
            (("domain", "first_responders"),),
            "mcqs-e",
            "",
            """
        "never both dying": A [ G !(victim-dying(z1) & victim-dying(z2)) ];
        "the hospital stays": A [ G hospital(l2) ];
        "z1 never dying": A [ G !victim-dying(z1) ];
        "heals z1": E [ F victim-healthy(z1) ];
        "puts out both fires": E [ F nfire(l1) & nfire(l2) ];
        "heals z1 within 3": E [ F<=3 victim-healthy(z1) ];
        "z1 not dying within 3": A [ G<=3 !victim-dying(z1) ];
    """,
        ),
        # problem1: four blocks on the table, the hand empty.
        ScaleSetting(
            "lao:blocks",
            "Blocksworld (LAO*)",
            "lao",
            (("domain", "blocks"),),
            "mcqs-e",
            "",
            """
        "never holds two blocks": A [ G !(holding(a) & holding(b)) ];
        "hand empty or full, not both": A [ G !(handempty(robot) & handfull(robot)) ];
        "no block on itself": A [ G !on(a,a) ];
        "stacks a on b": E [ F on(a,b) ];
        "builds the goal tower": E [ F on(d,c) & on(c,b) & on(b,a) ];
        "holds a within 2": E [ F<=2 holding(a) ];
        "no three-block tower within 3": A [ G<=3 !(on(a,b) & on(b,c)) ];
    """,
        ),
        # The layout where the RL agent acts (at most of the 20 start layouts it stops at
        # once): the agent and the key in the north-west room, the east door locked.
        ScaleSetting(
            "minigrid-rl",
            "MiniGrid (tabular RL)",
            "minigrid-rl",
            (),
            "mcqs-s",
            "open(door_s) closed(door_n) closed(door_w) locked(door_e) in_room(agent,nw) in_room(key,nw)",
            """
        "no door open and locked": A [ G !(open(door_n) & locked(door_n)) & !(open(door_e) & locked(door_e)) ];
        "the east door stays locked": A [ G locked(door_e) ];
        "fetches the key": E [ F holding(key) ];
        "reaches the north-east room": E [ F in_room(agent,ne) ];
        "key within 2": E [ F<=2 holding(key) ];
        "not in the north-east room within 2": A [ G<=2 !in_room(agent,ne) ];
    """,
        ),
        # The world's start: near a tree and a cow, daylight, every stat high.
        ScaleSetting(
            "crafter",
            "Crafter",
            "crafter",
            (),
            "mcqs-s",
            "",
            """
        "never a diamond": A [ G !has_diamond ];
        "never an iron pickaxe": A [ G !has_iron_pickaxe ];
        "never dies": A [ G !dead ];
        "collects wood": E [ F has_wood ];
        "makes a stone pickaxe": E [ F has_stone_pickaxe ];
        "wood within 2": E [ F<=2 has_wood ];
        "not dead within 3": A [ G<=3 !dead ];
    """,
        ),
        # cramped_room's first start: the teammate near the onions, the agent near the dishes.
        ScaleSetting(
            "overcooked",
            "Overcooked kitchen",
            "overcooked",
            (("domain", "cramped_room"),),
            "mcqs-s",
            "",
            """
        "never holds onion and dish": A [ G !(holding(me,onion) & holding(me,dish)) ];
        "never three soups served": A [ G !served(n3) ];
        "no soup on the counter": A [ G !on_counter(soup) ];
        "serves a soup": E [ F served(n1) ];
        "holds a soup": E [ F holding(me,soup) ];
        "an onion within 2": E [ F<=2 holding(me,onion) ];
        "no soup within 2": A [ G<=2 !holding(me,soup) ];
    """,
        ),
    )
}
DEFAULT_SETTINGS = tuple(SETTINGS)
QUICK_SETTING = "lao:first_responders"
QUICK_PROPERTIES = ("never both dying", "heals z1 within 3")
QUICK: dict[str, object] = {"settings": [QUICK_SETTING], "lengths": [40, 120], "timeout": 60.0, "jobs": 2}


# ------------------------------------------------------------------------------ runs
@dataclass(frozen=True, slots=True)
class LearnedRun:
    """A cached run: where it is and what ``learned.json`` says about it."""

    path: Path
    setting: str
    method: str
    steps: int  # the budget asked for
    steps_done: int
    queries: int
    learn_seconds: float
    seed: int
    atoms: int
    capabilities: int
    rules_and: int
    rules_or: int
    reused: bool = False


def run_dir(out: Path, setting: ScaleSetting, steps: int, seed: int) -> Path:
    slug = setting.key.replace(":", "-")
    return out / "runs" / f"{slug}-{setting.method}-{steps}-seed{seed}"


def learned_run(out: Path, setting: ScaleSetting, steps: int, seed: int, max_seconds: float | None) -> LearnedRun:
    """The run of ``setting`` after ``steps`` simulator steps: read from ``out`` when
    this benchmark learned it before, else learned now (:func:`capver.api.learn`) and
    written there.  A directory it did not write (no ``learned.json``) is refused
    unless empty."""
    path = run_dir(out, setting, steps, seed)
    marker = path / RUN_MARKER
    if marker.exists():
        meta = json.loads(marker.read_text(encoding="utf-8"))
        return LearnedRun(
            path=path,
            reused=True,
            **{f.name: meta[f.name] for f in fields(LearnedRun) if f.name not in ("path", "reused")},
        )
    if path.exists() and any(path.iterdir()):
        raise UsageError(
            f"--out: {path} exists and was not written by capver bench verify --scale "
            f"(no {RUN_MARKER}); remove it or choose another --out"
        )
    from capver.api import learn, load_setting
    from capver.io import dsl
    from capver.io.literal_text import parse_state

    a = load_setting(setting.agent, seed=seed, **dict(setting.options))
    st = a.setting
    vocab = a.ctx.vocab
    init = parse_state(setting.init, vocab, what="init") if setting.init else st.alpha(st.initial_states[0])
    start = time.perf_counter()
    r = learn(a, method=setting.method, max_steps=steps, max_seconds=max_seconds, patience=0, seed=seed)
    seconds = time.perf_counter() - start
    path.mkdir(parents=True, exist_ok=True)
    for kind, model in ((ModelKind.AND, r.h_and), (ModelKind.OR, r.h_or)):
        dsl.write(model, path / kind.file, name=kind.dsl, init=init)
    from capver.io.run_dir import DATASET, write_dataset

    write_dataset(path / DATASET, r.data)
    run = LearnedRun(
        path=path,
        setting=setting.key,
        method=setting.method,
        steps=steps,
        steps_done=r.progress.steps,
        queries=r.progress.queries,
        learn_seconds=round(seconds, 2),
        seed=seed,
        atoms=len(vocab),
        capabilities=len(r.h_and),
        rules_and=sum(len(m.rules) for m in r.h_and.values()),
        rules_or=sum(len(m.rules) for m in r.h_or.values()),
    )
    meta = {k: v for k, v in asdict(run).items() if k not in ("path", "reused")}
    # Written last: its presence says the run's files are complete.
    marker.write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    return run


# ------------------------------------------------------------------------------ one check
@dataclass(frozen=True, slots=True)
class Check:
    """One measured check (a row of ``checks.csv``).  ``status``: ``ok``, ``timeout``
    (killed, or Spacer's own time limit) or ``error``; ``exact``: the verdict is the
    property's (bmc: false when it searched only up to its bound and found no run)."""

    setting: str
    steps: int
    steps_done: int
    model: str
    name: str
    text: str
    kind: str
    engine: str
    status: str
    verdict: str
    exact: bool
    seconds: float
    read_seconds: float
    maxrss_mib: float
    read_rss_mib: float
    detail: str

    @property
    def decided(self) -> bool:
        return self.status == "ok" and self.exact


def _maxrss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def measure_child(spec_path: str, result_path: str) -> None:
    """In the child process: read the model, run one engine on one property, write
    a JSON result.  Only what the check needs is imported."""
    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    from capver.core.properties import ExistsPath, ForallPath
    from capver.engines.verification.abc_pdr import ABCEngine
    from capver.engines.verification.bmc import BoundedModelChecker
    from capver.engines.verification.ic3 import IC3Engine
    from capver.engines.verification.symbolic import SymbolicEngine
    from capver.errors import SolverError
    from capver.io import dsl
    from capver.io.properties_text import parse_properties

    start = time.perf_counter()
    parsed = dsl.read(spec["model"])
    model = parsed.model
    init = parsed.initial_state("")[0]
    (prop,) = parse_properties(spec["property"], model.vocabulary, tuple(model))
    read_s = time.perf_counter() - start
    read_rss = _maxrss_mib()
    engine = spec["engine"]
    status, exact, detail = "ok", True, ""
    start = time.perf_counter()
    try:
        if engine == "bdd":
            r = SymbolicEngine(model).check(prop, init)
            detail = f"{r.explored} states explored"
        elif engine in ("ic3", "abc"):
            build = IC3Engine if engine == "ic3" else ABCEngine
            r = build(model, timeout=spec["timeout"]).check(prop, init)
            inv = r.invariant
            detail = f"invariant of {inv.lemmas} lemmas, {inv.literals} literals" if inv is not None else ""
        elif engine == "bmc":
            query = prop.query
            assert isinstance(query, ExistsPath | ForallPath)  # the benchmark's properties are qualitative
            bound = query.path.bound
            r = BoundedModelChecker(model).check(prop, init, bound=spec["bmc_bound"])
            # Without a run within k, an unbounded property's verdict is about runs of
            # at most k steps only.
            exact = bound is not None or r.witness is not None
            detail = f"k={bound if bound is not None else spec['bmc_bound']}"
        elif engine == "auto":
            import importlib

            # Imported by name: capver verify's automatic choice may not be there.
            qualitative: Any = importlib.import_module(AUTO_MODULE)
            try:
                # Its workers are forked from this process and reaped by it, so the
                # child's ru_maxrss is the largest of them.
                with qualitative.Portfolio(
                    {"m": model}, [prop], engine=qualitative.AUTO, timeout=spec["timeout"]
                ) as portfolio:
                    r = portfolio.check("m", 0, init)
            except qualitative.CheckTimeout as exc:
                raise SolverError(str(exc)) from None
            detail = f"answered by {r.engine}"
        else:
            raise UsageError(f"engine {engine!r}: expected one of {', '.join(ENGINES)}")
        verdict = r.verdict
        if r.witness is not None:
            detail = (detail + "; " if detail else "") + f"run of {len(r.witness)} steps"
    except SolverError as exc:  # Spacer ran out of time
        status, verdict, exact, detail = "timeout", "", False, str(exc)
    seconds = time.perf_counter() - start
    Path(result_path).write_text(
        json.dumps(
            {
                "status": status,
                "verdict": verdict,
                "exact": exact,
                "seconds": seconds,
                "read_seconds": read_s,
                "read_rss_mib": read_rss,
                "detail": detail,
            }
        ),
        encoding="utf-8",
    )


@dataclass(frozen=True, slots=True)
class Task:
    """What the parent asks of one child."""

    run: LearnedRun
    model: str
    name: str
    text: str
    kind: str
    engine: str


# The launcher between the benchmark and each check: a bare interpreter (no capver
# imported) that starts the check, kills it after its time, and prints the check's
# rusage.  Linux counts the image a process had before exec into its ru_maxrss, and a
# child started straight from the benchmark's process starts as a copy of it (the
# learned runs, matplotlib): every check would show the benchmark's own peak.
LAUNCHER = """
import json, os, signal, sys, threading
argv, timeout = json.loads(sys.argv[1]), float(sys.argv[2])
devnull = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0), (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)]
pid = os.posix_spawn(sys.executable, [sys.executable, *argv], os.environ, file_actions=devnull)
lock, state = threading.Lock(), {"done": False, "killed": False}
def kill():
    with lock:  # never signal a pid that was already reaped
        if not state["done"]:
            state["killed"] = True
            os.kill(pid, signal.SIGKILL)
timer = threading.Timer(timeout, kill)
timer.start()
_, status, usage = os.wait4(pid, 0)
with lock:
    state["done"] = True
timer.cancel()
print(json.dumps({"maxrss_kib": usage.ru_maxrss, "exit": os.waitstatus_to_exitcode(status),
                  "killed": state["killed"]}))
"""


def run_child(task: Task, timeout: float, bmc_bound: int, grace: float = GRACE) -> Check:
    """One check in a fresh interpreter, killed ``grace`` s after ``timeout``, with
    its peak RSS (``ru_maxrss`` from ``os.wait4``, also for a killed check)."""
    with tempfile.TemporaryDirectory(prefix="capver-verify-scale-") as tmp:
        spec, result = Path(tmp, "spec.json"), Path(tmp, "result.json")
        spec.write_text(
            json.dumps(
                {
                    "model": str(task.run.path / f"{task.model}.capm"),
                    "property": f'"{task.name}": {task.text};',
                    "engine": task.engine,
                    "timeout": timeout,
                    "bmc_bound": bmc_bound,
                }
            ),
            encoding="utf-8",
        )
        start = time.perf_counter()
        launched = subprocess.run(
            [sys.executable, "-c", LAUNCHER, json.dumps(["-c", CHILD, str(spec), str(result)]), str(timeout + grace)],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            check=False,
        )
        wall = time.perf_counter() - start
        base: dict[str, Any] = {
            "setting": task.run.setting,
            "steps": task.run.steps,
            "steps_done": task.run.steps_done,
            "model": task.model,
            "name": task.name,
            "text": task.text,
            "kind": task.kind,
            "engine": task.engine,
        }
        try:
            usage = json.loads(launched.stdout)
        except json.JSONDecodeError:
            raise RuntimeError(f"the check's launcher failed: {launched.stderr.strip()}") from None
        base["maxrss_mib"] = round(usage["maxrss_kib"] / 1024, 1)
        if result.exists():
            r = json.loads(result.read_text(encoding="utf-8"))
            return Check(
                status=r["status"],
                verdict=r["verdict"],
                exact=r["exact"],
                seconds=round(r["seconds"], 4),
                read_seconds=round(r["read_seconds"], 3),
                read_rss_mib=round(r["read_rss_mib"], 1),
                detail=r["detail"],
                **base,
            )
        if usage["killed"]:
            return Check(
                status="timeout",
                verdict="",
                exact=False,
                seconds=round(wall, 2),
                read_seconds=math.nan,
                read_rss_mib=math.nan,
                detail=f"killed after {wall:.0f} s",
                **base,
            )
        tail = launched.stderr.strip().splitlines()[-1:] or [""]
        return Check(
            status="error",
            verdict="",
            exact=False,
            seconds=round(wall, 2),
            read_seconds=math.nan,
            read_rss_mib=math.nan,
            detail=f"exit status {usage['exit']}: {tail[0]}",
            **base,
        )


def property_kind(text: str) -> str:
    """``A G``, ``E F<=3``, … of a property's text (its operator and bound)."""
    body = text.split("[", 1)[1].split()
    quant = text.split("[", 1)[0].strip()
    op = body[0]
    return f"{quant} {op}"


def properties(setting: ScaleSetting, only: Sequence[str] | None = None) -> list[tuple[str, str]]:
    """The setting's (name, text) pairs, in order; ``only`` selects by name."""
    out = []
    for line in setting.properties.strip().splitlines():
        name, _, text = line.strip().partition(":")
        out.append((name.strip().strip('"'), text.strip().rstrip(";").strip()))
    if only is not None:
        known = {n for n, _ in out}
        missing = [n for n in only if n not in known]
        if missing:
            raise UsageError(f"properties {missing}: not properties of {setting.key}")
        out = [p for p in out if p[0] in only]
    return out


# ------------------------------------------------------------------------------ verdicts
@dataclass(frozen=True, slots=True)
class Row:
    """One (setting, length, property): every engine's check on h∧ and h∨, the
    agreed verdicts and the lattice verdict."""

    setting: str
    steps: int
    name: str
    text: str
    kind: str
    checks: tuple[Check, ...]

    def on(self, model: str, engine: str) -> Check | None:
        return next((c for c in self.checks if c.model == model and c.engine == engine), None)

    def verdict(self, model: str) -> str | None:
        """The exact verdict the engines agree on; None when none decided it, or
        ``DISAGREE``."""
        seen = {c.verdict for c in self.checks if c.model == model and c.decided}
        return None if not seen else seen.pop() if len(seen) == 1 else "DISAGREE"

    @property
    def existential(self) -> bool:
        return self.kind.startswith("E")

    @property
    def lattice(self) -> str:
        """``capver verify``'s verdict about the agent from h∧ and h∨
        (:mod:`capver.engines.verification.agent_verdict`); ``—`` when a needed
        verdict is missing, ``LATTICE ERROR`` when the two contradict h∧ ⪯ h∨."""
        v_and, v_or = self.verdict("h_and"), self.verdict("h_or")
        if "DISAGREE" in (v_and, v_or):
            return "DISAGREE"
        good = "holds" if self.existential else "fails"  # the verdict h∧ can observe
        if v_and is not None and v_or is not None and v_and == good and v_or != good:
            return "LATTICE ERROR"  # E F on h∧ but not on h∨, or A G on h∨ but not on h∧
        if v_and == good:
            return "holds (observed)" if self.existential else "violated (observed)"
        if v_or is not None and v_or != good:
            return "violated (on h∨)" if self.existential else "holds (on h∨)"
        if v_and is not None and v_or is not None:
            return "unknown"
        return "—"

    @property
    def errors(self) -> list[str]:
        out = []
        for model in MODELS:
            if self.verdict(model) == "DISAGREE":
                shown = ", ".join(f"{c.engine} {c.verdict}" for c in self.checks if c.model == model and c.decided)
                out.append(
                    f"{self.setting} {self.steps} {MODEL_LABEL[model]} {self.name!r}: engines disagree ({shown})"
                )
        if self.lattice == "LATTICE ERROR":
            out.append(
                f"{self.setting} {self.steps} {self.name!r}: h∧ {self.verdict('h_and')}, h∨ "
                f"{self.verdict('h_or')} contradicts h∧ ⪯ h∨"
            )
        return out


def rows_of(checks: Sequence[Check]) -> list[Row]:
    keys = list(dict.fromkeys((c.setting, c.steps, c.name) for c in checks))
    out = []
    for setting, steps, name in keys:
        mine = tuple(c for c in checks if (c.setting, c.steps, c.name) == (setting, steps, name))
        out.append(Row(setting, steps, name, mine[0].text, mine[0].kind, mine))
    return out


def fastest(checks: Iterable[Check]) -> Check | None:
    """The fastest check that decided its property exactly."""
    decided = [c for c in checks if c.decided]
    return min(decided, key=lambda c: c.seconds) if decided else None


# ------------------------------------------------------------------------------ outputs
def _cell(c: Check | None) -> str:
    if c is None:
        return ""
    if c.status == "timeout":
        return f"timeout ({c.seconds:.0f} s, {c.maxrss_mib:.0f} MiB)"
    if c.status == "error":
        return "error"
    shown = c.verdict if c.exact else f"{c.verdict}≤k"
    return f"{shown} {c.seconds:.2f} s, {c.maxrss_mib:.0f} MiB"


def target_summary(rows: Sequence[Row], engines: Sequence[str]) -> list[str]:
    """Lines that say, per engine and for the fastest engine of each check, how many
    checks were decided within :data:`TARGET_SECONDS`."""
    checks = [c for r in rows for c in r.checks]
    per_check: dict[tuple[str, int, str, str], list[Check]] = {}
    for c in checks:
        per_check.setdefault((c.setting, c.steps, c.model, c.name), []).append(c)
    n = len(per_check)
    lines = []
    for e in engines:
        mine = [c for c in checks if c.engine == e]
        ok = [c for c in mine if c.decided and c.seconds <= TARGET_SECONDS]
        worst = max((c.seconds for c in mine if c.decided), default=math.nan)
        answers = "" if len(mine) == n else f" ({len(mine)} it answers)"
        lines.append(
            f"- `{e}`: {len(ok)} of {n} checks{answers} decided exactly within {TARGET_SECONDS:.0f} s "
            f"(slowest decided: {worst:.2f} s; timeouts {sum(c.status == 'timeout' for c in mine)}, "
            f"errors {sum(c.status == 'error' for c in mine)}, bounded-only verdicts "
            f"{sum(c.status == 'ok' and not c.exact for c in mine)})"
        )
    best = [fastest(cs) for cs in per_check.values()]
    met = [b for b in best if b is not None and b.seconds <= TARGET_SECONDS]
    slow = sorted(
        (
            f"{k[0]} {k[1]} {MODEL_LABEL[k[2]]} {k[3]!r}"
            for k, b in zip(per_check, best, strict=True)
            if b is None or b.seconds > TARGET_SECONDS
        )
    )
    lines.append(
        f"- fastest engine per check: {len(met)} of {n} within {TARGET_SECONDS:.0f} s"
        + (f"; not within it: {'; '.join(slow)}" if slow else "")
    )
    verdicts = [r for r in rows if r.lattice not in ("—", "DISAGREE", "LATTICE ERROR")]
    within = [
        r
        for r in verdicts
        if all(
            (b := fastest(c for c in r.checks if c.model == m)) is not None and b.seconds <= TARGET_SECONDS
            for m in MODELS
        )
    ]
    lines.append(
        f"- lattice verdicts: {len(verdicts)} of {len(rows)} decided; {len(within)} with both h∧ and h∨ "
        f"decided within {TARGET_SECONDS:.0f} s each by the fastest engine"
    )
    return lines


def table(
    rows: Sequence[Row],
    runs: Sequence[LearnedRun],
    engines: Sequence[str],
    args: argparse.Namespace,
    load: str,
    wall: float,
) -> str:
    out = io.StringIO()
    w = out.write
    w("# capver bench verify --scale\n\n")
    w(
        f"Every check in a child process of its own, killed after --timeout {args.timeout:.0f} s (+{GRACE:.0f} s for "
        f"the interpreter and the model's read); seconds from the engine's construction on the model to the verdict; "
        f"MiB = the child's peak RSS (`ru_maxrss`, interpreter and model included). BMC searches up to "
        f"k = {args.bmc_bound}: `≤k` marks a verdict about runs of at most k steps only (no run found). "
        f"Load average at the start: {load}; wall-clock {wall:.0f} s.\n\n"
    )
    w("## Runs\n\n")
    lines = markdown_table(
        ["setting", "method", "budget", "steps", "queries", "learn s", "atoms", "capabilities", "rules h∧", "rules h∨"],
        (
            [
                run.setting,
                run.method,
                run.steps,
                run.steps_done,
                run.queries,
                f"{run.learn_seconds:.1f}{' (cached)' if run.reused else ''}",
                run.atoms,
                run.capabilities,
                run.rules_and,
                run.rules_or,
            ]
            for run in runs
        ),
    )
    w("".join(line + "\n" for line in lines))
    w(f"\n## Targets\n\nEvery qualitative verdict on every setting in ≤ {TARGET_SECONDS:.0f} s:\n\n")
    for line in target_summary(rows, engines):
        w(line + "\n")
    errors = [e for r in rows for e in r.errors]
    w(f"\nErrors (engines that disagree, verdicts against h∧ ⪯ h∨): {len(errors)}\n")
    for e in errors:
        w(f"- {e}\n")
    w(
        "\n## Slowest check per run\n\nPer setting and run length, each engine's slowest check over both models and "
        "every property (`>` a timeout: the kill time), and its largest peak RSS; `decided` counts the checks it "
        "decided exactly.\n\n"
    )
    w(
        "".join(
            line + "\n"
            for line in markdown_table(
                ["setting", "steps", *(f"{e} {what}" for e in engines for what in ("s", "MiB", "decided"))]
            )
        )
    )
    for key, n in dict.fromkeys((r.setting, r.steps) for r in rows):
        mine = [c for r in rows if (r.setting, r.steps) == (key, n) for c in r.checks]
        cells = [key, str(n)]
        for e in engines:
            cs = [c for c in mine if c.engine == e]
            if not cs:
                cells += ["", "", ""]
                continue
            worst = max(cs, key=lambda c: c.seconds)
            cells += [
                f"{'>' if worst.status == 'timeout' else ''}{worst.seconds:.2f}",
                f"{max(c.maxrss_mib for c in cs):.0f}",
                f"{sum(c.decided for c in cs)}/{len(cs)}",
            ]
        w(table_row(cells) + "\n")
    w("\n## Checks\n\n")
    head = ["setting", "steps", "property", "kind"] + [f"{e} {MODEL_LABEL[m]}" for m in MODELS for e in engines]
    w("".join(line + "\n" for line in markdown_table([*head, "h∧", "h∨", "lattice verdict"])))
    for r in rows:
        cells = [r.setting, str(r.steps), r.name, f"`{r.kind}`"]
        cells += [_cell(r.on(m, e)) for m in MODELS for e in engines]
        cells += [r.verdict(m) or "—" for m in MODELS] + [r.lattice]
        w(table_row(cells) + "\n")
    w("\n## Properties\n\n")
    for key in dict.fromkeys(r.setting for r in rows):
        s = SETTINGS[key]
        w(f"- {s.label} (`{key}`), from {'`' + s.init + '`' if s.init else 'the setting’s first initial state'}:\n")
        for name, text in properties(s):
            w(f"  - {name}: `{text}`\n")
    return out.getvalue()


def write_csv(checks: Sequence[Check], path: Path) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        wr = csv.writer(f)
        names = [x.name for x in fields(Check)]
        wr.writerow(names)
        for c in checks:
            wr.writerow([getattr(c, n) for n in names])


def read_csv(path: Path) -> list[Check]:
    """The checks of a ``checks.csv`` (the tests read the table's numbers back)."""
    types = {f.name: f.type for f in fields(Check)}
    out = []
    with path.open(newline="", encoding="utf-8") as f:
        for rec in csv.DictReader(f):
            values: dict[str, Any] = {}
            for k, v in rec.items():
                t = types[k]
                values[k] = int(v) if t == "int" else float(v) if t == "float" else v == "True" if t == "bool" else v
            out.append(Check(**values))
    return out


def plot(checks: Sequence[Check], engines: Sequence[str], timeout: float, path: Path) -> None:
    """Seconds and peak RSS against run length, one panel per setting and one line
    per engine: the slowest check (timeouts at the kill time, marked ×)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import NullLocator

    settings = list(dict.fromkeys(c.setting for c in checks))
    fig = Figure(figsize=(3.6 * len(settings) + 0.6, 6.4), tight_layout=True)
    FigureCanvasAgg(fig)
    for j, setting in enumerate(settings):
        top = fig.add_subplot(2, len(settings), j + 1)
        bottom = fig.add_subplot(2, len(settings), len(settings) + j + 1)
        mine = [c for c in checks if c.setting == setting]
        lengths = sorted({c.steps for c in mine})
        for e in engines:
            per = [[c for c in mine if c.engine == e and c.steps == n] for n in lengths]
            if not any(per):
                continue
            secs = [max((c.seconds for c in cs), default=math.nan) for cs in per]
            (line,) = top.plot(lengths, secs, marker="o", label=e)
            for n, cs in zip(lengths, per, strict=True):
                if any(c.status == "timeout" for c in cs):
                    top.plot([n], [max(c.seconds for c in cs)], marker="x", markersize=10, color=line.get_color())
            bottom.plot(
                lengths,
                [max((c.maxrss_mib for c in cs), default=math.nan) for cs in per],
                marker="o",
                label=e,
                color=line.get_color(),
            )
        top.axhline(TARGET_SECONDS, color="grey", linestyle="--", linewidth=0.8, label=f"{TARGET_SECONDS:.0f} s target")
        for ax in (top, bottom):
            ax.set_xscale("log")
            ax.xaxis.set_minor_locator(NullLocator())  # only the run lengths are labelled
            ax.set_xticks(lengths, [str(n) for n in lengths])
            ax.set_xlabel("run length (simulator steps)")
            ax.grid(True, alpha=0.3)
        top.set_yscale("log")
        top.set_title(SETTINGS[setting].label if setting in SETTINGS else setting, fontsize=10)
        top.set_ylabel("slowest check (s)")
        bottom.set_ylabel("peak RSS of a check (MiB)")
        top.legend(fontsize=7)
    fig.savefig(path, dpi=100)


def _check_writable(out: Path, names: Sequence[str]) -> dict[str, Any]:
    """The manifest of files this benchmark wrote into ``out``; refuses when one of
    ``names`` exists and is not in it."""
    manifest = out / MANIFEST
    mine: dict[str, Any] = json.loads(manifest.read_text(encoding="utf-8")) if manifest.exists() else {}
    written = set(mine.get("files", []))
    foreign = [n for n in names if (out / n).exists() and n not in written]
    if foreign:
        raise UsageError(
            f"--out: {out} has {', '.join(foreign)}, which capver bench verify --scale did not "
            "write; choose another --out"
        )
    return mine


def write_outputs(
    out: Path,
    checks: Sequence[Check],
    runs: Sequence[LearnedRun],
    engines: Sequence[str],
    args: argparse.Namespace,
    load: str,
    wall: float,
) -> str:
    rows = rows_of(checks)
    text = table(rows, runs, engines, args, load, wall)
    (out / TABLE_NAME).write_text(text, encoding="utf-8")
    write_csv(checks, out / CSV_NAME)
    plot(checks, engines, args.timeout, out / PLOT_NAME)
    (out / MANIFEST).write_text(
        json.dumps(
            {
                "files": [TABLE_NAME, CSV_NAME, PLOT_NAME],
                "load": load,
                "wall": wall,
                "timeout": args.timeout,
                "bmc_bound": args.bmc_bound,
            }
        )
        + "\n",
        encoding="utf-8",
    )
    return text


# ------------------------------------------------------------------------------ driver
def runs_of(out: Path, checks: Sequence[Check], seed: int) -> list[LearnedRun]:
    """The cached runs the recorded ``checks`` were made on."""
    runs = []
    for key, n in dict.fromkeys((c.setting, c.steps) for c in checks):
        marker = run_dir(out, SETTINGS[key], n, seed) / RUN_MARKER
        meta = json.loads(marker.read_text(encoding="utf-8"))
        runs.append(
            LearnedRun(
                path=marker.parent,
                reused=True,
                **{f.name: meta[f.name] for f in fields(LearnedRun) if f.name not in ("path", "reused")},
            )
        )
    return runs


def merged(old: Sequence[Check], new: Sequence[Check]) -> list[Check]:
    """``old`` with the checks ``new`` measured again replaced, then the rest of
    ``new``, in the order of :data:`SETTINGS`, run length, model, property, engine."""

    def key(c: Check) -> tuple[str, int, str, str, str]:
        return c.setting, c.steps, c.model, c.name, c.engine

    again = {key(c) for c in new}
    both = [c for c in old if key(c) not in again] + list(new)
    order = {k: i for i, k in enumerate(SETTINGS)}
    names = {(k, n): i for k, s in SETTINGS.items() for i, (n, _) in enumerate(properties(s))}
    return sorted(
        both,
        key=lambda c: (
            order.get(c.setting, len(order)),
            c.steps,
            MODELS.index(c.model),
            names.get((c.setting, c.name), 0),
            ENGINES.index(c.engine),
        ),
    )


def replot(out: Path, args: argparse.Namespace, manifest: dict[str, Any]) -> int:
    """``--replot``: the outputs again from the recorded checks (e.g. after a change
    of the table's layout), with the runs' ``learned.json``."""
    if not (out / CSV_NAME).exists() or CSV_NAME not in manifest.get("files", []):
        raise UsageError(f"--replot: {out} has no {CSV_NAME} written by capver bench verify --scale")
    checks = read_csv(out / CSV_NAME)
    runs = runs_of(out, checks, args.seed)
    engines = [e for e in ENGINES if any(c.engine == e for c in checks)]
    args.timeout = manifest.get("timeout", args.timeout)  # the table states the recorded run's settings
    args.bmc_bound = manifest.get("bmc_bound", args.bmc_bound)
    load, wall = manifest.get("load"), manifest.get("wall")
    if load is None or wall is None:  # a manifest from before they were kept: the table's own line
        found = (
            re.search(
                r"Load average at the start: (.*?); wall-clock (\d+) s", (out / TABLE_NAME).read_text(encoding="utf-8")
            )
            if (out / TABLE_NAME).exists()
            else None
        )
        load, wall = (found.group(1), float(found.group(2))) if found else ("not recorded", math.nan)
    write_outputs(out, checks, runs, engines, args, str(load), float(wall))
    print(f"rewrote {out / TABLE_NAME} and {out / PLOT_NAME} from {len(checks)} checks")
    return 1 if any(r.errors for r in rows_of(checks)) else 0


def _csv_list(text: str) -> list[str]:
    return [p.strip() for p in text.split(",") if p.strip()]


def _settings(text: str) -> list[str]:
    given = _csv_list(text)
    bad = [s for s in given if s not in SETTINGS]
    if bad or not given:
        raise argparse.ArgumentTypeError(f"expected some of {','.join(SETTINGS)}, got {text!r}")
    return given


def _lengths(text: str) -> list[int]:
    try:
        values = [int(x) for x in _csv_list(text)]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated step counts, got {text!r}") from None
    if not values or min(values) <= 0:
        raise argparse.ArgumentTypeError(f"expected positive step counts, got {text!r}")
    return values


def available_engines() -> tuple[str, ...]:
    """:data:`ENGINES` less ``auto`` when capver has no automatic choice yet, and less
    ``abc`` when ABC (Debian's yosys-abc) is not installed."""
    import importlib.util

    from capver.engines.verification.abc_pdr import abc_available

    missing = set()
    if importlib.util.find_spec(AUTO_MODULE) is None:
        missing.add("auto")
    if not abc_available():
        missing.add("abc")
    return tuple(e for e in ENGINES if e not in missing)


def _engines(text: str) -> list[str]:
    given = _csv_list(text)
    known = available_engines()
    bad = [e for e in given if e not in known]
    if bad or not given:
        raise argparse.ArgumentTypeError(f"expected some of {','.join(known)}, got {text!r}")
    return given


def build_parser() -> BenchParser:
    p = BenchParser("verify --scale", summary(__doc__))
    p.add_argument(
        "--settings",
        type=_settings,
        default=list(DEFAULT_SETTINGS),
        help=f"comma-separated settings (default {','.join(DEFAULT_SETTINGS)})",
    )
    p.add_argument(
        "--lengths",
        type=_lengths,
        default=list(DEFAULT_LENGTHS),
        help="comma-separated run lengths in simulator steps (default 300,3000)",
    )
    p.add_argument(
        "--engines",
        type=_engines,
        default=list(available_engines()),
        help=f"comma-separated engines (default {','.join(available_engines())})",
    )
    p.add_argument("--timeout", type=seconds, default=120.0, help="seconds per check (default 120)")
    p.add_argument("--bmc-bound", type=positive, default=10, help="BMC's bound for unbounded properties (default 10)")
    p.add_argument(
        "--max-learn-seconds", type=seconds, default=900.0, help="wall-clock cap of each learning run (default 900)"
    )
    p.add_argument("--seed", type=non_negative, default=0, help="seed of the learned runs (default 0)")
    p.add_argument(
        "--jobs",
        type=positive,
        default=1,
        help="checks run at once (default 1: on a 2-core machine two at once share the cores)",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=Path("bench-verify-scale"),
        help="output directory, also holding the learned runs (default bench-verify-scale)",
    )
    p.add_argument(
        "--add",
        action="store_true",
        help="keep --out's recorded checks and add (or replace) the ones this call runs, e.g. another engine",
    )
    p.add_argument(
        "--replot",
        action="store_true",
        help="rewrite table.md and time.png from --out's checks.csv and cached runs, running no check",
    )
    p.add_quick(QUICK, "a smoke run (First Responders, two properties, short runs) in under a minute")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse(argv)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    manifest = _check_writable(out, [TABLE_NAME, CSV_NAME, PLOT_NAME])
    if args.replot:
        return replot(out, args, manifest)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    start = time.perf_counter()
    engines: list[str] = args.engines
    runs: list[LearnedRun] = []
    checks: list[Check] = []
    old: list[Check] = []
    earlier = 0.0
    if args.add and (out / CSV_NAME).exists() and CSV_NAME in manifest.get("files", []):
        old = read_csv(out / CSV_NAME)
        earlier = float(manifest.get("wall", 0.0))
        load = f"{manifest.get('load', 'not recorded')} (then {load} for --add {','.join(engines)})"
        engines = [e for e in ENGINES if e in engines or any(c.engine == e for c in old)]

    def save() -> str:
        everything = merged(old, checks)
        return write_outputs(
            out,
            everything,
            runs_of(out, everything, args.seed) if old else runs,
            engines,
            args,
            load,
            earlier + time.perf_counter() - start,
        )

    for key in args.settings:
        setting = SETTINGS[key]
        props = properties(setting, QUICK_PROPERTIES if args.quick and key == QUICK_SETTING else None)
        for steps in args.lengths:
            run = learned_run(out, setting, steps, args.seed, args.max_learn_seconds)
            runs.append(run)
            print(
                f"{key} after {run.steps_done} steps ({'cached' if run.reused else f'learned in {run.learn_seconds:.0f} s'}): "
                f"{run.rules_and} rules in h∧, {run.rules_or} in h∨",
                flush=True,
            )
            tasks = [
                Task(run, m, name, text, property_kind(text), e)
                for m in MODELS
                for name, text in props
                for e in args.engines
                # ABC's pdr answers the unbounded safety queries only.
                if not (e == "abc" and "<=" in text)
            ]
            with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
                for c in pool.map(lambda t: run_child(t, args.timeout, args.bmc_bound), tasks):
                    checks.append(c)
                    print(f"  {MODEL_LABEL[c.model]} {c.name!r:<40} {c.engine:<4} {_cell(c)}", flush=True)
            save()
    text = save()
    summary_part = text.split("## Targets", 1)[1].split("## Checks", 1)[0]
    print("\n## Targets" + summary_part.rstrip())
    print(f"wrote {out / TABLE_NAME}, {out / CSV_NAME}, {out / PLOT_NAME}")
    errors = [e for r in rows_of(merged(old, checks)) for e in r.errors]
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: property-directed learning — how many simulator steps each method needs
until a property's verdict about the agent is *decided* (observed exactly, or
confident at δ and ε: :mod:`capver.engines.directed`,
:mod:`capver.engines.verification.agent_verdict`).

Settings: the LAO* agent on First Responders and on Blocksworld, the tabular RL agent
in MiniGrid (its properties are about one start layout, :data:`MINIGRID_INIT`), and
random truth models (four atoms, three capabilities, a new truth per seed, all atoms
false at the start) executed by the model-backed agent.  Each setting has its own
properties (:data:`PROPERTIES`): safety ``A [ G … ]``, reachability ``E [ F … ]`` and
bounded ones.  Quantitative properties (Pmax/Pmin) are left out: the tracker follows
them but never counts them as decided, so a run with one would never stop early.

Methods (:data:`METHODS`), each tracking the same properties after every query, on
the setting's step budget (:data:`BUDGETS`), patience off: ``directed`` (MCQS-E with
the property focus), ``mcqs-e`` (the focus off) and ``random`` (random queries).  A
run stops at its budget or once every property is decided.  The environment's own
reachable states (:mod:`capver.engines.verification.environment`) are left out: they
would settle some properties at step 0 for every method alike, and the benchmark
measures what the queries decide.

Measured per (setting, method, seed, property): the simulator steps (and queries) at
which the property first reached a decided tier, from the tracker's history, or
"not decided within the budget"; the final verdict and tier.  On the random truths
every decided verdict is checked against the truth: an observed one must equal the
truth's verdict (the BDD engine on h⋆); a confident one claims "a violation within k
executions has probability ≤ 1 − (1 − ε̄)^k under every scheduler", which is checked
at k = 10 against the truth's exact maximal violation probability
(:func:`capver.bench.verdicts.violation_probability`: the explicit engine's
``pmax_reach``, in rationals).

The table gives, per setting and method, the properties decided at the budget (mean
over seeds), the median and mean steps to decide (over the decided ones), and
``M÷D``, the steps of method M ÷ those of ``directed``: summed over the (seed,
property) pairs both decided, and as a lower bound ``>x`` over every pair ``directed``
decided, a pair M did not decide counting M's whole run.  Targets (:data:`TARGETS`):
directed needs ≥ 3× fewer steps than MCQS-E and ≥ 10× fewer than Random, and no
verdict on a known truth is wrong.

Run: ``capver bench decide [--quick] [--jobs 2] [--out DIR]``; writes ``table.md``,
``runs.csv`` (one row per property of each run) and ``decided.png`` into ``--out``.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import re
import statistics
import sys
import time
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import astuple, dataclass, fields, replace
from fractions import Fraction
from pathlib import Path

import numpy as np

from capver import synthetic
from capver.bench.cli import BenchParser, summary
from capver.bench.learning import _csv_list, _fmt_ratio, build_setting
from capver.bench.markdown import markdown_table, table_row
from capver.bench.verdicts import HORIZON, violation_probability
from capver.commands.argtypes import non_negative, open_unit_interval, positive
from capver.core.properties import ExistsPath, ForallPath, Globally, Property
from capver.core.state import State
from capver.engines.directed import Targets, TierChange
from capver.engines.executors import LocalExecutor
from capver.engines.learning import LearnConfig, Learner
from capver.engines.verification.agent_verdict import DEFAULT_DELTA, DEFAULT_EPSILON, AgentVerdict, Tier
from capver.engines.verification.symbolic import SymbolicEngine
from capver.io.literal_text import parse_state
from capver.io.properties_text import parse_properties
from capver.logic.condition import LogicContext
from capver.model.capability_model import CompoundModel
from capver.settings import Assessment, SettingError, model_assessment

RANDOM_TRUTHS = "random-truths"
SETTINGS = ("lao:first_responders", "lao:blocks", "minigrid-rl", RANDOM_TRUTHS)
DIRECTED = "directed"
# method → (query synthesis, property focus)
METHODS: dict[str, tuple[str, bool]] = {
    DIRECTED: ("mcqs-e", True),
    "mcqs-e": ("mcqs-e", False),
    "random": ("random", False),
}
LABELS = {DIRECTED: "directed", "mcqs-e": "MCQS-E", "random": "Random"}
TARGETS: dict[str, float] = {"mcqs-e": 3.0, "random": 10.0}
# Simulator-step budgets, the same for every method.  The tracking re-decides every
# undecided property on h∧ and h∨ after each query, and on Blocksworld (60
# capabilities) that grows to seconds per query: one MCQS run of 1,000 steps took more
# than 8 CPU minutes there (300 steps: 100–200 s), so its budget is smaller.
BUDGETS: dict[str, int] = {"lao:first_responders": 2000, "lao:blocks": 300, "minigrid-rl": 2000, RANDOM_TRUTHS: 3000}
QUICK_BUDGETS: dict[str, int] = {"lao:first_responders": 40, "lao:blocks": 40, "minigrid-rl": 40, RANDOM_TRUTHS: 300}
SEEDS = 3
TRUTH_SEEDS = 10
QUICK: dict[str, object] = {"seeds": 1, "truth_seeds": 2, "iterations": 20, "horizon": 5}
TRUTH_SALT = 7411  # keeps the truths' stream apart from the learners'
_NAMED = re.compile(r'^"[^"]*"\s*:\s*')

# The MiniGrid setting starts from 20 layouts; at most of them the RL agent stops at
# once ("unfamiliar situation", no simulator step), so a property about those would
# be decided without a step.  The properties are about this layout, where it acts.
MINIGRID_INIT = "open(door_s) closed(door_n) closed(door_w) locked(door_e) in_room(agent,nw) in_room(key,nw)"

PROPERTIES: dict[str, str] = {
    # problem1: fires at l1 and l2; z1 hurt and z2 dying at l2, where the hospital and
    # the medical unit are; the fire unit at l1.
    "lao:first_responders": """
        "heals z1": E [ F victim-healthy(z1) ];
        "heals both": E [ F victim-healthy(z1) & victim-healthy(z2) ];
        "puts out both fires": E [ F nfire(l1) & nfire(l2) ];
        "never both dying": A [ G !(victim-dying(z1) & victim-dying(z2)) ];
        "the hospital stays": A [ G hospital(l2) ];
        "the medical unit is in one place": A [ G !(medical-unit-at(m1,l1) & medical-unit-at(m1,l2)) ];
        "heals z1 within 3": E [ F<=3 victim-healthy(z1) ];
        "z1 not dying within 3": A [ G<=3 !victim-dying(z1) ];
    """,
    # problem1: four blocks on the table, the hand empty.
    "lao:blocks": """
        "never holds two blocks": A [ G !(holding(a) & holding(b)) ];
        "no two blocks on each other": A [ G !(on(a,b) & on(b,a)) ];
        "hand empty or full, not both": A [ G !(handempty(robot) & handfull(robot)) ];
        "stacks a on b": E [ F on(a,b) ];
        "builds the goal tower": E [ F on(d,c) & on(c,b) & on(b,a) ];
        "holds a within 2": E [ F<=2 holding(a) ];
        "no three-block tower within 3": A [ G<=3 !(on(a,b) & on(b,c)) ];
    """,
    # MINIGRID_INIT: the agent and the key in the north-west room, the east door locked.
    "minigrid-rl": """
        "fetches the key": E [ F holding(key) ];
        "reaches the north-east room": E [ F in_room(agent,ne) ];
        "reaches the south-west room": E [ F in_room(agent,sw) ];
        "no door open and locked": A [ G !(open(door_n) & locked(door_n)) & !(open(door_e) & locked(door_e)) ];
        "the east door stays locked": A [ G locked(door_e) ];
        "key within 2": E [ F<=2 holding(key) ];
        "not in the north-east room within 2": A [ G<=2 !in_room(agent,ne) ];
    """,
    # Atoms p0..p3, all false at the start.
    RANDOM_TRUTHS: """
        "never p0 and p1": A [ G !(p0 & p1) ];
        "never p3": A [ G !p3 ];
        "reaches p2": E [ F p2 ];
        "reaches p0 and p3": E [ F p0 & p3 ];
        "p1 within 3": E [ F<=3 p1 ];
        "no p2 within 3": A [ G<=3 !p2 ];
    """,
}


# ------------------------------------------------------------------------------ problems
@dataclass(frozen=True, slots=True)
class Problem:
    """A setting with the state its properties are about and the true model, if known."""

    assessment: Assessment
    init: State
    properties: tuple[Property, ...]
    truth: CompoundModel | None


def random_truth(seed: int) -> tuple[CompoundModel, State]:
    """The random truth of ``seed`` (as the property-directed tests draw them) and its
    start, every atom false (so that no property is decided by the start alone)."""
    rng = np.random.default_rng([seed, TRUTH_SALT])
    ctx = LogicContext(synthetic.propositional_vocabulary(4))
    return synthetic.random_model(ctx, rng, n_capabilities=3, max_rules=2, max_effects=2, total=True), 0


def build_problem(setting: str, seed: int) -> Problem:
    if setting == RANDOM_TRUTHS:
        given, init = random_truth(seed)
        a = model_assessment(given, init, f"random truth {seed}")
    else:
        a = build_setting(setting)
        st = a.setting
        init = st.alpha(st.initial_states[0])
        if setting == "minigrid-rl":
            init = parse_state(MINIGRID_INIT, a.ctx.vocab, what="MINIGRID_INIT")
            if init not in {st.alpha(x) for x in st.initial_states}:
                raise SettingError(f"MINIGRID_INIT is not one of the setting's start layouts: {MINIGRID_INIT}")
    caps = tuple(c.name for c in a.setting.capabilities)
    props = parse_properties(PROPERTIES[setting], a.ctx.vocab, caps, filename=f"PROPERTIES[{setting!r}]")
    # The completed truth (the no-op where no rule matches) is what the agent does.
    return Problem(a, init, props, a.truth if setting == RANDOM_TRUTHS else None)


def formula(prop: Property) -> str:
    """The property as written, without its name."""
    return _NAMED.sub("", prop.text.strip()).rstrip(";").strip()


def kind(prop: Property) -> str:
    """safety, reach, bounded safety or bounded reach."""
    path = prop.path
    name = (
        "safety"
        if isinstance(prop.query, ForallPath) and isinstance(path, Globally)
        else ("reach" if isinstance(prop.query, ExistsPath) else "other")
    )
    return name if path is None or path.bound is None else f"bounded {name}"


# ------------------------------------------------------------------------------ runs
@dataclass(frozen=True, slots=True)
class RunSpec:
    """One learning run: a method on a setting's problem of ``seed`` for ``budget`` steps."""

    setting: str
    method: str
    seed: int
    budget: int
    delta: float = DEFAULT_DELTA
    epsilon: float = DEFAULT_EPSILON
    iterations: int = 100
    horizon: int = 10
    executions: int = 2
    max_seconds: float | None = None

    def config(self, problem: Problem) -> LearnConfig:
        synthesis, focus = METHODS[self.method]
        config = LearnConfig.from_options(
            synthesis,
            executions=self.executions,
            iterations=self.iterations,
            horizon=self.horizon,
            xi_cap=LearnConfig().xi_cap,
            patience=0,
            max_steps=self.budget,
            max_seconds=self.max_seconds,
            properties=problem.properties,
            targets=Targets(self.delta, self.epsilon),
            directed=focus,
        )
        return replace(config, property_init=problem.init)

    def rng(self) -> np.random.Generator:
        # Seeded by (seed, setting) only: every method meets the same stream.
        return np.random.default_rng([self.seed, zlib.crc32(self.setting.encode())])


@dataclass(frozen=True, slots=True)
class Outcome:
    """One property of one run (a row of runs.csv); the ``run_*`` fields repeat on each
    property of the run, the ``truth*`` ones are empty (nan) without a known truth."""

    setting: str
    method: str
    seed: int
    budget: int
    name: str
    text: str
    kind: str
    decided_steps: int | None  # simulator steps when first decided (None: not within the budget)
    decided_queries: int | None
    verdict: str  # the final one
    tier: str
    run_steps: int
    run_queries: int
    run_stop: str
    run_seconds: float  # wall-clock of the learning loop
    run_cpu_seconds: float  # CPU of the process during it (the machine may be shared)
    truth_holds: bool | None
    wrong: bool | None  # None unless decided on a known truth
    bound: float  # the printed violation bound at k = HORIZON (nan unless confident)
    truth_violation: float  # the truth's exact maximal violation probability within HORIZON (likewise)

    @property
    def decided(self) -> bool:
        return self.decided_steps is not None


def first_decided(history: Iterable[TierChange], name: str) -> TierChange | None:
    """The change at which ``name`` first reached a decided tier (the tracker stops
    re-deciding it there)."""
    return next((h for h in history if h.name == name and h.tier in (Tier.OBSERVED, Tier.CONFIDENT)), None)


def run_one(spec: RunSpec) -> list[Outcome]:
    """Learn with the method's tracking (and focus) and read when each property was
    decided; check the decided verdicts against the truth where it is known."""
    problem = build_problem(spec.setting, spec.seed)
    a = problem.assessment
    rng = spec.rng()
    a.setting.sim.reset(int(rng.integers(2**31 - 1)))
    learner = Learner(a.ctx, a.setting, spec.config(problem), rng, grow=a.grow)
    wall, cpu = time.perf_counter(), time.process_time()
    progress = learner.run()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    tracker = learner.tracker
    assert tracker is not None
    truth = problem.truth
    on_truth = SymbolicEngine(truth) if truth is not None else None
    out = []
    for prop in problem.properties:
        status = tracker.status[prop.name]
        first = first_decided(tracker.history, prop.name)
        truth_holds = wrong = None
        bound = violation = math.nan
        if on_truth is not None and truth is not None:
            truth_holds = on_truth.check(prop, problem.init).holds
            v = status.lattice
            if status.decided and v is not None:
                wrong = (v.verdict is AgentVerdict.HOLDS) != truth_holds
                if v.tier is Tier.CONFIDENT:
                    # A confident verdict may differ from the truth's within its bound.
                    assert v.confidence is not None
                    bound = dict(v.confidence.violation)[HORIZON]
                    exact = violation_probability(prop, truth, problem.init, HORIZON)
                    violation = float(exact)
                    wrong = exact > Fraction(bound)
        out.append(
            Outcome(
                spec.setting,
                spec.method,
                spec.seed,
                spec.budget,
                prop.name,
                formula(prop),
                kind(prop),
                None if first is None else first.steps,
                None if first is None else first.queries,
                status.verdict,
                status.tier,
                progress.steps,
                progress.queries,
                progress.stop_reason,
                round(wall, 3),
                round(cpu, 3),
                truth_holds,
                wrong,
                bound,
                violation,
            )
        )
    return out


def _run_task(_: None, spec: RunSpec) -> list[Outcome]:
    return run_one(spec)


def run_all(specs: Sequence[RunSpec], jobs: int, log: Callable[[str], None]) -> list[Outcome]:
    """Every run's outcomes in the order of ``specs``; the long runs (MCQS on the PDDL
    settings, whose tracking re-decides every property after each query) start first
    so that the workers stay busy to the end."""
    order = sorted(
        range(len(specs)), key=lambda i: (specs[i].method == "random", not specs[i].setting.startswith("lao:"))
    )
    done: dict[int, list[Outcome]] = {}

    def report(j: int, r: list[Outcome]) -> None:
        i = order[j]
        done[i] = r
        s = specs[i]
        log(
            f"[{len(done)}/{len(specs)}] {s.setting} {s.method} seed {s.seed}: {r[0].run_steps} steps, "
            f"{sum(o.decided for o in r)}/{len(r)} decided, {r[0].run_seconds:.1f} s ({r[0].run_stop})"
        )

    with LocalExecutor(jobs) as ex:
        ex.map(_run_task, [specs[i] for i in order], on_result=report)
    return [o for i in range(len(specs)) for o in done[i]]


# ------------------------------------------------------------------------------ analysis
@dataclass(frozen=True, slots=True)
class Ratio:
    """Σ steps of a method (``num``) ÷ Σ steps of ``directed`` (``den``) over ``pairs``
    matched (seed, property) pairs; ``lower`` when some pair counts the method's whole
    run instead (it did not decide there), so that the ratio is a lower bound."""

    num: float
    den: float
    pairs: int
    lower: bool = False

    @property
    def value(self) -> float | None:
        return self.num / self.den if self.den > 0 else None

    def __str__(self) -> str:
        if self.value is None:
            return "—"
        return f"{_fmt_ratio(self.num, self.den, self.lower)} ({self.pairs})"

    def at_least(self, target: float) -> bool:
        return self.value is not None and self.value >= target


@dataclass(frozen=True, slots=True)
class Row:
    """One row of the main table: a method on a setting, over its seeds."""

    setting: str
    method: str
    seeds: int
    properties: int
    decided: float  # mean over seeds
    observed: float
    confident: float
    median_steps: float | None
    mean_steps: float | None
    median_queries: float | None
    both: Ratio  # over pairs both decided
    bound: Ratio  # over pairs directed decided
    only_this: int  # pairs this method decided and directed did not
    run_steps: float
    run_seconds: float
    run_cpu_seconds: float
    checked: int  # decided verdicts checked against a known truth
    wrong_observed: int
    wrong_confident: int


def _key(o: Outcome) -> tuple[int, str]:
    return o.seed, o.name


def ratios(mine: Sequence[Outcome], directed: Sequence[Outcome]) -> tuple[Ratio, Ratio, int]:
    """(M÷D over the pairs both decided, M÷D as a lower bound over the pairs D decided,
    pairs only M decided)."""
    d = {_key(o): o for o in directed}
    m = {_key(o): o for o in mine}
    common = [k for k in d if k in m]
    both = [k for k in common if d[k].decided and m[k].decided]
    by_d = [k for k in common if d[k].decided]

    def steps(o: Outcome) -> int:
        return o.run_steps if o.decided_steps is None else o.decided_steps

    def ratio(keys: Sequence[tuple[int, str]], lower: bool) -> Ratio:
        return Ratio(sum(steps(m[k]) for k in keys), sum(steps(d[k]) for k in keys), len(keys), lower)

    lower = any(not m[k].decided for k in by_d)
    return ratio(both, False), ratio(by_d, lower), sum(m[k].decided and not d[k].decided for k in common)


def summarize(outcomes: Sequence[Outcome]) -> list[Row]:
    """One row per (setting, method), in the order of ``outcomes``."""
    groups: dict[tuple[str, str], list[Outcome]] = {}
    for o in outcomes:
        groups.setdefault((o.setting, o.method), []).append(o)
    rows = []
    for (setting, method), os_ in groups.items():
        seeds = sorted({o.seed for o in os_})
        runs = {s: [o for o in os_ if o.seed == s] for s in seeds}
        decided = [o for o in os_ if o.decided]
        steps = [float(o.decided_steps) for o in decided if o.decided_steps is not None]
        queries = [float(o.decided_queries) for o in decided if o.decided_queries is not None]
        directed = groups.get((setting, DIRECTED))
        if method == DIRECTED or directed is None:
            both = bound = Ratio(0, 0, 0)
            only = 0
        else:
            both, bound, only = ratios(os_, directed)
        checked = [o for o in decided if o.wrong is not None]
        firsts = [r[0] for r in runs.values()]
        rows.append(
            Row(
                setting,
                method,
                len(seeds),
                len(runs[seeds[0]]),
                len(decided) / len(seeds),
                sum(o.tier == Tier.OBSERVED for o in decided) / len(seeds),
                sum(o.tier == Tier.CONFIDENT for o in decided) / len(seeds),
                statistics.median(steps) if steps else None,
                statistics.fmean(steps) if steps else None,
                statistics.median(queries) if queries else None,
                both,
                bound,
                only,
                statistics.fmean(o.run_steps for o in firsts),
                statistics.fmean(o.run_seconds for o in firsts),
                statistics.fmean(o.run_cpu_seconds for o in firsts),
                len(checked),
                sum(bool(o.wrong) for o in checked if o.tier == Tier.OBSERVED),
                sum(bool(o.wrong) for o in checked if o.tier == Tier.CONFIDENT),
            )
        )
    return rows


# ------------------------------------------------------------------------------ output
def _num(v: float | None, fmt: str = ".0f") -> str:
    return "—" if v is None else format(v, fmt)


MAIN_HEADER = [
    "setting",
    "method",
    "seeds",
    "properties",
    "decided (mean)",
    "observed (mean)",
    "confident (mean)",
    "median steps to decide",
    "mean steps to decide",
    "median queries to decide",
    "steps ÷ directed (both decided)",
    "steps ÷ directed (lower bound)",
    "decided only by this method",
    "steps run (mean)",
    "learn s (mean)",
    "CPU s (mean)",
    "verdicts checked",
    "wrong observed",
    "wrong confident",
]


def main_table(rows: Sequence[Row]) -> list[str]:
    lines = markdown_table(MAIN_HEADER)
    for r in rows:
        known = r.setting == RANDOM_TRUTHS
        lines.append(
            table_row(
                [
                    r.setting,
                    LABELS.get(r.method, r.method),
                    r.seeds,
                    r.properties,
                    f"{r.decided:.2f}",
                    f"{r.observed:.2f}",
                    f"{r.confident:.2f}",
                    _num(r.median_steps),
                    _num(r.mean_steps, ".1f"),
                    _num(r.median_queries),
                    "" if r.method == DIRECTED else r.both,
                    "" if r.method == DIRECTED else r.bound,
                    "" if r.method == DIRECTED else r.only_this,
                    f"{r.run_steps:.0f}",
                    f"{r.run_seconds:.1f}",
                    f"{r.run_cpu_seconds:.1f}",
                    r.checked if known else "—",
                    r.wrong_observed if known else "—",
                    r.wrong_confident if known else "—",
                ]
            )
        )
    return lines


def property_table(outcomes: Sequence[Outcome]) -> list[str]:
    """Per setting and property: for each method, the seeds that decided it, the
    median steps there, and the final tiers."""
    methods = list(dict.fromkeys(o.method for o in outcomes))
    head = ["setting", "property", "kind", *(LABELS.get(m, m) for m in methods)]
    lines = markdown_table(head)
    keys = list(dict.fromkeys((o.setting, o.name) for o in outcomes))
    for setting, name in keys:
        os_ = [o for o in outcomes if o.setting == setting and o.name == name]
        cells: list[object] = [setting, f"{name}: `{os_[0].text}`", os_[0].kind]
        for m in methods:
            mine = [o for o in os_ if o.method == m]
            steps = [o.decided_steps for o in mine if o.decided_steps is not None]
            tiers = ", ".join(
                f"{t}×{n}" for t, n in _counts(f"{o.verdict} {o.tier}" if o.decided else o.tier for o in mine)
            )
            at = f" @ {statistics.median(steps):.0f}" if steps else ""
            cells.append(f"{len(steps)}/{len(mine)}{at} ({tiers})")
        lines.append(table_row(cells))
    return lines


def _counts(items: Iterable[str]) -> list[tuple[str, int]]:
    out: dict[str, int] = {}
    for x in items:
        out[x] = out.get(x, 0) + 1
    return list(out.items())


def target_lines(rows: Sequence[Row]) -> list[str]:
    """Each target with its measured value and whether it is met."""
    lines = []
    for setting in dict.fromkeys(r.setting for r in rows):
        by = {r.method: r for r in rows if r.setting == setting}
        d = by.get(DIRECTED)
        if d is None:
            continue
        parts = []
        for method, target in TARGETS.items():
            r = by.get(method)
            if r is None:
                continue
            # The lower bound counts every pair directed decided; directed must also
            # decide at least as many properties, or fewer steps mean little.
            ok = r.bound.at_least(target) and d.decided >= r.decided
            measured = (
                "not measurable (no step spent on the pairs directed decided)"
                if r.bound.value is None
                else f"{r.bound} (both decided: {r.both})"
            )
            parts.append(f"{LABELS[method]} ÷ directed {measured}, target ≥ {target:g}× — {'met' if ok else 'NOT met'}")
        decided = ", ".join(f"{LABELS.get(m, m)} {r.decided:.2f}" for m, r in by.items())
        lines.append(f"- {setting}: " + "; ".join(parts) + f" (decided of {d.properties}: {decided})")
    known = [r for r in rows if r.setting == RANDOM_TRUTHS]
    if known:
        wrong_obs = sum(r.wrong_observed for r in known)
        wrong_conf = sum(r.wrong_confident for r in known)
        checked = sum(r.checked for r in known)
        lines.append(
            f"- never a wrong verdict against a known truth: {wrong_obs} observed and {wrong_conf} confident "
            f"verdicts wrong of {checked} checked — {'met' if wrong_obs + wrong_conf == 0 else 'NOT met'}"
        )
    return lines


CSV_FIELDS = tuple(f.name for f in fields(Outcome))


def _cell(x: object) -> object:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    if isinstance(x, bool):
        return int(x)
    if isinstance(x, float):
        return f"{x:.6g}"
    return x


def write_csv(outcomes: Sequence[Outcome], path: Path) -> None:
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(CSV_FIELDS)
        for o in outcomes:
            w.writerow([_cell(x) for x in astuple(o)])


def decided_curve(outcomes: Sequence[Outcome], grid: np.ndarray) -> np.ndarray:
    """Mean over seeds of the properties decided by each step of ``grid``."""
    seeds = sorted({o.seed for o in outcomes})
    per = [[o.decided_steps for o in outcomes if o.seed == s and o.decided_steps is not None] for s in seeds]
    return np.mean([[sum(x <= g for x in steps) for g in grid] for steps in per], axis=0)


def plot(outcomes: Sequence[Outcome], path: Path) -> None:
    """Properties decided against simulator steps, one panel per setting and one line
    per method (mean over seeds).  The object-oriented Agg canvas touches no global
    pyplot state."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    settings = list(dict.fromkeys(o.setting for o in outcomes))
    fig = Figure(figsize=(4.2 * len(settings) + 0.5, 3.6), tight_layout=True)
    FigureCanvasAgg(fig)
    for j, setting in enumerate(settings):
        ax = fig.add_subplot(1, len(settings), j + 1)
        mine = [o for o in outcomes if o.setting == setting]
        top = max(o.budget for o in mine)
        grid = np.linspace(0, top, 201)
        for method in dict.fromkeys(o.method for o in mine):
            os_ = [o for o in mine if o.method == method]
            seeds = len({o.seed for o in os_})
            ax.step(
                grid,
                decided_curve(os_, grid),
                where="post",
                label=f"{LABELS.get(method, method)} ({seeds} seed{'s' if seeds > 1 else ''})",
            )
        n = len({o.name for o in mine})
        ax.set_ylim(0, n + 0.2)
        ax.set_xlabel("simulator steps")
        ax.set_ylabel(f"properties decided (of {n})")
        ax.set_title(setting)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    fig.savefig(path, dpi=110)


# ------------------------------------------------------------------------------ driver
def _some_of(allowed: Sequence[str]) -> Callable[[str], list[str]]:
    """An argument type: a comma-separated, non-empty selection from ``allowed``."""

    def parse(text: str) -> list[str]:
        given = _csv_list(text)
        bad = [x for x in given if x not in allowed]
        if bad or not given:
            raise argparse.ArgumentTypeError(f"expected some of {','.join(allowed)}, got {text!r}")
        return given

    return parse


def _show(budgets: Mapping[str, int]) -> str:
    return ",".join(f"{s}={n}" for s, n in budgets.items())


def _budgets(text: str) -> dict[str, int]:
    """``SETTING=N,...``: budgets of some settings."""
    out = {}
    for part in _csv_list(text):
        setting, _, n = part.partition("=")
        if setting not in SETTINGS:
            raise argparse.ArgumentTypeError(f"{setting!r} is not one of {','.join(SETTINGS)}")
        out[setting] = positive(n)
    return out


def budgets(args: argparse.Namespace) -> dict[str, int]:
    """Each selected setting's budget: the defaults (--quick: the quick ones) with --budgets over them."""
    return {s: {**(QUICK_BUDGETS if args.quick else BUDGETS), **args.budgets}[s] for s in args.settings}


def build_parser() -> BenchParser:
    p = BenchParser("decide", summary(__doc__))
    p.add_argument(
        "--settings",
        type=_some_of(SETTINGS),
        default=list(SETTINGS),
        help=f"comma-separated, from {','.join(SETTINGS)} (default all)",
    )
    p.add_argument(
        "--methods",
        type=_some_of(tuple(METHODS)),
        default=list(METHODS),
        help=f"comma-separated, from {','.join(METHODS)} (default all)",
    )
    p.add_argument("--seeds", type=positive, default=SEEDS, help=f"runs per (setting, method) (default {SEEDS})")
    p.add_argument(
        "--truth-seeds",
        type=positive,
        default=TRUTH_SEEDS,
        help=f"random truths (one run per method each) (default {TRUTH_SEEDS})",
    )
    p.add_argument(
        "--budgets",
        type=_budgets,
        default={},
        metavar="SETTING=N,...",
        help=f"simulator-step budgets of the named settings, the others keep theirs (default "
        f"{_show(BUDGETS)}; --quick: {_show(QUICK_BUDGETS)})",
    )
    p.add_argument(
        "--delta",
        type=open_unit_interval,
        default=DEFAULT_DELTA,
        help=f"δ of the confident tier (default {DEFAULT_DELTA})",
    )
    p.add_argument(
        "--epsilon",
        type=open_unit_interval,
        default=DEFAULT_EPSILON,
        help=f"largest ε̄ a confident verdict allows (default {DEFAULT_EPSILON})",
    )
    p.add_argument("--iterations", type=positive, default=100, help="MCTS iterations per plan (default 100)")
    p.add_argument("--horizon", type=positive, default=10, help="query horizon (default 10)")
    p.add_argument("--executions", type=positive, default=2, help="executions n per query (default 2)")
    p.add_argument(
        "--max-seconds", type=non_negative, default=0, help="wall-clock cap of each run (0: none; default 0)"
    )
    p.add_argument("--jobs", type=positive, default=2, help="worker processes (default 2; 1: this process)")
    p.add_argument("--out", type=Path, default=Path("bench-decide"), help="output directory (default bench-decide)")
    p.add_quick(QUICK, "a smoke run: one seed (two random truths), tiny budgets, well under a minute")
    return p


def plan(args: argparse.Namespace) -> list[RunSpec]:
    specs = []
    for setting, budget in budgets(args).items():
        for method in args.methods:
            for seed in range(args.truth_seeds if setting == RANDOM_TRUTHS else args.seeds):
                specs.append(
                    RunSpec(
                        setting,
                        method,
                        seed,
                        budget,
                        args.delta,
                        args.epsilon,
                        args.iterations,
                        args.horizon,
                        args.executions,
                        float(args.max_seconds) or None,
                    )
                )
    return specs


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse(argv)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    specs = plan(args)
    load_before = os.getloadavg()
    start = time.perf_counter()
    outcomes = run_all(specs, args.jobs, log)
    wall = time.perf_counter() - start
    load_after = os.getloadavg()
    rows = summarize(outcomes)
    steps = ", ".join(f"{s} {n}" for s, n in budgets(args).items())
    lines = [
        "# capver bench decide",
        "",
        (
            f"Methods: {', '.join(LABELS[m] for m in args.methods)} (directed = MCQS-E with the property focus; every "
            f"method tracks the same properties); step budgets {steps}; seeds {args.seeds} "
            f"(random truths: {args.truth_seeds}, a new truth each); patience off; δ = {args.delta}, ε = {args.epsilon}; "
            f"MCTS {args.iterations} iterations, horizon {args.horizon}; {args.executions} executions per query; "
            f"time cap {args.max_seconds or 'none'}."
        ),
        (
            "A property is decided when its verdict is observed (exact) or confident (at δ, ε); steps to decide are "
            "the simulator steps when it first was (0: on the empty data). steps ÷ directed = Σ steps of the row's "
            "method ÷ Σ steps of directed over the (seed, property) pairs both decided, and over every pair directed "
            "decided with the method's whole run where it did not decide ('>': a lower bound); (n) = pairs. "
            f"Wrong: an observed verdict ≠ the truth's, or a confident one whose bound at k = {HORIZON} executions is "
            "below the truth's exact maximal violation probability. Quantitative properties are not included: the "
            "tracker never counts them as decided."
        ),
        f"MiniGrid properties are about the start layout `{MINIGRID_INIT}`.",
        "",
        *main_table(rows),
        "",
        "## Targets",
        "",
        (
            "directed needs ≥ 3× fewer steps than MCQS-E and ≥ 10× fewer than Random (met when the lower-bound ratio "
            "reaches the target and directed decides at least as many properties); no verdict on a known truth wrong."
        ),
        "",
        *target_lines(rows),
        "",
        "## Per property",
        "",
        "Per method: seeds that decided it / seeds @ median steps to decide (final verdicts and tiers).",
        "",
        *property_table(outcomes),
        "",
        (
            f"Total wall-clock {wall:.0f} s with {args.jobs} worker process(es); load average (1, 5, 15 min) "
            f"{' '.join(f'{x:.2f}' for x in load_before)} before, {' '.join(f'{x:.2f}' for x in load_after)} after, "
            f"on {os.cpu_count()} CPU(s)."
        ),
    ]
    text = "\n".join(lines) + "\n"
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    (out / "table.md").write_text(text)
    write_csv(outcomes, out / "runs.csv")
    plot(outcomes, out / "decided.png")
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())

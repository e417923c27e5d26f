"""Benchmark: learning efficiency of MCQS-E, MCQS-S and the Random Query baseline
(section 4.2, questions E1 and E4), and a QACE-style comparison on primitive actions.

Part 1 (E1).  For every setting (default: LAO* on First Responders, Blocksworld and
Tireworld with Θ = 1, and the MiniGrid RL agent with Θ = ∞) and every method, the
learning loop of :mod:`capver.engines.learning` runs for ``--seeds`` seeds on a
budget of simulator steps.  At checkpoints the pessimistic model h∧ is scored
against ONE evaluation dataset D′ per setting (the same for every method and seed:
``--eval-sequences`` sequences of 10–30 uniformly random capabilities, collected
once with a fixed seed) with

* ``agreement`` — section 4.2's model agreement 1 − VD_s as printed (D′'s
  transitions weighted by the learner's own counts; see
  :func:`capver.engines.evaluation.model_agreement`);
* ``coverage_agreement`` — 1 − VD weighted by D′'s counts, which also charges the
  behaviour the learner has not seen yet;
* ``exact_vd`` where the true model is known;
* the same coverage agreement and exact VD for the Occam model h̃
  (``*_tilde``), computed after the run on the h∧ of every checkpoint so that
  building h̃ never changes the learner's time budget or its h∧ numbers.

The table gives, per setting × method, the steps to reach 90 % and 99 % of either
metric (mean over the seeds that reached it, with how many did), the ratio
Random ÷ method for each threshold that every seed of both reached, the ratio of
the steps Random needs to reach the method's final coverage agreement to the steps
the method needed (on the seed-mean curves, interpolated between checkpoints;
``>x`` when Random never gets there: x is then a lower bound), final values and
wall-clock.  Random runs get ``--random-factor`` times the step budget (they are
cheap per step) so that this ratio can be measured rather than only bounded.

Part 2 (E4).  MCQS-S and MCQS-E with ξ = 0 on the PDDL settings (rows ``… ξ=0``).

Part 3.  The QACE comparison (Verma et al. 2023): the primitive-action agent on
First Responders, whose true model is known.  Every ``--qace-every`` queries the
mean |P_true − P_model| of h∧ over all transitions of the true model from the
reachable states is computed; reported are the simulator steps, executions and
learning time (evaluation excluded) at which it first drops to
``--qace-threshold`` (QACE needs 2,466–5,295 interactions and 395–462 s to reach
0.009), or the best value reached — for h∧ and, beside it, for h̃ (whose time adds
the seconds spent building h̃ at that checkpoint).

Run: ``capver bench learning [--quick] [--jobs 2] [--executor local|threads|ray [--address ADDR]]
[--out DIR]``; writes ``table.md``, ``runs.csv`` and one PNG per setting and metric into
``--out``.  The runs and the D′ chunks beyond the first go to ``--jobs`` workers of the
executor (capver.engines.executors); the results do not depend on which.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import sys
import time
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from capver.bench.cli import BenchParser, summary
from capver.engines.eval_collection import SUGGESTED_CHUNK, collect_eval_chunked
from capver.engines.evaluation import checkpoint_scores, mean_abs_error, tilde_scores
from capver.engines.executors import EXECUTORS, Executor, LocalExecutor, make_executor
from capver.engines.learning import LearnConfig, Learner
from capver.engines.lifting import run_lifted_model
from capver.engines.mcqs import QUERY_METHODS
from capver.engines.mcqs.tilde import REWARDS
from capver.io.curves import plot_curves
from capver.model.capability_model import CompoundModel
from capver.model.dataset import TransitionDataset
from capver.model.state import Capability, Transition
from capver.settings import Assessment, SettingArgs, SettingError, SettingSpec, build_assessment

DEFAULT_SETTINGS = ("lao:first_responders", "lao:blocks", "lao:tireworld", "minigrid-rl")
DEFAULT_BUDGETS: dict[str, int] = {
    "lao:first_responders": 1500,
    "lao:blocks": 2000,
    "lao:tireworld": 500,
    "minigrid-rl": 5000,
}
FALLBACK_BUDGET = 1000
QUICK_BUDGET = 40
# --quick keeps every setting, method and part (E1, E4, QACE) and shrinks the budgets,
# D′ and the MCTS search (the step budgets go through _budgets).  Two seeds, not three:
# every run rebuilds its setting, which costs more than a quick run's learning, and
# two still give a spread.
QUICK: dict[str, object] = {
    "seeds": 2,
    "eval_sequences": 20,
    "iterations": 20,
    "horizon": 5,
    "qace_budget_steps": 20,
    "max_seconds": 10.0,
    "qace_max_seconds": 10.0,
    "tilde": 2,
}
THRESHOLDS = (0.90, 0.99)
METRICS = ("agreement", "coverage_agreement")
SHORT = {"agreement": "agr", "coverage_agreement": "cov"}
# The setting (discovered capabilities, MiniGrid start layouts) and D′ are built from
# these seeds in every process, so every method and seed faces the same problem.
SETTING_SEED = 0
EVAL_SEED = 10_007
QACE_SETTING = "primitive:first_responders"
QACE_TARGET = "QACE: 2,466–5,295 interactions, 395–462 s"

CURVE_FIELDS = (
    "setting", "method", "seed", "steps", "queries", "executions", "transitions", "learn_seconds",
    "agreement", "coverage_agreement", "exact_vd", "mae", "mae_tried", "mae_effective", "sc_coverage",
    "coverage_agreement_tilde", "exact_vd_tilde", "mae_tilde", "mae_tilde_tried", "mae_tilde_effective",
    "tilde_seconds",
)


# ------------------------------------------------------------------------------ settings
def parse_setting(name: str) -> tuple[str, SettingArgs]:
    """``lao:DOMAIN`` / ``primitive:DOMAIN`` / ``minigrid-rl`` / ``minigrid-search`` / ``crafter`` /
    ``overcooked[:LAYOUT]`` as the (agent, arguments) :func:`capver.settings.build_assessment` takes."""
    agent, _, domain = name.partition(":")
    if agent in ("lao", "primitive"):
        if not domain:
            raise SettingError(f"setting {name!r}: expected {agent}:DOMAIN, e.g. {agent}:first_responders")
        return agent, SettingArgs(domain=domain, seed=SETTING_SEED)
    if agent in ("minigrid-rl", "minigrid-search", "crafter") and not domain:
        return agent, SettingArgs(seed=SETTING_SEED)
    if agent == "tabletop-llm" and not domain:  # needs CAPVER_LLM_* (the tests' scripted server will do)
        return agent, SettingArgs(seed=SETTING_SEED, layouts=10, step_cap=12)
    if agent == "overcooked":  # overcooked or overcooked:LAYOUT (capver.envs.kitchen.LAYOUTS)
        return agent, SettingArgs(domain=domain or "cramped_room", seed=SETTING_SEED)
    raise SettingError(
        f"setting {name!r}: expected lao:DOMAIN, primitive:DOMAIN, minigrid-rl, minigrid-search, crafter, "
        "tabletop-llm or overcooked[:LAYOUT]"
    )


def build_setting(name: str) -> Assessment:
    agent, args = parse_setting(name)
    return build_assessment(agent, args, np.random.default_rng(SETTING_SEED))


@dataclass(frozen=True, slots=True)
class EvalSet:
    """D′ of one setting in a form that crosses process boundaries (the dataset
    itself holds BDD-backed objects)."""

    setting: str
    capabilities: tuple[Capability, ...]
    counts: tuple[tuple[int, str, int, int], ...]  # (s, c, s′, N_e)

    @property
    def fingerprint(self) -> str:
        return hashlib.sha1(repr(self.counts).encode()).hexdigest()[:12]

    @property
    def size(self) -> int:
        return sum(n for *_, n in self.counts)

    def dataset(self, a: Assessment) -> TransitionDataset:
        return _dataset(a, self.capabilities, ((Transition(s, c, s2), n) for s, c, s2, n in self.counts))


def collect_eval_set(setting: str, n_sequences: int, executor: Executor | None = None,
                     chunk: int | None = None) -> EvalSet:
    """D′ for ``setting``, from a fixed seed (section 4.2's independent dataset); in
    chunks of ``chunk`` sequences (None: one stream, in this process), those beyond
    the first on ``executor`` (default: this process)."""
    a = build_setting(setting)
    a.setting.sim.reset(EVAL_SEED)
    agent, args = parse_setting(setting)
    with LocalExecutor() if executor is None else _borrowed(executor) as ex:
        d = collect_eval_chunked(a.setting, a.setting.capabilities, n_sequences, EVAL_SEED, ex,
                                 SettingSpec(agent, args, SETTING_SEED), chunk)
    counts = tuple(sorted((t.s, t.c, t.s_next, n) for t, n in d.items()))
    return EvalSet(setting, tuple(a.setting.capabilities), counts)


def true_transitions(a: Assessment) -> list[Transition]:
    """Every ⟨s, c, s′⟩ with Pr_true(s′|s,c) > 0 from the reachable states."""
    if a.truth is None or a.reachable is None:
        raise SettingError(f"setting {a.name}: its true model is unknown")
    return [
        Transition(s, c, s2)
        for s in sorted(a.reachable)
        for c, m in a.truth.items()
        for s2, p in m.distribution(s).items()
        if p > 0
    ]


def applicable_transitions(truth: CompoundModel, transitions: Sequence[Transition]) -> list[Transition]:
    """The transitions of the (s, c) pairs where the true action changes the state
    (an inapplicable action's no-op is not a transition of the PPDDL model QACE learns)."""
    still = {(t.s, t.c) for t in transitions if t.s_next == t.s and truth.prob(t.s, t.c, t.s) == 1}
    return [t for t in transitions if (t.s, t.c) not in still]


# ------------------------------------------------------------------------------ runs
@dataclass(frozen=True, slots=True)
class RunSpec:
    """One learning run; ``kind`` is ``"curve"`` (parts 1–2) or ``"qace"`` (part 3)."""

    setting: str
    method: str
    seed: int
    max_steps: int
    eval_every: int
    kind: str = "curve"
    tilde: int = 10  # checkpoints of a curve run at which h̃ is scored (0: none; QACE runs: all when > 0)
    xi_cap: float = 1e-5
    patience: int = 0
    iterations: int = 100
    horizon: int = 10
    executions: int = 2
    max_seconds: float | None = None
    reward: str = "disagreement"  # capver.engines.mcqs.tilde.REWARDS (the tilde reward)
    tilde_weight: float = LearnConfig().tilde_weight  # λ of the 'tilde' reward

    @property
    def label(self) -> str:
        label = self.method if self.xi_cap > 0 else f"{self.method} ξ=0"
        if self.reward == "disagreement":
            return label
        return f"{label}+h̃u" + ("" if self.tilde_weight == LearnConfig().tilde_weight else f" λ={self.tilde_weight:g}")

    def config(self) -> LearnConfig:
        return LearnConfig.from_options(
            self.method,
            executions=self.executions,
            iterations=self.iterations,
            horizon=self.horizon,
            xi_cap=self.xi_cap,
            patience=self.patience,
            max_steps=self.max_steps,
            max_seconds=self.max_seconds,
            reward=self.reward,
            tilde_weight=self.tilde_weight,
        )

    def rng(self) -> np.random.Generator:
        # Seeded by (seed, setting) only: every method meets the same stream.
        return np.random.default_rng([self.seed, zlib.crc32(self.setting.encode())])


@dataclass(frozen=True, slots=True)
class RunResult:
    spec: RunSpec
    rows: tuple[Mapping[str, object], ...]
    learn_seconds: float  # the learning loop alone, evaluations excluded
    wall_seconds: float
    stop_reason: str
    eval_fingerprint: str = ""

    @property
    def time_capped(self) -> bool:
        return self.stop_reason.startswith("time budget")


class _Stopwatch:
    """Wall time since start minus the time spent evaluating."""

    def __init__(self) -> None:
        self.start = time.perf_counter()
        self.excluded = 0.0

    def learning(self) -> float:
        return time.perf_counter() - self.start - self.excluded


def _row(spec: RunSpec, lr: Learner, clock: _Stopwatch) -> dict[str, object]:
    p = lr.progress
    return {
        "setting": spec.setting, "method": spec.label, "seed": spec.seed, "steps": p.steps,
        "queries": p.queries, "executions": p.executions, "transitions": p.unique_transitions,
        "learn_seconds": round(clock.learning(), 3),
    }


def run_curve(spec: RunSpec, eval_set: EvalSet) -> RunResult:
    """Parts 1–2: learn and score h∧ against D′ every ``eval_every`` steps."""
    a = build_setting(spec.setting)
    d_eval = eval_set.dataset(a)
    rng = spec.rng()
    a.setting.sim.reset(int(rng.integers(2**31 - 1)))
    learner = Learner(a.ctx, a.setting, spec.config(), rng, grow=a.grow)
    rows: list[dict[str, object]] = []
    # h∧ of every checkpoint (immutable, so a reference is a snapshot) and the data's
    # counts there: h̃ (lifted over objects, as capver learn writes it) is scored on
    # them after the run.
    snapshots: list[tuple[CompoundModel, tuple[Capability, ...], tuple[tuple[Transition, int], ...]]] = []
    clock = _Stopwatch()
    next_eval = [0]

    def record(lr: Learner) -> None:
        row = _row(spec, lr, clock)
        t = time.perf_counter()
        scores = checkpoint_scores(lr.h_and, lr.data, d_eval, a.truth, a.reachable)
        row.update((k, round(v, 6)) for k, v in scores.items())
        rows.append(row)
        snapshots.append((lr.h_and, lr.data.capabilities, tuple(lr.data.items())))
        next_eval[0] = lr.progress.steps + spec.eval_every
        clock.excluded += time.perf_counter() - t

    def on_query(lr: Learner) -> None:
        if lr.progress.steps >= next_eval[0]:
            record(lr)

    record(learner)
    progress = learner.run(on_query)
    if rows[-1]["steps"] != progress.steps or rows[-1]["queries"] != progress.queries:
        record(learner)
    learn_seconds, wall_seconds = clock.learning(), time.perf_counter() - clock.start
    for i in _spread(len(rows), spec.tilde):
        row, (h_and, caps, counts) = rows[i], snapshots[i]
        t = time.perf_counter()
        tilde = run_lifted_model(h_and, _dataset(a, caps, counts), spec.seed).model
        row["tilde_seconds"] = round(time.perf_counter() - t, 3)
        row.update((k, round(v, 6)) for k, v in tilde_scores(tilde, d_eval, a.truth, a.reachable).items())
    return RunResult(spec, tuple(rows), learn_seconds, wall_seconds, progress.stop_reason, eval_set.fingerprint)


def _dataset(a: Assessment, capabilities: Sequence[Capability],
             counts: Iterable[tuple[Transition, int]]) -> TransitionDataset:
    d = TransitionDataset(a.ctx.vocab, capabilities)
    for t, n in counts:
        d.add(t, count=n)
    return d


def _spread(n: int, k: int) -> list[int]:
    """``k`` indices of 0..n-1 evenly spread, the last always among them (all when
    n ≤ k, none when k = 0)."""
    if k <= 0 or n == 0:
        return []
    if n <= k:
        return list(range(n))
    return sorted({round(float(x)) for x in np.linspace(n - 1, 0, k)})


def run_qace(spec: RunSpec, every: int = 1, threshold: float = 0.0) -> RunResult:
    """Part 3: mean |P_true − P_model| of h∧ over the true transitions, every
    ``every`` queries, until it is at most ``threshold`` or a budget is spent.

    ``mae_tried`` restricts the mean to the (s, c) pairs D holds, ``mae_effective`` to
    the (s, c) pairs where the true action changes the state (it is applicable: an
    inapplicable action's no-op is not a transition of the PPDDL model QACE learns),
    and ``sc_coverage`` is the share of the true model's (s, c) pairs D holds.  The loop calls
    :meth:`Learner.query` itself rather than :meth:`Learner.run` so that it can stop
    at the threshold and so that the time cap counts learning only: one evaluation
    costs as much as several queries here."""
    a = build_setting(spec.setting)
    truth = a.truth
    if truth is None:
        raise SettingError(f"setting {spec.setting}: the QACE comparison needs a known true model")
    transitions = true_transitions(a)
    pairs = sorted({(t.s, t.c) for t in transitions})
    effective = applicable_transitions(truth, transitions)
    rng = spec.rng()
    a.setting.sim.reset(int(rng.integers(2**31 - 1)))
    learner = Learner(a.ctx, a.setting, replace(spec.config(), max_seconds=None), rng, grow=a.grow)
    rows: list[dict[str, object]] = []
    clock = _Stopwatch()

    def record(lr: Learner) -> float:
        row = _row(spec, lr, clock)
        t = time.perf_counter()
        data = lr.data
        tried = [tr for tr in transitions if data.count_sc(tr.s, tr.c)]
        mae = mean_abs_error(lr.h_and, truth, transitions)
        row["mae"] = round(mae, 6)
        row["mae_tried"] = round(mean_abs_error(lr.h_and, truth, tried), 6) if tried else ""
        row["mae_effective"] = round(mean_abs_error(lr.h_and, truth, effective), 6)
        row["sc_coverage"] = round(sum(1 for s, c in pairs if data.count_sc(s, c)) / len(pairs), 6)
        if spec.tilde > 0:
            t_tilde = time.perf_counter()
            tilde = run_lifted_model(lr.h_and, data, spec.seed).model
            row["tilde_seconds"] = round(time.perf_counter() - t_tilde, 3)
            row["mae_tilde"] = round(mean_abs_error(tilde, truth, transitions), 6)
            row["mae_tilde_tried"] = round(mean_abs_error(tilde, truth, tried), 6) if tried else ""
            row["mae_tilde_effective"] = round(mean_abs_error(tilde, truth, effective), 6)
        rows.append(row)
        clock.excluded += time.perf_counter() - t
        return mae

    p = learner.progress
    reason = ""
    mae = record(learner)
    while not reason:
        if mae <= threshold:
            reason = f"error ≤ {threshold}"
        elif p.steps >= spec.max_steps:
            reason = f"step budget {spec.max_steps}"
        elif spec.max_seconds is not None and clock.learning() >= spec.max_seconds:
            reason = f"time budget {spec.max_seconds}s of learning"
        elif spec.patience and p.since_change >= spec.patience:
            reason = f"converged: {spec.patience} queries without change"
        else:
            learner.query()
            if p.queries % every == 0:
                mae = record(learner)
    if rows[-1]["queries"] != p.queries:
        record(learner)
    return RunResult(spec, tuple(rows), clock.learning(), time.perf_counter() - clock.start, reason)


@dataclass(frozen=True, slots=True)
class Job:
    spec: RunSpec
    eval_set: EvalSet | None = None
    qace_every: int = 1
    qace_threshold: float = 0.0


class _borrowed:
    """An executor the caller owns: not closed on leaving the block."""

    def __init__(self, executor: Executor) -> None:
        self.executor = executor

    def __enter__(self) -> Executor:
        return self.executor

    def __exit__(self, *exc: object) -> None:
        pass


def _run_job_task(_: None, job: Job) -> RunResult:
    return run_job(job)


def run_job(job: Job) -> RunResult:
    """Module-level so that a process pool can pickle it."""
    if job.spec.kind == "qace":
        return run_qace(job.spec, job.qace_every, job.qace_threshold)
    if job.eval_set is None:
        raise ValueError("a curve run needs its setting's D′")
    return run_curve(job.spec, job.eval_set)


def run_jobs(jobs: Sequence[Job], n_procs: int, log: Callable[[str], None],
             executor: Executor | None = None) -> list[RunResult]:
    """Independent runs on ``executor``, by default a local pool of ``n_procs``
    processes (this one for 1); the expensive methods are started first so the
    workers stay busy to the end.  The results come back in the order of ``jobs``."""
    cost = {"mcqs-e": 0, "mcqs-s": 1, "random": 2}
    order = sorted(jobs, key=lambda j: (j.spec.kind != "qace", cost.get(j.spec.method, 3)))
    results: list[RunResult] = []

    def done(_: int, r: RunResult) -> None:
        results.append(r)
        s = r.spec
        log(f"[{len(results)}/{len(jobs)}] {s.setting} {s.label} seed {s.seed}: {r.rows[-1]['steps']} steps, "
            f"{r.learn_seconds:.1f}s learning ({r.stop_reason})")

    with LocalExecutor(n_procs) if executor is None else _borrowed(executor) as ex:
        ex.map(_run_job_task, order, on_result=done)
    index = {j.spec: i for i, j in enumerate(jobs)}
    return sorted(results, key=lambda r: index[r.spec])


# ------------------------------------------------------------------------------ analysis
Curve = list[tuple[float, float]]


def curve(result: RunResult, metric: str) -> Curve:
    return [(float(r["steps"]), float(r[metric])) for r in result.rows  # type: ignore[arg-type]
            if r.get(metric, "") != ""]


def steps_to_reach(points: Curve, threshold: float, sustained: bool = False) -> float | None:
    """Steps at the first checkpoint (after the initial one) whose value is at least
    ``threshold``; with ``sustained`` the first from which it never drops below."""
    hit: float | None = None
    for steps, v in points[1:]:
        if v >= threshold:
            if hit is None:
                hit = steps
                if not sustained:
                    return hit
        elif sustained:
            hit = None
    return hit


def mean_curve(curves: Sequence[Curve]) -> tuple[np.ndarray, np.ndarray]:
    """The seed mean on the union of checkpoint steps; a run that stopped early keeps
    its last value."""
    grid = np.unique(np.concatenate([[s for s, _ in c] for c in curves]))
    ys = [np.interp(grid, [s for s, _ in c], [v for _, v in c]) for c in curves]
    return grid, np.mean(ys, axis=0)


def first_crossing(grid: np.ndarray, values: np.ndarray, target: float) -> float | None:
    """The step at which the piecewise-linear curve first reaches ``target``."""
    above = np.nonzero(values >= target - 1e-12)[0]
    if not len(above):
        return None
    i = int(above[0])
    if i == 0:
        return float(grid[0])
    x0, x1, y0, y1 = grid[i - 1], grid[i], values[i - 1], values[i]
    # values[i] may fall short of the target by the 1e-12 tolerance; the crossing is
    # then at grid[i], not beyond it.
    return float(min(x1, x0 + (target - y0) * (x1 - x0) / (y1 - y0)))


@dataclass(frozen=True, slots=True)
class Reach:
    mean_steps: float | None  # over the seeds that reached it
    reached: int
    seeds: int


@dataclass(frozen=True, slots=True)
class SummaryRow:
    setting: str
    method: str
    seeds: int
    budget: int
    steps: float
    time_capped: int
    reach: Mapping[tuple[str, float], Reach]
    ratio: Mapping[tuple[str, float], str]  # Random ÷ this method (empty for Random itself)
    ratio_final_coverage: str
    cov_at_budget: float
    final: Mapping[str, tuple[float, float]]  # metric → (mean, std)
    exact_vd: float | None
    learn_seconds: float
    wall_seconds: float
    final_tilde: tuple[float, float] | None = None  # h̃'s final coverage agreement (mean, std)
    exact_vd_tilde: float | None = None
    ratio_final_tilde: str = ""  # Random ÷ this method, to this method's final h̃ coverage agreement


def _fmt_ratio(num: float, den: float, lower_bound: bool = False) -> str:
    if den <= 0:
        return "—"
    return f"{'>' if lower_bound else ''}{num / den:.1f}×"


def summarize(results: Sequence[RunResult], budgets: Mapping[str, int], sustained: bool = False) -> list[SummaryRow]:
    """One row per (setting, method label) of the curve runs, in the order of ``results``."""
    groups: dict[tuple[str, str], list[RunResult]] = {}
    for r in results:
        if r.spec.kind == "curve":
            groups.setdefault((r.spec.setting, r.spec.label), []).append(r)
    out = []
    for (setting, label), runs in groups.items():
        reach: dict[tuple[str, float], Reach] = {}
        for metric in METRICS:
            for thr in THRESHOLDS:
                hits = [h for h in (steps_to_reach(curve(r, metric), thr, sustained) for r in runs) if h is not None]
                reach[(metric, thr)] = Reach(float(np.mean(hits)) if hits else None, len(hits), len(runs))
        final = {}
        for metric in METRICS:
            values = [curve(r, metric)[-1][1] for r in runs]
            final[metric] = (float(np.mean(values)), float(np.std(values)))
        vds = [float(r.rows[-1]["exact_vd"]) for r in runs if r.rows[-1].get("exact_vd", "") != ""]  # type: ignore[arg-type]
        tilde_cov = [float(r.rows[-1]["coverage_agreement_tilde"]) for r in runs  # type: ignore[arg-type]
                     if r.rows[-1].get("coverage_agreement_tilde", "") != ""]
        tilde_vds = [float(r.rows[-1]["exact_vd_tilde"]) for r in runs  # type: ignore[arg-type]
                     if r.rows[-1].get("exact_vd_tilde", "") != ""]
        budget = budgets[setting]
        cov_curves = [curve(r, "coverage_agreement") for r in runs]
        cov_b = float(np.mean([np.interp(budget, [s for s, _ in c], [v for _, v in c]) for c in cov_curves]))
        out.append(SummaryRow(
            setting, label, len(runs), budget, float(np.mean([float(r.rows[-1]["steps"]) for r in runs])),  # type: ignore[arg-type]
            sum(r.time_capped for r in runs), reach, {}, "", cov_b, final,
            float(np.mean(vds)) if vds else None,
            float(np.mean([r.learn_seconds for r in runs])), float(np.mean([r.wall_seconds for r in runs])),
            (float(np.mean(tilde_cov)), float(np.std(tilde_cov))) if tilde_cov else None,
            float(np.mean(tilde_vds)) if tilde_vds else None,
        ))
    return [_with_ratios(row, out, groups) for row in out]


def _with_ratios(
    row: SummaryRow, rows: Sequence[SummaryRow], groups: Mapping[tuple[str, str], list[RunResult]]
) -> SummaryRow:
    """Random ÷ this row's method, at each threshold and at this method's final
    coverage agreement of h∧ and of h̃."""
    base = next((r for r in rows if r.setting == row.setting and r.method == "random"), None)
    if base is None or row.method == "random":
        return row
    ratio: dict[tuple[str, float], str] = {}
    for key, mine in row.reach.items():
        theirs = base.reach[key]
        if mine.reached < mine.seeds or mine.mean_steps is None:
            ratio[key] = "—"
        elif theirs.reached == theirs.seeds and theirs.mean_steps is not None:
            ratio[key] = _fmt_ratio(theirs.mean_steps, mine.mean_steps)
        elif theirs.reached == 0:
            ratio[key] = _fmt_ratio(base.steps, mine.mean_steps, lower_bound=True)
        else:
            ratio[key] = "—"
    at_final = _ratio_at_level(groups, row, "coverage_agreement", row.final["coverage_agreement"][0])
    at_tilde = "—" if row.final_tilde is None else _ratio_at_level(
        groups, row, "coverage_agreement_tilde", row.final_tilde[0])
    return replace(row, ratio=ratio, ratio_final_coverage=at_final, ratio_final_tilde=at_tilde)


def _ratio_at_level(
    groups: Mapping[tuple[str, str], list[RunResult]], row: SummaryRow, metric: str, target: float
) -> str:
    """Random's steps ÷ ``row``'s method's steps to first reach ``target`` on the seed
    means of ``metric`` (piecewise linear between the checkpoints that have it); a
    lower bound when Random's whole run stays below."""
    mine_points = [curve(r, metric) for r in groups[(row.setting, row.method)]]
    rand_points = [curve(r, metric) for r in groups[(row.setting, "random")]]
    if not all(mine_points) or not all(rand_points):
        return "—"
    mine_curve, rand_curve = mean_curve(mine_points), mean_curve(rand_points)
    mine_steps = first_crossing(*mine_curve, target)
    rand_steps = first_crossing(*rand_curve, target)
    if mine_steps is None or mine_steps <= 0:
        return "—"
    if rand_steps is None:
        return _fmt_ratio(float(rand_curve[0][-1]), mine_steps, lower_bound=True)
    return _fmt_ratio(rand_steps, mine_steps)


@dataclass(frozen=True, slots=True)
class QaceRow:
    method: str
    seeds: int
    reached: int
    steps: float | None  # means over the seeds that reached the threshold
    executions: float | None
    learn_seconds: float | None
    best_mae: float
    best_steps: float
    best_seconds: float
    final_mae_tried: float | None
    final_mae_effective: float
    final_sc_coverage: float
    budget_steps: float
    tilde: QaceTilde | None = None


@dataclass(frozen=True, slots=True)
class QaceTilde:
    """The QACE columns of h̃; ``seconds`` are learning plus building h̃ there."""

    reached: int
    steps: float | None
    executions: float | None
    seconds: float | None
    best_mae: float
    best_steps: float
    final_mae: float
    final_mae_effective: float
    final_mae_tried: float | None


def summarize_qace(results: Sequence[RunResult], threshold: float) -> list[QaceRow]:
    groups: dict[str, list[RunResult]] = {}
    for r in results:
        if r.spec.kind == "qace":
            groups.setdefault(r.spec.label, []).append(r)

    def mean(rows: Iterable[Mapping[str, object]], key: str) -> float:
        return float(np.mean([float(row[key]) for row in rows]))  # type: ignore[arg-type]

    out = []
    for label, runs in groups.items():
        hits, bests = [], []
        for r in runs:
            rows = [row for row in r.rows if row.get("mae", "") != ""]
            hit = next((row for row in rows if float(row["mae"]) <= threshold), None)  # type: ignore[arg-type]
            if hit is not None:
                hits.append(hit)
            bests.append(min(rows, key=lambda row: (float(row["mae"]), float(row["steps"]))))  # type: ignore[arg-type]
        tried = [float(r.rows[-1]["mae_tried"]) for r in runs if r.rows[-1].get("mae_tried", "") != ""]  # type: ignore[arg-type]
        tilde = _qace_tilde(runs, threshold)
        out.append(QaceRow(
            label, len(runs), len(hits),
            mean(hits, "steps") if hits else None,
            mean(hits, "executions") if hits else None,
            mean(hits, "learn_seconds") if hits else None,
            mean(bests, "mae"), mean(bests, "steps"), mean(bests, "learn_seconds"),
            float(np.mean(tried)) if tried else None,
            mean([r.rows[-1] for r in runs], "mae_effective"),
            mean([r.rows[-1] for r in runs], "sc_coverage"),
            mean([r.rows[-1] for r in runs], "steps"),
            tilde,
        ))
    return out


def _qace_tilde(runs: Sequence[RunResult], threshold: float) -> QaceTilde | None:
    """h̃'s QACE numbers over the runs (None when h̃ was not scored)."""
    per_run = [[row for row in r.rows if row.get("mae_tilde", "") != ""] for r in runs]
    if not all(per_run):
        return None

    def num(row: Mapping[str, object], key: str) -> float:
        return float(row[key])  # type: ignore[arg-type]

    hits = [h for h in (next((row for row in rows if num(row, "mae_tilde") <= threshold), None) for rows in per_run)
            if h is not None]
    bests = [min(rows, key=lambda row: (num(row, "mae_tilde"), num(row, "steps"))) for rows in per_run]
    finals = [rows[-1] for rows in per_run]
    tried = [num(row, "mae_tilde_tried") for row in finals if row.get("mae_tilde_tried", "") != ""]

    def mean(rows: Sequence[Mapping[str, object]], key: str) -> float:
        return float(np.mean([num(row, key) for row in rows]))

    return QaceTilde(
        len(hits),
        mean(hits, "steps") if hits else None,
        mean(hits, "executions") if hits else None,
        float(np.mean([num(h, "learn_seconds") + num(h, "tilde_seconds") for h in hits])) if hits else None,
        mean(bests, "mae_tilde"), mean(bests, "steps"), mean(finals, "mae_tilde"), mean(finals, "mae_tilde_effective"),
        float(np.mean(tried)) if tried else None,
    )


# ------------------------------------------------------------------------------ output
def _reach_cell(r: Reach) -> str:
    if r.mean_steps is None:
        return f"— (0/{r.seeds})"
    return f"{r.mean_steps:.0f} ({r.reached}/{r.seeds})"


def _pm(mean_std: tuple[float, float]) -> str:
    return f"{mean_std[0]:.4f} ± {mean_std[1]:.4f}"


def main_table(rows: Sequence[SummaryRow]) -> list[str]:
    head = ["setting", "method", "seeds", "budget", "steps", "time-capped"]
    for metric in METRICS:
        head += [f"{SHORT[metric]}→{thr:.0%}" for thr in THRESHOLDS]
    for metric in METRICS:
        head += [f"R÷M {SHORT[metric]} {thr:.0%}" for thr in THRESHOLDS]
    head += ["R÷M @final cov", "cov@budget", "final agr", "final cov", "exact VD", "learn s", "wall s",
             "final cov h̃", "exact VD h̃", "R÷M @final cov h̃"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r.setting, r.method, str(r.seeds), str(r.budget), f"{r.steps:.0f}", f"{r.time_capped}/{r.seeds}"]
        cells += [_reach_cell(r.reach[(m, t)]) for m in METRICS for t in THRESHOLDS]
        cells += [r.ratio.get((m, t), "") for m in METRICS for t in THRESHOLDS]
        cells += [
            r.ratio_final_coverage, f"{r.cov_at_budget:.4f}", _pm(r.final["agreement"]),
            _pm(r.final["coverage_agreement"]), "—" if r.exact_vd is None else f"{r.exact_vd:.4f}",
            f"{r.learn_seconds:.3f}", f"{r.wall_seconds:.3f}",
            "—" if r.final_tilde is None else _pm(r.final_tilde),
            "—" if r.exact_vd_tilde is None else f"{r.exact_vd_tilde:.4f}",
            r.ratio_final_tilde,
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def qace_table(rows: Sequence[QaceRow], threshold: float) -> list[str]:
    head = [
        "method", "seeds", f"reached ≤{threshold}", "steps at threshold", "executions at threshold",
        "learn s at threshold", "best MAE", "steps at best", "learn s at best", "final MAE on tried (s,c)",
        "final MAE on applicable (s,c)", "final (s,c) coverage", "steps run",
        f"h̃ reached ≤{threshold}", "h̃ steps at threshold", "h̃ executions at threshold", "h̃ s at threshold",
        "h̃ best MAE", "h̃ final MAE", "h̃ final MAE on applicable (s,c)", "h̃ final MAE on tried (s,c)",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]

    def num(v: float | None, fmt: str) -> str:
        return "—" if v is None else format(v, fmt)

    for r in rows:
        lines.append("| " + " | ".join([
            r.method, str(r.seeds), f"{r.reached}/{r.seeds}", num(r.steps, ".0f"), num(r.executions, ".0f"),
            num(r.learn_seconds, ".1f"), f"{r.best_mae:.4f}", f"{r.best_steps:.0f}", f"{r.best_seconds:.1f}",
            num(r.final_mae_tried, ".4f"), f"{r.final_mae_effective:.4f}", f"{r.final_sc_coverage:.3f}", f"{r.budget_steps:.0f}",
            *_tilde_cells(r, num),
        ]) + " |")
    return lines


def _tilde_cells(r: QaceRow, num: Callable[[float | None, str], str]) -> list[str]:
    t = r.tilde
    if t is None:
        return ["—"] * 8
    return [f"{t.reached}/{r.seeds}", num(t.steps, ".0f"), num(t.executions, ".0f"), num(t.seconds, ".1f"),
            f"{t.best_mae:.4f}", f"{t.final_mae:.4f}", f"{t.final_mae_effective:.4f}", num(t.final_mae_tried, ".4f")]


def write_runs(path: Path, results: Iterable[RunResult]) -> None:
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CURVE_FIELDS, extrasaction="ignore", restval="")
        w.writeheader()
        for r in results:
            w.writerows(r.rows)


def write_plots(out: Path, results: Sequence[RunResult]) -> list[Path]:
    """``SETTING_METRIC.png`` per setting and recorded metric (mean over seeds)."""
    paths = []
    by_setting: dict[tuple[str, str], list[Mapping[str, object]]] = {}
    for r in results:
        by_setting.setdefault((r.spec.setting, r.spec.kind), []).extend(r.rows)
    for (setting, kind), rows in by_setting.items():
        metrics = ("mae", "mae_tilde") if kind == "qace" else (*METRICS, "exact_vd", "coverage_agreement_tilde")
        for metric in metrics:
            if not any(row.get(metric, "") != "" for row in rows):
                continue
            path = out / f"{setting.replace(':', '_')}_{metric}.png"
            plot_curves(rows, path, metric=metric, title=setting + (" (QACE comparison)" if kind == "qace" else ""))
            paths.append(path)
    return paths


# ------------------------------------------------------------------------------ CLI
def _positive(text: str) -> int:
    v = int(text)
    if v < 1:
        raise ValueError(f"expected a positive integer, got {text!r}")
    return v


def _budgets(text: str | None, settings: Sequence[str], quick: bool) -> dict[str, int]:
    """``N`` (every setting) or ``SETTING=N,…`` (the others keep their default)."""
    base = {s: QUICK_BUDGET if quick else DEFAULT_BUDGETS.get(s, FALLBACK_BUDGET) for s in settings}
    if not text:
        return base
    try:
        if "=" not in text:
            return {s: _positive(text) for s in settings}
        for part in text.split(","):
            name, _, value = part.partition("=")
            if name not in base:
                raise ValueError(f"{name!r} is not one of --settings {list(settings)}")
            base[name] = _positive(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"--budget-steps {text!r}: {exc}") from None
    return base


def _csv_list(text: str) -> list[str]:
    return [p.strip() for p in text.split(",") if p.strip()]


def _reward_ok(text: str) -> bool:
    """A --rewards entry: a reward's name, or 'tilde:λ' with λ ∈ [0, 1]."""
    name, sep, weight = text.partition(":")
    if name not in REWARDS:
        return False
    if not sep:
        return True
    try:
        return name == "tilde" and 0.0 <= float(weight) <= 1.0
    except ValueError:
        return False


def build_parser() -> BenchParser:
    p = BenchParser("learning", summary(__doc__))
    p.add_argument("--settings", type=_csv_list, default=list(DEFAULT_SETTINGS),
                   help="comma-separated: lao:DOMAIN, primitive:DOMAIN, minigrid-rl, minigrid-search, tabletop-llm, overcooked[:LAYOUT] "
                        f"(default {','.join(DEFAULT_SETTINGS)})")
    p.add_argument("--methods", type=_csv_list, default=["mcqs-e", "mcqs-s", "random"],
                   help=f"comma-separated, from {sorted(QUERY_METHODS)} (default mcqs-e,mcqs-s,random)")
    p.add_argument("--seeds", type=int, default=3, help="runs per (setting, method) (default 3)")
    p.add_argument("--rewards", type=_csv_list, default=["disagreement"],
                   help=f"comma-separated query-synthesis rewards of the MCQS curve runs, from {sorted(REWARDS)}, "
                        "'tilde' optionally with its weight, 'tilde:0.1'; runs with 'tilde' are labelled "
                        "METHOD+h̃u (default disagreement)")
    p.add_argument("--budget-steps", metavar="N|SETTING=N,...",
                   help=f"simulator-step budget of the MCQS runs (default {DEFAULT_BUDGETS}, {FALLBACK_BUDGET} "
                        f"for other settings; --quick: {QUICK_BUDGET} each)")
    p.add_argument("--budget-scale", type=float, default=1.0,
                   help="multiply every step budget (after --budget-steps) by this factor (default 1)")
    p.add_argument("--random-factor", type=float, default=8.0,
                   help="Random runs get this many times the step budget (default 8)")
    p.add_argument("--max-seconds", type=float, default=45.0,
                   help="wall-clock cap of each run, evaluations included (0: none; default 45)")
    p.add_argument("--eval-sequences", type=int, default=300, help="sequences in each setting's D′ (default 300)")
    p.add_argument("--eval-chunk", type=int, default=None, metavar="N",
                   help=f"collect D′ in chunks of N sequences on the executor's workers (e.g. {SUGGESTED_CHUNK:,}); "
                        "chunk k ≥ 1 has its own seeds, so D′ depends on N, never on the executor (default: one "
                        "stream in this process, the recorded D′)")
    p.add_argument("--eval-every", type=int, default=0,
                   help="checkpoint every this many simulator steps (default: budget/40)")
    p.add_argument("--crossing", choices=("first", "sustained"), default="first",
                   help="steps to a threshold: first checkpoint reaching it, or from which it stays reached "
                        "(default first)")
    p.add_argument("--patience", type=int, default=0,
                   help="stop after this many queries without change (default 0: off; paper: 25)")
    p.add_argument("--iterations", type=int, default=100, help="MCTS iterations per plan (default 100)")
    p.add_argument("--horizon", type=int, default=10, help="query horizon (default 10)")
    p.add_argument("--executions", type=int, default=2, help="executions n per query (default 2)")
    p.add_argument("--ablation", action=argparse.BooleanOptionalAction, default=True,
                   help="ξ = 0 runs on the lao settings (section 4.2's E4; default on)")
    p.add_argument("--ablation-methods", type=_csv_list, default=["mcqs-s", "mcqs-e"],
                   help="comma-separated methods of the ξ = 0 runs (default mcqs-s,mcqs-e)")
    p.add_argument("--qace", action=argparse.BooleanOptionalAction, default=True,
                   help=f"the primitive-action comparison on {QACE_SETTING} (default on)")
    p.add_argument("--qace-methods", type=_csv_list, default=["mcqs-s", "mcqs-e", "random"],
                   help="comma-separated methods of the QACE comparison (default mcqs-s,mcqs-e,random)")
    p.add_argument("--qace-budget-steps", type=int, default=500,
                   help="simulator-step budget of each QACE run (default 500)")
    p.add_argument("--qace-threshold", type=float, default=0.009,
                   help="a QACE run stops once its mean |P_true − P_h∧| is at most this (default 0.009, QACE's)")
    p.add_argument("--qace-every", type=int, default=5,
                   help="evaluate the QACE error every this many queries (default 5: one evaluation costs "
                        "about as much as 2–3 queries)")
    p.add_argument("--qace-max-seconds", type=float, default=60.0,
                   help="learning-time cap of each QACE run, evaluations excluded (0: none; default 60)")
    p.add_argument("--tilde", type=int, default=10, metavar="K",
                   help="score the Occam model h̃ at K checkpoints of each curve run, the last among them, and at "
                        "every QACE checkpoint (0: never; default 10; h∧'s numbers do not depend on it)")
    p.add_argument("--jobs", type=int, default=2,
                   help="workers: processes, threads or Ray actors (default 2; local with 1: this process)")
    p.add_argument("--executor", choices=sorted(EXECUTORS), default="local",
                   help="where the runs and D′ chunks go: local processes, threads or ray (default local)")
    p.add_argument("--address", default=None, metavar="ADDR",
                   help="--executor ray: the cluster to join (HOST:6379 or 'auto'; default: a new local instance)")
    p.add_argument("--out", type=Path, default=Path("bench-learning"),
                   help="output directory (default bench-learning)")
    p.add_quick(QUICK, "a smoke run: every part on tiny budgets")
    return p


def plan_jobs(args: argparse.Namespace, budgets: Mapping[str, int], eval_sets: Mapping[str, EvalSet]) -> list[Job]:
    common = {"patience": args.patience, "iterations": args.iterations, "horizon": args.horizon,
              "executions": args.executions, "max_seconds": args.max_seconds or None, "tilde": args.tilde}
    jobs = []
    for setting in args.settings:
        budget = budgets[setting]
        every = args.eval_every or max(1, budget // 40)
        for method in args.methods:
            steps = int(budget * args.random_factor) if method == "random" else budget
            # Random synthesizes no query, so a reward does not change it.
            for reward in (["disagreement"] if method == "random" else args.rewards):
                name, _, weight = reward.partition(":")
                lam = float(weight) if weight else LearnConfig().tilde_weight
                for seed in range(args.seeds):
                    spec = RunSpec(setting, method, seed, steps, every, reward=name, tilde_weight=lam, **common)
                    jobs.append(Job(spec, eval_sets[setting]))
        if args.ablation and setting.startswith("lao:"):
            for method in args.ablation_methods:
                for seed in range(args.seeds):
                    spec = RunSpec(setting, method, seed, budget, every, xi_cap=0.0, **common)
                    jobs.append(Job(spec, eval_sets[setting]))
    if args.qace:
        for method in args.qace_methods:
            for seed in range(args.seeds):
                spec = RunSpec(QACE_SETTING, method, seed, args.qace_budget_steps, 1, kind="qace",
                               **{**common, "max_seconds": args.qace_max_seconds or None})
                jobs.append(Job(spec, None, args.qace_every, args.qace_threshold))
    return jobs


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse(argv)
    unknown = sorted(m for m in {*args.methods, *args.qace_methods, *args.ablation_methods} if m not in QUERY_METHODS)
    if unknown:
        parser.error(f"unknown method(s) {unknown}; expected some of {sorted(QUERY_METHODS)}")
    bad = sorted(r for r in args.rewards if not _reward_ok(r))
    if bad or not args.rewards:
        parser.error(f"--rewards: unknown reward(s) {bad}; expected some of {sorted(REWARDS)}, 'tilde' optionally "
                     "as 'tilde:λ' with λ in [0, 1]")
    if (args.seeds < 1 or args.jobs < 1 or args.eval_sequences < 1 or args.random_factor <= 0
            or args.budget_scale <= 0 or (args.eval_chunk is not None and args.eval_chunk < 1)):
        parser.error("--seeds, --jobs, --eval-sequences, --eval-chunk, --random-factor and --budget-scale must be "
                     "positive")
    if args.eval_every < 0 or args.tilde < 0 or args.qace_every < 1 or args.qace_budget_steps < 1:
        parser.error("--eval-every and --tilde must be ≥ 0, --qace-every and --qace-budget-steps ≥ 1")
    for s in args.settings:
        try:
            parse_setting(s)
        except SettingError as exc:
            parser.error(f"--settings: {exc}")
    try:
        budgets = _budgets(args.budget_steps, args.settings, args.quick)
    except argparse.ArgumentTypeError as exc:
        parser.error(str(exc))
    budgets = {s: max(1, round(b * args.budget_scale)) for s, b in budgets.items()}
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    start = time.perf_counter()
    eval_sets = {}
    executor = make_executor(args.executor, args.jobs, args.address)
    try:
        for s in args.settings:
            eval_sets[s] = e = collect_eval_set(s, args.eval_sequences, executor, args.eval_chunk)
            log(f"D′ {s}: {args.eval_sequences} sequences, {e.size} executions, {len(e.counts)} unique transitions")
        results = run_jobs(plan_jobs(args, budgets, eval_sets), args.jobs, log, executor)
    finally:
        executor.close()
    for r in results:
        if r.spec.kind == "curve" and r.eval_fingerprint != eval_sets[r.spec.setting].fingerprint:
            raise RuntimeError(f"{r.spec}: evaluated against a different D′")
    total = time.perf_counter() - start

    lines = [
        "# capver bench learning",
        "",
        f"Seeds {args.seeds}; step budgets " + ", ".join(f"{s} {b}" for s, b in budgets.items())
        + f" (Random × {args.random_factor:g}); time cap {args.max_seconds or 'none'} s per run; "
        f"MCTS {args.iterations} iterations, horizon {args.horizon}; {args.executions} executions per query; "
        f"patience {args.patience or 'off'}; thresholds: {args.crossing} checkpoint reaching them.",
        ("agr = section 4.2's model agreement 1 − VD_s (learner-count weighted); cov = coverage agreement "
        "(1 − VD weighted by D′'s counts). R÷M = Random's steps ÷ the method's; '@final cov' compares at the "
        "method's final coverage agreement on the seed-mean curves ('>': Random never got there)."),
        f"D′ ({args.eval_sequences} sequences): "
        + "; ".join(f"{s} {e.size} executions, {len(e.counts)} unique transitions" for s, e in eval_sets.items())
        + ".",
        "",
        *main_table(summarize(results, budgets, args.crossing == "sustained")),
    ]
    if args.qace:
        lines += [
            "",
            (f"## Primitive actions on First Responders (QACE comparison; {QACE_TARGET}; "
            "aim ≤ 500 interactions, ≤ 30 s)"),
            "",
            ("Mean |P_true − P_h∧| over all true transitions from the reachable states, evaluated every "
            f"{args.qace_every} quer{'y' if args.qace_every == 1 else 'ies'}; step budget {args.qace_budget_steps}, "
            f"learning-time cap {args.qace_max_seconds or 'none'} s; a run stops at the threshold. 'Steps' are "
            "simulator interactions (executions of an inapplicable action take none); 'MAE on tried (s,c)' "
            "restricts the mean to the (s, c) pairs D holds; 'applicable' to the (s, c) pairs where the action changes "
            "the state. The h̃ columns score the Occam model h̃ on the same checkpoints; its time adds the "
            "seconds spent building h̃ there."),
            "",
            *qace_table(summarize_qace(results, args.qace_threshold), args.qace_threshold),
        ]
    lines += ["", (f"Total wall-clock {total:.0f} s with {args.jobs} {args.executor} worker(s); learn s excludes evaluation, "
              "wall s includes it (setting construction excluded).")]
    text = "\n".join(lines) + "\n"
    (out / "table.md").write_text(text)
    write_runs(out / "runs.csv", results)
    write_plots(out, results)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())

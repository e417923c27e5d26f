"""The learning runs of ``capver bench learning`` (paper, section 4.2, E1/E4 and the
QACE comparison): one run's specification, the curve run (h∧ scored against D′ at
checkpoints, h̃ afterwards), the QACE run (mean |P_true − P_h∧| until a threshold),
and running many of them on an executor."""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from capver.bench.learning.settings import (
    EvalSet,
    _borrowed,
    _dataset,
    applicable_transitions,
    build_setting,
    true_transitions,
)
from capver.core.state import Capability, Transition
from capver.engines.evaluation import checkpoint_scores, mean_abs_error, tilde_scores
from capver.engines.executors import Executor, LocalExecutor
from capver.engines.learning import LearnConfig, Learner
from capver.engines.lifting import run_lifted_model
from capver.model.capability_model import CompoundModel
from capver.settings import SettingError


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
        "setting": spec.setting,
        "method": spec.label,
        "seed": spec.seed,
        "steps": p.steps,
        "queries": p.queries,
        "executions": p.executions,
        "transitions": p.unique_transitions,
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


def _run_job_task(_: None, job: Job) -> RunResult:
    return run_job(job)


def run_job(job: Job) -> RunResult:
    """Module-level so that a process pool can pickle it."""
    if job.spec.kind == "qace":
        return run_qace(job.spec, job.qace_every, job.qace_threshold)
    if job.eval_set is None:
        raise ValueError("a curve run needs its setting's D′")
    return run_curve(job.spec, job.eval_set)


def run_jobs(
    jobs: Sequence[Job], n_procs: int, log: Callable[[str], None], executor: Executor | None = None
) -> list[RunResult]:
    """Independent runs on ``executor``, by default a local pool of ``n_procs``
    processes (this one for 1); the expensive methods are started first so the
    workers stay busy to the end.  The results come back in the order of ``jobs``."""
    cost = {"mcqs-e": 0, "mcqs-s": 1, "random": 2}
    order = sorted(jobs, key=lambda j: (j.spec.kind != "qace", cost.get(j.spec.method, 3)))
    results: list[RunResult] = []

    def done(_: int, r: RunResult) -> None:
        results.append(r)
        s = r.spec
        log(
            f"[{len(results)}/{len(jobs)}] {s.setting} {s.label} seed {s.seed}: {r.rows[-1]['steps']} steps, "
            f"{r.learn_seconds:.1f}s learning ({r.stop_reason})"
        )

    with LocalExecutor(n_procs) if executor is None else _borrowed(executor) as ex:
        ex.map(_run_job_task, order, on_result=done)
    index = {j.spec: i for i, j in enumerate(jobs)}
    return sorted(results, key=lambda r: index[r.spec])

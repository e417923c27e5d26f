"""What a capability execution costs in an environment, and how coarse α is there
(for the benchmarks of the paper's other agents: snapshot/restore cost and executions
per second in each environment).

:func:`bench_dprime` collects D′ as ``capver bench learning`` does (from
:data:`~capver.bench.learning.EVAL_SEED`, sequences of 10–30 uniformly random
capabilities, each run by :func:`~capver.engines.execution.execute` under the
setting's budget) and measures, on the way, executions per second (wall-clock and
CPU), steps per execution, how each capability's executions ended, and the
aggregation α causes: how many distinct environment states stand behind each
symbolic state at execution boundaries (D′'s s and s′) and, optionally, among every
state an execution passes through.  :func:`print_dprime` prints it as the markdown
tables of ``capver bench crafter`` and ``capver bench overcooked`` (their snapshot
micro-benchmarks stay with them: each environment snapshots differently).
"""

from __future__ import annotations

import dataclasses
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from capver.bench.learning.settings import EVAL_SEED
from capver.core.state import State
from capver.core.vocabulary import Vocabulary
from capver.engines.execution import execute
from capver.engines.learning import Setting
from capver.envs.base import Representation


class RecordingAlpha:
    """α that also notes which environment states (by hash) it saw behind each
    symbolic state: the executor applies α to every state an execution passes
    through, so this sees more than D′'s boundaries."""

    def __init__(self, alpha: Representation[Any]) -> None:
        self.alpha = alpha
        self.seen: dict[State, set[int]] = defaultdict(set)

    @property
    def vocabulary(self) -> Vocabulary:
        return self.alpha.vocabulary

    def __call__(self, x: Any) -> State:
        s = self.alpha(x)
        # Hashes, not the states: a Crafter snapshot of every step would not fit.
        self.seen[s].add(hash(x))
        return s


@dataclass(frozen=True, slots=True)
class DPrimeRun:
    """One timed collection of D′ (sizes are sorted ascending)."""

    sequences: int
    step_cap: int
    theta: int | None
    executions: int
    steps: int
    wall: float  # seconds inside execute(), wall-clock
    cpu: float  # the same, CPU
    outcomes: Mapping[str, Counter[str]]  # capability → how its executions ended → count
    boundaries: tuple[int, ...]  # environment states behind each symbolic state of D′'s s and s′
    every_state: tuple[int, ...] | None  # the same over every state α saw; None if not recorded


def bench_dprime(
    setting: Setting, sequences: int, *, random_start: bool = True, every_state: bool = False
) -> DPrimeRun:
    """D′ of ``setting`` as ``capver bench learning`` collects it, timed, with the
    environment states behind each symbolic state.  ``random_start``: each sequence
    starts at a uniformly drawn state of ``setting.initial_states`` (False: always at
    the first, drawing nothing, which keeps the random stream of a one-state setting
    as it was).  ``every_state``: also count the states behind α's every call."""
    recorder = RecordingAlpha(setting.alpha) if every_state else None
    if recorder is not None:
        setting = dataclasses.replace(setting, alpha=recorder)
    caps = setting.capabilities
    rng = np.random.default_rng(EVAL_SEED)
    setting.sim.reset(EVAL_SEED)
    behind: dict[State, set[Any]] = defaultdict(set)
    outcomes: dict[str, Counter[str]] = defaultdict(Counter)
    steps = executions = 0
    wall = cpu = 0.0
    for i in range(sequences):
        k = int(rng.integers(len(setting.initial_states))) if random_start else 0
        x = setting.initial_states[k]
        behind[setting.alpha(x)].add(x)
        for _ in range(int(rng.integers(10, 31))):
            c = caps[int(rng.integers(len(caps)))]
            w0, c0 = time.perf_counter(), time.process_time()
            ex = execute(setting.agent, setting.sim, setting.alpha, c, x, rng, setting.budget)
            x = setting.sim.get_state()
            wall += time.perf_counter() - w0
            cpu += time.process_time() - c0
            behind[ex.transition.s_next].add(x)
            outcomes[c.name][ex.stop_reason.split(" of ")[0]] += 1
            steps += ex.steps
            executions += 1
        if (i + 1) % max(1, sequences // 10) == 0:
            print(f"  D′: {i + 1}/{sequences} sequences, {executions} executions", file=sys.stderr, flush=True)
    return DPrimeRun(
        sequences=sequences,
        step_cap=setting.budget.max_steps,
        theta=setting.budget.theta,
        executions=executions,
        steps=steps,
        wall=wall,
        cpu=cpu,
        outcomes=dict(outcomes),
        boundaries=tuple(sorted(len(v) for v in behind.values())),
        every_state=None if recorder is None else tuple(sorted(len(v) for v in recorder.seen.values())),
    )


def print_dprime(r: DPrimeRun, name: str) -> None:
    """The executions, per-capability outcome and aggregation tables of ``r``, for the
    setting called ``name``."""
    n, steps = r.executions, r.steps
    theta = "∞" if r.theta is None else str(r.theta)
    print(f"\n## Executions ({name}, Θ = {theta}, step cap {r.step_cap}, {r.sequences} D′ sequences)\n")
    print("| executions | steps/exec | exec/s wall | exec/s CPU | steps/s CPU |")
    print("|---|---|---|---|---|")
    print(f"| {n:,} | {steps / n:.1f} | {n / r.wall:,.0f} | {n / r.cpu:,.0f} | {steps / r.cpu:,.0f} |")
    print("\n| capability | executions | achieved | how the others ended |")
    print("|---|---|---|---|")
    for cap in sorted(r.outcomes):
        counts = r.outcomes[cap]
        total = sum(counts.values())
        rest = ", ".join(f"{k} {v}" for k, v in counts.most_common() if k != "done")
        print(f"| {cap} | {total} | {counts['done'] / total:.2f} | {rest} |")
    print("\n## Aggregation on D′ (distinct environment states per symbolic state)\n")
    print("| states | symbolic states | environment states | mean | median | max |")
    print("|---|---|---|---|---|---|")
    rows = [("at execution boundaries (D′'s s and s′)", r.boundaries)]
    if r.every_state is not None:
        rows.append(("every state passed through", r.every_state))
    for what, sizes in rows:
        print(
            f"| {what} | {len(sizes):,} | {sum(sizes):,} | {sum(sizes) / len(sizes):.1f} | "
            f"{statistics.median(sizes):g} | {sizes[-1]:,} |"
        )

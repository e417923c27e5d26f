"""Benchmark: the MiniGrid world of section 4.2 - snapshot costs of the gymnasium
adapter and capability executions per second of both MiniGrid agents.

Part 1 compares the two ways :class:`~capver.envs.gym_adapter.GymSimulator` can
snapshot the environment: deep copy (works for any gymnasium environment) and the
environment's own compact state API (:class:`~capver.envs.minigrid_env.MiniGridState`).

Part 2 executes every training intent of the RL agent from start states (where the
intent does not hold yet) drawn from the uniform and from the training layout
distribution, once per agent, through
:func:`capver.engines.execution.execute` with Θ = ∞ and a step cap, and reports
executions per second, mean low-level steps and the share of executions that
reached their intent.  The search agent is also run on a deep-copy simulator for a
few executions, to show what compact snapshots buy.

Run: ``capver bench minigrid [--layouts 20] [--seed 0] [--quick]``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from capver.agents.base import Agent
from capver.agents.minigrid_agents import (
    SearchAgent,
    TabularRLAgent,
    load_rl_policy,
    training_intents,
)
from capver.bench.cli import BenchParser, summary
from capver.commands.argtypes import non_negative, positive
from capver.core.state import Capability
from capver.engines.execution import ExecutionBudget, execute
from capver.envs.gym_adapter import DeepcopyCodec, GymSimulator, StateApiCodec
from capver.envs.minigrid_env import (
    PRIMITIVE_ACTIONS,
    TRAINING_LAYOUTS,
    UNIFORM_LAYOUTS,
    LayoutDistribution,
    MiniGridRepresentation,
    MiniGridState,
    QuadrantDoorKeyEnv,
    generate_layout,
    start_state,
)

# Every part still runs (both codecs, both agents, both layout distributions, the
# deep-copy search agent); only the counts shrink.
QUICK: dict[str, int] = {"layouts": 3, "deepcopy_executions": 2, "calls": 200}


@dataclass(frozen=True, slots=True)
class SnapshotRow:
    codec: str
    get_us: float
    set_us: float
    step_us: float


@dataclass(frozen=True, slots=True)
class ExecRow:
    agent: str
    simulator: str
    executions: int
    rate: float
    mean_steps: float
    achieved: float


def _per_call_us(fn: Any, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n * 1e6


def bench_codec(name: str, codec: Any, seed: int, n: int) -> SnapshotRow:
    sim: GymSimulator[Any] = GymSimulator(QuadrantDoorKeyEnv(), codec, actions=PRIMITIVE_ACTIONS)
    x0 = sim.reset(seed=seed)
    # The codec itself: the simulator keeps the snapshot it is in and would not copy.
    env = sim.env
    get_us = _per_call_us(lambda: codec.capture(env), n)
    set_us = _per_call_us(lambda: codec.restore(env, x0), n)
    actions = iter(PRIMITIVE_ACTIONS[i % len(PRIMITIVE_ACTIONS)] for i in range(n))
    step_us = _per_call_us(lambda: sim.step(next(actions)), n)
    return SnapshotRow(name, get_us, set_us, step_us)


def bench_executions(
    agent: Agent, sim: GymSimulator[Any], jobs: Sequence[tuple[Capability, Any]], seed: int, max_steps: int
) -> ExecRow:
    alpha = MiniGridRepresentation()
    vocab = alpha.vocabulary
    rng = np.random.default_rng(seed)
    budget = ExecutionBudget(max_steps=max_steps, theta=None)
    steps = achieved = 0
    start = time.perf_counter()
    for cap, x0 in jobs:
        ex = execute(agent, sim, alpha, cap, x0, rng, budget)
        steps += ex.steps
        achieved += cap.achieved(vocab, ex.transition.s_next)
    elapsed = time.perf_counter() - start
    codec = "deepcopy" if isinstance(sim.codec, DeepcopyCodec) else "state-api"
    n = len(jobs)
    return ExecRow(agent.name, codec, n, n / elapsed, steps / n, achieved / n)


def _jobs(
    caps: Sequence[Capability], dist: LayoutDistribution, per_intent: int, rng: np.random.Generator
) -> list[tuple[Capability, MiniGridState]]:
    """``per_intent`` start states per capability in which its intent does not hold."""
    alpha = MiniGridRepresentation()
    jobs = []
    for cap in caps:
        found = 0
        while found < per_intent:
            x0 = start_state(generate_layout(rng, dist))
            if rng.random() < 0.25:
                x0 = replace(x0, key_pos=None)  # some executions start with the key in hand
            if not cap.achieved(alpha.vocabulary, alpha(x0)):
                jobs.append((cap, x0))
                found += 1
    return jobs


def build_parser() -> BenchParser:
    p = BenchParser("minigrid", summary(__doc__))
    p.add_argument(
        "--layouts", type=positive, default=20, help="start layouts per intent and distribution (default 20)"
    )
    p.add_argument(
        "--deepcopy-executions",
        type=non_negative,
        default=10,
        help="search-agent runs on the deep-copy simulator (default 10; 0 skips them)",
    )
    p.add_argument("--max-steps", type=positive, default=200, help="step cap per execution (default 200)")
    p.add_argument("--calls", type=positive, default=2000, help="calls per snapshot micro-benchmark (default 2000)")
    p.add_argument(
        "--seed", type=non_negative, default=0, help="seed of the environment and of the numpy Generators (default 0)"
    )
    p.add_quick(QUICK, "a smoke run: every part on fewer layouts, deep-copy runs and snapshot calls")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse(argv)

    print("snapshot costs (QuadrantDoorKeyEnv, 9x9 grid)")
    print(f"{'codec':<10} {'get_state us':>13} {'set_state us':>13} {'step us':>10}")
    for r in (
        bench_codec("deepcopy", DeepcopyCodec(), args.seed, args.calls),
        bench_codec("state-api", StateApiCodec(), args.seed, args.calls),
    ):
        print(f"{r.codec:<10} {r.get_us:>13.1f} {r.set_us:>13.1f} {r.step_us:>10.1f}")

    caps = [Capability.for_intent(i) for i in training_intents()]
    compact = GymSimulator(QuadrantDoorKeyEnv(), StateApiCodec(), actions=PRIMITIVE_ACTIONS)
    compact.reset(seed=args.seed)
    rows: list[tuple[str, ExecRow]] = []
    for dist_name, dist in (("uniform", UNIFORM_LAYOUTS), ("training", TRAINING_LAYOUTS)):
        jobs = _jobs(caps, dist, args.layouts, np.random.default_rng(args.seed))
        for agent in (TabularRLAgent(load_rl_policy()), SearchAgent()):
            rows.append((dist_name, bench_executions(agent, compact, jobs, args.seed, args.max_steps)))
        if dist_name == "uniform" and args.deepcopy_executions:
            deep = GymSimulator(QuadrantDoorKeyEnv(), DeepcopyCodec(), actions=PRIMITIVE_ACTIONS)
            deep_jobs = []
            for cap, x0 in jobs[: args.deepcopy_executions]:
                deep.env.reset(options={"layout": x0.layout})
                deep_jobs.append((cap, deep.get_state()))
            rows.append((dist_name, bench_executions(SearchAgent(), deep, deep_jobs, args.seed, args.max_steps)))
    print()
    print(
        f"capability executions (Θ = ∞, step cap {args.max_steps}, {len(caps)} intents, "
        "start states where the intent does not hold yet)"
    )
    print(
        f"{'layouts':<9} {'agent':<16} {'simulator':<10} {'execs':>6} {'exec/s':>9} {'steps/exec':>11} {'achieved':>9}"
    )
    for dist_name, row in rows:
        print(
            f"{dist_name:<9} {row.agent:<16} {row.simulator:<10} {row.executions:>6} {row.rate:>9.1f} "
            f"{row.mean_steps:>11.2f} {row.achieved:>9.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: capability executions per second of the LAO* agent (section 4.2's
PDDLGym agent) through the executor of section 3.3, with Θ = 1 and Θ = ∞.

For each domain, capabilities are discovered by random walks and start states are
drawn from random walks; every (capability, start state) pair is executed once
with a fresh agent (*cold*: includes LAO* planning) and then ``--repeat`` more
times with the same agent (*warm*: every policy is cached).  The target is at
least 2,000 warm executions per second.

Run: ``capver bench agents [--domains blocks first_responders] [--repeat 5] [--quick]``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from capver.agents.lao_agent import LAOAgent
from capver.bench.cli import BenchParser, summary
from capver.commands.argtypes import non_negative, positive
from capver.engines.discovery import discover, random_walks
from capver.engines.execution import ExecutionBudget, execute
from capver.envs.ppddl import AtomsRepresentation, PPDDLSimulator, load_task

TARGET = 2000.0
DEFAULT_DOMAINS = ("first_responders", "blocks")
# Both domains and both Θ stay in: the quick run only executes fewer pairs, fewer times.
QUICK: dict[str, int] = {"states": 4, "repeat": 2}


@dataclass(frozen=True, slots=True)
class Row:
    domain: str
    theta: int | None
    pairs: int
    cold_rate: float
    warm_rate: float
    mean_steps: float
    plans: int


def bench_domain(domain: str, problem: str, theta: int | None, n_states: int, repeat: int, seed: int) -> Row:
    task = load_task(domain, problem)
    sim, alpha = PPDDLSimulator(task, seed=seed), AtomsRepresentation(task)
    rng = np.random.default_rng(seed)
    caps = discover(sim, alpha, rng, n_walks=10, length=50).capabilities
    walked = sorted({t.s_next for t in random_walks(sim, alpha, rng, n_walks=10, length=30)})
    picks = rng.choice(len(walked), size=min(n_states, len(walked)), replace=False)
    states = [task.initial_state, *(walked[int(i)] for i in picks)]
    pairs = [(c, s) for s in states for c in caps]
    budget = ExecutionBudget(max_steps=500, theta=theta)
    agent = LAOAgent(task)

    start = time.perf_counter()
    for c, s in pairs:
        execute(agent, sim, alpha, c, s, rng, budget)
    cold = time.perf_counter() - start
    plans = agent.plans

    steps = 0
    start = time.perf_counter()
    for _ in range(repeat):
        for c, s in pairs:
            steps += execute(agent, sim, alpha, c, s, rng, budget).steps
    warm = time.perf_counter() - start
    n_warm = repeat * len(pairs)
    return Row(domain, theta, len(pairs), len(pairs) / cold, n_warm / warm, steps / n_warm, plans)


def build_parser() -> BenchParser:
    p = BenchParser("agents", summary(__doc__))
    p.add_argument(
        "--domains",
        nargs="+",
        default=list(DEFAULT_DOMAINS),
        help=f"bundled PDDLGym domains to run (default: {' '.join(DEFAULT_DOMAINS)})",
    )
    p.add_argument("--problem", default="problem1", help="problem file of every domain (default problem1)")
    p.add_argument(
        "--states", type=non_negative, default=20, help="random-walk start states besides the initial one (default 20)"
    )
    p.add_argument("--repeat", type=positive, default=5, help="warm passes over all pairs (default 5)")
    p.add_argument(
        "--seed", type=non_negative, default=0, help="seed of the simulator and of the numpy Generator (default 0)"
    )
    p.add_quick(QUICK, "a smoke run: both domains and both Θ on fewer start states and warm passes")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse(argv)

    print(
        f"{'domain':<18} {'theta':>5} {'pairs':>6} {'cold exec/s':>12} {'warm exec/s':>12} "
        f"{'steps/exec':>10} {'LAO* calls':>10}"
    )
    ok = True
    for domain in args.domains:
        for theta in (1, None):
            r = bench_domain(domain, args.problem, theta, args.states, args.repeat, args.seed)
            ok &= r.warm_rate >= TARGET
            print(
                f"{r.domain:<18} {'inf' if r.theta is None else r.theta:>5} {r.pairs:>6} {r.cold_rate:>12.0f} "
                f"{r.warm_rate:>12.0f} {r.mean_steps:>10.2f} {r.plans:>10}"
            )
    print(f"target: >= {TARGET:.0f} warm executions/s: {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: the Overcooked-like kitchen (``capver learn --agent
overcooked``) — snapshot costs, capability executions per second of the planning
chef, and the aggregation α causes.

Part 1 times the simulator's ``get_state``/``set_state`` (through capver's gymnasium
adapter, the path the learner takes) at the layout's start and after 200 random
steps, against a deep copy of the environment (the generic snapshot of an
environment without a state API), and one raw environment step.

Part 2 collects D′ exactly as ``capver bench learning --settings overcooked`` does
(the same setting, start states and seed: sequences of 10–30 uniformly random
sub-tasks, Θ = ∞, each execution capped at the setting's step cap) and reports
executions per second (wall-clock and CPU), steps per execution and, per sub-task,
how the executions ended.

Part 3 measures the aggregation on the same D′: how many distinct environment states
(compared exactly) stand behind each symbolic state at execution boundaries — the
states D′'s transitions start and end in.

Run: ``capver bench overcooked [--sequences 300] [--layout cramped_room] [--quick]``.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np

from capver.bench.cli import BenchParser, summary
from capver.bench.environment import bench_dprime, print_dprime
from capver.bench.learning.settings import build_setting
from capver.commands.argtypes import positive
from capver.envs.kitchen import ACTIONS, KitchenEnv, kitchen_simulator, start_state

QUICK: dict[str, int] = {"sequences": 10, "calls": 200}


def _per_call_us(fn: Callable[[], Any], n: int) -> float:
    """CPU µs per call: on a shared machine wall-clock figures this small mostly
    measure the other processes."""
    start = time.process_time()
    for _ in range(n):
        fn()
    return (time.process_time() - start) / n * 1e6


def bench_snapshots(layout: str, calls: int) -> list[tuple[str, float, float | None]]:
    """(what, get µs, set µs) per call."""
    sim = kitchen_simulator(layout)
    env = sim.env.unwrapped
    assert isinstance(env, KitchenEnv)
    rng = np.random.default_rng(0)
    x0 = start_state(env.layout)
    sim.set_state(x0)
    for _ in range(200):
        sim.step(int(rng.integers(len(ACTIONS))))
    later = sim.get_state()
    rows: list[tuple[str, float, float | None]] = []
    for name, x in (("start", x0), ("after 200 random steps", later)):
        sim.set_state(x)
        set_state = partial(sim.set_state, x)
        rows.append((f"GymSimulator, {name}", _per_call_us(sim.get_state, calls), _per_call_us(set_state, calls)))
    deep = _per_call_us(lambda: copy.deepcopy(env), max(1, calls // 10))
    rows.append(("deepcopy of KitchenEnv", deep, deep))
    step_us = _per_call_us(lambda: env.step(int(rng.integers(len(ACTIONS)))), calls)
    rows.append(("one env step (teammate included), for scale", step_us, None))
    return rows


def build_parser() -> BenchParser:
    p = BenchParser("overcooked", summary(__doc__))
    p.add_argument("--sequences", type=positive, default=300, help="D′ sequences (default 300, as capver learn)")
    p.add_argument("--layout", default="cramped_room", help="kitchen layout (default cramped_room)")
    p.add_argument("--calls", type=positive, default=20000, help="calls per snapshot micro-benchmark (default 20000)")
    p.add_quick(QUICK, "a smoke run: fewer D′ sequences and snapshot calls")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse(argv)
    print("## Snapshots (CPU µs per call)\n")
    print("| what | get | set |")
    print("|---|---|---|")
    for name, get_us, set_us in bench_snapshots(args.layout, args.calls):
        print(f"| {name} | {get_us:,.2f} | {'—' if set_us is None else f'{set_us:,.2f}'} |")
    a = build_setting(f"overcooked:{args.layout}")
    print_dprime(bench_dprime(a.setting, args.sequences), a.name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

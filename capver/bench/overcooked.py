"""Benchmark: the Overcooked-like kitchen of issue 14 (``capver learn --agent
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
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from capver.bench.cli import BenchParser, summary
from capver.bench.learning import EVAL_SEED, build_setting
from capver.engines.execution import execute
from capver.engines.learning import Setting
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
        rows.append((f"GymSimulator, {name}", _per_call_us(sim.get_state, calls),
                     _per_call_us(lambda x=x: sim.set_state(x), calls)))  # type: ignore[misc]
    deep = _per_call_us(lambda: copy.deepcopy(env), max(1, calls // 10))
    rows.append(("deepcopy of KitchenEnv", deep, deep))
    step_us = _per_call_us(lambda: env.step(int(rng.integers(len(ACTIONS)))), calls)
    rows.append(("one env step (teammate included), for scale", step_us, None))
    return rows


def bench_dprime(setting: Setting, sequences: int) -> dict[str, Any]:
    """D′ as ``capver bench learning`` collects it, timed, with the environment states
    behind each symbolic state at execution boundaries."""
    caps = setting.capabilities
    rng = np.random.default_rng(EVAL_SEED)
    setting.sim.reset(EVAL_SEED)
    behind: dict[int, set[Any]] = defaultdict(set)
    outcomes: dict[str, Counter[str]] = defaultdict(Counter)
    steps = executions = 0
    wall = cpu = 0.0
    for i in range(sequences):
        x = setting.initial_states[int(rng.integers(len(setting.initial_states)))]
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
    sizes = sorted(len(v) for v in behind.values())
    return {
        "executions": executions, "steps": steps, "wall": wall, "cpu": cpu, "outcomes": outcomes,
        "symbolic": len(sizes), "environment": sum(sizes), "sizes": sizes,
    }


def build_parser() -> BenchParser:
    p = BenchParser("overcooked", summary(__doc__))
    p.add_argument("--sequences", type=int, default=300, help="D′ sequences (default 300, as capver learn)")
    p.add_argument("--layout", default="cramped_room", help="kitchen layout (default cramped_room)")
    p.add_argument("--calls", type=int, default=20000, help="calls per snapshot micro-benchmark (default 20000)")
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
    r = bench_dprime(a.setting, args.sequences)
    n, steps = r["executions"], r["steps"]
    cap = a.setting.budget.max_steps
    print(f"\n## Executions ({a.name}, Θ = ∞, step cap {cap}, {args.sequences} D′ sequences)\n")
    print("| executions | steps/exec | exec/s wall | exec/s CPU | steps/s CPU |")
    print("|---|---|---|---|---|")
    print(f"| {n:,} | {steps / n:.1f} | {n / r['wall']:,.0f} | {n / r['cpu']:,.0f} | {steps / r['cpu']:,.0f} |")
    print("\n| sub-task | executions | done | how the others ended |")
    print("|---|---|---|---|")
    for name in sorted(r["outcomes"]):
        counts: Counter[str] = r["outcomes"][name]
        total = sum(counts.values())
        rest = ", ".join(f"{k} {v}" for k, v in counts.most_common() if k != "done")
        print(f"| {name} | {total} | {counts['done'] / total:.2f} | {rest} |")
    sizes = r["sizes"]
    print("\n## Aggregation on D′ (environment states per symbolic state, at execution boundaries)\n")
    print("| symbolic states | environment states | mean | median | max |")
    print("|---|---|---|---|---|")
    print(f"| {r['symbolic']:,} | {r['environment']:,} | {r['environment'] / r['symbolic']:.1f} | "
          f"{statistics.median(sizes):g} | {sizes[-1]:,} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

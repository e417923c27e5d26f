"""Benchmark: the Crafter setting — snapshot costs, capability executions
per second of the scripted sub-goal agent, and the aggregation the coarse α causes.

Part 1 times :meth:`~capver.envs.crafter_env.CrafterSimulator.get_state` and
``set_state`` (at x₀ and at a state 100 random steps later) against a deep copy of
the ``crafter.Env``, the generic way to snapshot an environment without a state API.

Part 2 collects D′ exactly as ``capver learn`` and ``capver bench learning`` do
(sequences of 10–30 uniformly random capabilities from x₀, Θ = ∞, each execution
capped at ``--step-cap`` steps) and reports executions per second (wall-clock and
CPU), steps per execution and, per capability, how often the agent achieved it.

Part 3 measures the aggregation on the same D′: how many distinct environment states
(snapshots, compared exactly) the symbolic states at execution boundaries — the
states D′'s transitions start and end in — stand for.

With ``--runs RUNS.csv`` it instead reads the ``runs.csv`` of ``capver bench learning
--settings crafter`` and reports, per method and metric, the steps at which the
seed-mean curve first reaches ``--threshold`` (the paper's Crafter claim is about 50%)
and Random's steps ÷ the method's.

Run: ``capver bench crafter [--sequences 300] [--step-cap 100] [--seed 0] [--quick]``
or ``capver bench crafter --runs docs/bench/crafter/runs.csv --threshold 0.5``.
"""

from __future__ import annotations

import copy
import csv
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from capver.bench.cli import BenchParser, summary
from capver.bench.environment import bench_dprime, print_dprime
from capver.bench.learning.analysis import first_crossing, mean_curve
from capver.commands.argtypes import non_negative, positive, unit_interval
from capver.core.setting_args import SettingArgs
from capver.envs.crafter_env import CrafterSimulator
from capver.settings import build_assessment

QUICK: dict[str, int] = {"sequences": 10, "calls": 100}


def _per_call_us(fn: Any, n: int) -> float:
    """CPU µs per call (the machine is shared, so wall-clock would measure the others)."""
    start = time.process_time()
    for _ in range(n):
        fn()
    return (time.process_time() - start) / n * 1e6


def bench_snapshots(seed: int, calls: int) -> list[tuple[str, float, float, int]]:
    """(state, get µs, set µs, objects) at x₀ and 100 random steps later, and the deep copy."""
    sim = CrafterSimulator(seed)
    rng = np.random.default_rng(seed)
    later = sim.initial_state
    for _ in range(100):
        if sim.dead:
            break
        later = sim.step(int(rng.integers(len(sim.available_actions()))))
    rows = []
    pair = (sim.initial_state, later)
    for name, x, other in (("x0", pair[0], pair[1]), ("after 100 random steps", pair[1], pair[0])):
        sim.set_state(x)
        get_us = _per_call_us(sim.capture, calls)
        set_s = 0.0
        for _ in range(calls):
            # Revert to the other state first: reverting to the state the simulator is
            # already in costs nothing (see CrafterSimulator.get_state).
            sim.set_state(other)
            t = time.process_time()
            sim.set_state(x)
            set_s += time.process_time() - t
        rows.append((name, get_us, set_s / calls * 1e6, len(x.objects)))
    sim.set_state(sim.initial_state)
    n = max(1, calls // 20)
    deep_us = _per_call_us(lambda: copy.deepcopy(sim.env), n)
    rows.append(("deepcopy of crafter.Env", deep_us, deep_us, len(sim.initial_state.objects)))
    return rows


def threshold_steps(runs_csv: Path, threshold: float) -> list[tuple[str, str, float | None, float]]:
    """(metric, method, steps at which the seed-mean curve first reaches ``threshold``
    or None, the steps its runs ended at) for every method and metric of a
    ``capver bench learning`` runs.csv."""
    with open(runs_csv, newline="") as f:
        rows = list(csv.DictReader(f))
    out = []
    for metric in ("agreement", "coverage_agreement", "coverage_agreement_tilde"):
        methods = sorted({r["method"] for r in rows})
        for method in methods:
            by_seed: dict[str, list[tuple[float, float]]] = defaultdict(list)
            for r in rows:
                if r["method"] == method and r.get(metric, ""):
                    by_seed[r["seed"]].append((float(r["steps"]), float(r[metric])))
            if not by_seed:
                continue
            grid, values = mean_curve([sorted(c) for c in by_seed.values()])
            out.append((metric, method, first_crossing(grid[1:], values[1:], threshold), float(grid[-1])))
    return out


def _threshold_report(runs_csv: Path, threshold: float) -> None:
    found = threshold_steps(runs_csv, threshold)
    print(f"## Steps to {threshold:.0%} (seed-mean curves of {runs_csv})\n")
    print("| metric | method | steps to reach it | Random's steps ÷ method's |")
    print("|---|---|---|---|")
    random = {metric: (steps, end) for metric, method, steps, end in found if method == "random"}
    for metric, method, steps, end in found:
        cell = f"{steps:,.0f}" if steps is not None else f"not reached in {end:,.0f}"
        ratio = ""
        if method != "random" and steps and metric in random:
            r_steps, r_end = random[metric]
            ratio = f"{r_steps / steps:.1f}×" if r_steps is not None else f"> {r_end / steps:.1f}×"
        print(f"| {metric} | {method} | {cell} | {ratio} |")


def build_parser() -> BenchParser:
    p = BenchParser("crafter", summary(__doc__))
    p.add_argument("--sequences", type=positive, default=300, help="D′ sequences (default 300, as capver learn)")
    p.add_argument("--step-cap", type=positive, default=100, help="step cap per execution (default 100)")
    p.add_argument("--calls", type=positive, default=2000, help="calls per snapshot micro-benchmark (default 2000)")
    p.add_argument(
        "--seed", type=non_negative, default=0, help="world seed (default 0, as capver learn --agent crafter)"
    )
    p.add_argument(
        "--runs",
        type=Path,
        metavar="RUNS.csv",
        help="instead: steps to --threshold in a capver bench learning runs.csv",
    )
    p.add_argument("--threshold", type=unit_interval, default=0.5, help="with --runs (default 0.5)")
    p.add_quick(QUICK, "a smoke run: fewer D′ sequences and snapshot calls")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse(argv)
    if args.runs is not None:
        if not args.runs.is_file():
            print(f"capver bench crafter: error: --runs {args.runs}: no such file", file=sys.stderr)
            return 2
        _threshold_report(args.runs, args.threshold)
        return 0
    print("## Snapshots (CPU µs per call)\n")
    print("| state | get | set | objects |")
    print("|---|---|---|---|")
    for name, get_us, set_us, objs in bench_snapshots(args.seed, args.calls):
        print(f"| {name} | {get_us:,.0f} | {set_us:,.0f} | {objs} |")
    # The setting capver learn --agent crafter builds, with this run's world seed and
    # step cap; every sequence starts at x₀.
    a = build_assessment(
        "crafter", SettingArgs(seed=args.seed, step_cap=args.step_cap), np.random.default_rng(args.seed)
    )
    print_dprime(bench_dprime(a.setting, args.sequences, random_start=False, every_state=True), a.name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

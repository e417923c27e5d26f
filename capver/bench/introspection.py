"""Benchmark: the runtime comparisons of the model-introspection paper (002) —
Figure 2 (the infinite grid of section 4: introspector against GREEDY,
RANDOM[K], BEAM[K], MCTS[K] and MCTS-U[K]) and Figure 4 (section 5.4: introspector
against GREEDY on Blocks-World unstacking, Drawers and Bins).

For every domain, size and episode one instance is drawn (the same instance for every
planner), every planner solves it under a per-run budget, and every returned plan is
re-simulated against the model (a plan that does not re-simulate to the reported
return aborts the benchmark).  Once a planner fails to finish within its budget on
half the episodes of a size it is not run on larger sizes ("timed out" in the table).

Times are wall-clock seconds of one single-threaded process.  ``solve_s`` is the
planner alone (for the introspector including its state mutations, which the paper
counts as planning time); ``build_s`` is grounding the instance (shared by all
planners, reported separately).

Outputs in ``--out``: ``runs.csv`` (one row per run), ``summary.csv`` (means per
domain, planner and size), ``introspection_<domain>.png`` (runtime, nodes expanded
and — for the grid — normalised score against size; log y axes) and
``targets.txt`` (the checks stated in the project brief).

Run: ``capver bench introspection [--quick] [--out DIR]``.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from capver.bench.cli import BenchParser, summary
from capver.commands.argtypes import non_negative, positive, seconds
from capver.errors import IntrospectionError
from capver.introspection.domains import DOMAINS
from capver.introspection.search import (
    PLANNERS,
    TAKES_K,
    SearchBudget,
    make_planner,
    planner_label,
    simulate,
)

DEFAULT_SIZES: dict[str, tuple[int, ...]] = {
    "grid": (2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 25, 30, 40, 50),
    "blocks": (2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 15, 20, 25, 30, 35, 40),
    "drawers": (1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20),
    "bins": (1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30),
}
QUICK_SIZES: dict[str, tuple[int, ...]] = {
    "grid": (2, 4, 8, 12),
    "blocks": (2, 4, 6, 8, 20, 40),
    "drawers": (2, 3, 4, 8),
    "bins": (2, 4, 8, 16),
}
DEFAULT_PLANNERS: dict[str, tuple[str, ...]] = {
    "grid": ("introspector", "greedy", "random", "beam", "mcts", "mcts-u"),
    "blocks": ("introspector", "greedy"),
    "drawers": ("introspector", "greedy"),
    "bins": ("introspector", "greedy"),
}
DOMAIN_IDS = {name: i for i, name in enumerate(sorted(DOMAINS))}
# --quick keeps every domain and planner and the sizes of the brief's targets (blocks 40
# for the introspector), but GREEDY's exponential blow-up (blocks 20, drawers 8) is
# cut off after 2 s instead of 60 s per episode, on 2 episodes (3 on the grid).
QUICK: dict[str, object] = {"episodes": 2, "grid_episodes": 3, "timeout": 2.0}


@dataclass(frozen=True, slots=True)
class Run:
    domain: str
    size: int
    episode: int
    planner: str
    solved: bool
    timed_out: bool
    plan_len: int
    ret: float
    score: float  # normalised score of section 4 (grid only; NaN elsewhere)
    expanded: int
    generated: int
    solve_s: float
    build_s: float


@dataclass(frozen=True, slots=True)
class Summary:
    domain: str
    planner: str
    size: int
    episodes: int
    solved: int
    timed_out: int
    mean_solve_s: float
    max_solve_s: float
    mean_total_s: float
    max_total_s: float
    mean_expanded: float
    mean_plan_len: float
    mean_score: float


def _sizes_text(sizes: dict[str, tuple[int, ...]]) -> str:
    return "; ".join(f"{d}={','.join(map(str, ns))}" for d, ns in sizes.items())


def build_parser() -> BenchParser:
    p = BenchParser("introspection", summary(__doc__))
    p.add_argument(
        "--domains",
        nargs="+",
        choices=sorted(DOMAINS),
        default=["grid", "blocks", "drawers", "bins"],
        help="domains to run (default: grid blocks drawers bins)",
    )
    p.add_argument(
        "--planners",
        nargs="+",
        choices=sorted(PLANNERS),
        default=None,
        help="planners for every domain (default: all six on the grid, introspector and greedy elsewhere)",
    )
    p.add_argument(
        "--sizes",
        action="append",
        default=[],
        metavar="DOMAIN=N,N,...",
        help="sizes of one domain (d for the grid; blocks, drawers or bins); repeatable "
        f"(default {_sizes_text(DEFAULT_SIZES)}; --quick: {_sizes_text(QUICK_SIZES)})",
    )
    p.add_argument("--episodes", type=positive, default=5, help="instances per domain and size (default 5)")
    p.add_argument("--grid-episodes", type=positive, default=20, help="instances per distance on the grid (default 20)")
    p.add_argument("--timeout", type=seconds, default=60.0, help="per-run wall-clock limit in seconds (default 60)")
    p.add_argument(
        "--max-nodes", type=positive, default=3_000_000, help="per-run limit on stored search nodes (default 3000000)"
    )
    p.add_argument(
        "--k", type=positive, default=100, help="K of RANDOM[K], BEAM[K], MCTS[K] and MCTS-U[K] (default 100)"
    )
    p.add_argument("--seed", type=non_negative, default=0, help="seed of the instances and of the planners (default 0)")
    p.add_argument(
        "--out", type=Path, default=Path("bench-introspection"), help="output directory (default bench-introspection)"
    )
    p.add_quick(QUICK, "a smoke run: smaller sizes, fewer episodes and a short timeout")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse(argv)
    try:
        return run(args)
    except IntrospectionError as exc:
        print(f"capver bench introspection: error: {exc}", file=sys.stderr)
        return 2


def parse_sizes(specs: Sequence[str], quick: bool) -> dict[str, tuple[int, ...]]:
    sizes = dict(QUICK_SIZES if quick else DEFAULT_SIZES)
    for spec in specs:
        name, sep, values = spec.partition("=")
        if not sep or name not in DOMAINS:
            raise IntrospectionError(f"--sizes {spec!r}: expected DOMAIN=N,N,... with DOMAIN one of {sorted(DOMAINS)}")
        try:
            parsed = tuple(int(v) for v in values.split(",") if v.strip())
        except ValueError:
            raise IntrospectionError(f"--sizes {spec!r}: sizes must be integers") from None
        if not parsed or min(parsed) < 1:
            raise IntrospectionError(f"--sizes {spec!r}: expected positive sizes")
        sizes[name] = tuple(sorted(set(parsed)))
    return sizes


def run(args: argparse.Namespace) -> int:
    sizes = parse_sizes(args.sizes, args.quick)
    budget = SearchBudget(timeout=args.timeout, max_nodes=args.max_nodes)
    args.out.mkdir(parents=True, exist_ok=True)
    runs: list[Run] = []
    for domain in args.domains:
        planners = tuple(args.planners) if args.planners else DEFAULT_PLANNERS[domain]
        episodes = args.grid_episodes if domain == "grid" else args.episodes
        runs.extend(bench_domain(domain, sizes[domain], planners, episodes, budget, args.k, args.seed))
    summaries = summarize(runs)
    write_csv(args.out / "runs.csv", [asdict(r) for r in runs])
    write_csv(args.out / "summary.csv", [asdict(s) for s in summaries])
    print(format_table(summaries, args.k))
    for domain in args.domains:
        plot_domain(
            domain, [s for s in summaries if s.domain == domain], args.k, args.out / f"introspection_{domain}.png"
        )
    report = targets(summaries, args.k)
    (args.out / "targets.txt").write_text(report + "\n")
    print(report)
    print(f"wrote {args.out}/runs.csv, summary.csv, targets.txt and introspection_<domain>.png")
    return 0


def bench_domain(
    domain: str,
    sizes: Sequence[int],
    planners: Sequence[str],
    episodes: int,
    budget: SearchBudget,
    k: int,
    seed: int,
) -> list[Run]:
    gen = DOMAINS[domain]
    out: list[Run] = []
    given_up: set[str] = set()
    for size in sizes:
        instances = []
        for ep in range(episodes):
            rng = np.random.default_rng([seed, DOMAIN_IDS[domain], size, ep])
            t0 = time.perf_counter()
            problem = gen(size, rng)
            instances.append((problem, time.perf_counter() - t0))
        for name in planners:
            if name in given_up:
                continue
            planner = make_planner(name, k if name in TAKES_K else None)
            fails = 0
            for ep, (problem, build_s) in enumerate(instances):
                rng = np.random.default_rng([seed, DOMAIN_IDS[domain], size, ep, 1])
                r = planner.solve(problem, rng, budget)
                score = math.nan
                if r.plan is not None:
                    ro = simulate(problem, r.plan)
                    if abs(ro.ret - r.ret) > 1e-9 or ro.success != r.success:
                        raise IntrospectionError(
                            f"{name} on {domain} size {size} episode {ep}: reported return {r.ret} / success "
                            f"{r.success}, re-simulated {ro.ret} / {ro.success}"
                        )
                    if domain == "grid":
                        score = problem.normalized_score(r.ret)  # type: ignore[attr-defined]
                elif domain == "grid":
                    score = 0.0
                fails += r.timed_out
                out.append(
                    Run(
                        domain,
                        size,
                        ep,
                        name,
                        r.solved,
                        r.timed_out,
                        len(r.plan) if r.plan is not None else 0,
                        r.ret,
                        score,
                        r.expanded,
                        r.generated,
                        r.runtime,
                        build_s,
                    )
                )
                print(
                    f"  {domain:7s} n={size:<3d} ep={ep} {planner_label(name, k):14s} "
                    f"{'solved' if r.solved else ('TIMEOUT' if r.timed_out else 'unsolved'):8s} "
                    f"{r.runtime:9.4f}s {r.expanded:>9d} expanded",
                    file=sys.stderr,
                    flush=True,
                )
            if 2 * fails >= len(instances):
                given_up.add(name)
    return out


def summarize(runs: Sequence[Run]) -> list[Summary]:
    keys = sorted({(r.domain, r.planner, r.size) for r in runs}, key=lambda k: (k[0], k[1], k[2]))
    out = []
    for domain, planner, size in keys:
        rs = [r for r in runs if (r.domain, r.planner, r.size) == (domain, planner, size)]
        scores = [r.score for r in rs if not math.isnan(r.score)]
        out.append(
            Summary(
                domain,
                planner,
                size,
                len(rs),
                sum(r.solved for r in rs),
                sum(r.timed_out for r in rs),
                float(np.mean([r.solve_s for r in rs])),
                float(np.max([r.solve_s for r in rs])),
                float(np.mean([r.solve_s + r.build_s for r in rs])),
                float(np.max([r.solve_s + r.build_s for r in rs])),
                float(np.mean([r.expanded for r in rs])),
                float(np.mean([r.plan_len for r in rs])),
                float(np.mean(scores)) if scores else math.nan,
            )
        )
    return out


def write_csv(path: Path, rows: list[dict[str, object]]) -> None:
    if not rows:
        path.write_text("")
        return
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def format_table(summaries: Sequence[Summary], k: int) -> str:
    head = (
        f"{'domain':8s} {'planner':13s} {'size':>4s} {'solved':>7s} {'solve s':>10s} {'max s':>9s} "
        f"{'total s':>9s} {'expanded':>11s} {'plan len':>8s} {'score':>6s}"
    )
    lines = [head, "-" * len(head)]
    for s in summaries:
        score = "" if math.isnan(s.mean_score) else f"{s.mean_score:.2f}"
        lines.append(
            f"{s.domain:8s} {planner_label(s.planner, k):13s} {s.size:4d} {s.solved:>3d}/{s.episodes:<3d} "
            f"{s.mean_solve_s:10.4f} {s.max_solve_s:9.3f} {s.mean_total_s:9.3f} {s.mean_expanded:11.1f} "
            f"{s.mean_plan_len:8.1f} {score:>6s}"
        )
    return "\n".join(lines)


def growth_exponent(sizes: Sequence[int], times: Sequence[float]) -> float:
    """Least-squares slope of log(time) against log(size): time ≈ c·size^k."""
    x = np.log(np.asarray(sizes, dtype=float))
    y = np.log(np.maximum(np.asarray(times, dtype=float), 1e-6))
    return float(np.polyfit(x, y, 1)[0])


def targets(summaries: Sequence[Summary], k: int = 100) -> str:
    """The brief's targets on Blocks-World unstacking, plus speedups everywhere and,
    on the grid, where each planner's score collapses (Figure 2)."""
    lines = ["targets:"]
    grid_planners = sorted({s.planner for s in summaries if s.domain == "grid"})
    for name in grid_planners:
        scores = {s.size: s.mean_score for s in summaries if s.domain == "grid" and s.planner == name}
        sizes = sorted(d for d in scores if not math.isnan(scores[d]))
        if not sizes:
            continue
        collapsed = next((d for d in sizes if scores[d] <= 0.05), None)
        lines.append(
            f"  grid: {planner_label(name, k)} mean score {scores[sizes[0]]:.2f} at d={sizes[0]}, "
            f"{scores[sizes[-1]]:.2f} at d={sizes[-1]}; "
            + (f"first d with score <= 0.05: {collapsed}" if collapsed is not None else "never below 0.05")
        )
    for domain in sorted({s.domain for s in summaries}):
        intro = {s.size: s for s in summaries if s.domain == domain and s.planner == "introspector"}
        greedy = {s.size: s for s in summaries if s.domain == domain and s.planner == "greedy"}
        if not intro:
            continue
        big = max(intro)
        lines.append(
            f"  {domain}: introspector at size {big}: mean {intro[big].mean_solve_s:.3f}s planning, "
            f"{intro[big].mean_total_s:.3f}s with grounding, max {intro[big].max_solve_s:.3f}s; "
            f"solved {intro[big].solved}/{intro[big].episodes}"
        )
        fit = [n for n in sorted(intro) if n >= 4 and intro[n].solved == intro[n].episodes]
        if len(fit) >= 3:
            slope = growth_exponent(fit, [intro[n].mean_solve_s for n in fit])
            lines.append(
                f"  {domain}: introspector runtime grows like size^{slope:.2f} (log-log fit over sizes {fit[0]}..{fit[-1]})"
            )
        solved = [n for n, s in greedy.items() if s.solved == s.episodes and n in intro]
        if solved:
            n = max(solved)
            ratio = greedy[n].mean_solve_s / max(intro[n].mean_solve_s, 1e-9)
            ratio_total = greedy[n].mean_total_s / max(intro[n].mean_total_s, 1e-9)
            lines.append(
                f"  {domain}: largest size GREEDY solves in every episode: {n}; GREEDY {greedy[n].mean_solve_s:.3f}s "
                f"vs introspector {intro[n].mean_solve_s:.4f}s -> {ratio:.0f}x faster "
                f"({ratio_total:.0f}x including grounding)"
            )
            g_sizes = sorted(s for s in solved if s >= 3)
            if len(g_sizes) >= 3:
                per_step = [
                    (greedy[b].mean_solve_s / max(greedy[a].mean_solve_s, 1e-9)) ** (1 / (b - a))
                    for a, b in itertools.pairwise(g_sizes)
                ]
                lines.append(
                    f"  {domain}: GREEDY runtime factor per unit of size over its last sizes: "
                    + ", ".join(f"{f:.1f}" for f in per_step[-3:])
                )
    if "blocks" in {s.domain for s in summaries}:
        intro = {s.size: s for s in summaries if s.domain == "blocks" and s.planner == "introspector"}
        if 40 in intro:
            ok = intro[40].solved == intro[40].episodes and intro[40].max_total_s < 10.0
            lines.append(
                f"  target 'blocks-40 under 10 s on one core': {'met' if ok else 'NOT met'} "
                f"(slowest episode {intro[40].max_total_s:.3f}s including grounding)"
            )
        greedy = {s.size: s for s in summaries if s.domain == "blocks" and s.planner == "greedy"}
        solved = [n for n, s in greedy.items() if s.solved == s.episodes and n in intro]
        if solved:
            n = max(solved)
            ratio = greedy[n].mean_solve_s / max(intro[n].mean_solve_s, 1e-9)
            lines.append(
                f"  target '>= 100x faster than GREEDY at its largest solved size ({n})': {'met' if ratio >= 100 else 'NOT met'} ({ratio:.0f}x)"
            )
    return "\n".join(lines)


def plot_domain(domain: str, summaries: Sequence[Summary], k: int, path: Path) -> None:
    """Runtime and nodes expanded against size (log y), plus the score on the grid.
    Uses the object-oriented Agg canvas, so no global pyplot state is touched."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    panels = [("mean_solve_s", "runtime (s)"), ("mean_expanded", "nodes expanded")]
    if domain == "grid":
        panels.append(("mean_score", "normalised score"))
    fig = Figure(figsize=(4.2 * len(panels), 3.6), tight_layout=True)
    FigureCanvasAgg(fig)
    planners = sorted({s.planner for s in summaries})
    xlabel = "distance d" if domain == "grid" else "size n"
    for j, (field, label) in enumerate(panels):
        ax = fig.add_subplot(1, len(panels), j + 1)
        for name in planners:
            pts = [
                (s.size, getattr(s, field))
                for s in summaries
                # Runtime and nodes only where every run finished within its budget
                # (a timed-out run's numbers are the budget, not the planner's cost).
                if s.planner == name and (field == "mean_score" or s.timed_out == 0)
            ]
            if not pts:
                continue
            xs, ys = zip(*sorted(pts))
            ax.plot(xs, ys, marker="o", ms=3, label=planner_label(name, k))
        if field != "mean_score":
            ax.set_yscale("log")
        else:
            ax.set_ylim(-0.05, 1.05)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(label)
        ax.set_title(f"{domain}: {label}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    sys.exit(main())

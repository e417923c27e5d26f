"""Benchmark: why the paper's printed agreement 1 − VD_s (section 4.2) cannot rank
learning methods on the LAO* settings, measured on a D′ of the paper's size
(100,000 sequences).

For each setting it collects D′ with the benchmark's fixed seed (the same D′ as
``capver bench learning``), counts its (s, c) pairs and how many of them have more
than one observed outcome (the agent's stochasticity as D′ sees it), then learns with
every method for a small step budget and scores h∧ at every checkpoint against that
D′: the printed 1 − VD_s weights each transition by how often the *learner* saw it,
so a nearly deterministic agent scores near 1 from the first checkpoint, while
coverage agreement (weighted by D′'s own counts) still separates the methods.

Run: ``capver bench dprime [--settings lao:first_responders lao:blocks]
[--sequences 100000] [--steps 300] [--out DIR] [--quick]``.
"""

from __future__ import annotations

import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from capver.bench.cli import BenchParser, summary, write_results
from capver.bench.learning.runs import RunSpec, run_curve
from capver.bench.learning.settings import EvalSet, collect_eval_set
from capver.commands.argtypes import non_negative, positive

DEFAULT_SETTINGS = ("lao:first_responders", "lao:blocks")
METHODS = ("mcqs-e", "mcqs-s", "random")
QUICK: dict[str, object] = {"sequences": 300, "steps": 40, "eval_every": 20}


@dataclass(frozen=True, slots=True)
class DPrimeStats:
    """What D′ shows about the agent: its size and how often one (s, c) pair led to
    more than one symbolic outcome."""

    setting: str
    sequences: int
    executions: int
    pairs: int
    stochastic_pairs: int
    collect_seconds: float


@dataclass(frozen=True, slots=True)
class MethodRow:
    setting: str
    method: str
    first_steps: int  # the first checkpoint after the start
    first_printed: float
    min_printed: float  # over every checkpoint after the start
    first_coverage: float
    final_steps: int
    final_printed: float
    final_coverage: float


def dprime_stats(eval_set: EvalSet, sequences: int, seconds: float) -> DPrimeStats:
    outcomes: dict[tuple[int, str], int] = defaultdict(int)
    for s, c, _, _ in eval_set.counts:
        outcomes[(s, c)] += 1
    return DPrimeStats(
        eval_set.setting,
        sequences,
        eval_set.size,
        len(outcomes),
        sum(1 for k in outcomes.values() if k > 1),
        round(seconds, 1),
    )


def method_row(setting: str, method: str, rows: Sequence[dict[str, object]]) -> MethodRow:
    """The checkpoints after the start (the empty model at step 0 scores nothing)."""
    later = [r for r in rows if int(str(r["steps"])) > 0] or list(rows)
    first, last = later[0], later[-1]

    def num(r: dict[str, object], k: str) -> float:
        return float(str(r[k]))

    return MethodRow(
        setting,
        method,
        int(str(first["steps"])),
        num(first, "agreement"),
        min(num(r, "agreement") for r in later),
        num(first, "coverage_agreement"),
        int(str(last["steps"])),
        num(last, "agreement"),
        num(last, "coverage_agreement"),
    )


def table(stats: Sequence[DPrimeStats], rows: Sequence[MethodRow]) -> list[str]:
    out = [
        "| setting | D′ sequences | executions | (s, c) pairs | pairs with > 1 outcome | collect s |",
        "|---|---|---|---|---|---|",
    ]
    out += [
        f"| {s.setting} | {s.sequences:,} | {s.executions:,} | {s.pairs:,} | {s.stochastic_pairs:,} "
        f"| {s.collect_seconds} |"
        for s in stats
    ]
    out += [
        "",
        (
            "| setting | method | first checkpoint (steps) | printed 1 − VD_s there | lowest printed 1 − VD_s "
            "| coverage agreement there | steps | printed 1 − VD_s | coverage agreement |"
        ),
        "|---|---|---|---|---|---|---|---|---|",
    ]
    out += [
        f"| {r.setting} | {r.method} | {r.first_steps} | {r.first_printed:.4f} | {r.min_printed:.4f} "
        f"| {r.first_coverage:.3f} | {r.final_steps} | {r.final_printed:.4f} | {r.final_coverage:.3f} |"
        for r in rows
    ]
    return out


def build_parser() -> BenchParser:
    p = BenchParser("dprime", summary(__doc__))
    p.add_argument(
        "--settings",
        nargs="+",
        default=list(DEFAULT_SETTINGS),
        help=f"settings as in capver bench learning (default: {' '.join(DEFAULT_SETTINGS)})",
    )
    p.add_argument("--sequences", type=positive, default=100_000, help="sequences in D′ (default 100000, the paper's)")
    p.add_argument(
        "--methods",
        nargs="+",
        choices=METHODS,
        default=list(METHODS),
        help=f"learning methods (default: {' '.join(METHODS)})",
    )
    p.add_argument(
        "--steps", type=positive, default=300, help="simulator-step budget of every learning run (default 300)"
    )
    p.add_argument("--eval-every", type=positive, default=50, help="steps between checkpoints (default 50)")
    p.add_argument("--seed", type=non_negative, default=0, help="seed of the learning runs (default 0)")
    p.add_out()
    p.add_quick(QUICK)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse(argv)
    stats: list[DPrimeStats] = []
    rows: list[MethodRow] = []
    for setting in args.settings:
        print(f"{setting}: collecting D′ ({args.sequences:,} sequences)", flush=True)
        t = time.perf_counter()
        eval_set = collect_eval_set(setting, args.sequences)
        stats.append(dprime_stats(eval_set, args.sequences, time.perf_counter() - t))
        print(
            f"  {stats[-1].executions:,} executions, {stats[-1].pairs:,} (s, c) pairs, "
            f"{stats[-1].stochastic_pairs:,} with more than one outcome",
            flush=True,
        )
        for method in args.methods:
            spec = RunSpec(setting, method, args.seed, args.steps, args.eval_every, tilde=0)
            result = run_curve(spec, eval_set)
            rows.append(method_row(setting, method, [dict(r) for r in result.rows]))
            print(
                f"  {method}: printed 1 − VD_s {rows[-1].first_printed:.4f} at {rows[-1].first_steps} steps, "
                f"coverage agreement {rows[-1].final_coverage:.3f} at {rows[-1].final_steps}",
                flush=True,
            )
    lines = table(stats, rows)
    print("\n".join(lines))
    if args.out is not None:
        write_results(args.out, lines, {"d_prime": [asdict(s) for s in stats], "methods": [asdict(r) for r in rows]})
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: learning efficiency of MCQS-E, MCQS-S and the Random Query baseline
(section 4.2, questions E1 and E4), and a QACE-style comparison on primitive actions.

The command line of ``capver bench learning`` (the benchmark is described in
:mod:`capver.bench.learning`): its options, the runs they plan, and the report."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from capver.bench.cli import BenchParser, summary
from capver.bench.learning.analysis import summarize, summarize_qace
from capver.bench.learning.output import main_table, qace_table, write_plots, write_runs
from capver.bench.learning.runs import Job, RunSpec, run_jobs
from capver.bench.learning.settings import (
    DEFAULT_BUDGETS,
    DEFAULT_SETTINGS,
    FALLBACK_BUDGET,
    QACE_SETTING,
    QUICK_BUDGET,
    EvalSet,
    collect_eval_set,
    parse_setting,
)
from capver.commands.argtypes import non_negative, positive, positive_number, seconds_or_off
from capver.engines.eval_collection import SUGGESTED_CHUNK
from capver.engines.executors import EXECUTORS, make_executor
from capver.engines.learning import LearnConfig
from capver.engines.mcqs import QUERY_METHODS
from capver.engines.mcqs.tilde import REWARDS
from capver.settings import SettingError

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
QACE_TARGET = "QACE: 2,466–5,295 interactions, 395–462 s"


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
    p.add_argument(
        "--settings",
        type=_csv_list,
        default=list(DEFAULT_SETTINGS),
        help="comma-separated: lao:DOMAIN, primitive:DOMAIN, minigrid-rl, minigrid-search, tabletop-llm, overcooked[:LAYOUT] "
        f"(default {','.join(DEFAULT_SETTINGS)})",
    )
    p.add_argument(
        "--methods",
        type=_csv_list,
        default=["mcqs-e", "mcqs-s", "random"],
        help=f"comma-separated, from {sorted(QUERY_METHODS)} (default mcqs-e,mcqs-s,random)",
    )
    p.add_argument("--seeds", type=positive, default=3, help="runs per (setting, method) (default 3)")
    p.add_argument(
        "--rewards",
        type=_csv_list,
        default=["disagreement"],
        help=f"comma-separated query-synthesis rewards of the MCQS curve runs, from {sorted(REWARDS)}, "
        "'tilde' optionally with its weight, 'tilde:0.1'; runs with 'tilde' are labelled "
        "METHOD+h̃u (default disagreement)",
    )
    p.add_argument(
        "--budget-steps",
        metavar="N|SETTING=N,...",
        help=f"simulator-step budget of the MCQS runs (default {DEFAULT_BUDGETS}, {FALLBACK_BUDGET} "
        f"for other settings; --quick: {QUICK_BUDGET} each)",
    )
    p.add_argument(
        "--budget-scale",
        type=positive_number,
        default=1.0,
        help="multiply every step budget (after --budget-steps) by this factor (default 1)",
    )
    p.add_argument(
        "--random-factor",
        type=positive_number,
        default=8.0,
        help="Random runs get this many times the step budget (default 8)",
    )
    p.add_argument(
        "--max-seconds",
        type=seconds_or_off,
        default=45.0,
        help="wall-clock cap of each run, evaluations included (0: none; default 45)",
    )
    p.add_argument("--eval-sequences", type=positive, default=300, help="sequences in each setting's D′ (default 300)")
    p.add_argument(
        "--eval-chunk",
        type=positive,
        default=None,
        metavar="N",
        help=f"collect D′ in chunks of N sequences on the executor's workers (e.g. {SUGGESTED_CHUNK:,}); "
        "chunk k ≥ 1 has its own seeds, so D′ depends on N, never on the executor (default: one "
        "stream in this process, the recorded D′)",
    )
    p.add_argument(
        "--eval-every",
        type=non_negative,
        default=0,
        help="checkpoint every this many simulator steps (default: budget/40)",
    )
    p.add_argument(
        "--crossing",
        choices=("first", "sustained"),
        default="first",
        help="steps to a threshold: first checkpoint reaching it, or from which it stays reached (default first)",
    )
    p.add_argument(
        "--patience",
        type=non_negative,
        default=0,
        help="stop after this many queries without change (default 0: off; paper: 25)",
    )
    p.add_argument("--iterations", type=positive, default=100, help="MCTS iterations per plan (default 100)")
    p.add_argument("--horizon", type=positive, default=10, help="query horizon (default 10)")
    p.add_argument("--executions", type=positive, default=2, help="executions n per query (default 2)")
    p.add_argument(
        "--ablation",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="ξ = 0 runs on the lao settings (section 4.2's E4; default on)",
    )
    p.add_argument(
        "--ablation-methods",
        type=_csv_list,
        default=["mcqs-s", "mcqs-e"],
        help="comma-separated methods of the ξ = 0 runs (default mcqs-s,mcqs-e)",
    )
    p.add_argument(
        "--qace",
        action=argparse.BooleanOptionalAction,
        default=True,
        help=f"the primitive-action comparison on {QACE_SETTING} (default on)",
    )
    p.add_argument(
        "--qace-methods",
        type=_csv_list,
        default=["mcqs-s", "mcqs-e", "random"],
        help="comma-separated methods of the QACE comparison (default mcqs-s,mcqs-e,random)",
    )
    p.add_argument(
        "--qace-budget-steps", type=positive, default=500, help="simulator-step budget of each QACE run (default 500)"
    )
    p.add_argument(
        "--qace-threshold",
        type=positive_number,
        default=0.009,
        help="a QACE run stops once its mean |P_true − P_h∧| is at most this (default 0.009, QACE's)",
    )
    p.add_argument(
        "--qace-every",
        type=positive,
        default=5,
        help="evaluate the QACE error every this many queries (default 5: one evaluation costs "
        "about as much as 2–3 queries)",
    )
    p.add_argument(
        "--qace-max-seconds",
        type=seconds_or_off,
        default=60.0,
        help="learning-time cap of each QACE run, evaluations excluded (0: none; default 60)",
    )
    p.add_argument(
        "--tilde",
        type=non_negative,
        default=10,
        metavar="K",
        help="score the Occam model h̃ at K checkpoints of each curve run, the last among them, and at "
        "every QACE checkpoint (0: never; default 10; h∧'s numbers do not depend on it)",
    )
    p.add_argument(
        "--jobs",
        type=positive,
        default=2,
        help="workers: processes, threads or Ray actors (default 2; local with 1: this process)",
    )
    p.add_argument(
        "--executor",
        choices=sorted(EXECUTORS),
        default="local",
        help="where the runs and D′ chunks go: local processes, threads or ray (default local)",
    )
    p.add_argument(
        "--address",
        default=None,
        metavar="ADDR",
        help="--executor ray: the cluster to join (HOST:6379 or 'auto'; default: a new local instance)",
    )
    p.add_argument("--out", type=Path, default=Path("bench-learning"), help="output directory (default bench-learning)")
    p.add_quick(QUICK, "a smoke run: every part on tiny budgets")
    return p


def plan_jobs(args: argparse.Namespace, budgets: Mapping[str, int], eval_sets: Mapping[str, EvalSet]) -> list[Job]:
    common = {
        "patience": args.patience,
        "iterations": args.iterations,
        "horizon": args.horizon,
        "executions": args.executions,
        "max_seconds": args.max_seconds or None,
        "tilde": args.tilde,
    }
    jobs = []
    for setting in args.settings:
        budget = budgets[setting]
        every = args.eval_every or max(1, budget // 40)
        for method in args.methods:
            steps = int(budget * args.random_factor) if method == "random" else budget
            # Random synthesizes no query, so a reward does not change it.
            for reward in ["disagreement"] if method == "random" else args.rewards:
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
                spec = RunSpec(
                    QACE_SETTING,
                    method,
                    seed,
                    args.qace_budget_steps,
                    1,
                    kind="qace",
                    **{**common, "max_seconds": args.qace_max_seconds or None},
                )
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
        parser.error(
            f"--rewards: unknown reward(s) {bad}; expected some of {sorted(REWARDS)}, 'tilde' optionally "
            "as 'tilde:λ' with λ in [0, 1]"
        )
    # The integer options are checked by their argument types; these two are factors, not seconds.
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
        f"Seeds {args.seeds}; step budgets "
        + ", ".join(f"{s} {b}" for s, b in budgets.items())
        + f" (Random × {args.random_factor:g}); time cap {args.max_seconds or 'none'} s per run; "
        f"MCTS {args.iterations} iterations, horizon {args.horizon}; {args.executions} executions per query; "
        f"patience {args.patience or 'off'}; thresholds: {args.crossing} checkpoint reaching them.",
        (
            "agr = section 4.2's model agreement 1 − VD_s (learner-count weighted); cov = coverage agreement "
            "(1 − VD weighted by D′'s counts). R÷M = Random's steps ÷ the method's; '@final cov' compares at the "
            "method's final coverage agreement on the seed-mean curves ('>': Random never got there)."
        ),
        f"D′ ({args.eval_sequences} sequences): "
        + "; ".join(f"{s} {e.size} executions, {len(e.counts)} unique transitions" for s, e in eval_sets.items())
        + ".",
        "",
        *main_table(summarize(results, budgets, args.crossing == "sustained")),
    ]
    if args.qace:
        lines += [
            "",
            (
                f"## Primitive actions on First Responders (QACE comparison; {QACE_TARGET}; "
                "aim ≤ 500 interactions, ≤ 30 s)"
            ),
            "",
            (
                "Mean |P_true − P_h∧| over all true transitions from the reachable states, evaluated every "
                f"{args.qace_every} quer{'y' if args.qace_every == 1 else 'ies'}; step budget {args.qace_budget_steps}, "
                f"learning-time cap {args.qace_max_seconds or 'none'} s; a run stops at the threshold. 'Steps' are "
                "simulator interactions (executions of an inapplicable action take none); 'MAE on tried (s,c)' "
                "restricts the mean to the (s, c) pairs D holds; 'applicable' to the (s, c) pairs where the action changes "
                "the state. The h̃ columns score the Occam model h̃ on the same checkpoints; its time adds the "
                "seconds spent building h̃ there."
            ),
            "",
            *qace_table(summarize_qace(results, args.qace_threshold), args.qace_threshold),
        ]
    lines += [
        "",
        (
            f"Total wall-clock {total:.0f} s with {args.jobs} {args.executor} worker(s); learn s excludes evaluation, "
            "wall s includes it (setting construction excluded)."
        ),
    ]
    text = "\n".join(lines) + "\n"
    (out / "table.md").write_text(text)
    write_runs(out / "runs.csv", results)
    write_plots(out, results)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())

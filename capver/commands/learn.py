"""``capver learn``: assess an agent with MCQS-E, MCQS-S or the Random Query baseline
(sections 3–4) and write everything a user needs to read, resume and plot the run.

The output directory holds ``run.json`` (the agent, setting and method, read by
``capver eval`` and checked by ``--resume``), ``dataset.jsonl`` (append-only, one record per capability
execution: ``--resume`` continues a killed run with nothing lost), ``eval.jsonl``
(the independent evaluation dataset D′), ``h_and.capm`` / ``h_or.capm`` (the
learned bounds in the DSL), ``curve.csv`` / ``curve.png`` (model agreement vs
simulator steps) and ``report.txt`` (each capability in plain words).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from capver.commands.argtypes import theta
from capver.engines.evaluation import checkpoint_scores, collect_eval_dataset
from capver.engines.learning import LearnConfig, Learner
from capver.engines.mcqs import QUERY_METHODS
from capver.engines.report import capability_report, plot_curves, read_curves, write_curve
from capver.errors import CapverError
from capver.io import dataset_file, dsl, run_file
from capver.model.dataset import TransitionDataset
from capver.settings import SETTINGS, Assessment, SettingArgs, build_assessment

HELP = "learn capability models of an agent by active query synthesis (MCQS) or random queries"


def add_setting_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--agent", choices=sorted(SETTINGS), default="lao", help="the agent to assess (default: lao)")
    parser.add_argument("--domain", default="first_responders", help="bundled PPDDL domain for lao/primitive")
    parser.add_argument("--problem", default="problem1", help="problem of the domain (default: problem1)")
    parser.add_argument("--model", metavar="FILE", help="capability-model file (.capm) for the model agent")
    parser.add_argument("--init", default="", metavar="ATOMS", help="model agent: initial state atoms")
    parser.add_argument("--theta", type=theta, default=1, help="temporal length Θ for lao, or 'inf' (default 1)")
    parser.add_argument("--layouts", type=int, default=20, help="MiniGrid: number of start layouts (default 20)")
    parser.add_argument("--seed", type=int, default=0, help="seed of every random choice (default 0)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_setting_arguments(parser)
    parser.add_argument("--method", choices=sorted(QUERY_METHODS), default="mcqs-s")
    parser.add_argument("--max-steps", type=int, default=None, help="budget: simulator steps")
    parser.add_argument("--max-queries", type=int, default=None, help="budget: queries")
    parser.add_argument("--max-seconds", type=float, default=None, help="budget: wall-clock seconds")
    parser.add_argument("--patience", type=int, default=25, help="stop after this many queries without change (0: never)")
    parser.add_argument("--executions", type=int, default=2, help="executions n of each query (default 2)")
    parser.add_argument("--horizon", type=int, default=10, help="query horizon (default 10)")
    parser.add_argument("--iterations", type=int, default=100, help="MCTS iterations per plan (default 100)")
    parser.add_argument("--xi", type=float, default=1e-5, help="cap of the revisitation bonus ξ (0: the ξ=0 ablation)")
    parser.add_argument("--eval-sequences", type=int, default=300, help="sequences in the evaluation dataset D′")
    parser.add_argument("--eval-every", type=int, default=200, help="evaluate every this many simulator steps")
    parser.add_argument("--out", type=Path, required=True, help="output directory")
    parser.add_argument("--resume", action="store_true", help="continue the run in --out")
    parser.add_argument("--quiet", action="store_true", help="no progress line")


def setting_args(args: argparse.Namespace) -> SettingArgs:
    return SettingArgs(
        domain=args.domain, problem=args.problem, model=args.model, init=args.init,
        theta=args.theta, layouts=args.layouts, seed=args.seed,
    )


def eval_dataset(a: Assessment, out: Path, n: int, seed: int) -> TransitionDataset:
    """D′, stored in ``out/eval.jsonl`` so that a resumed run uses the same one."""
    path = out / "eval.jsonl"
    if path.exists():
        return dataset_file.load(path, vocab=a.ctx.vocab).dataset
    d = collect_eval_dataset(a.setting, a.setting.capabilities, n, np.random.default_rng(seed + 10_007))
    with dataset_file.DatasetWriter.open(path, a.ctx.vocab, resume=False) as w:
        for c in d.capabilities.values():
            w.write_capability(c)
        for t, n_t in d.items():
            for _ in range(n_t):
                w.write(t)
    return d


def run(args: argparse.Namespace) -> int:
    out: Path = args.out
    if out.exists() and any(out.iterdir()) and not args.resume:
        raise CapverError(f"--out {out}: directory is not empty; pass --resume to continue that run")
    out.mkdir(parents=True, exist_ok=True)
    manifest = run_file.RunManifest(args.agent, setting_args(args), args.method)
    if args.resume:
        run_file.check_resume(out, manifest)
    else:
        run_file.write(out, manifest)
    assessment = build_assessment(args.agent, manifest.setting, np.random.default_rng(args.seed))
    ctx = assessment.ctx
    d_eval = eval_dataset(assessment, out, args.eval_sequences, args.seed)
    writer, data = dataset_file.open_or_resume(out / "dataset.jsonl", ctx.vocab, assessment.setting.capabilities)
    if writer.loaded.torn is not None:
        print(f"capver learn: repaired a torn last record of {out / 'dataset.jsonl'}", file=sys.stderr)
    config = LearnConfig.from_options(
        args.method,
        executions=args.executions,
        iterations=args.iterations,
        horizon=args.horizon,
        xi_cap=args.xi,
        patience=args.patience,
        max_steps=args.max_steps,
        max_queries=args.max_queries,
        max_seconds=args.max_seconds,
    )
    # A resumed run continues with a different stream of random choices.
    rng = np.random.default_rng([args.seed, len(data)])
    learner = Learner(ctx, assessment.setting, config, rng, data=data, sink=writer, grow=assessment.grow)
    curve_path = out / "curve.csv"
    rows = _read_rows(curve_path) if args.resume else []
    if rows:
        # Queries are not in the dataset file; the curve's last checkpoint is the best
        # count left by a killed run (queries after it are not counted again).
        learner.progress.queries = int(float(str(rows[-1]["queries"])))
    next_eval = [0 if not rows else int(float(rows[-1]["steps"])) + args.eval_every]
    start = time.monotonic()

    def record() -> dict[str, object]:
        row: dict[str, object] = {
            "method": args.method,
            "seed": args.seed,
            "steps": learner.progress.steps,
            "queries": learner.progress.queries,
            "transitions": learner.progress.unique_transitions,
            "exact_vd": "",
        }
        scores = checkpoint_scores(learner.h_and, learner.data, d_eval, assessment.truth, assessment.reachable)
        row.update((k, round(v, 6)) for k, v in scores.items())
        rows.append(row)
        # Saved at every checkpoint, so a killed run keeps its curve for --resume.
        write_curve(curve_path, rows)
        return row

    def on_query(lr: Learner) -> None:
        if lr.progress.steps >= next_eval[0]:
            row = record()
            next_eval[0] = lr.progress.steps + args.eval_every
            if not args.quiet:
                print(
                    f"\r[{args.method}] queries {lr.progress.queries}  steps {lr.progress.steps}  "
                    f"transitions {lr.progress.unique_transitions}  agreement {row['agreement']:.4f}  "
                    f"coverage {row['coverage_agreement']:.4f}  {time.monotonic() - start:.0f}s",
                    end="", file=sys.stderr, flush=True,
                )

    try:
        if not rows:
            record()
        learner.run(on_query)
    finally:
        writer.close()
        if not rows or int(float(str(rows[-1]["steps"]))) != learner.progress.steps or len(rows) == 1:
            record()
        if not args.quiet:
            print(file=sys.stderr)
        write_curve(curve_path, rows)
        plot_curves(rows, out / "curve.png", title=assessment.name)
        dsl.write(learner.h_and, out / "h_and.capm", name="pessimistic")
        dsl.write(learner.h_or, out / "h_or.capm", name="optimistic")
        (out / "report.txt").write_text(capability_report(learner.h_and, learner.h_or))
    p = learner.progress
    last = rows[-1]
    print(
        f"{assessment.name} {args.method}: {p.stop_reason}; {p.queries} queries, {p.executions} executions "
        f"({p.failures} failed), {p.steps} simulator steps, {p.unique_transitions} unique transitions, "
        f"{len(learner.capabilities)} capabilities; agreement {last['agreement']}, "
        f"coverage agreement {last['coverage_agreement']}"
        + (f", exact VD {last['exact_vd']}" if last["exact_vd"] != "" else "")
        + f"; {p.seconds:.1f}s. Wrote {out}/"
    )
    return 0


def _read_rows(path: Path) -> list[dict[str, object]]:
    return [dict(r) for r in read_curves([path])] if path.exists() else []

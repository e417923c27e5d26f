"""``capver eval RUN``: score a ``capver learn`` run by section 4.2's methodology.

* model agreement 1 − VD_s exactly as printed (on h∧ with the rules that never
  achieve their intent removed), and the coverage agreement over D′ that also
  charges what the learner never tried;
* exact VD (section 2) over the transitions the true model induces from the
  reachable states, when the truth is known (model-backed and primitive agents);
* the same coverage agreement and exact VD for the Occam model h̃, rebuilt
  from the data and the run's seed exactly as ``capver learn`` wrote it;
* E3 reachability: capability sequences the model predicts executable are executed
  by the agent, and the share of executions ending in a state the model predicted
  possible is reported.

The setting is rebuilt from the run's ``run.json``; the models are rebuilt from its
``dataset.jsonl`` (the learned bounds are a function of the data), and D′ is the
run's ``eval.jsonl``.  The scores are printed and written to ``RUN/evaluation.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from capver.commands.argtypes import non_negative, positive
from capver.core.dataset import TransitionDataset
from capver.core.vocabulary import Vocabulary
from capver.engines.evaluation import checkpoint_scores, reachability_accuracy, tilde_scores
from capver.engines.lattice import LatticeBuilder
from capver.engines.lifting import run_lifted_model
from capver.errors import RunFileError
from capver.io import run_dir
from capver.io.atomic import replace_text
from capver.io.run_dir import Run
from capver.logic.condition import LogicContext
from capver.settings import assessment_of


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run", type=Path, metavar="RUN", help="the --out directory of capver learn")
    parser.add_argument(
        "--bound",
        choices=("h_and", "h_or"),
        default="h_and",
        help="the learned bound to score (default h_and, the model section 4.2 evaluates)",
    )
    parser.add_argument(
        "--reachability",
        type=non_negative,
        default=100,
        metavar="N",
        help="E3: predicted-executable sequences to execute (0: skip; default 100)",
    )
    parser.add_argument("--length", type=positive, default=5, help="E3: capabilities per sequence (default 5)")
    parser.add_argument("--executions", type=positive, default=20, help="E3: executions of each sequence (default 20)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the E3 sampling (default 0)")


def run(args: argparse.Namespace) -> int:
    run = Run.open(args.run, require=(run_dir.MANIFEST,))
    manifest = run.manifest
    if manifest.custom:
        # A setting made in Python: the scores come from the files alone (no truth,
        # no E3, which executes the agent).
        if not run.has(run_dir.EVAL_DATASET):
            raise RunFileError(
                f"{run.file(run_dir.EVAL_DATASET)}: missing; a run of a setting made in Python has D′ only when "
                "result.evaluate(...) ran before result.save(...)"
            )
        vocab = run.dataset().vocab
        ctx, truth, reachable, name = LogicContext(vocab), None, None, manifest.name or "custom"
    else:
        assessment = assessment_of(manifest)
        vocab, ctx, truth, reachable, name = (
            assessment.ctx.vocab,
            assessment.ctx,
            assessment.truth,
            assessment.reachable,
            assessment.name,
        )
    data = _load(run, run_dir.DATASET, vocab)
    d_eval = _load(run, run_dir.EVAL_DATASET, vocab)
    builder = LatticeBuilder(ctx, data)
    h = builder.pessimistic if args.bound == "h_and" else builder.optimistic
    scores: dict[str, object] = {
        "run": str(args.run),
        "setting": name,
        "method": manifest.method,
        "bound": args.bound,
        "transitions": len(data),
        "unique_transitions": data.unique_count(),
        **checkpoint_scores(h, data, d_eval, truth, reachable),
    }
    tilde = run_lifted_model(builder.pessimistic, data, manifest.setting.seed).model
    scores.update(tilde_scores(tilde, d_eval, truth, reachable))
    if args.reachability and manifest.custom:
        print(
            "capver eval: E3 (reachability) skipped: it executes the agent, which lives in the Python code "
            "that made this run's setting (--reachability 0 skips it without this line)",
            file=sys.stderr,
        )
    elif args.reachability:
        rng = np.random.default_rng(args.seed)
        assessment.setting.sim.reset(int(rng.integers(2**31 - 1)))
        e3 = reachability_accuracy(h, assessment.setting, rng, args.reachability, args.length, args.executions)
        scores["reachability"] = {
            "sequences": e3.sequences,
            "executions": e3.executions,
            "accuracy": e3.accuracy,
            "std": e3.std,
            "length": args.length,
        }
    replace_text(run.file(run_dir.EVALUATION), json.dumps(scores, indent=2) + "\n")
    print(_summary(scores))
    return 0


def _load(run: Run, name: str, vocab: Vocabulary) -> TransitionDataset:
    """A run's dataset file; a torn last line (a killed run) is reported, not hidden."""
    torn: list[str] = []
    data = run.dataset(vocab=vocab, torn=torn) if name == run_dir.DATASET else run.eval_dataset(vocab=vocab, torn=torn)
    for line in torn:
        print(f"capver eval: {line} (capver learn --resume repairs the file)", file=sys.stderr)
    return data


def _summary(scores: dict[str, object]) -> str:
    lines = [
        (
            f"{scores['setting']} {scores['method']} ({scores['bound']}, {scores['transitions']} transitions, "
            f"{scores['unique_transitions']} unique)"
        ),
        f"  model agreement 1 − VD_s (section 4.2):  {scores['agreement']:.4f}",
        f"  coverage agreement over D′:               {scores['coverage_agreement']:.4f}",
        f"  coverage agreement of the Occam model h̃:  {scores['coverage_agreement_tilde']:.4f}",
    ]
    if "exact_vd" in scores:
        lines.append(f"  exact VD against the true model:          {scores['exact_vd']:.4f}")
        lines.append(f"  exact VD of the Occam model h̃:            {scores['exact_vd_tilde']:.4f}")
    e3 = scores.get("reachability")
    if isinstance(e3, dict):
        lines.append(
            f"  E3 reachability accuracy:                 {e3['accuracy']:.4f} ± {e3['std']:.4f} "
            f"({e3['sequences']} sequences of {e3['length']}, {e3['executions']} executions)"
        )
    return "\n".join(lines)

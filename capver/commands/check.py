"""``capver check``: machine checks between capability-model files (section 3.1's
lattice order): h₁ ⪯ h₂ and h₁ ≡ h₂ by z3, equal Pr_h by BDD regions, and the
agreement of every condition's BDD with its SMT formula.  Prints the proof verdict
or a concrete counterexample transition; exit status 1 when a check fails."""

from __future__ import annotations

import argparse
from pathlib import Path

from capver.engines.verification.relations import equivalent, refines, same_distributions
from capver.io import dsl
from capver.logic.condition import agreement_counterexample
from capver.model.capability_model import CompoundModel


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model1", type=Path, help="first model file (.capm)")
    parser.add_argument("model2", type=Path, nargs="?", help="second model (same vocabulary)")
    parser.add_argument(
        "--relation",
        choices=("refines", "equivalent", "same-probabilities"),
        default="refines",
        help="refines: model1 ⪯ model2; equivalent: model1 ≡ model2 (same transitions); "
        "same-probabilities: equal Pr_h everywhere",
    )


def _conditions_agree(model: CompoundModel, label: str) -> bool:
    ok = True
    for m in model.values():
        for i, r in enumerate(m.rules, 1):
            s = agreement_counterexample(r.condition)
            if s is not None:
                ok = False
                print(f"{label}: {m.name} rule {i}: BDD and SMT disagree at {model.vocabulary.format_state(s)}")
    print(f"{label}: BDD and SMT agree on every condition" if ok else f"{label}: disagreement found")
    return ok


def run(args: argparse.Namespace) -> int:
    first = dsl.read(args.model1)
    ok = _conditions_agree(first.model, str(args.model1))
    if args.model2 is None:
        return 0 if ok else 1
    second = dsl.read(args.model2, ctx=first.ctx, ctx_source=f"the first model ({args.model1})")
    ok = _conditions_agree(second.model, str(args.model2)) and ok
    h1, h2 = first.model, second.model
    check = {"refines": refines, "equivalent": equivalent, "same-probabilities": same_distributions}[args.relation]
    verdict = check(h1, h2)
    vocab = h1.vocabulary
    if verdict.holds:
        print(f"{args.relation}: holds (z3/BDD proof over all states)")
    else:
        t = verdict.counterexample
        assert t is not None
        print(
            f"{args.relation}: fails; counterexample: capability {t.c} from {vocab.format_state(t.s)} "
            f"to {vocab.format_state(t.s_next)}"
        )
    return 0 if (verdict.holds and ok) else 1

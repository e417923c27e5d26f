"""Machine-checked instances of the paper's lattice theorems on real agents.

For agents whose true model h⋆ is known (the primitive-action agent on bundled
PPDDL domains, whose true model is the domain itself), learn with MCQS-E, then
decide with z3 over *all* states of the vocabulary:

* Theorem 3: h∧ is complete w.r.t. D (every observed transition admitted) and
  h∧ ⪯ h∨;
* Theorem 1, lower bound: h∧ ⪯ h⋆ (observed transitions are true transitions);
* Theorem 1, upper bound: h⋆ ⪯ h∨ — the theorem needs D to be transition and effect
  complete; the premises are checked first (over the reachable states) and the
  verdict is reported either way, with z3's counterexample when it fails.

Usage: python proofs/check_theorems.py [--queries N] [--out proofs/results.md]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from capver.engines.learning import LearnConfig, Learner
from capver.engines.verify import refines
from capver.model.state import Effect
from capver.settings import SettingArgs, build_assessment

CASES = [("blocks", "problem1"), ("tireworld", "problem1"), ("first_responders", "problem1")]


def premises(learner: Learner, truth, reachable) -> tuple[bool, bool]:
    data = learner.data
    transition_complete = all(
        set(truth[c].distribution(s)) <= set(data.successors(s, c))
        for c in data.capabilities
        for s in data.states_of(c)
        if c in truth
    )
    effect_complete = True
    for c, m in truth.items():
        seen = {Effect(s2 & ~s, s & ~s2) for s in data.states_of(c) for s2 in data.successors(s, c)}
        for s in reachable:
            if any(Effect(s2 & ~s, s & ~s2) not in seen for s2 in m.distribution(s)):
                effect_complete = False
                break
    return transition_complete, effect_complete


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=150)
    ap.add_argument("--out", type=Path, default=Path(__file__).with_name("results.md"))
    args = ap.parse_args()
    lines = ["| domain | |D| | Thm 3: h∧ complete | Thm 3: h∧ ⪯ h∨ | Thm 1: h∧ ⪯ h⋆ | premises (transition, effect complete) | Thm 1: h⋆ ⪯ h∨ | z3 s |",
             "|---|---|---|---|---|---|---|---|"]
    for domain, problem in CASES:
        a = build_assessment("primitive", SettingArgs(domain=domain, problem=problem), np.random.default_rng(0))
        learner = Learner(a.ctx, a.setting, LearnConfig(method="mcqs-e", max_queries=args.queries, patience=0),
                          np.random.default_rng(0))
        learner.run()
        h_and, h_or, truth = learner.h_and, learner.h_or, a.truth
        assert truth is not None and a.reachable is not None
        start = time.perf_counter()
        complete = h_and.is_complete(learner.data)
        v_bounds = refines(h_and, h_or)
        v_lower = refines(h_and, truth)
        v_upper = refines(truth, h_or)
        z3_s = time.perf_counter() - start
        tc, ec = premises(learner, truth, a.reachable)

        def show(v, vocab=a.ctx.vocab) -> str:
            if v.holds:
                return "proved (UNSAT)"
            t = v.counterexample
            return f"refuted: {t.c} from {vocab.format_state(t.s)}"[:90]

        lines.append(
            f"| {domain}/{problem} | {len(learner.data)} | {complete} | {show(v_bounds)} | {show(v_lower)} | "
            f"{tc}, {ec} | {show(v_upper)} | {z3_s:.1f} |"
        )
        print(lines[-1], flush=True)
    args.out.write_text("# Machine-checked theorem instances\n\nProduced by `python proofs/check_theorems.py`.\n\n"
                        + "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

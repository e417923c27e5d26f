"""Model checking of capability models (paper, section 2: the MDP a compound model h†
induces, with Pr_h(s′ | s, c) as transition probabilities and the capabilities
enabled in s as the choices).

Quantitative model checking (Pmax/Pmin of F, G and U, bounded or not; Rmin/Rmax of
the expected number of capability executions; interval MDPs):

* :mod:`capver.engines.verification.explicit` — capver's own explicit-state engine:
  reachable states, exact bounded value iteration, graph pre-computation and exact
  policy iteration for unbounded reachability and expected executions, and robust
  value iteration over interval MDPs.  Needs nothing beyond capver.
* :mod:`capver.engines.verification.storm` — the same queries by Storm (stormpy,
  an optional dependency), on PRISM text.  The PRISM writer lives in
  :mod:`capver.engines.verification.prism` (io may import the engines, not the reverse), which
  also has the functions that export a model and call Storm on it.

The two share no code beyond the model's own ``distribution``, so their agreement
(tests/test_storm.py) checks the PRISM translation and both solvers.

Qualitative model checking (``E [ path ]`` / ``A [ path ]``: the MDP read as a
nondeterministic transition system, s → s′ when Pr_h(s′ | s, c) > 0 for an enabled c;
runs stop in dead ends):

* :mod:`capver.engines.verification.symbolic` — the default engine: BDD image and
  pre-image per capability, least/greatest fixpoints, reachable states, and shortest
  witnesses / counterexamples by breadth-first onion rings.
* :mod:`capver.engines.verification.bmc` — bounded model checking with pysmt and z3
  (the transition relation unrolled k steps), which cross-checks the BDD engine
  (tests/test_qualitative_engines.py, with a brute-force reference).
* :mod:`capver.engines.verification.ic3` — IC3/PDR on z3's Spacer for the safety
  queries (``A [ G φ ]``, and ``E [ F φ ]`` / ``E [ ψ U φ ]`` refuted): an inductive
  invariant when no bad state is reachable, re-checkable by plain z3 and recorded in
  a run's certificate, else a run (tests/test_ic3.py).
* :mod:`capver.engines.verification.qualitative` — the three by name
  (``QUALITATIVE_ENGINES``, the choices of ``capver verify --engine``) and ``auto``:
  the BDD engine first, IC3 or BMC raced beside it in a forked process once the
  reachable set grows large, with a time limit per check (measured there and in
  docs/qualitative_engines.md).
"""

from __future__ import annotations

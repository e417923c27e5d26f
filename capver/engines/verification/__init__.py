"""Model checking of capability models (paper, section 2: the MDP a compound model h†
induces, with Pr_h(s′ | s, c) as transition probabilities and the capabilities
enabled in s as the choices).

Qualitative model checking (``E [ path ]`` / ``A [ path ]``: the MDP read as a
nondeterministic transition system, s → s′ when Pr_h(s′ | s, c) > 0 for an enabled c;
runs stop in dead ends):

* :mod:`capver.engines.verification.symbolic` — the default engine: BDD image and
  pre-image per capability, least/greatest fixpoints, reachable states, and shortest
  witnesses / counterexamples by breadth-first onion rings.
* :mod:`capver.engines.verification.bmc` — bounded model checking with pysmt and z3
  (the transition relation unrolled k steps), which cross-checks the BDD engine
  (tests/test_qualitative_engines.py, with a brute-force reference).
"""

from __future__ import annotations

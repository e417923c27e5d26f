"""Model checking of capability models (paper, section 2: the MDP a compound model h†
induces, with Pr_h(s′ | s, c) as transition probabilities and the capabilities
enabled in s as the choices), and the verdicts it licenses about the agent.

Relations between models and their encodings (``capver check``, certificates):

- ``relations``: h₁ ⪯ h₂ (T_{h₁} ⊆ T_{h₂}, section 3.1's lattice order) and h₁ ≡ h₂ by z3, equal
  Pr_h on BDD regions, and the SMT transition formula T_c(x, x′) that ``bmc`` and ``ic3`` use.

Qualitative engines (``E [ path ]`` / ``A [ path ]``, the MDP read as a transition system):

- ``symbolic``: the BDD engine (``bdd``): images, fixpoints, shortest witnesses and counterexamples.
- ``ic3``: IC3/PDR on z3's Spacer for the safety queries, with a re-checkable inductive invariant.
- ``abc_pdr``: IC3/PDR on ABC's ``pdr`` (Debian's ``yosys-abc``), the same queries unbounded,
  over the circuit that ``aiger`` (and-inverter graphs, the binary AIGER format) encodes.
- ``bmc``: bounded model checking with pysmt and z3, the SMT cross-check of the BDD engine.
- ``qualitative``: the engines by name (``QUALITATIVE_ENGINES``) and ``auto``'s choice among them.

Quantitative engines (Pmax/Pmin of F, G, U; Rmin/Rmax of expected executions):

- ``quantitative``: the query semantics, ``check``, the checker protocol and the explicit checker.
- ``explicit``: capver's exact explicit-state engine (Fractions; robust value iteration on interval MDPs).
- ``sparse``: the vectorised explicit engine: float solution, then rounded and verified exactly.
- ``storm``: Storm (stormpy, optional) on PRISM text, built once, any number of properties.
- ``checkers``: the quantitative checkers by name (``QUANTITATIVE_CHECKERS``) and ``auto``.
- ``prism``: the PRISM MDP export that Storm reads, and the ``storm_*`` calls on a model.

**The entry point** (every caller's: ``capver verify``, ``LearnResult.verify``, the
property tracker of ``learn --properties``, ``capver bench verdicts``):

- ``evidence``: :class:`Evidence` (the lattice, the data, the environment's states, δ and
  ε) and :func:`verify` / :func:`verify_all` / :class:`Verifier`, which give a
  :class:`Verdict`.
- ``verdict``: :class:`Verdict`, its :class:`Outcome`, its words and its
  :class:`VerdictRecord` (what ``--json`` prints and ``verdicts.json`` keeps).

These names are importable from this package; they are loaded on first use, so that
importing one engine module does not load every engine.

The agent (section 3.1, Theorems 1 and 3; ``proofs/`` states and checks the guarantees):

- ``agent_verdict``: what a qualitative verdict on h∧ / h∨ says about the agent, in tiers.
- ``confidence``: two-sided anytime-valid bounds on the agent's Pmax, Pmin and Rmin.
- ``sampling``: anytime-valid missing-mass bounds and outcome intervals per tried (state, capability).
- ``binomial``: the Clopper–Pearson interval (and the Beta function) both of those rest on.

``explicit`` and ``storm`` share no code beyond the model's own ``distribution``, so their
agreement (tests/engines/verification/test_storm.py) checks the PRISM translation and both solvers.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_HOMES = {
    "Evidence": "evidence",
    "Verifier": "evidence",
    "verify": "evidence",
    "verify_all": "evidence",
    "Verdict": "verdict",
    "VerdictRecord": "verdict",
    "Outcome": "verdict",
    "UnsupportedQueryError": "evidence",
}

__all__ = [
    "Evidence",
    "Outcome",
    "UnsupportedQueryError",
    "Verdict",
    "VerdictRecord",
    "Verifier",
    "verify",
    "verify_all",
]

if TYPE_CHECKING:
    from capver.engines.verification.evidence import Evidence, UnsupportedQueryError, Verifier, verify, verify_all
    from capver.engines.verification.verdict import Outcome, Verdict, VerdictRecord


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is not None:
        return getattr(importlib.import_module(f"{__name__}.{home}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""The h̃-uncertainty reward of MCQS (a use of the Occam model h̃: a reward that also
targets states where h̃'s prediction is least certain), an option beside the paper's
h∧/h∨ disagreement (section 3.2), which stays the default.

The uncertainty of the Occam model h̃ (:mod:`capver.engines.occam`, lifted over
objects by :mod:`capver.engines.lifting`) at (s, c) is

    u(s, c) = 1 / (1 + n(s, c)),

n(s, c) the observations that support the h̃ rule of c applying at s: the executions
of c in D (all groundings of its schema pooled, for a lifted grounding) at tried
states where that rule's condition holds.  Because h̃'s rules are mutually exclusive,
at most one applies; where none does (c never tried, or a don't-care h̃ left
uncovered), u = 1.  At a tried state the applying rule is the one of its own block,
so n ≥ |D_SC(s, c)| and u ≤ ξ-style 1/(1 + |D_SC(s, c)|): rules learned from few
executions keep a state uncertain even after it was tried there.

The reward changes h₁'s move τ_c^{h₁} of the distinguishing MDP (:meth:`capver.
engines.mcqs.distinguishing.DistinguishingMDP.step_one`) in two places, both with
weight λ ∈ [0, 1]; λ = 0 gives the default rewards exactly:

* **Tried pairs** (h∧ has a rule at s): u joins the ξ bonus as missing mass sent to
  the sink ⊥₁, m(s, c) = min(1, ξ/(1 + |D_SC(s, c)|) + λ·u(s, c)).  The structure of
  Lemma 2 (appendix A.2) is kept: on ⟨ρ, ρ⟩ with h∧ = h∨ on supp(ρ) — as at every
  tried state, where both have exactly the block's rule — the reward of c is
  Σ_s ρ(s)·m(s, c).  States whose h̃ rule rests on few executions are worth
  re-visiting (to firm up its effect probabilities), where the default saw only ξ.
* **Untried pairs** (h∧ is silent): by default all of h₁'s mass goes to ⊥₁ and
  δ_TV = 1 at *every* untried pair, so the search cannot prefer one; MCQS-E's early
  end (a root worth 1) then stops at the first.  Here h₁ instead follows h̃'s
  prediction with the share λ·(1 − u(s, c)) its support earns and sends the rest to
  ⊥₁.  An untried pair where h̃ has no rule (u = 1) stays worth 1; one where a
  well-supported h̃ rule predicts what h∨ predicts is worth about 1 − λ; where h̃ and
  h∨ differ, their difference counts as well.  So among untried pairs the search
  goes first where h̃'s prediction is least certain or contradicts h∨.

This is a heuristic, not the paper's objective: it ranks the untried pairs that the
paper's δ_TV values all at 1.  The learning benchmark (``capver bench learning
--rewards disagreement,tilde``) scores both rewards on h∧ and on h̃.

h̃ costs 0.5–5 s to build, so the learner rebuilds it every K queries
(:attr:`capver.engines.learning.LearnConfig.tilde_every`); between rebuilds u is a
fixed table (its supports counted once at build time), and its :attr:`version`
is part of the distinguishing MDP's step memo key, so memoised steps stay exact.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping

from capver.core.dataset import TransitionDataset
from capver.core.state import State
from capver.engines.lifting import run_lifted_model
from capver.model.capability_model import CompoundModel
from capver.model.lifted import LiftedOccam

_versions = itertools.count(1)


class Uncertainty:
    """λ·u(s, c) for one h̃ (see the module docstring); memoised per (s, c)."""

    def __init__(self, tilde: CompoundModel, support: Mapping[str, tuple[int, ...]], weight: float) -> None:
        self.tilde = tilde
        self.support = support  # per capability, the observations supporting each h̃ rule (rule order)
        self.weight = weight
        # A new number for every table: the step memo compares it to know whether
        # its steps were computed with this u.
        self.version = next(_versions)
        self._memo: dict[tuple[State, str], float] = {}

    def u(self, s: State, c: str) -> float:
        """u(s, c) = 1/(1 + n(s, c)); 1 where no h̃ rule of c applies."""
        key = (s, c)
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        m = self.tilde.get(c)
        out = 1.0
        if m is not None:
            for i, r in enumerate(m.rules):
                if r.condition.holds(s):
                    out = 1.0 / (1 + self.support[c][i])
                    break
        self._memo[key] = out
        return out

    def bonus(self, s: State, c: str) -> float:
        """λ·u(s, c)."""
        return self.weight * self.u(s, c)

    def guess(self, s: State, c: str) -> tuple[float, tuple[tuple[State, float], ...]] | None:
        """Where h∧ is silent: (λ·(1 − u(s, c)), h̃'s prediction at (s, c)), or None
        when no h̃ rule applies (u = 1: h₁ knows nothing, as by default)."""
        share = self.weight * (1.0 - self.u(s, c))
        if share <= 0.0:
            return None
        m = self.tilde.get(c)
        dist = m.float_distribution(s) if m is not None else ()
        return (share, dist) if dist else None


def rule_support(occ: LiftedOccam, data: TransitionDataset) -> dict[str, tuple[int, ...]]:
    """Per capability of h̃, the executions in D at tried states where each rule holds;
    a lifted grounding's rules count those of every grounding of its schema (the data
    they were learned from)."""
    own: dict[str, tuple[int, ...]] = {}
    for c, m in occ.model.items():
        tried = [(s, data.count_sc(s, c)) for s in data.states_of(c)]
        own[c] = tuple(sum(n for s, n in tried if r.condition.holds(s)) for r in m.rules)
    for lc in occ.lifted:
        names = [lc.schema.capability(b).name for b in lc.bindings]
        pooled = tuple(sum(col) for col in zip(*(own[c] for c in names), strict=True))
        for c in names:
            own[c] = pooled
    return own


def tilde_uncertainty(h_and: CompoundModel, data: TransitionDataset, weight: float, seed: int) -> Uncertainty:
    """u from the lifted h̃ as ``capver learn`` builds it (folds seeded by ``seed``)."""
    occ = run_lifted_model(h_and, data, seed)
    return Uncertainty(occ.model, rule_support(occ, data), weight)


def _no_uncertainty(h_and: CompoundModel, data: TransitionDataset, weight: float, seed: int) -> Uncertainty | None:
    return None


REWARDS: dict[str, Callable[[CompoundModel, TransitionDataset, float, int], Uncertainty | None]] = {
    "disagreement": _no_uncertainty,
    "tilde": tilde_uncertainty,
}
"""The rewards of query synthesis: name → builder of the uncertainty term (None: the
paper's δ_TV / δ_SD alone)."""

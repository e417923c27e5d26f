"""The property focus of MCQS: the distinguishing MDP of section 3.2 restricted to the
part of the lattice that can still change the verdict of a property the user asked
about (property-directed query synthesis, built by
:mod:`capver.engines.directed`).

A focus is a set of *relevant* states and, per relevant (state, capability) pair, a
*bonus* mass.  It changes the moves of the distinguishing MDP
(:meth:`capver.engines.mcqs.distinguishing.DistinguishingMDP.step_one`) in two ways:

* **Outside the relevant states both players move alike**: by h∧'s prediction where
  h∧ has one (it is what was observed), else by h∨'s, else into the same sink.  No
  disagreement arises there, so the search is worth something only where a query can
  move a property's tier; paths still pass through irrelevant states to reach
  relevant ones.
* **At relevant pairs h₁ sends the bonus to its sink ⊥₁**, as the ξ bonus does
  (Lemma 2 of appendix A.2 keeps its form: on ⟨ρ, ρ⟩ the reward is Σ ρ(s)·m(s, c)).
  The bonus of a tried pair is its missing-mass bound ε(s, c)
  (:mod:`capver.engines.verification.sampling`), so the search goes where the data
  are thinnest for the property's confidence; an untried relevant pair is already
  worth δ_TV = 1 (h∧ is silent there).

With the empty focus (every state relevant, no bonus) the moves are the paper's
exactly; the theorems of appendix A apply to the MDP restricted to the relevant
states (``proofs/``: property-directed synthesis).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping

from capver.core.state import State

_versions = itertools.count(1)


class Focus:
    """Relevant states (a membership test, memoised) and bonus masses per pair."""

    def __init__(self, relevant: Callable[[State], bool], bonus: Mapping[tuple[State, str], float]) -> None:
        self._relevant = relevant
        self._bonus = dict(bonus)
        self._memo: dict[State, bool] = {}
        # A new number for every focus: the step memo compares it to know whether its
        # steps were computed under this focus.
        self.version = next(_versions)

    def relevant(self, s: State) -> bool:
        hit = self._memo.get(s)
        if hit is None:
            hit = self._memo[s] = bool(self._relevant(s))
        return hit

    def bonus(self, s: State, c: str) -> float:
        """The mass h₁ sends to ⊥₁ at a relevant tried pair (0 for most pairs)."""
        return self._bonus.get((s, c), 0.0)

    @property
    def bonus_pairs(self) -> int:
        return len(self._bonus)

"""The Markov decision process interface LAO* plans over (section 4.2's LAO* agent).

An MDP here is a goal-free stochastic shortest-path skeleton: states, the actions
applicable in each state (in a fixed order, which is the planner's tie-breaking
order) and each action's outcome distribution.  Every action costs one step; the
goal and the dead-end penalty are supplied to the planner, not to the MDP, so one
MDP (a PPDDL task's true dynamics) serves every intent.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Protocol, TypeVar

S = TypeVar("S", bound=Hashable)
A = TypeVar("A", bound=Hashable)

Probability = Fraction | float


class MDP(Protocol[S, A]):
    """States S, applicable actions and outcome distributions."""

    def actions(self, s: S) -> Sequence[A]:
        """The actions applicable in ``s``; their order breaks ties between equally
        good actions, so it must be deterministic."""
        ...

    def outcomes(self, s: S, a: A) -> Sequence[tuple[Probability, S]]:
        """[(p, s′)] with Σ p = 1; the same s′ may appear more than once."""
        ...


@dataclass(frozen=True, slots=True)
class TableMDP:
    """An MDP given as a table ``{s: {a: [(p, s′), ...]}}`` (actions in insertion
    order).  States missing from the table have no applicable action."""

    table: Mapping[Hashable, Mapping[Hashable, Sequence[tuple[Probability, Hashable]]]]

    def actions(self, s: Hashable) -> Sequence[Hashable]:
        return list(self.table.get(s, {}))

    def outcomes(self, s: Hashable, a: Hashable) -> list[tuple[Probability, Hashable]]:
        return list(self.table[s][a])

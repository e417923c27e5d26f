"""FOL decision lists (section 5 of the introspection paper): the reward model
R̂(s, a, s′) and the termination signal C(s, a, s′) → {−1, 0, 1} (failure,
continue, success) as "a series of if-else statements whose conditions are
first-order logic formulas".

Conditions are closed formulas evaluated on the next state s′, with ``Prev`` parts
on the previous state s (see :mod:`capver.introspection.fol`).  They may not depend
on the action itself; none of the paper's domains needs that.

:meth:`DecisionList.condition_for` is what milestone computation (section 5.1)
mutates: the formula that holds exactly when the list outputs a given value, i.e.
the disjunction over the rules i with that value of ¬c₁ ∧ … ∧ ¬cᵢ₋₁ ∧ cᵢ (and
¬c₁ ∧ … ∧ ¬cₙ for the default).
"""

from __future__ import annotations

from dataclasses import dataclass

from capver.core.state import State
from capver.core.vocabulary import Atom, Vocabulary
from capver.errors import IntrospectionError
from capver.introspection.fol import (
    BitFormula,
    Formula,
    Not,
    StateLike,
    check_formula,
    compile_formula,
    conj,
    disj,
    evaluate,
)

FAILURE = -1
CONTINUE = 0
SUCCESS = 1


@dataclass(frozen=True, slots=True)
class DecisionRule:
    """``if condition: return value``."""

    condition: Formula
    value: float


@dataclass(frozen=True, slots=True)
class DecisionList:
    """Rules tried in order; the first whose condition holds gives the value,
    otherwise ``default``."""

    rules: tuple[DecisionRule, ...]
    default: float = 0.0
    name: str = "decision list"

    def check(self, vocab: Vocabulary) -> None:
        """Raise :class:`IntrospectionError` if a condition is malformed or not closed."""
        for i, r in enumerate(self.rules):
            check_formula(r.condition, vocab, where=f"{self.name} rule {i + 1}")

    def check_termination(self) -> None:
        """Raise unless every value is one of −1, 0, 1 (the signal C of section 5)."""
        for v in (*(r.value for r in self.rules), self.default):
            if v not in (FAILURE, CONTINUE, SUCCESS):
                raise IntrospectionError(f"{self.name}: termination value {v!r} is not one of -1, 0, 1")

    def values(self) -> tuple[float, ...]:
        """The distinct outputs, in order of first appearance (default last)."""
        out: list[float] = []
        for v in (*(r.value for r in self.rules), self.default):
            if v not in out:
                out.append(v)
        return tuple(out)

    @property
    def max_value(self) -> float:
        """r_max of section 5.1: the largest value the list can output."""
        return max(self.values())

    def value(self, state: StateLike, vocab: Vocabulary, *, prev: StateLike | None = None) -> float:
        for r in self.rules:
            if evaluate(r.condition, state, vocab, prev=prev):
                return r.value
        return self.default

    def condition_for(self, value: float) -> Formula:
        """The formula that holds exactly when the list outputs ``value``."""
        branches: list[Formula] = []
        earlier: list[Formula] = []
        for r in self.rules:
            if r.value == value:
                branches.append(conj(*earlier, r.condition) if earlier else r.condition)
            earlier.append(Not(r.condition))
        if self.default == value:
            branches.append(conj(*earlier) if earlier else conj())
        return disj(*branches) if branches else disj()

    def compile(self, vocab: Vocabulary, fixed: dict[Atom, bool] | None = None) -> CompiledDecisionList:
        return CompiledDecisionList(
            tuple((compile_formula(r.condition, vocab, fixed=fixed), r.value) for r in self.rules),
            self.default,
        )


@dataclass(frozen=True, slots=True)
class CompiledDecisionList:
    """A decision list over bitset states (conditions compiled to masks)."""

    rules: tuple[tuple[BitFormula, float], ...]
    default: float

    def value(self, s: State, prev: State = 0) -> float:
        for cond, v in self.rules:
            if cond.holds(s, prev):
                return v
        return self.default

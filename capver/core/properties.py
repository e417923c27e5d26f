"""Properties that ``capver verify`` checks on a capability model (PRISM/Storm
style): what they are, what a state formula means in a state, and how each is
written (:func:`to_text`; the reader is :mod:`capver.io.properties_text`, the
grammar ``grammars/properties.lark``).

A model h† is a Markov decision process over the vocabulary's states: in a state a
scheduler picks a capability c, and the next state is drawn from Pr_h(· | s, c).
A *state formula* is a Boolean formula over the ground atoms (:func:`holds` says
whether it is true in an ``int`` bitset state).  A *path formula* speaks of a run
s0 c1 s1 c2 s2 ...; bounds count capability executions:

    F φ      φ eventually holds              F<=k φ    ... in some s_i, i <= k
    G φ      φ holds in every state          G<=k φ    ... in s_0 .. s_k
    φ U ψ    ψ eventually holds, φ before    φ U<=k ψ  ... ψ in some s_i, i <= k

and a property (:class:`Property`) asks one of

    E [ path ]          some scheduler has a run satisfying path (qualitative)
    A [ path ]          every run of every scheduler satisfies path
    Pmax=? [ path ]     the greatest probability of path over the schedulers
    Pmin=? [ path ]     the least probability
    P>=p [ path ]       every scheduler satisfies path with probability >= p
                        (so Pmin >= p; P<=p means Pmax <= p; also <, >)
    Rmax=? [ F φ ]      the greatest expected number of capability executions
    Rmin=? [ F φ ]      the least, until φ holds

optionally of the schedulers that execute only some capabilities
(``{caps: pick-up-a, stack-a-b}``).  The initial state is not part of a property;
``capver verify`` is given it (``--init``).

Everything here is a frozen dataclass, compared by what it asks: a property's
source text and line are not compared, so that ``parse(to_text(p)) == p``.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from typing import ClassVar

from capver.core.state import State
from capver.core.vocabulary import Atom, Vocabulary

__all__ = [
    "KEYWORDS",
    "And",
    "AtomFormula",
    "Comparison",
    "Const",
    "Eventually",
    "ExistsPath",
    "ForallPath",
    "Globally",
    "Implies",
    "Not",
    "Optimum",
    "Or",
    "PathFormula",
    "ProbabilityBound",
    "ProbabilityQuery",
    "Property",
    "Query",
    "RewardQuery",
    "StateFormula",
    "Temporal",
    "Until",
    "atoms",
    "formula_text",
    "holds",
    "name_text",
    "path_text",
    "probability_text",
    "query_text",
    "terminating_places",
    "to_text",
]


class Comparison(enum.Enum):
    """The relation of a probability bound ``P<op>p``; the value is how it is written."""

    LT = "<"
    LE = "<="
    GE = ">="
    GT = ">"

    def compare(self, value: Fraction, bound: Fraction) -> bool:
        """``value <op> bound``."""
        if self is Comparison.LT:
            return value < bound
        if self is Comparison.LE:
            return value <= bound
        if self is Comparison.GE:
            return value >= bound
        return value > bound


class Optimum(enum.Enum):
    """Which scheduler a quantitative query asks about."""

    MAX = "max"
    MIN = "min"


class Temporal(enum.Enum):
    """The temporal operator of a path formula; the value is how it is written."""

    EVENTUALLY = "F"
    GLOBALLY = "G"
    UNTIL = "U"


# -- state formulas ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Const:
    """``true`` or ``false``."""

    value: bool


@dataclass(frozen=True, slots=True)
class AtomFormula:
    """A ground atom of the vocabulary: true in the states whose bit it is."""

    atom: Atom


@dataclass(frozen=True, slots=True)
class Not:
    operand: StateFormula


@dataclass(frozen=True, slots=True)
class And:
    """``a & b & ...``: at least two operands, as written (``(a & b) & c`` keeps its
    inner conjunction)."""

    operands: tuple[StateFormula, ...]

    def __post_init__(self) -> None:
        if len(self.operands) < 2:
            raise ValueError("And takes at least two operands")


@dataclass(frozen=True, slots=True)
class Or:
    """``a | b | ...``: at least two operands, as written."""

    operands: tuple[StateFormula, ...]

    def __post_init__(self) -> None:
        if len(self.operands) < 2:
            raise ValueError("Or takes at least two operands")


@dataclass(frozen=True, slots=True)
class Implies:
    """``premise => conclusion`` (``=>`` groups to the right)."""

    premise: StateFormula
    conclusion: StateFormula


StateFormula = Const | AtomFormula | Not | And | Or | Implies


# -- path formulas ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Eventually:
    """``F φ`` or, with a bound k, ``F<=k φ``."""

    operator: ClassVar[Temporal] = Temporal.EVENTUALLY
    goal: StateFormula
    bound: int | None = None

    def __post_init__(self) -> None:
        _check_bound(self.bound)


@dataclass(frozen=True, slots=True)
class Globally:
    """``G φ`` or ``G<=k φ``."""

    operator: ClassVar[Temporal] = Temporal.GLOBALLY
    invariant: StateFormula
    bound: int | None = None

    def __post_init__(self) -> None:
        _check_bound(self.bound)


@dataclass(frozen=True, slots=True)
class Until:
    """``φ U ψ`` or ``φ U<=k ψ``."""

    operator: ClassVar[Temporal] = Temporal.UNTIL
    hold: StateFormula
    goal: StateFormula
    bound: int | None = None

    def __post_init__(self) -> None:
        _check_bound(self.bound)


def _check_bound(bound: int | None) -> None:
    if bound is not None and (not isinstance(bound, int) or bound < 0):
        raise ValueError(f"a step bound is a whole number >= 0, got {bound!r}")


PathFormula = Eventually | Globally | Until


# -- properties ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ExistsPath:
    """``E [ path ]``: some scheduler has a run that satisfies ``path``."""

    path: PathFormula


@dataclass(frozen=True, slots=True)
class ForallPath:
    """``A [ path ]``: every run of every scheduler satisfies ``path``."""

    path: PathFormula


@dataclass(frozen=True, slots=True)
class ProbabilityQuery:
    """``Pmax=? [ path ]`` / ``Pmin=? [ path ]``: the extreme probability of
    ``path`` over the schedulers."""

    optimum: Optimum
    path: PathFormula


@dataclass(frozen=True, slots=True)
class ProbabilityBound:
    """``P<op>p [ path ]``: every scheduler gives ``path`` a probability ``<op> p``
    (0 <= p <= 1)."""

    comparison: Comparison
    probability: Fraction
    path: PathFormula

    def __post_init__(self) -> None:
        if not 0 <= self.probability <= 1:
            raise ValueError(f"a probability bound is in [0, 1], got {self.probability}")


@dataclass(frozen=True, slots=True)
class RewardQuery:
    """``Rmax=? [ F target ]`` / ``Rmin=? [ F target ]``: the extreme expected
    number of capability executions until ``target`` holds."""

    optimum: Optimum
    target: StateFormula


Query = ExistsPath | ForallPath | ProbabilityQuery | ProbabilityBound | RewardQuery


@dataclass(frozen=True, slots=True)
class Property:
    """A named question about a model.

    ``capability_names`` restricts the scheduler to those capabilities (None: all of
    the model's).  ``text`` is the property as written and ``line`` where (1-based;
    0 when built in code); neither is compared."""

    name: str
    query: Query
    capability_names: frozenset[str] | None = None
    text: str = field(default="", compare=False)
    line: int = field(default=0, compare=False)

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("a property name is not empty")
        if self.capability_names is not None and not self.capability_names:
            raise ValueError("a capability restriction names at least one capability (None: all of them)")

    @property
    def path(self) -> PathFormula | None:
        """The path formula, or None for a reward query (whose path is ``F target``)."""
        return None if isinstance(self.query, RewardQuery) else self.query.path


# -- meaning --------------------------------------------------------------------------


def holds(formula: StateFormula, state: State, vocab: Vocabulary) -> bool:
    """Whether ``formula`` is true in the bitset ``state`` of ``vocab`` (raises
    :class:`~capver.errors.VocabularyError` for an atom the vocabulary lacks)."""
    match formula:
        case Const(value):
            return value
        case AtomFormula(atom):
            return bool(state >> vocab.index(atom) & 1)
        case Not(operand):
            return not holds(operand, state, vocab)
        case And(operands):
            return all(holds(f, state, vocab) for f in operands)
        case Or(operands):
            return any(holds(f, state, vocab) for f in operands)
        case Implies(premise, conclusion):
            return not holds(premise, state, vocab) or holds(conclusion, state, vocab)
    raise TypeError(f"not a state formula: {formula!r}")


def atoms(formula: StateFormula | PathFormula | Query | Property) -> frozenset[Atom]:
    """The atoms that ``formula`` (or a path formula, query or property) mentions."""
    return frozenset(_atoms(formula))


def _atoms(item: StateFormula | PathFormula | Query | Property) -> Iterator[Atom]:
    match item:
        case Const():
            return
        case AtomFormula(atom):
            yield atom
        case Not(operand):
            yield from _atoms(operand)
        case And(operands) | Or(operands):
            for f in operands:
                yield from _atoms(f)
        case Implies(premise, conclusion):
            yield from _atoms(premise)
            yield from _atoms(conclusion)
        case Eventually(goal):
            yield from _atoms(goal)
        case Globally(invariant):
            yield from _atoms(invariant)
        case Until(hold, goal):
            yield from _atoms(hold)
            yield from _atoms(goal)
        case ExistsPath(path) | ForallPath(path) | ProbabilityQuery(_, path) | ProbabilityBound(_, _, path):
            yield from _atoms(path)
        case RewardQuery(_, target):
            yield from _atoms(target)
        case Property(query=query):
            yield from _atoms(query)
        case _:
            raise TypeError(f"not a formula, query or property: {item!r}")


# -- writing ---------------------------------------------------------------------------

KEYWORDS = frozenset({"E", "A", "P", "Pmax", "Pmin", "R", "Rmax", "Rmin", "F", "G", "U", "true", "false", "caps"})
"""The words of the language.  A name spelling one is written quoted (only true,
false, F and G must be, but quoting all keeps the text plain to read)."""

_PLAIN_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_\-.]*")


def name_text(name: str) -> str:
    """``name`` as the property language writes it: bare when it is a plain
    identifier and no keyword, else a JSON string."""
    if _PLAIN_NAME.fullmatch(name) and name not in KEYWORDS:
        return name
    return json.dumps(name, ensure_ascii=False)


def _atom_text(atom: Atom) -> str:
    head = name_text(atom.predicate)
    return head if not atom.args else f"{head}({','.join(name_text(a) for a in atom.args)})"


# Binding strength, loosest first: a sub-formula no stronger than its context's
# level is parenthesised (so `(a & b) & c` and `(a => b) => c` keep their shape).
_IMPLIES, _OR, _AND, _NOT, _ATOMIC = range(5)


def _level(formula: StateFormula) -> int:
    match formula:
        case Implies():
            return _IMPLIES
        case Or():
            return _OR
        case And():
            return _AND
        case Not():
            return _NOT
    return _ATOMIC


def formula_text(formula: StateFormula) -> str:
    """A state formula as text, with the parentheses its structure needs."""
    match formula:
        case Const(value):
            return "true" if value else "false"
        case AtomFormula(atom):
            return _atom_text(atom)
        case Not(operand):
            return "!" + _wrap(operand, _NOT - 1)
        case And(operands):
            return " & ".join(_wrap(f, _AND) for f in operands)
        case Or(operands):
            return " | ".join(_wrap(f, _OR) for f in operands)
        case Implies(premise, conclusion):
            return f"{_wrap(premise, _IMPLIES)} => {_wrap(conclusion, _IMPLIES - 1)}"
    raise TypeError(f"not a state formula: {formula!r}")


def _wrap(formula: StateFormula, level: int) -> str:
    text = formula_text(formula)
    return f"({text})" if _level(formula) <= level else text


def _bound_text(bound: int | None) -> str:
    return "" if bound is None else f"<={bound}"


def path_text(path: PathFormula) -> str:
    """A path formula as text: ``F<=3 on(a,b)``, ``clear(a) U handempty``."""
    match path:
        case Eventually(goal, bound):
            return f"F{_bound_text(bound)} {formula_text(goal)}"
        case Globally(invariant, bound):
            return f"G{_bound_text(bound)} {formula_text(invariant)}"
        case Until(hold, goal, bound):
            # `a => b U c` reads back as (a => b) U c, but is written plainly.
            return f"{_wrap(hold, _IMPLIES)} U{_bound_text(bound)} {_wrap(goal, _IMPLIES)}"
    raise TypeError(f"not a path formula: {path!r}")


def terminating_places(p: Fraction) -> int | None:
    """The number of decimal places of ``p`` when its decimal expansion terminates
    (its denominator has no prime factor but 2 and 5), else None."""
    d, twos, fives = p.denominator, 0, 0
    while d % 2 == 0:
        d //= 2
        twos += 1
    while d % 5 == 0:
        d //= 5
        fives += 1
    return max(twos, fives) if d == 1 else None


def probability_text(p: Fraction) -> str:
    """``p`` exactly: a decimal when it has a finite one (0.95), else ``n/d``."""
    places = terminating_places(p)
    if places is None:
        return f"{p.numerator}/{p.denominator}"
    if places == 0:
        return str(p.numerator)
    digits = str(abs(p.numerator) * 10**places // p.denominator).rjust(places + 1, "0")
    sign = "-" if p < 0 else ""
    return f"{sign}{digits[:-places]}.{digits[-places:]}"


def query_text(query: Query) -> str:
    """A query as text: ``Pmax=? [ F<=10 on(a,b) ]``."""
    match query:
        case ExistsPath(path):
            return f"E [ {path_text(path)} ]"
        case ForallPath(path):
            return f"A [ {path_text(path)} ]"
        case ProbabilityQuery(optimum, path):
            return f"P{optimum.value}=? [ {path_text(path)} ]"
        case ProbabilityBound(comparison, probability, path):
            return f"P{comparison.value}{probability_text(probability)} [ {path_text(path)} ]"
        case RewardQuery(optimum, target):
            return f"R{optimum.value}=? [ F {formula_text(target)} ]"
    raise TypeError(f"not a query: {query!r}")


def to_text(prop: Property) -> str:
    """``prop`` in the property language, named and without the closing ``;``:
    ``"safe": A [ G !dead(v1) ] {caps: a, b}``.  Reading it back gives an equal
    property."""
    text = f"{json.dumps(prop.name, ensure_ascii=False)}: {query_text(prop.query)}"
    if prop.capability_names is not None:
        text += " {caps: " + ", ".join(name_text(c) for c in sorted(prop.capability_names)) + "}"
    return text

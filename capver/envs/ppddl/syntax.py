"""Immutable abstract syntax of PPDDL domains and problems (the pddlgym subset).

These are the lifted objects from which :mod:`capver.envs.ppddl.simulator` builds
the environment of section 2 of the paper: the predicates and objects of a problem
form the vocabulary V = ⟨P, O⟩, and the action schemas define the simulator's
low-level actions A with their (probabilistic, conditional) effects.

Names are lower-case (PDDL is case-insensitive); variables keep their leading
``?``.  Every node that a semantic error can point at carries a :class:`Loc`, which
does not take part in equality, so two ASTs of the same text in different layouts
compare equal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from capver.core.vocabulary import ROOT_TYPE


@dataclass(frozen=True, slots=True)
class Loc:
    """A position in a source file (1-based line and column)."""

    filename: str
    line: int
    column: int


def is_variable(term: str) -> bool:
    return term.startswith("?")


@dataclass(frozen=True, slots=True)
class TypedName:
    """A typed object, constant or variable: ``name - type``."""

    name: str
    type: str = ROOT_TYPE
    loc: Loc | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class PredicateDecl:
    name: str
    parameters: tuple[TypedName, ...] = ()
    loc: Loc | None = field(default=None, compare=False, repr=False)

    @property
    def arity(self) -> int:
        return len(self.parameters)


# ---------------------------------------------------------------------------- formulas
@dataclass(frozen=True, slots=True)
class AtomF:
    """An atomic formula ``(p t1 ... tk)``; terms are object names or ``?vars``."""

    predicate: str
    args: tuple[str, ...] = ()
    loc: Loc | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class EqualsF:
    left: str
    right: str
    loc: Loc | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class NotF:
    arg: Formula
    loc: Loc | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class AndF:
    parts: tuple[Formula, ...] = ()
    loc: Loc | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class OrF:
    parts: tuple[Formula, ...] = ()
    loc: Loc | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class ImplyF:
    premise: Formula
    conclusion: Formula
    loc: Loc | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class ExistsF:
    variables: tuple[TypedName, ...]
    body: Formula
    loc: Loc | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class ForAllF:
    variables: tuple[TypedName, ...]
    body: Formula
    loc: Loc | None = field(default=None, compare=False, repr=False)


Formula = AtomF | EqualsF | NotF | AndF | OrF | ImplyF | ExistsF | ForAllF


# ---------------------------------------------------------------------------- effects
@dataclass(frozen=True, slots=True)
class EffLiteral:
    """Add (``positive``) or delete an atom."""

    atom: AtomF
    positive: bool = True
    loc: Loc | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class EffAnd:
    parts: tuple[Effect, ...] = ()
    loc: Loc | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class EffForAll:
    variables: tuple[TypedName, ...]
    body: Effect
    loc: Loc | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class EffWhen:
    """``(when cond body)``: ``body`` happens iff ``cond`` holds in the pre-state."""

    condition: Formula
    body: Effect
    loc: Loc | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class EffProbabilistic:
    """``(probabilistic p1 e1 ... pn en)`` with exact probabilities; the mass
    ``1 - Σ pi`` is the empty effect."""

    branches: tuple[tuple[Fraction, Effect], ...]
    loc: Loc | None = field(default=None, compare=False, repr=False)

    @property
    def remainder(self) -> Fraction:
        return 1 - sum((p for p, _ in self.branches), Fraction(0))


Effect = EffLiteral | EffAnd | EffForAll | EffWhen | EffProbabilistic


# ---------------------------------------------------------------------------- files
@dataclass(frozen=True, slots=True)
class ActionSchema:
    name: str
    parameters: tuple[TypedName, ...]
    precondition: Formula
    effect: Effect
    loc: Loc | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Domain:
    """A PPDDL domain.

    ``types`` lists (type, parent) pairs; the root type ``object`` is implicit.
    ``action_predicates`` are pddlgym's action predicates (declared by
    ``(:actions ...)``, in a comment or as a section): they are not state fluents,
    each holds only for the ground action that is being taken.
    """

    name: str
    requirements: tuple[str, ...] = ()
    types: tuple[tuple[str, str], ...] = ()
    constants: tuple[TypedName, ...] = ()
    predicates: tuple[PredicateDecl, ...] = ()
    actions: tuple[ActionSchema, ...] = ()
    action_predicates: tuple[str, ...] = ()
    filename: str = "<domain>"

    def predicate(self, name: str) -> PredicateDecl | None:
        for p in self.predicates:
            if p.name == name:
                return p
        return None

    def action(self, name: str) -> ActionSchema | None:
        for a in self.actions:
            if a.name == name:
                return a
        return None

    @property
    def type_parents(self) -> dict[str, str | None]:
        """type -> parent, including the root ``object`` (parent None)."""
        out: dict[str, str | None] = {ROOT_TYPE: None}
        out.update(dict(self.types))
        return out


@dataclass(frozen=True, slots=True)
class Problem:
    """A PPDDL problem; ``init`` holds the true atoms of the initial state (closed
    world; pddlgym action-predicate atoms are already removed)."""

    name: str
    domain_name: str
    objects: tuple[TypedName, ...] = ()
    init: tuple[AtomF, ...] = ()
    goal: Formula = AndF(())
    filename: str = "<problem>"

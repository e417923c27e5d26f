"""The Occam model h̃ lifted over objects, as data: what a lifted model file holds
(:mod:`capver.io.dsl.lifted` writes it) and how its rules ground (section 2's
capability model, one per grounding; the lattice of section 3.1).

A :class:`Schema` is a capability with typed parameters; a :class:`LiftedVocabulary`
its atoms over the parameters and constants with, per binding, the ground atom of
each; a :class:`LiftedCapability` rules over that vocabulary and the bindings they
stand for (:func:`ground_capability` substitutes objects for the variables); a
:class:`LiftedOccam` the whole lifted h̃.  The algorithms that learn them (schemas
from ground capabilities, pooling, the lifted conditions, the contradiction check)
are :mod:`capver.engines.lifting`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from capver.core.state import Capability, Effect, State
from capver.core.vocabulary import Atom, Literal, Vocabulary
from capver.logic.bdd import Cube, disjoin
from capver.logic.condition import LogicContext, formula_condition
from capver.model.capability_model import CapabilityModel, CompoundModel, Rule
from capver.model.occam import Choice

LiftedLiteral = tuple[Atom, bool]
"""An atom over variables and constants, and its sign."""


@dataclass(frozen=True, slots=True)
class Schema:
    """A capability schema: a name, typed parameters and a lifted intent.  With an
    intent its groundings are named by :meth:`Capability.for_intent`; without one
    (a primitive action) ``name(o1,…,ok)``."""

    name: str
    params: tuple[tuple[str, str], ...]  # (variable, type), variables spelled ``?x``
    intent: tuple[LiftedLiteral, ...] = ()
    action: Atom | None = None  # a primitive schema's name pattern, e.g. drive(?f,?l,?l)

    @property
    def variables(self) -> tuple[str, ...]:
        return tuple(v for v, _ in self.params)

    def substitute(self, atom: Atom, binding: Sequence[str]) -> Atom:
        sub = dict(zip(self.variables, binding, strict=True))
        return Atom(atom.predicate, tuple(sub.get(a, a) for a in atom.args))

    def capability(self, binding: Sequence[str]) -> Capability:
        """The ground capability of one binding (objects for the parameters, in order)."""
        if self.action is not None:
            return Capability(str(self.substitute(self.action, binding)), ())
        return Capability.for_intent(tuple(Literal(self.substitute(a, binding), pos) for a, pos in self.intent))


@dataclass(frozen=True, slots=True)
class LiftedVocabulary:
    """The lifted atoms of a schema and, per binding, the ground atom index of each
    lifted atom (substitution; a bijection onto its image)."""

    vocab: Vocabulary
    ground_index: Mapping[tuple[str, ...], tuple[int, ...]]

    def lift_state(self, binding: tuple[str, ...], s: State) -> State:
        out = 0
        for j, i in enumerate(self.ground_index[binding]):
            if s >> i & 1:
                out |= 1 << j
        return out

    def image(self, binding: tuple[str, ...]) -> int:
        """The mask of ground atoms that the lifted vocabulary sees under ``binding``."""
        m = 0
        for i in self.ground_index[binding]:
            m |= 1 << i
        return m

    def lift_effect(self, binding: tuple[str, ...], eta: Effect) -> Effect | None:
        """η over the lifted atoms, or None when it touches an atom they cannot see."""
        if (eta.add | eta.delete) & ~self.image(binding):
            return None
        return Effect(self.lift_state(binding, eta.add), self.lift_state(binding, eta.delete))

    def ground_mask(self, binding: tuple[str, ...], m: int) -> int:
        out = 0
        for j, i in enumerate(self.ground_index[binding]):
            if m >> j & 1:
                out |= 1 << i
        return out

    def ground_effect(self, binding: tuple[str, ...], eta: Effect) -> Effect:
        return Effect(self.ground_mask(binding, eta.add), self.ground_mask(binding, eta.delete))


@dataclass(frozen=True, slots=True)
class LiftedCapability:
    """Rules over a schema's lifted vocabulary and the bindings whose ground
    capability is exactly their grounding."""

    schema: Schema
    ctx: LogicContext  # over the lifted vocabulary
    lifted: LiftedVocabulary
    rules: tuple[Rule, ...]
    bindings: tuple[tuple[str, ...], ...]


def ground_capability(lc: LiftedCapability, binding: tuple[str, ...], ctx: LogicContext) -> CapabilityModel:
    """The ground capability model of one binding: each lifted rule's cover with the
    objects substituted for the variables (constants stay), effects likewise."""
    b = ctx.bdd
    rules = []
    for r in lc.rules:
        cubes = (
            Cube(lc.lifted.ground_mask(binding, c.mask), lc.lifted.ground_mask(binding, c.value))
            for c in r.condition.cover
        )
        f = disjoin(b, (b.cube(c) for c in cubes))
        effects = tuple(sorted(((p, lc.lifted.ground_effect(binding, e)) for p, e in r.effects), key=lambda pe: pe[1]))
        rules.append(Rule(formula_condition(ctx, f), effects))
    return CapabilityModel(lc.schema.capability(binding), tuple(rules))


@dataclass(frozen=True, slots=True)
class LiftedOccam:
    """h̃ lifted over objects: the ground model (every capability, lifted groundings
    and kept ground ones), the lifted capabilities, the groundings that kept their
    ground rules with the reason, and the minimiser choices per schema."""

    model: CompoundModel
    lifted: tuple[LiftedCapability, ...]
    kept_ground: Mapping[str, str]
    choices: Mapping[str, Choice] = field(default_factory=dict)
    candidates: tuple[LiftedCapability, ...] = ()  # every schema's rules with all its pooled bindings
    projected: frozenset[str] = frozenset()  # kept groundings whose rules are the lifted ones projected

    def unchecked(self) -> CompoundModel:
        """Every pooled binding grounded from its schema's rules, contradicting its
        own data or not: *outside* the lattice in general (it may predict effects a
        grounding was never seen to have), so never written or certified — the
        benchmark's measure of what the lattice's bound h̃ ⪯ h∨ costs."""
        ctx = self.model.ctx
        return self.model.replace(ground_capability(lc, b, ctx) for lc in self.candidates for b in lc.bindings)

    @property
    def lifted_names(self) -> frozenset[str]:
        return frozenset(lc.schema.capability(b).name for lc in self.lifted for b in lc.bindings)

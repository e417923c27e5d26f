"""Action schemas of relational RL (section 5 of the introspection paper) and their
grounding.

"Each schema has three components: the precondition, an arbitrary formula that
determines whether the action can be applied in a given state; the add list, a set
of literals that become true after the action is taken; and the delete list, a set
of literals that become false."  Successor states follow STRIPS:
s′ = (s \\ del) ∪ add, so an atom both deleted and added ends up true.

:class:`GroundTask` grounds every schema over the objects of one problem, folds the
static facts (predicates that no schema adds or deletes) into the preconditions,
drops groundings whose precondition is then false, and compiles the rest to bit
masks.  Applicable actions are found through a trigger index (each action is filed
under its rarest positive precondition atom), so a state with k true atoms only
looks at the actions triggered by those k atoms.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from capver.core.state import State
from capver.core.vocabulary import Atom, Predicate, Vocabulary
from capver.errors import IntrospectionError, VocabularyError
from capver.introspection.fol import (
    BitFormula,
    Formula,
    Lit,
    Var,
    check_formula,
    compile_formula,
    ground_atom,
    uses_prev,
)


@dataclass(frozen=True, slots=True)
class RelationalAction:
    """A parameterised action: ``name(params)`` with a precondition formula over the
    parameters and add/delete lists of literals over them."""

    name: str
    params: tuple[Var, ...]
    precondition: Formula
    add: tuple[Lit, ...] = ()
    delete: tuple[Lit, ...] = ()


@dataclass(frozen=True, slots=True)
class RelationalDomain:
    """Types (child → parent), predicates and action schemas of a relational domain."""

    name: str
    predicates: tuple[Predicate, ...]
    schemas: tuple[RelationalAction, ...]
    types: tuple[tuple[str, str | None], ...] = ()

    def vocabulary(self, objects: Mapping[str, str]) -> Vocabulary:
        """Every type-consistent ground atom of every predicate over ``objects``."""
        try:
            return Vocabulary.build(self.predicates, objects=dict(objects), types=dict(self.types))
        except VocabularyError as exc:
            raise IntrospectionError(f"domain {self.name!r}: {exc}") from None

    def fluent_predicates(self) -> frozenset[str]:
        """Predicates some schema adds or deletes; the others are static."""
        return frozenset(lt.predicate for sc in self.schemas for lt in (*sc.add, *sc.delete))

    def schema(self, name: str) -> RelationalAction:
        for sc in self.schemas:
            if sc.name == name:
                return sc
        raise IntrospectionError(
            f"domain {self.name!r} has no action schema {name!r}; expected one of {[s.name for s in self.schemas]}"
        )

    def check(self, vocab: Vocabulary) -> None:
        """Raise :class:`IntrospectionError` for a malformed schema."""
        seen: set[str] = set()
        for sc in self.schemas:
            where = f"domain {self.name!r}, action {sc.name!r}"
            if sc.name in seen:
                raise IntrospectionError(f"{where}: duplicate action schema")
            seen.add(sc.name)
            if len({p.name for p in sc.params}) != len(sc.params):
                raise IntrospectionError(f"{where}: duplicate parameter name")
            for p in sc.params:
                if p.type not in vocab.types:
                    raise IntrospectionError(f"{where}: parameter {p} has unknown type {p.type!r}")
            check_formula(sc.precondition, vocab, sc.params, where=f"{where} precondition")
            if uses_prev(sc.precondition):
                raise IntrospectionError(f"{where}: a precondition cannot refer to a previous state (prev[...])")
            for lt in (*sc.add, *sc.delete):
                if not isinstance(lt, Lit):
                    raise IntrospectionError(f"{where}: add/delete lists hold literals, got {lt!r}")
                check_formula(lt, vocab, sc.params, where=f"{where} effect")


@dataclass(frozen=True, slots=True)
class GroundRelationalAction:
    """One grounding of a schema, compiled to masks.  ``extra`` is the part of the
    precondition that is not a conjunction of literals (None if there is none)."""

    schema: str
    args: tuple[str, ...]
    pre_pos: int
    pre_neg: int
    extra: BitFormula | None
    add: int
    delete: int

    @property
    def name(self) -> str:
        return f"{self.schema}({','.join(self.args)})"

    def applicable(self, s: State) -> bool:
        if (s & self.pre_pos) != self.pre_pos or s & self.pre_neg:
            return False
        return self.extra is None or self.extra.holds(s)

    def apply(self, s: State) -> int:
        return (s & ~self.delete) | self.add


@dataclass(frozen=True, slots=True)
class GroundTask:
    """A domain grounded over one problem's objects, with its initial state."""

    domain: RelationalDomain
    vocab: Vocabulary
    init: int
    actions: tuple[GroundRelationalAction, ...]
    static: Mapping[Atom, bool] = field(repr=False)
    _triggers: Mapping[int, tuple[int, ...]] = field(repr=False, compare=False)
    _always: tuple[int, ...] = field(repr=False, compare=False)

    @staticmethod
    def ground(domain: RelationalDomain, objects: Mapping[str, str], init: Iterable[Atom | str]) -> GroundTask:
        vocab = domain.vocabulary(objects)
        domain.check(vocab)
        try:
            init_bits = vocab.state(init)
        except VocabularyError as exc:
            raise IntrospectionError(f"domain {domain.name!r}: initial state: {exc}") from None
        fluents = domain.fluent_predicates()
        static = {a: bool(init_bits >> i & 1) for i, a in enumerate(vocab.atoms) if a.predicate not in fluents}
        actions: list[GroundRelationalAction] = []
        for sc in domain.schemas:
            pools = [vocab.objects_of(p.type) for p in sc.params]
            for args in itertools.product(*pools):
                binding = dict(zip(sc.params, args))
                pre = compile_formula(sc.precondition, vocab, binding=binding, fixed=static)
                if pre.is_false:
                    continue
                conj = pre.conjunction
                if conj is not None:
                    pos, neg, extra = conj[0], conj[1], None
                elif pre.is_and:
                    # Keep the literal part as masks and only the rest as a formula.
                    pos, neg = pre.pos, pre.neg
                    extra = BitFormula(True, children=pre.children)
                else:
                    pos, neg, extra = 0, 0, pre
                add = _mask(sc.add, binding, vocab)
                delete = _mask(sc.delete, binding, vocab)
                actions.append(GroundRelationalAction(sc.name, tuple(args), pos, neg, extra, add, delete))
        triggers, always = _index(actions)
        return GroundTask(domain, vocab, init_bits, tuple(actions), static, triggers, always)

    # -- dynamics ----------------------------------------------------------------------
    def applicable(self, s: State) -> list[int]:
        """Indices of the actions applicable in ``s``, in grounding order."""
        acts = self.actions
        out = [i for i in self._always if acts[i].applicable(s)]
        trig = self._triggers
        x = s
        while x:
            low = x & -x
            cands = trig.get(low.bit_length() - 1)
            if cands is not None:
                out.extend(i for i in cands if acts[i].applicable(s))
            x ^= low
        out.sort()
        return out

    def successor(self, s: State, a: int) -> int:
        return self.actions[a].apply(s)

    def find(self, name: str) -> int:
        """Index of the ground action printed as ``name`` (e.g. ``pickup(a)``)."""
        for i, ga in enumerate(self.actions):
            if ga.name == name.replace(" ", ""):
                return i
        raise IntrospectionError(f"no ground action {name!r} in task of domain {self.domain.name!r}")

    @property
    def addable(self) -> int:
        """Atoms that some ground action makes true."""
        out = 0
        for ga in self.actions:
            out |= ga.add
        return out

    @property
    def deletable(self) -> int:
        """Atoms that some ground action makes false (deleted and not re-added)."""
        out = 0
        for ga in self.actions:
            out |= ga.delete & ~ga.add
        return out


def _mask(lits: Sequence[Lit], binding: Mapping[Var, str], vocab: Vocabulary) -> int:
    out = 0
    for lt in lits:
        atom = ground_atom(lt, binding)
        if atom in vocab:
            out |= 1 << vocab.index(atom)
    return out


def _index(actions: Sequence[GroundRelationalAction]) -> tuple[dict[int, tuple[int, ...]], tuple[int, ...]]:
    uses: dict[int, int] = {}
    for ga in actions:
        for b in _bits(ga.pre_pos):
            uses[b] = uses.get(b, 0) + 1
    triggers: dict[int, list[int]] = {}
    always: list[int] = []
    for i, ga in enumerate(actions):
        bits = _bits(ga.pre_pos)
        if not bits:
            always.append(i)
            continue
        best = min(bits, key=lambda b: (uses[b], b))
        triggers.setdefault(best, []).append(i)
    return {b: tuple(v) for b, v in triggers.items()}, tuple(always)


def _bits(x: int) -> list[int]:
    out = []
    while x:
        low = x & -x
        out.append(low.bit_length() - 1)
        x ^= low
    return out

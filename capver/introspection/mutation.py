"""State mutation, section 5.1 of the introspection paper ("Milestone Computation").

``mutate(f, s)`` takes a state and a formula and returns a *set of mutations*, each
a pair (literals to make true, literals to make false); "each mutation represents a
distinct way of satisfying the formula" and constrains only the literals it names.

Immutability is derived from the action schemas (:class:`Mutability`): an atom is
addable if some ground action adds it, deletable if some ground action deletes it
(and does not re-add it).  A literal wanted with value v is *mutable* when it could
change away from its current value — i.e. it is currently true and deletable, or
currently false and addable.  Per kind of formula:

* literal l: if mutable → {+l} (or {−l} for a negated literal); otherwise if it
  already has the wanted value → IMMUTABLY VALID; otherwise unsatisfiable (∅);
* and / ∀: Cartesian product of the children's mutation sets (∀ over every
  substitution of the variable by an object of its type);
* or / ∃: union of the children's sets;
* not: mutate the child with the wanted polarity flipped (negation is pushed
  inward: ¬∧ is a union, ¬∀ is ∃¬, …).

Readings we chose where the text is silent (the paper's algorithm block is missing):

* unsatisfiable is the *empty set* of mutations (the paper also mentions "a mutation
  comprising two empty sets"; we never build such a mutation, so there is no
  ambiguity with "no constraint at all");
* IMMUTABLY VALID is the identity of the product (it adds no constraint) and absorbs
  a union (if one disjunct is true forever, so is the disjunction);
* a product that would ask for +l and −l at once is contradictory and dropped;
* ``Equal`` is a static fact: IMMUTABLY VALID if it has the wanted value, else ∅;
* ``Prev(f)`` (a condition on the state *before* the rewarding transition) cannot be
  brought about by a milestone; we evaluate it on the current state and treat it
  like an immutable fact.  The planner still checks the real reward on the real
  transition, so this only steers the search;
* ``minimize=True`` additionally drops every mutation that is a strict superset of
  another one (it is implied by it): the paper's "minimal set of necessary changes".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from capver.core.vocabulary import Atom, Vocabulary
from capver.errors import IntrospectionError, MutationLimitError
from capver.introspection.fol import (
    And,
    Equal,
    Exists,
    Forall,
    Formula,
    Lit,
    Not,
    Or,
    Prev,
    StateLike,
    Var,
    holds_atom,
    resolve_term,
)
from capver.introspection.schema import GroundTask


@dataclass(frozen=True, slots=True)
class Mutation:
    """Literals to make true and literals to make false."""

    make_true: frozenset[Atom] = frozenset()
    make_false: frozenset[Atom] = frozenset()

    def __str__(self) -> str:
        parts = [f"+{a}" for a in sorted(self.make_true)] + [f"-{a}" for a in sorted(self.make_false)]
        return "{" + ", ".join(parts) + "}"

    def satisfied_by(self, state: StateLike, vocab: Vocabulary) -> bool:
        return all(holds_atom(state, a, vocab) for a in self.make_true) and not any(
            holds_atom(state, a, vocab) for a in self.make_false
        )

    def masks(self, vocab: Vocabulary) -> tuple[int, int]:
        """(make_true, make_false) as bit masks over ``vocab``."""
        return vocab.state(self.make_true), vocab.state(self.make_false)


@dataclass(frozen=True, slots=True)
class ImmutablyValid:
    """The special mutation object: the formula is true in s and no action can make
    it false.  All instances are equal."""

    def __str__(self) -> str:
        return "IMMUTABLY VALID"


IMMUTABLY_VALID = ImmutablyValid()

MutationSet = frozenset[Mutation | ImmutablyValid]
UNSATISFIABLE: MutationSet = frozenset()
_IV_SET: MutationSet = frozenset({IMMUTABLY_VALID})


def is_immutably_valid(result: MutationSet) -> bool:
    return IMMUTABLY_VALID in result


def is_unsatisfiable(result: MutationSet) -> bool:
    return not result


def mutations_of(result: MutationSet) -> list[Mutation]:
    """The proper mutations of a result, in a deterministic order."""
    return sorted(
        (m for m in result if isinstance(m, Mutation)), key=lambda m: (len(m.make_true) + len(m.make_false), str(m))
    )


@dataclass(frozen=True, slots=True)
class Mutability:
    """Which atoms some action can make true (``addable``) or false (``deletable``),
    as bit masks over ``vocab``.  Build with :meth:`from_task` or :meth:`from_atoms`."""

    vocab: Vocabulary
    addable: int
    deletable: int
    # (predicate, args) -> bit: plain tuples hash far faster than Atom dataclasses,
    # and mutation looks up every ground literal of the formula.
    bit_of: Mapping[tuple[str, tuple[str, ...]], int] = field(repr=False, compare=False)

    @staticmethod
    def from_task(task: GroundTask) -> Mutability:
        """Derived from the add/delete lists of the task's ground actions (groundings
        whose precondition is statically false are not actions)."""
        return Mutability(task.vocab, task.addable, task.deletable, _bits_of(task.vocab))

    @staticmethod
    def from_atoms(vocab: Vocabulary, addable: Iterable[Atom | str], deletable: Iterable[Atom | str]) -> Mutability:
        return Mutability(vocab, vocab.state(addable), vocab.state(deletable), _bits_of(vocab))

    def can_add(self, atom: Atom) -> bool:
        i = self.bit_of.get((atom.predicate, atom.args))
        return i is not None and bool(self.addable >> i & 1)

    def can_delete(self, atom: Atom) -> bool:
        i = self.bit_of.get((atom.predicate, atom.args))
        return i is not None and bool(self.deletable >> i & 1)


def _bits_of(vocab: Vocabulary) -> dict[tuple[str, tuple[str, ...]], int]:
    return {(a.predicate, a.args): i for i, a in enumerate(vocab.atoms)}


def mutate(
    f: Formula,
    state: StateLike,
    mutability: Mutability,
    *,
    positive: bool = True,
    minimize: bool = False,
    limit: int = 100_000,
    binding: Mapping[Var, str] | None = None,
) -> MutationSet:
    """The mutations of ``state`` that make ``f`` true (``positive``) or false.

    Quantifiers range over ``mutability.vocab``'s objects.  Raises
    :class:`MutationLimitError` if an intermediate set would exceed ``limit``.
    """
    if limit < 1:
        raise IntrospectionError(f"mutate: limit must be positive, got {limit}")
    ctx = _Ctx(state, mutability, minimize, limit, {})
    return ctx.run(f, positive, dict(binding or {}))


@dataclass(frozen=True, slots=True)
class _Ctx:
    state: StateLike
    mut: Mutability
    minimize: bool
    limit: int
    pools: dict[str, list[str]]  # type -> objects, filled on first use

    def objects(self, t: str) -> list[str]:
        pool = self.pools.get(t)
        if pool is None:
            pool = self.pools[t] = self.mut.vocab.objects_of(t)
        return pool

    def run(self, f: Formula, pol: bool, b: dict[Var, str]) -> MutationSet:
        if isinstance(f, Lit):
            try:
                args = tuple(b[x] if isinstance(x, Var) else x for x in f.terms)
            except KeyError as exc:
                raise IntrospectionError(f"mutate: {f}: variable {exc.args[0]} is not bound") from None
            return self.literal(f.predicate, args, pol)
        if isinstance(f, Not):
            return self.run(f.child, not pol, b)
        if isinstance(f, (And, Or)):
            parts = (self.run(c, pol, b) for c in f.children)
            return self.product(parts) if isinstance(f, And) == pol else self.union(parts)
        if isinstance(f, (Exists, Forall)):
            objs = self.objects(f.var.type)
            parts = (self.run(f.body, pol, {**b, f.var: o}) for o in objs)
            return self.product(parts) if isinstance(f, Forall) == pol else self.union(parts)
        if isinstance(f, Equal):
            same = resolve_term(f.left, b) == resolve_term(f.right, b)
            return _IV_SET if same == pol else UNSATISFIABLE
        if isinstance(f, Prev):
            now = self.truth(f.body, b)
            return _IV_SET if now == pol else UNSATISFIABLE
        raise IntrospectionError(f"mutate: not a formula: {f!r}")

    def truth(self, f: Formula, b: dict[Var, str]) -> bool:
        """Truth of ``f`` in the current state (``Prev`` parts included)."""
        if isinstance(f, Lit):
            i = self.mut.bit_of.get((f.predicate, tuple(b[x] if isinstance(x, Var) else x for x in f.terms)))
            if i is None:
                return False
            s = self.state
            return bool(s >> i & 1) if isinstance(s, int) else self.mut.vocab.atoms[i] in s
        if isinstance(f, And):
            return all(self.truth(c, b) for c in f.children)
        if isinstance(f, Or):
            return any(self.truth(c, b) for c in f.children)
        if isinstance(f, Not):
            return not self.truth(f.child, b)
        if isinstance(f, Exists):
            return any(self.truth(f.body, {**b, f.var: o}) for o in self.objects(f.var.type))
        if isinstance(f, Forall):
            return all(self.truth(f.body, {**b, f.var: o}) for o in self.objects(f.var.type))
        if isinstance(f, Equal):
            return resolve_term(f.left, b) == resolve_term(f.right, b)
        if isinstance(f, Prev):
            return self.truth(f.body, b)
        raise IntrospectionError(f"mutate: not a formula: {f!r}")

    def literal(self, predicate: str, args: tuple[str, ...], want: bool) -> MutationSet:
        i = self.mut.bit_of.get((predicate, args))
        if i is None:
            # Outside the vocabulary (ill-typed): false in every state, never added.
            return UNSATISFIABLE if want else _IV_SET
        s = self.state
        atom = self.mut.vocab.atoms[i]
        cur = bool(s >> i & 1) if isinstance(s, int) else atom in s
        mutable = bool((self.mut.deletable if cur else self.mut.addable) >> i & 1)
        if mutable:
            return frozenset(
                {Mutation(frozenset({atom}), frozenset()) if want else Mutation(frozenset(), frozenset({atom}))}
            )
        return _IV_SET if cur == want else UNSATISFIABLE

    def union(self, parts: Iterable[MutationSet]) -> MutationSet:
        acc: set[Mutation | ImmutablyValid] = set()
        for p in parts:
            if IMMUTABLY_VALID in p:
                return _IV_SET
            acc |= p
            if len(acc) > self.limit:
                raise MutationLimitError(f"mutate: more than {self.limit} mutations in a disjunction")
        return self.finish(acc)

    def product(self, parts: Iterable[MutationSet]) -> MutationSet:
        acc: MutationSet = _IV_SET
        for p in parts:
            if not p:
                return UNSATISFIABLE
            if p == _IV_SET:
                continue
            if acc == _IV_SET:
                acc = p
                continue
            if len(acc) * len(p) > self.limit:
                raise MutationLimitError(
                    f"mutate: a conjunction would yield {len(acc) * len(p)} mutations (limit {self.limit})"
                )
            out: set[Mutation | ImmutablyValid] = set()
            for x in acc:
                for y in p:
                    m = _merge(x, y)
                    if m is not None:
                        out.add(m)
            if not out:
                return UNSATISFIABLE
            acc = self.finish(out)
        return acc

    def finish(self, acc: set[Mutation | ImmutablyValid]) -> MutationSet:
        if not self.minimize or len(acc) < 2:
            return frozenset(acc)
        # IV never shares a set with proper mutations (union absorbs, product is
        # the identity), so a set of two or more holds mutations only.
        ms = sorted((m for m in acc if isinstance(m, Mutation)), key=lambda m: len(m.make_true) + len(m.make_false))
        kept: list[Mutation] = []
        for m in ms:
            if not any(k.make_true <= m.make_true and k.make_false <= m.make_false for k in kept):
                kept.append(m)
        return frozenset(kept)


def _merge(x: Mutation | ImmutablyValid, y: Mutation | ImmutablyValid) -> Mutation | ImmutablyValid | None:
    if isinstance(x, ImmutablyValid):
        return y
    if isinstance(y, ImmutablyValid):
        return x
    t = x.make_true | y.make_true
    f = x.make_false | y.make_false
    if t & f:
        return None
    return Mutation(t, f)

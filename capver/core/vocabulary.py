"""Vocabulary V = ⟨P, O⟩ of section 2: typed objects, predicates with typed
parameters and the ground atoms they form.

A vocabulary fixes a bijection between its ground atoms and bit positions
0..n-1, so that a symbolic state s ⊆ atoms is an ``int`` bitset (see
:mod:`capver.core.state`).  Types may have a parent type (PDDL ``either``-free
typing); an object of type t can fill a parameter of type t or of any ancestor of t.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from capver.errors import VocabularyError

ROOT_TYPE = "object"


State = int
"""A symbolic state: bit i set iff atom i of the vocabulary holds."""


@dataclass(frozen=True, slots=True)
class Predicate:
    name: str
    param_types: tuple[str, ...] = ()

    @property
    def arity(self) -> int:
        return len(self.param_types)


@dataclass(frozen=True, slots=True, order=True)
class Atom:
    """A ground atom p(o1, ..., ok)."""

    predicate: str
    args: tuple[str, ...] = ()

    def __str__(self) -> str:
        if not self.args:
            return self.predicate
        return f"{self.predicate}({','.join(self.args)})"

    @staticmethod
    def parse(text: str) -> Atom:
        """Parse ``p``, ``p()`` or ``p(a,b)`` (the ``str`` form)."""
        text = text.strip()
        if "(" not in text:
            if not text:
                raise VocabularyError("empty atom")
            return Atom(text, ())
        if not text.endswith(")"):
            raise VocabularyError(f"malformed atom {text!r}: expected 'p(a,b)'")
        name, _, rest = text.partition("(")
        inner = rest[:-1].strip()
        args = tuple(a.strip() for a in inner.split(",")) if inner else ()
        if not name or any(not a for a in args):
            raise VocabularyError(f"malformed atom {text!r}: expected 'p(a,b)'")
        return Atom(name.strip(), args)


@dataclass(frozen=True, slots=True, order=True)
class Literal:
    """A ground literal: an atom or its negation."""

    atom: Atom
    positive: bool = True

    def __str__(self) -> str:
        return str(self.atom) if self.positive else f"not {self.atom}"

    @property
    def short(self) -> str:
        """The compact form, ``p`` or ``~p``, that capability names and intents use."""
        return str(self.atom) if self.positive else f"~{self.atom}"


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """Types, objects, predicates and the indexed ground atoms of a domain.

    ``atoms`` is the ordered list of atoms that states are built from; bit i of a
    state is ``atoms[i]``.  Build one with :meth:`build`.
    """

    types: Mapping[str, str | None]  # type -> parent (None for the root)
    objects: Mapping[str, str]  # object -> type
    predicates: Mapping[str, Predicate]
    atoms: tuple[Atom, ...]
    _index: Mapping[Atom, int] = field(repr=False, compare=False, hash=False)

    # -- construction -----------------------------------------------------------
    @staticmethod
    def build(
        predicates: Iterable[Predicate],
        objects: Mapping[str, str] | None = None,
        types: Mapping[str, str | None] | None = None,
        atoms: Iterable[Atom] | None = None,
    ) -> Vocabulary:
        """Create a vocabulary.

        If ``atoms`` is None every type-consistent grounding of every predicate is
        an atom (in predicate order, then lexicographic argument order); otherwise
        exactly the given atoms, in the given order, are used (each is checked).
        """
        objects = dict(objects or {})
        type_map: dict[str, str | None] = {ROOT_TYPE: None}
        if types:
            for t, parent in types.items():
                type_map[t] = parent if parent is not None or t == ROOT_TYPE else ROOT_TYPE
        for obj, t in objects.items():
            if t not in type_map:
                raise VocabularyError(f"object {obj!r} has undeclared type {t!r}")
        preds: dict[str, Predicate] = {}
        for p in predicates:
            if p.name in preds:
                raise VocabularyError(f"duplicate predicate {p.name!r}")
            for t in p.param_types:
                if t not in type_map:
                    raise VocabularyError(f"predicate {p.name!r} has undeclared type {t!r}")
            preds[p.name] = p
        _check_acyclic(type_map)
        proto = Vocabulary(type_map, objects, preds, (), {})
        if atoms is None:
            atom_list = [a for p in preds.values() for a in proto.groundings(p.name)]
        else:
            atom_list = list(atoms)
            for a in atom_list:
                proto.check_atom(a)
        index: dict[Atom, int] = {}
        for i, a in enumerate(atom_list):
            if a in index:
                raise VocabularyError(f"duplicate atom {a}")
            index[a] = i
        return Vocabulary(type_map, objects, preds, tuple(atom_list), index)

    # -- typing -------------------------------------------------------------------
    def is_subtype(self, t: str, of: str) -> bool:
        return is_subtype(self.types, t, of)

    def objects_of(self, t: str) -> list[str]:
        """Objects whose type is ``t`` or a subtype of it, sorted by name."""
        if t not in self.types:
            raise VocabularyError(f"unknown type {t!r}")
        return sorted(o for o, ot in self.objects.items() if self.is_subtype(ot, t))

    def groundings(self, predicate: str) -> Iterator[Atom]:
        """All type-consistent ground atoms of ``predicate``."""
        p = self.predicate(predicate)
        pools = [self.objects_of(t) for t in p.param_types]
        for args in itertools.product(*pools):
            yield Atom(p.name, tuple(args))

    def predicate(self, name: str) -> Predicate:
        try:
            return self.predicates[name]
        except KeyError:
            raise VocabularyError(f"unknown predicate {name!r}; expected one of {sorted(self.predicates)}") from None

    def check_atom(self, atom: Atom) -> None:
        """Raise :class:`VocabularyError` unless ``atom`` is well-typed."""
        p = self.predicate(atom.predicate)
        if len(atom.args) != p.arity:
            raise VocabularyError(f"{atom}: predicate {p.name!r} takes {p.arity} argument(s), got {len(atom.args)}")
        for arg, t in zip(atom.args, p.param_types):
            if arg not in self.objects:
                raise VocabularyError(f"{atom}: unknown object {arg!r}")
            if not self.is_subtype(self.objects[arg], t):
                raise VocabularyError(f"{atom}: object {arg!r} has type {self.objects[arg]!r}, expected {t!r}")

    # -- atom <-> bit -------------------------------------------------------------
    @staticmethod
    def of_atoms(atoms: Iterable[Atom | str]) -> Vocabulary:
        """The vocabulary of exactly these atoms, in this order (``"goal"``,
        ``"at(r1,c2)"``, ...): their predicates and objects untyped (every object of
        type ``object``), each predicate's arity the one its atoms show."""
        parsed = [Atom.parse(a) if isinstance(a, str) else a for a in atoms]
        arity: dict[str, int] = {}
        for a in parsed:
            if arity.setdefault(a.predicate, len(a.args)) != len(a.args):
                raise VocabularyError(
                    f"atom {a}: predicate {a.predicate!r} has {arity[a.predicate]} arguments in an earlier atom"
                )
        objects = {o: ROOT_TYPE for a in parsed for o in a.args}
        predicates = [Predicate(p, (ROOT_TYPE,) * n) for p, n in arity.items()]
        return Vocabulary.build(predicates, objects, atoms=parsed)

    def __len__(self) -> int:
        return len(self.atoms)

    def index(self, atom: Atom | str) -> int:
        if isinstance(atom, str):
            atom = Atom.parse(atom)
        try:
            return self._index[atom]
        except KeyError:
            raise VocabularyError(f"atom {atom} is not in the vocabulary") from None

    def __contains__(self, atom: object) -> bool:
        return atom in self._index

    def state(self, atoms: Iterable[Atom | str]) -> int:
        """The bitset of a set of atoms."""
        s = 0
        for a in atoms:
            s |= 1 << self.index(a)
        return s

    def atoms_of(self, state: State) -> list[Atom]:
        """The atoms true in ``state``, in index order."""
        out = []
        i = 0
        while state:
            if state & 1:
                out.append(self.atoms[i])
            state >>= 1
            i += 1
        return out

    def format_state(self, state: State) -> str:
        return "{" + ", ".join(str(a) for a in self.atoms_of(state)) + "}"

    @property
    def full_mask(self) -> int:
        return (1 << len(self.atoms)) - 1

    # -- serialisation (dataset headers, model files) ------------------------------
    def to_json(self) -> dict[str, object]:
        return {
            "types": dict(self.types),
            "objects": dict(self.objects),
            "predicates": {p.name: list(p.param_types) for p in self.predicates.values()},
            "atoms": [str(a) for a in self.atoms],
        }

    @staticmethod
    def from_json(data: Mapping[str, object]) -> Vocabulary:
        # The record is unvalidated JSON: its values are used as what they should be,
        # and a malformed one fails with one of the errors caught below.
        record: Mapping[str, Any] = data
        try:
            preds = [Predicate(n, tuple(ts)) for n, ts in dict(record["predicates"]).items()]
            return Vocabulary.build(
                preds,
                objects=dict(record["objects"]),
                types=dict(record["types"]),
                atoms=[Atom.parse(a) for a in record["atoms"]],
            )
        except (KeyError, TypeError, AttributeError) as exc:
            raise VocabularyError(f"malformed vocabulary record: {exc}") from None

    def literals(self, lits: Sequence[Literal]) -> tuple[int, int]:
        """(positive mask, negative mask) of a conjunction of literals."""
        pos = neg = 0
        for lit in lits:
            bit = 1 << self.index(lit.atom)
            if lit.positive:
                pos |= bit
            else:
                neg |= bit
        return pos, neg


def is_subtype(types: Mapping[str, str | None], t: str, of: str) -> bool:
    """``t`` is ``of`` or one of its descendants in the type hierarchy ``types``
    (type → parent; the root's parent is None or absent).  The one type check of the
    vocabulary, the DSL reader and the PPDDL parser."""
    cur: str | None = t
    while cur is not None:
        if cur == of:
            return True
        cur = types.get(cur)
    return False


def type_cycle(types: Mapping[str, str | None]) -> str | None:
    """A type that is its own ancestor in ``types``, or None when the hierarchy is
    acyclic (the one cycle check; readers report it at their own source position)."""
    for t in types:
        seen = set()
        cur: str | None = t
        while cur is not None:
            if cur in seen:
                return t
            seen.add(cur)
            cur = types.get(cur)
    return None


def _check_acyclic(types: Mapping[str, str | None]) -> None:
    cyclic = type_cycle(types)
    if cyclic is not None:
        raise VocabularyError(f"type hierarchy has a cycle through {cyclic!r}")
    for parent in types.values():
        if parent is not None and parent not in types and parent != ROOT_TYPE:
            raise VocabularyError(f"unknown parent type {parent!r}")

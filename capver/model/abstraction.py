"""State abstractions for pooled verdicts: per capability, a map from a state to its
*class*, under the stated assumption that the capability's outcome distribution is the
same at every state of a class.

The paper's subject is generalisation: the Occam model h̃ (section 4.2; its rule
conditions are the short formulas ``f_φ`` of :mod:`capver.engines.occam`) states
which atoms each capability's outcome depends on.  :class:`Projection` reads that
statement as an abstraction: two states are in one class of c when they agree on the
atoms c's conditions mention (:meth:`Projection.of_model`), or on atoms a user names
(:meth:`Projection.of_atoms`, the file format of :mod:`capver.io.abstraction_file`).
:class:`Partition` wraps any Python callable ``(capability, atoms) → key``.

A lifted domain is symmetric in its objects: renaming the objects of a type maps every
ground atom and every capability to another (capability discovery, section 3 of the
paper, makes a capability of every type-consistent grounding of an observed atom).  :class:`Symmetry` reads that as an
abstraction *across* capabilities: (s, c) and (π(s), π(c)) are one class for every
renaming π, and their effects are compared after renaming (:meth:`Symmetry.lift`), so
the executions of ``on(a,b)`` at s and of ``on(c,d)`` at the renamed s pool into one
sample.  Its classes are orbits, which it enumerates (:meth:`Symmetry.members`).

Every abstraction gives a class *key* for a pair (s, c); pairs of different
capabilities share a key only under an abstraction that pools across capabilities.

The assumption is the user's (or h̃'s); :mod:`capver.engines.verification.pooled` tests
it on the data at every decision and withdraws a claim the data refute.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from capver.core.state import Capability, Effect, State
from capver.core.vocabulary import Atom, Vocabulary
from capver.errors import UsageError
from capver.logic.bdd import Cube
from capver.model.capability_model import CompoundModel


class Abstraction(Protocol):
    """A per-capability partition of the states into classes."""

    @property
    def name(self) -> str:
        """How verdicts name the abstraction they assume."""
        ...

    def key(self, c: str, s: State) -> Hashable:
        """The class of the pair (``s``, ``c``)."""
        ...

    def cube(self, c: str, s: State) -> Cube | None:
        """The states of c's class of ``s`` as a cube of atoms, when the classes are
        cubes of one capability each (then frontiers are counted in classes
        symbolically); None otherwise."""
        ...

    def lift(self, c: str, s: State, e: Effect) -> Effect:
        """The effect ``e`` of c at s as its class compares effects (itself, unless
        the class renames objects)."""
        ...

    def ground(self, c: str, s: State, e: Effect) -> frozenset[Effect]:
        """The effects of c at s that the class's effect ``e`` stands for (the inverse
        of :meth:`lift`)."""
        ...

    def members(self, key: Hashable) -> list[tuple[str, State]] | None:
        """Every pair of the class ``key``, when the abstraction can list them; None
        when its classes are too large to list (a projection's are cubes instead)."""
        ...


class _OneCapability:
    """Classes of one capability each, whose effects are compared as observed."""

    __slots__ = ()

    def lift(self, c: str, s: State, e: Effect) -> Effect:
        return e

    def ground(self, c: str, s: State, e: Effect) -> frozenset[Effect]:
        return frozenset((e,))

    def members(self, key: Hashable) -> list[tuple[str, State]] | None:
        return None


@dataclass(frozen=True, slots=True)
class Projection(_OneCapability):
    """Classes are the values of some atoms: ``masks[c]`` for capability c, and
    ``default`` for a capability the masks do not name (all atoms when None: no
    pooling for it)."""

    name: str
    masks: tuple[tuple[str, int], ...]
    default: int | None
    full: int

    def mask(self, c: str) -> int:
        for name, m in self.masks:
            if name == c:
                return m
        return self.full if self.default is None else self.default

    def key(self, c: str, s: State) -> Hashable:
        return c, s & self.mask(c)

    def cube(self, c: str, s: State) -> Cube | None:
        m = self.mask(c)
        return Cube(m, s & m)

    def describe(self, vocab: Vocabulary) -> list[str]:
        """One line per capability: the atoms its classes are made of."""
        lines = []
        for c, m in self.masks:
            atoms = ", ".join(str(a) for a in vocab.atoms_of(m)) or "none: one class"
            lines.append(f"{c}: {atoms}")
        return lines

    @classmethod
    def of_model(cls, model: CompoundModel, name: str = "h̃'s condition atoms") -> Projection:
        """The atoms each capability's rule conditions mention (h̃'s, in the paper's use):
        at every state with the same values of those atoms the model predicts the same
        distribution, and the abstraction assumes the agent does too."""
        masks = []
        for c, cm in model.items():
            m = 0
            for rule in cm.rules:
                for cube in rule.condition.cover:
                    m |= cube.mask
            masks.append((c, m))
        return cls(name, tuple(masks), None, model.vocabulary.full_mask)

    @classmethod
    def of_atoms(
        cls, vocab: Vocabulary, atoms: Mapping[str, Iterable[str]], name: str, default: Iterable[str] | None = None
    ) -> Projection:
        """Classes by named atoms per capability (``default`` for the others); an atom
        outside the vocabulary is a :class:`UsageError` naming it."""
        index = {str(a): i for i, a in enumerate(vocab.atoms)}

        def mask(names: Iterable[str], where: str) -> int:
            m = 0
            for a in names:
                if a not in index:
                    raise UsageError(f"{where}: atom {a!r} is not in the vocabulary")
                m |= 1 << index[a]
            return m

        return cls(
            name,
            tuple((c, mask(names, c)) for c, names in atoms.items()),
            None if default is None else mask(default, "*"),
            vocab.full_mask,
        )


@dataclass(frozen=True, slots=True)
class Partition(_OneCapability):
    """Classes given by a Python callable of the capability and the state's true atoms
    (``frozenset`` of their names); its classes are not cubes."""

    name: str
    vocab: Vocabulary
    function: Callable[[str, frozenset[str]], Hashable]

    def key(self, c: str, s: State) -> Hashable:
        return c, self.function(c, frozenset(str(a) for a in self.vocab.atoms_of(s)))

    def cube(self, c: str, s: State) -> Cube | None:
        return None


GROUP_LIMIT = 5_040
"""The most renamings a :class:`Symmetry` takes (7!): each class key minimises over all of them."""


@dataclass(frozen=True, slots=True)
class _Renaming:
    """One renaming π of the objects: where each atom's bit goes (and back), and
    each capability's image."""

    objects: tuple[tuple[str, str], ...]
    to: tuple[int, ...]
    back: tuple[int, ...]
    capabilities: Mapping[str, str]

    def state(self, s: State) -> State:
        return _moved(self.to, s)

    def inverse(self, s: State) -> State:
        return _moved(self.back, s)


def _moved(to: tuple[int, ...], s: State) -> State:
    out = 0
    while s:
        low = s & -s
        out |= 1 << to[low.bit_length() - 1]
        s ^= low
    return out


def _intent(c: Capability, pi: Mapping[str, str] | None = None) -> frozenset[tuple[str, bool]]:
    """c's intent, its objects renamed by ``pi``: what identifies c's image."""
    pi = pi or {}
    return frozenset(
        (str(Atom(lit.atom.predicate, tuple(pi.get(a, a) for a in lit.atom.args))), lit.positive) for lit in c.intent
    )


@dataclass(frozen=True, slots=True)
class Symmetry:
    """Classes are the orbits of the pairs (s, c) under the renamings of each type's
    objects that map the vocabulary's atoms and the run's capabilities onto
    themselves (module docstring); the key of a pair is its least image."""

    name: str
    renamings: tuple[_Renaming, ...]  # the group, the identity first
    _canon: dict[tuple[str, State], tuple[tuple[str, State], tuple[int, ...]]] = field(
        default_factory=dict, compare=False, repr=False
    )

    @classmethod
    def of_objects(
        cls, vocab: Vocabulary, capabilities: Iterable[Capability], name: str = "the symmetry of the objects"
    ) -> Symmetry:
        """Every renaming of objects within their types that maps the atoms and the
        ``capabilities`` (known by their intents) onto themselves.  A capability
        without an intent of its own, or a group of more than :data:`GROUP_LIMIT`,
        is a :class:`UsageError`."""
        caps = tuple(capabilities)
        by_intent: dict[frozenset[tuple[str, bool]], str] = {}
        for c in caps:
            key = _intent(c)
            if not key or key in by_intent:
                other = f" (as {by_intent[key]!r})" if key in by_intent else ""
                raise UsageError(
                    f"the symmetry of the objects knows a capability by its intent: {c.name!r} has "
                    + ("none" if not key else f"the same intent{other}")
                    + "; give an abstraction by atoms"
                )
            by_intent[key] = c.name
        by_type: dict[str, list[str]] = {}
        for o, t in vocab.objects.items():
            by_type.setdefault(t, []).append(o)
        groups = [sorted(objs) for objs in by_type.values() if len(objs) > 1]
        size = math.prod(math.factorial(len(g)) for g in groups)
        if size > GROUP_LIMIT:
            raise UsageError(
                f"the symmetry of the objects has {size:,} renamings ("
                + ", ".join(f"{len(g)} objects of a type" for g in groups)
                + f"), more than the {GROUP_LIMIT:,} it can search per class; give an abstraction by atoms"
            )
        index = {a: i for i, a in enumerate(vocab.atoms)}
        renamings = []
        for images in itertools.product(*(itertools.permutations(g) for g in groups)):
            pi = {o: p for g, img in zip(groups, images, strict=True) for o, p in zip(g, img, strict=True)}
            to = tuple(index.get(Atom(a.predicate, tuple(pi.get(x, x) for x in a.args)), -1) for a in vocab.atoms)
            cap_map = {c.name: by_intent.get(_intent(c, pi), "") for c in caps}
            # Only renamings that keep the atoms and the capabilities are symmetries of the run.
            if -1 in to or "" in cap_map.values():
                continue
            back = [0] * len(to)
            for i, j in enumerate(to):
                back[j] = i
            moved = tuple(sorted((o, p) for o, p in pi.items() if o != p))
            renamings.append(_Renaming(moved, to, tuple(back), cap_map))
        renamings.sort(key=lambda r: len(r.objects))  # the identity first
        return cls(name, tuple(renamings))

    def _canonical(self, c: str, s: State) -> tuple[tuple[str, State], tuple[int, ...]]:
        """The least image of (c, s) and the renamings that give it."""
        hit = self._canon.get((c, s))
        if hit is None:
            best: tuple[str, State] | None = None
            at: list[int] = []
            for i, r in enumerate(self.renamings):
                image = (r.capabilities[c], r.state(s))
                if best is None or image < best:
                    best, at = image, [i]
                elif image == best:
                    at.append(i)
            assert best is not None  # the identity is a renaming
            hit = self._canon[(c, s)] = (best, tuple(at))
        return hit

    def key(self, c: str, s: State) -> Hashable:
        return self._canonical(c, s)[0]

    def cube(self, c: str, s: State) -> Cube | None:
        return None

    def lift(self, c: str, s: State, e: Effect) -> Effect:
        # Several renamings give the least image when (c, s) has symmetries of its own
        # (two blocks alike on the table): the least renamed effect makes a choice
        # between such alike objects not count as two effects.
        at = self._canonical(c, s)[1]
        return min(Effect(self.renamings[i].state(e.add), self.renamings[i].state(e.delete)) for i in at)

    def ground(self, c: str, s: State, e: Effect) -> frozenset[Effect]:
        at = self._canonical(c, s)[1]
        return frozenset(Effect(self.renamings[i].inverse(e.add), self.renamings[i].inverse(e.delete)) for i in at)

    def members(self, key: Hashable) -> list[tuple[str, State]] | None:
        assert isinstance(key, tuple)  # a key of this abstraction is a least image (c, s)
        c, s = key
        return sorted({(r.capabilities[c], r.state(s)) for r in self.renamings})


__all__ = ["GROUP_LIMIT", "Abstraction", "Partition", "Projection", "Symmetry"]

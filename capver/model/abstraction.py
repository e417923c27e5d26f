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

The assumption is the user's (or h̃'s); :mod:`capver.engines.verification.pooled` tests
it on the data at every decision and withdraws a claim the data refute.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

from capver.core.state import State
from capver.core.vocabulary import Vocabulary
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
        """The class of ``s`` for capability ``c``."""
        ...

    def cube(self, c: str, s: State) -> Cube | None:
        """The class of ``s`` for ``c`` as a cube of atoms, when the classes are cubes
        (then frontiers are counted in classes symbolically); None otherwise."""
        ...


@dataclass(frozen=True, slots=True)
class Projection:
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
        return s & self.mask(c)

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
class Partition:
    """Classes given by a Python callable of the capability and the state's true atoms
    (``frozenset`` of their names); its classes are not cubes."""

    name: str
    vocab: Vocabulary
    function: Callable[[str, frozenset[str]], Hashable]

    def key(self, c: str, s: State) -> Hashable:
        return self.function(c, frozenset(str(a) for a in self.vocab.atoms_of(s)))

    def cube(self, c: str, s: State) -> Cube | None:
        return None


__all__ = ["Abstraction", "Partition", "Projection"]

"""The representation function α of section 2 as users write it.

α maps an environment state x to the ground atoms true in it.  capver computes
with states as bitsets over a :class:`~capver.core.vocabulary.Vocabulary`
(:mod:`capver.core.state`), but a person writing α for their own environment
naturally returns a set of atoms: ``{"goal"}``, ``["at(r1,c2)", "hole"]`` or
``{Atom("goal")}``.  :class:`AtomsFunction` turns such a function into a
:class:`~capver.envs.base.Representation`, converting what it returns
(:func:`state_of`) and saying, in one line, what was wrong when it cannot.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from capver.core.state import State
from capver.core.vocabulary import Atom, Vocabulary
from capver.errors import VocabularyError

AtomsLike = Iterable[Atom | str] | State
"""What α may return: atoms (as ``Atom`` or their text, ``p`` or ``p(a,b)``) or the
bitset :meth:`Vocabulary.state` builds."""


def state_of(value: object, vocab: Vocabulary, *, what: str = "α") -> State:
    """The bitset of ``value`` (see :data:`AtomsLike`); raises
    :class:`~capver.errors.VocabularyError` naming ``what`` and what was expected."""
    expected = (
        "a set or list of atoms (strings such as 'goal' or 'at(a,b)', or Atom objects) "
        f"of the vocabulary ({_sample(vocab)}), or a Vocabulary.state bitset"
    )
    if isinstance(value, bool):
        raise VocabularyError(f"{what} returned {value!r}; expected {expected}")
    if isinstance(value, int):
        if value < 0 or value & ~vocab.full_mask:
            raise VocabularyError(
                f"{what} returned the bitset {value}, which sets bits outside the vocabulary's "
                f"{len(vocab)} atoms; expected {expected}"
            )
        return value
    if isinstance(value, str | Atom):
        raise VocabularyError(
            f"{what} returned the single atom {value!r}; expected {expected} (wrap it: {{{value!r}}})"
        )
    if not isinstance(value, Iterable):
        raise VocabularyError(f"{what} returned {type(value).__name__}; expected {expected}")
    s = 0
    for item in value:
        if not isinstance(item, str | Atom):
            raise VocabularyError(
                f"{what} returned an item {item!r} of type {type(item).__name__}; expected {expected}"
            )
        atom = Atom.parse(item) if isinstance(item, str) else item
        if atom not in vocab:
            raise VocabularyError(f"{what} returned the atom {atom}, which is not in the vocabulary ({_sample(vocab)})")
        s |= 1 << vocab.index(atom)
    return s


def _sample(vocab: Vocabulary, n: int = 6) -> str:
    shown = ", ".join(str(a) for a in vocab.atoms[:n])
    return f"{len(vocab)} atoms: {shown}{', …' if len(vocab) > n else ''}"


class AtomsFunction:
    """α from a function of the environment state that returns atoms
    (:data:`AtomsLike`), over ``vocabulary``."""

    def __init__(self, fn: Callable[[Any], object], vocabulary: Vocabulary) -> None:
        self._fn = fn
        self._vocab = vocabulary

    @property
    def vocabulary(self) -> Vocabulary:
        return self._vocab

    def __call__(self, x: Any) -> State:
        return state_of(self._fn(x), self._vocab)

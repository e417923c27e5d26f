"""Identifier maps for exports to languages with stricter names than capver's.

capver names atoms, capabilities and objects freely (``on(a,b)&~clear(a)``); PDDL
and PRISM accept only identifiers of a certain shape and reserve keywords.  An
:class:`IdentifierRule` describes one target language's identifiers (which
characters are unsafe, what replaces them, what a name must start with, which words
are reserved), and a :class:`NameAllocator` hands out distinct identifiers under
that rule, resolving clashes by a numeric suffix.  Both exporters
(:mod:`capver.io.ppddl_export`, :mod:`capver.engines.verification.prism`) build their
name maps with these, so the two spell a given name by the same procedure.  The module
imports nothing of capver and sits at the bottom layer, so that the PRISM writer (an
engine) and the PPDDL writer (io) can both use it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["IdentifierRule", "NameAllocator", "build_name_map"]


@dataclass(frozen=True, slots=True)
class IdentifierRule:
    """How one target language spells an identifier.

    ``replacements`` are applied first (e.g. ``~`` read as ``-not-``), then every run
    of characters matching ``unsafe`` becomes one ``separator``, runs of separators
    collapse and the ends are stripped of them.  A result that is empty or does not
    start with a letter gets ``prefix`` in front (``empty`` if nothing is left), and
    a reserved word gets ``keyword_suffix`` appended.  ``lower`` lower-cases first
    (PDDL is case-insensitive, so ``On`` and ``on`` must not both be kept)."""

    unsafe: re.Pattern[str]
    separator: str
    prefix: str
    empty: str
    keywords: frozenset[str]
    keyword_suffix: str
    replacements: tuple[tuple[str, str], ...] = ()
    lower: bool = False

    def spell(self, text: str) -> str:
        """The identifier for ``text``; not injective (see :class:`NameAllocator`)."""
        s = text.lower() if self.lower else text
        for old, new in self.replacements:
            s = s.replace(old, new)
        s = self.unsafe.sub(self.separator, s)
        sep = re.escape(self.separator)
        s = re.sub(f"(?:{sep}){{2,}}", self.separator, s).strip(self.separator)
        if not s:
            return self.empty
        if not s[0].isalpha():
            s = self.prefix + s
        if s in self.keywords:
            s += self.keyword_suffix
        return s


class NameAllocator:
    """Distinct identifiers of one namespace: a wanted name already taken (or a
    keyword of the rule) gets ``separator`` + 2, 3, ... appended."""

    def __init__(self, rule: IdentifierRule, taken: Iterable[str] = ()) -> None:
        self.rule = rule
        self.used: set[str] = set(taken)

    def take(self, wanted: str) -> str:
        """Reserve ``wanted`` (already an identifier) or its first free variant."""
        name, k = wanted, 1
        while name in self.used or name in self.rule.keywords:
            k += 1
            name = f"{wanted}{self.rule.separator}{k}"
        self.used.add(name)
        return name

    def spell(self, text: str) -> str:
        """Reserve the identifier of the capver name ``text``."""
        return self.take(self.rule.spell(text))


def build_name_map(texts: Iterable[str], allocator: NameAllocator) -> dict[str, str]:
    """capver name → identifier for each of ``texts``, in order (earlier names keep
    their spelling when two clash), through ``allocator``'s namespace."""
    return {t: allocator.spell(t) for t in texts}

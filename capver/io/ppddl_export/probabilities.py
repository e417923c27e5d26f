"""Outcome probabilities of the PPDDL export as written (the **Probabilities**
paragraph of :mod:`capver.io.ppddl_export`): decimals that sum to exactly 1, and to
1.0 in floating point added left to right (pddlgym's check), or exact fractions for
capver's own reader; Pr_h of paper section 2 is exact, the text may round it."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction

from capver.core.properties import terminating_places

MIN_DECIMALS = 6
"""Decimal places of a rounded probability (more when needed for 3 significant digits)."""


def _float_sum(texts: Sequence[str]) -> float:
    total = 0.0
    for t in texts:
        total += float(t)
    return total


def _decimal_text(units: int, places: int) -> str:
    if units == 10**places:
        return "1.0"
    digits = str(units).rjust(places, "0").rstrip("0")
    return "0." + (digits or "0")


@dataclass(frozen=True, slots=True)
class WrittenProbability:
    """One outcome's probability as written: ``text`` (a decimal, or a fraction in
    exact mode), the exact value ``exact``, and whether ``text`` equals it."""

    index: int
    text: str
    exact: Fraction
    is_exact: bool


def written_probabilities(probs: Sequence[Fraction], *, exact_fractions: bool = False) -> list[WrittenProbability]:
    """How the outcome probabilities ``probs`` (summing to 1) are written, in the
    order they are written (``index`` points into ``probs``): decimals that sum to
    exactly 1, and to 1.0 in floating point added left to right when any order
    allows it (module docstring)."""
    if sum(probs) != 1:
        raise ValueError(f"probabilities {probs} do not sum to 1")
    if exact_fractions:
        return [WrittenProbability(i, _fraction(p), p, True) for i, p in enumerate(probs)]
    exact = [terminating_places(p) for p in probs]
    places = max([MIN_DECIMALS, *(e for e in exact if e is not None)])
    for p, e in zip(probs, exact, strict=True):
        if e is None:
            # at least 3 significant digits: p ≥ 10^-k needs k + 2 places
            places = max(places, len(str(p.denominator // p.numerator)) + 2)
    scale = 10**places
    units = [int(p * scale) for p in probs]  # exact for terminating ones, floor otherwise
    short = scale - sum(units)
    rounded = sorted((i for i, e in enumerate(exact) if e is None), key=lambda i: (-(probs[i] * scale - units[i]), i))
    for i in rounded[:short]:
        units[i] += 1
    texts = [_decimal_text(u, places) for u in units]
    order = _float_order(texts)
    if _float_sum([texts[i] for i in order]) > 1.0:
        # no order adds up to at most 1.0 in floating point: move one unit between two
        # rounded entries (each stays within 2 units of its exact value) and retry
        for i, j in itertools.permutations(rounded, 2):
            if units[i] <= 1:
                continue
            trial = list(units)
            trial[i] -= 1
            trial[j] += 1
            cand = [_decimal_text(u, places) for u in trial]
            cand_order = _float_order(cand)
            if _float_sum([cand[k] for k in cand_order]) <= 1.0:
                texts, order = cand, cand_order
                break
    return [WrittenProbability(i, texts[i], probs[i], exact[i] is not None) for i in order]


def _float_order(texts: Sequence[str]) -> list[int]:
    """An order of ``texts`` whose left-to-right floating-point sum is exactly 1.0
    (else at most 1.0; else the given order)."""
    n = len(texts)
    candidates = itertools.permutations(range(n)) if n <= 6 else _orders_to_try(texts)
    fallback: list[int] | None = None
    for order in candidates:
        total = _float_sum([texts[i] for i in order])
        if total == 1.0:
            return list(order)
        if total < 1.0 and fallback is None:
            fallback = list(order)
    return fallback if fallback is not None else list(range(n))


def _orders_to_try(texts: Sequence[str]) -> Iterator[tuple[int, ...]]:
    """The orders :func:`_float_order` tries for more than 6 outcomes, drawn as they are
    tried: the given order usually sums to 1.0 already, and drawing all 200 shuffles
    up front took most of the export's time on large models."""
    n = len(texts)
    yield tuple(range(n))
    by_size = sorted(range(n), key=lambda i: float(texts[i]))
    yield tuple(by_size)
    yield tuple(reversed(by_size))
    rng = random.Random(n)  # seeded: the same file every time
    for _ in range(200):
        yield tuple(rng.sample(range(n), n))


def _fraction(p: Fraction) -> str:
    return str(p.numerator) if p.denominator == 1 else f"{p.numerator}/{p.denominator}"

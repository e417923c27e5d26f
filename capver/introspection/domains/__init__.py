"""Benchmark domains of the introspection paper: the infinite grid (section 4) and
the relational domains of section 5.4 — Blocks-World unstacking, Drawers and Bins.

Each module has ``generate(size, rng) -> problem`` (a size and a
``numpy.random.Generator``); :data:`DOMAINS` maps names to them.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from capver.introspection.domains import bins, blocks, drawers, grid
from capver.introspection.search.problem import PlanningProblem

DOMAINS: dict[str, Callable[[int, np.random.Generator], PlanningProblem]] = {
    "grid": grid.generate,
    "blocks": blocks.generate,
    "drawers": drawers.generate,
    "bins": bins.generate,
}
"""Domain name -> instance generator ``(size, rng)``; size is d for the grid, the
number of blocks, of drawers (= items) and of bins."""

__all__ = ["DOMAINS", "bins", "blocks", "drawers", "grid"]

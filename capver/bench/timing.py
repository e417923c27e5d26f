"""The one timing helper of the benchmarks: run a function once and measure its wall
clock (``time.perf_counter``) and the CPU time of this process
(``time.process_time``).  Every benchmark reports seconds measured this way, so that
a table's "wall" and "cpu" columns mean the same thing in every one."""

from __future__ import annotations

import contextlib
import gc
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Timing:
    """Seconds of one measured call: ``wall`` clock and this process's ``cpu`` time."""

    wall: float
    cpu: float


def timed(fn: Callable[[], T], *, collect: bool = False) -> tuple[T, Timing]:
    """``fn()`` and how long it took.  With ``collect`` a full garbage collection runs
    first, so that no earlier garbage is collected inside the measurement (a full
    collection of a built lattice's heap takes far longer than the call measured)."""
    if collect:
        gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, Timing(time.perf_counter() - wall, time.process_time() - cpu)


@contextlib.contextmanager
def own_heap() -> Iterator[None]:
    """A benchmark's block that collects only its own garbage: one full collection, then
    every object alive is moved to the collector's permanent generation
    (``gc.freeze``) until the block ends.  Run inside a larger process (a test worker,
    a notebook), each ``timed(..., collect=True)`` otherwise rescans the caller's whole
    heap: the foundation benchmark's ``--quick`` run took 21 s in a test worker and 3 s
    in a process of its own."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


__all__ = ["Timing", "own_heap", "timed"]

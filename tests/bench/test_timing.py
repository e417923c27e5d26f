"""The benchmarks' timing helper: ``timed`` and ``own_heap``."""

from __future__ import annotations

import gc

from capver.bench.timing import own_heap, timed


class _Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the collector frees it


def test_own_heap_freezes_what_exists_and_collects_only_what_the_block_makes() -> None:
    caller = [_Node() for _ in range(1_000)]  # the caller's heap, alive throughout
    with own_heap():
        assert gc.get_freeze_count() >= len(caller)
        for _ in range(100):
            _Node()  # the block's own garbage
        # timed(collect=True) frees the block's cycles; the frozen ones are not scanned
        assert gc.collect() >= 100
        out, t = timed(lambda: sum(range(1_000)), collect=True)
        assert out == 499_500 and t.wall >= 0 and t.cpu >= 0
    assert gc.get_freeze_count() == 0  # everything back in the collector's generations
    del caller
    assert gc.collect() >= 1_000

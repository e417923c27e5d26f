"""``capver bench occam``'s driver: its jobs run on capver's local executor, in this
process or in spawned worker processes, and come back in the order they were given,
with one progress line per finished job."""

from __future__ import annotations

import math

import pytest

from capver.bench import occam


@pytest.mark.parametrize("procs", [1, 2])
def test_jobs_come_back_in_order_with_a_line_each(procs: int) -> None:
    jobs = [(math.factorial, (n,)) for n in (5, 0, 7, 3)]
    lines: list[str] = []
    assert occam._run_all(jobs, procs, lines.append) == [120, 1, 5040, 6]  # type: ignore[arg-type]
    # Completion order may differ from the jobs' order; the counter counts up.
    assert [line.split("]", 1)[0] for line in lines] == [f"[{i}/4" for i in range(1, 5)]
    assert sorted(line.split("] ", 1)[1] for line in lines) == sorted(f"factorial({n},)" for n in (5, 0, 7, 3))

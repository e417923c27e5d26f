"""Shared helpers of the introspection tests: an independent breadth-first search for
optimal plan lengths, and the check that a planner's result re-simulates."""

from __future__ import annotations

from collections import deque

import pytest

from capver.introspection.search import simulate
from capver.introspection.search.problem import PlanningProblem


def check_valid(problem, result) -> None:
    """The plan is executable, its return and success are what the planner said."""
    assert result.plan is not None
    ro = simulate(problem, result.plan)
    assert ro.ret == pytest.approx(result.ret)
    assert ro.success == result.success


def bfs_optimal_length(problem: PlanningProblem, max_states: int = 200_000) -> int | None:
    """Length of a shortest plan whose last transition terminates with success
    (None if there is none within the horizon).  States are expanded in order of
    depth, so the first successful transition generated is a shortest one."""
    start = problem.initial
    frontier: deque = deque([(start, 0)])
    seen = {start}
    while frontier:
        s, d = frontier.popleft()
        if d >= problem.horizon:
            continue
        for a in problem.actions(s):
            s2 = problem.successor(s, a)
            t = problem.termination(s, a, s2)
            if t == 1:
                return d + 1
            if t != 0 or s2 in seen:
                continue
            seen.add(s2)
            if len(seen) > max_states:
                raise AssertionError("BFS state limit reached; use a smaller instance")
            frontier.append((s2, d + 1))
    return None

"""The planners of the introspection paper (sections 4 and 5.3): every returned plan
is re-simulated; optimality is checked against an independent BFS where the paper
claims it (the grid for the introspector, every domain for GREEDY)."""

from __future__ import annotations

import numpy as np
import pytest

from capver.errors import IntrospectionError
from capver.introspection.domains import bins, blocks, drawers, grid
from capver.introspection.search import (
    PLANNERS,
    Beam,
    Greedy,
    Introspector,
    RandomK,
    SearchBudget,
    make_planner,
    planner_label,
    simulate,
)

from .helpers import bfs_optimal_length, check_valid


@pytest.mark.parametrize("d", [1, 2, 5, 9, 14])
def test_grid_introspector_and_greedy_are_optimal(d: int) -> None:
    for seed in range(3):
        p = grid.generate(d, np.random.default_rng(seed))
        for planner in (Introspector(), Greedy()):
            r = planner.solve(p, np.random.default_rng(seed))
            check_valid(p, r)
            assert r.success
            assert len(r.plan) == d  # the Manhattan distance is the optimum
            assert r.ret == p.optimal_return == -(d - 1) + p.horizon
            assert p.normalized_score(r.ret) == 1.0


def _diamond(r: int) -> int:
    """Grid points within L1 distance r of a point."""
    return 2 * r * r + 2 * r + 1


def test_grid_introspector_expands_linearly_and_greedy_quadratically() -> None:
    """Section 4: GREEDY expands Ω(d²) nodes, the introspector O(d)."""
    for d in (8, 16):
        p = grid.generate(d, np.random.default_rng(0))
        intro = Introspector().solve(p, np.random.default_rng(0))
        greedy = Greedy().solve(p, np.random.default_rng(0))
        assert intro.expanded == d  # one expansion per step (goals are tested when generated)
        # Uniform-cost search expands every state within distance d - 2 of the start
        # before the origin is generated, and none beyond distance d - 1.
        assert _diamond(d - 2) <= greedy.expanded <= _diamond(d - 1)


@pytest.mark.parametrize("planner", [RandomK(k=20), Beam(k=10)])
def test_grid_sampling_baselines_return_valid_scored_plans(planner) -> None:
    for d in (2, 6):
        p = grid.generate(d, np.random.default_rng(d))
        r = planner.solve(p, np.random.default_rng(1))
        check_valid(p, r)
        score = p.normalized_score(r.ret)
        assert 0.0 <= score <= 1.0
        assert r.success == (simulate(p, r.plan).states[-1] == (0, 0))
        assert (score == 1.0) == (r.success and len(r.plan) == d)


def test_beam_is_optimal_on_small_grids_with_a_wide_beam() -> None:
    p = grid.generate(4, np.random.default_rng(0))
    r = Beam(k=1000).solve(p, np.random.default_rng(0))
    check_valid(p, r)
    assert r.success and len(r.plan) == 4


SMALL = [
    (blocks, 2),
    (blocks, 4),
    (blocks, 6),
    (drawers, 2),
    (drawers, 3),
    (bins, 2),
    (bins, 3),
]


@pytest.mark.parametrize(("module", "size"), SMALL, ids=lambda x: getattr(x, "__name__", str(x)).split(".")[-1])
def test_relational_plans_are_valid_and_greedy_is_optimal(module, size: int) -> None:
    for seed in range(3):
        p = module.generate(size, np.random.default_rng(seed))
        optimum = bfs_optimal_length(p)
        assert optimum is not None
        g = Greedy().solve(p, np.random.default_rng(seed))
        i = Introspector().solve(p, np.random.default_rng(seed))
        for r in (g, i):
            check_valid(p, r)
            assert r.success
        assert len(g.plan) == optimum
        assert len(i.plan) >= optimum
        # No penalties and every reward is needed before success: all successful plans
        # score the same (section 5.4).
        assert i.ret == g.ret


def test_bins_introspector_collects_one_reward_per_bin() -> None:
    for n in (3, 6):
        p = bins.generate(n, np.random.default_rng(n))
        r = Introspector().solve(p, np.random.default_rng(0))
        check_valid(p, r)
        assert r.success and r.ret == float(n)


@pytest.mark.parametrize(("module", "size"), [(blocks, 25), (drawers, 8), (bins, 10)])
def test_introspector_solves_larger_instances(module, size: int) -> None:
    p = module.generate(size, np.random.default_rng(7))
    r = Introspector().solve(p, np.random.default_rng(7), SearchBudget(timeout=30))
    check_valid(p, r)
    assert r.success and not r.timed_out


def test_budget_exhaustion_is_reported() -> None:
    p = blocks.generate(9, np.random.default_rng(3))
    r = Greedy().solve(p, np.random.default_rng(0), SearchBudget(max_expansions=50))
    assert r.timed_out and r.plan is None and r.expanded == 50
    r = Introspector().solve(p, np.random.default_rng(0), SearchBudget(timeout=0.0))
    assert r.timed_out and not r.success
    check_valid(p, r)  # the partial plan is still executable (here: empty)


def test_introspector_needs_milestones() -> None:
    class Opaque:
        initial = 0
        horizon = 3

        def actions(self, s):
            return (1,)

        def successor(self, s, a):
            return s + a

        def reward(self, s, a, s2):
            return 0.0

        def termination(self, s, a, s2):
            return 0

        def format_action(self, a):
            return str(a)

    with pytest.raises(IntrospectionError, match="milestones"):
        Introspector().solve(Opaque(), np.random.default_rng(0))
    # ... while the black-box baselines plan on it.
    assert Greedy().solve(Opaque(), np.random.default_rng(0)).plan == (1, 1, 1)


def test_registry() -> None:
    assert set(PLANNERS) == {"introspector", "greedy", "random", "beam", "mcts", "mcts-u"}
    assert make_planner("beam", k=7) == Beam(k=7)
    assert make_planner("greedy") == Greedy()
    assert planner_label("random", 50) == "RANDOM[50]"
    with pytest.raises(IntrospectionError, match="unknown planner 'astar'"):
        make_planner("astar")
    with pytest.raises(IntrospectionError, match="K must be positive"):
        make_planner("random", k=0)

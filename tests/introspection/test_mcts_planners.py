"""MCTS[K] and MCTS-U[K] (section 4 of the introspection paper) on the shared engine:
the adapter is the problem, plans re-simulate, the budgets are honoured, and on the
grid the normalised score falls with the distance d (Figure 2) while the
introspector stays optimal."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capver.errors import IntrospectionError
from capver.introspection.domains import bins, blocks, drawers, grid
from capver.introspection.search import (
    MCTSK,
    MCTSU,
    PLANNERS,
    TAKES_K,
    Introspector,
    SearchBudget,
    make_planner,
    planner_label,
)
from capver.introspection.search.mcts_k import EngineProblem, uniform_prior
from capver.introspection.search.problem import Clock
from tests.helpers.examples import scaled

from .helpers import check_valid


@settings(max_examples=scaled(40), deadline=None)
@given(x=st.integers(-30, 30), y=st.integers(-30, 30), a=st.integers(0, 3))
def test_adapter_is_the_problem(x: int, y: int, a: int) -> None:
    p = grid.GridProblem((5, 5), horizon=8, goal_reward=8.0)
    clock = Clock(SearchBudget())
    ad = EngineProblem(p, clock)
    s2, r, term = ad.transition((x, y), a, np.random.default_rng(0))
    assert s2 == p.successor((x, y), a)
    assert r == p.reward((x, y), a, s2)
    assert term == (s2 == (0, 0))
    assert ad.key((x, y)) == (x, y)
    assert list(ad.actions((x, y))) == [0, 1, 2, 3]
    assert clock.generated == 1


def test_uniform_prior() -> None:
    p = blocks.generate(3, np.random.default_rng(0))
    prior = uniform_prior(p)
    s = p.initial
    n = len(p.actions(s))
    assert n > 1
    assert all(prior(s, a) == pytest.approx(1 / n) for a in p.actions(s))


@pytest.mark.parametrize("planner", [MCTSK(k=30), MCTSU(k=30)], ids=["mcts", "mcts-u"])
def test_plans_are_valid_on_small_instances(planner) -> None:
    for module, size in ((grid, 3), (blocks, 3), (drawers, 2), (bins, 2)):
        p = module.generate(size, np.random.default_rng(size))
        r = planner.solve(p, np.random.default_rng(0))
        check_valid(p, r)
        assert len(r.plan) <= p.horizon
        # one new tree node per iteration at most, K iterations per real step
        assert 0 < r.expanded <= planner.k * len(r.plan)
        assert r.generated >= r.expanded
        assert not r.timed_out


@pytest.mark.parametrize("cls", [MCTSK, MCTSU])
def test_distance_one_is_solved_optimally(cls) -> None:
    """With H = 1 the four root actions are all tried within K = 8 iterations and
    only the one into the origin pays; argmax Q takes it."""
    for seed in range(4):
        p = grid.generate(1, np.random.default_rng(seed))
        r = cls(k=8).solve(p, np.random.default_rng(seed))
        check_valid(p, r)
        assert r.success and len(r.plan) == 1 and p.normalized_score(r.ret) == 1.0


def _mean_score(planner, d: int, episodes: int) -> float:
    scores = []
    for ep in range(episodes):
        p = grid.generate(d, np.random.default_rng([d, ep]))
        r = planner.solve(p, np.random.default_rng([d, ep, 1]))
        check_valid(p, r)
        scores.append(p.normalized_score(r.ret))
    return float(np.mean(scores))


@pytest.mark.parametrize("cls", [MCTSK, MCTSU])
def test_grid_score_falls_with_distance(cls) -> None:
    """Figure 2: sparse reward defeats MCTS as d grows.  At d = 2 (H = 2) K = 50
    iterations enumerate all 16 two-step plans, so the plan is optimal; at d = 14
    (H = 26) a random rollout from distance ≈ 13 hits the origin with probability of
    order 10⁻³, so almost no iteration sees the reward and the score collapses,
    while the introspector stays optimal."""
    planner = cls(k=50)
    near = _mean_score(planner, 2, 6)
    mid = _mean_score(planner, 6, 6)
    far = _mean_score(planner, 14, 6)
    assert near == 1.0
    assert near > mid > far
    assert far <= 0.25
    assert _mean_score(Introspector(), 14, 6) == 1.0


def test_budget_is_honoured() -> None:
    p = grid.generate(6, np.random.default_rng(0))
    r = MCTSK(k=1000).solve(p, np.random.default_rng(0), SearchBudget(timeout=0.0))
    assert r.timed_out and r.plan == () and not r.success
    r = MCTSU(k=1000).solve(p, np.random.default_rng(0), SearchBudget(max_expansions=100))
    assert r.timed_out
    check_valid(p, r)
    # checked every 32 iterations: at most one chunk beyond the limit
    assert 100 <= r.expanded < 100 + 32


def test_registry() -> None:
    assert {"mcts", "mcts-u"} <= set(PLANNERS) and {"mcts", "mcts-u"} <= TAKES_K
    assert make_planner("mcts", k=7) == MCTSK(k=7)
    assert make_planner("mcts-u", k=9) == MCTSU(k=9)
    assert planner_label("mcts", 50) == "MCTS[50]"
    assert planner_label("mcts-u", 100) == "MCTS-U[100]"
    with pytest.raises(IntrospectionError, match="K must be positive"):
        make_planner("mcts-u", k=0)
    with pytest.raises(IntrospectionError, match="K must be positive"):
        MCTSK(k=0).solve(grid.generate(2, np.random.default_rng(0)), np.random.default_rng(0))

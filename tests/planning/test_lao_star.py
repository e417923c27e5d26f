"""LAO* on explicit MDPs with hand-computed optimal values, dead-end traps, the
finite-penalty trade-off and deterministic tie-breaking; and, for all small random
MDPs, agreement with full value iteration."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capver.errors import PlanningError
from capver.planning import LAOStar, TableMDP, goal_count_heuristic, solve
from tests.helpers.examples import scaled


def is_goal_state(g):
    return lambda s: s == g


# ----------------------------------------------------------------------------- hand-computed
def test_chain_with_slip_values_and_policy():
    # fwd moves one right w.p. 4/5 and slips (stays) w.p. 1/5: 5/4 expected steps per cell.
    slip = {i: {"fwd": [(Fraction(4, 5), i + 1), (Fraction(1, 5), i)], "back": [(1, max(i - 1, 0))]} for i in range(3)}
    res = solve(TableMDP(slip), 0, is_goal_state(3))
    assert res.values[0] == pytest.approx(15 / 4)
    assert res.values[1] == pytest.approx(10 / 4)
    assert res.values[2] == pytest.approx(5 / 4)
    assert res.values[3] == 0
    assert dict(res.policy) == {0: "fwd", 1: "fwd", 2: "fwd"}
    assert res.goals == {3}
    assert res.solvable and not res.gave_up


def test_stochastic_shortcut_beats_chain_when_cheaper_in_expectation():
    # From 0: walk three cells (3 steps) or a jump that lands w.p. 1/2 and stays
    # otherwise: V = 1 + V/2, i.e. 2 expected steps.
    table = {
        0: {"walk": [(1, 1)], "jump": [(Fraction(1, 2), 3), (Fraction(1, 2), 0)]},
        1: {"walk": [(1, 2)]},
        2: {"walk": [(1, 3)]},
    }
    res = solve(TableMDP(table), 0, is_goal_state(3))
    assert res.policy[0] == "jump"
    assert res.value == pytest.approx(2.0)
    assert set(res.policy) == {0}


def two_routes() -> TableMDP:
    # "risky" reaches the goal in one step w.p. 9/10 and falls into a dead end
    # (no actions) w.p. 1/10; "safe" takes four deterministic steps.
    return TableMDP(
        {
            "s": {"risky": [(Fraction(9, 10), "g"), (Fraction(1, 10), "pit")], "safe": [(1, "m1")]},
            "m1": {"go": [(1, "m2")]},
            "m2": {"go": [(1, "m3")]},
            "m3": {"go": [(1, "g")]},
        }
    )


def test_riskier_shorter_route_is_worse_in_expectation():
    res = solve(two_routes(), "s", is_goal_state("g"), dead_end_penalty=1000.0)
    # risky: 1 + 1/10 * 1000 = 101 > safe: 4
    assert res.policy["s"] == "safe"
    assert res.value == pytest.approx(4.0)
    assert [res.policy[m] for m in ("m1", "m2", "m3")] == ["go", "go", "go"]


def test_small_penalty_makes_the_risk_worth_taking():
    res = solve(two_routes(), "s", is_goal_state("g"), dead_end_penalty=20.0)
    # risky: 1 + 1/10 * 20 = 3 < 4
    assert res.policy["s"] == "risky"
    assert res.value == pytest.approx(3.0)
    assert res.dead_ends == {"pit"}
    assert res.values["pit"] == 20.0


def test_dead_end_trap_is_detected_without_creeping_to_the_penalty():
    # s -> t1 <-> t2 loop forever, no goal reachable; the goal exists elsewhere.
    table = {"s": {"enter": [(1, "t1")]}, "t1": {"go": [(1, "t2")]}, "t2": {"go": [(1, "t1")]}, "x": {"go": [(1, "g")]}}
    planner = LAOStar(TableMDP(table), is_goal_state("g"), dead_end_penalty=1e6)
    res = planner.solve("s")
    assert not res.solvable
    assert res.gave_up == {"s"} and res.dead_ends == {"s"}
    assert res.value == 1e6
    assert res.policy == {}
    assert planner.dead_ends == {"s", "t1", "t2"}
    # value iteration alone would need ~10^6 passes to climb to the penalty
    assert planner.backups < 100


def test_partial_trap_costs_penalty_weighted_by_probability():
    # "gamble" reaches the goal w.p. 1/2 or a two-state trap; "slow" takes 10 steps.
    table: dict = {
        "s": {"gamble": [(Fraction(1, 2), "g"), (Fraction(1, 2), "t1")], "slow": [(1, 1)]},
        "t1": {"loop": [(1, "t2")]},
        "t2": {"loop": [(1, "t1")]},
    }
    for i in range(1, 10):
        table[i] = {"go": [(1, i + 1 if i < 9 else "g")]}
    res = solve(TableMDP(table), "s", is_goal_state("g"), dead_end_penalty=30.0)
    assert res.policy["s"] == "slow"  # 1 + 15 = 16 > 10
    assert res.value == pytest.approx(10.0)
    res = solve(TableMDP(table), "s", is_goal_state("g"), dead_end_penalty=10.0)
    assert res.policy["s"] == "gamble"  # 1 + 5 = 6 < 10
    assert res.value == pytest.approx(6.0)
    assert res.dead_ends == {"t1"}


def test_state_without_actions_is_a_dead_end():
    res = solve(TableMDP({}), "lonely", is_goal_state("g"))
    assert res.dead_ends == {"lonely"} and not res.solvable


def test_goal_state_needs_no_policy():
    res = solve(TableMDP({"g": {"a": [(1, "x")]}}), "g", is_goal_state("g"))
    assert res.policy == {} and res.value == 0 and res.solvable and res.expansions == 0


def test_ties_are_broken_by_action_order():
    # Two equally long routes; the one listed first wins, whichever it is.
    def table(order):
        routes = {"via_b": [(1, "b")], "via_c": [(1, "c")]}
        return TableMDP({"s": {a: routes[a] for a in order}, "b": {"put": [(1, "g")]}, "c": {"put": [(1, "g")]}})

    assert solve(table(["via_b", "via_c"]), "s", is_goal_state("g")).policy["s"] == "via_b"
    assert solve(table(["via_c", "via_b"]), "s", is_goal_state("g")).policy["s"] == "via_c"


def test_goal_count_heuristic_counts_unsatisfied_literals():
    h = goal_count_heuristic(pos=0b0011, neg=0b1100)
    assert h(0b0011) == 0
    assert h(0b0000) == 2
    assert h(0b1111) == 2
    assert h(0b1100) == 4
    assert goal_count_heuristic(0b0011, 0b1100, per_step=3)(0b1100) == 2
    with pytest.raises(ValueError):
        goal_count_heuristic(1, 0, per_step=0)


def test_expansion_budget_raises_planning_error():
    table = {i: {"go": [(1, i + 1)]} for i in range(100)}
    with pytest.raises(PlanningError, match="budget of 5"):
        solve(TableMDP(table), 0, is_goal_state(100), max_expansions=5)


# ----------------------------------------------------------------------------- for all MDPs
def value_iteration(table, goal, penalty, states, eps=1e-12):
    v = dict.fromkeys(states, 0.0)
    while True:
        delta = 0.0
        for s in states:
            if s == goal:
                continue
            qs = [1 + sum(float(p) * v[t] for p, t in outs) for outs in table.get(s, {}).values()]
            new = min([penalty, *qs])
            delta = max(delta, abs(new - v[s]))
            v[s] = new
        if delta < eps:
            return v


@st.composite
def random_mdps(draw):
    n = draw(st.integers(2, 7))
    table = {}
    for s in range(n - 1):  # state n-1 is the goal
        actions = {}
        for a in range(draw(st.integers(0, 3))):
            k = draw(st.integers(1, 3))
            targets = draw(st.lists(st.integers(0, n - 1), min_size=k, max_size=k))
            weights = draw(st.lists(st.integers(1, 4), min_size=k, max_size=k))
            total = sum(weights)
            actions[f"a{a}"] = [(Fraction(w, total), t) for w, t in zip(weights, targets)]
        table[s] = actions
    return n, table


@settings(max_examples=scaled(60), deadline=None)
@given(random_mdps(), st.sampled_from([0.0, 0.5, 1.0]), st.integers(0, 5))
def test_matches_value_iteration_and_is_history_independent(mdp, h_scale, start):
    n, table = mdp
    start %= n - 1
    goal, penalty = n - 1, 50.0
    v_star = value_iteration(table, goal, penalty, range(n))

    def heuristic(s: int) -> float:  # a scaled-down V* is an admissible heuristic
        return h_scale * v_star[s]

    res = solve(TableMDP(table), start, is_goal_state(goal), heuristic, dead_end_penalty=penalty)
    assert res.value == pytest.approx(v_star[start], abs=1e-6)
    for s, a in res.policy.items():
        qs = {b: 1 + sum(float(p) * v_star[t] for p, t in outs) for b, outs in table[s].items()}
        assert qs[a] == pytest.approx(v_star[s], abs=1e-6)
        # the chosen action is the first optimal one in the table's order
        first = next(b for b, q in qs.items() if q <= v_star[s] + 1e-7 and any(t != s for _, t in table[s][b]))
        assert a == first
    # a planner that solved from every other state first returns the same policy
    warm = LAOStar(TableMDP(table), is_goal_state(goal), heuristic, dead_end_penalty=penalty)
    for s in range(n - 1, -1, -1):
        warm.solve(s)
    again = warm.solve(start)
    assert dict(again.policy) == dict(res.policy)
    assert again.value == pytest.approx(res.value, abs=1e-6)

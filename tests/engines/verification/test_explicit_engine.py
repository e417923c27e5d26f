"""capver's explicit-state model checker (capver.engines.verification.explicit) on its
own; tests/engines/verification/test_storm.py compares it with Storm.

* Hand-solved MDPs: every query's value worked out on paper, exactly.
* Random models (hypothesis over 3–5 atoms; partial and total random truths and the
  h∧ / h∨ learned from data sampled from them): the exact values satisfy the Bellman
  optimality equations, bounded values grow with the bound up to the unbounded
  value, Pmin ≤ Pmax, G is the complement of F, and float mode agrees with exact mode.
* Interval MDPs: zero-width intervals give the point values; widening never lowers
  the cooperative (nature = max) value and never raises the adversarial one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capver import synthetic
from capver.core.state import Capability, Effect, State
from capver.engines.lattice import LatticeBuilder
from capver.engines.verification import explicit as ex
from capver.logic.bdd import Cube
from capver.logic.condition import Condition, LogicContext
from capver.model.capability_model import CapabilityModel, CompoundModel, Rule
from tests.helpers.examples import scaled

seeds = st.integers(min_value=0, max_value=2**32 - 1)
KINDS = ("partial", "total", "trap", "h_and", "h_or")
F = Fraction


# -- models --------------------------------------------------------------------------


def _cond(ctx: LogicContext, mask: int, value: int) -> Condition:
    return Condition.formula(ctx, ctx.smt.cube(Cube(mask, value)))


def toy_model(with_stay: bool = True) -> CompoundModel:
    """Atoms a (bit 0), b (bit 1).  In {}: ``go`` gives a with 1/3 and b with 2/3,
    ``stay`` changes nothing; in {b}: ``fix`` adds a or deletes b, 1/2 each; states
    with a enable nothing (Storm's deadlock self-loop)."""
    ctx = LogicContext(synthetic.propositional_vocabulary(2))
    a, b = 1, 2
    caps = [
        CapabilityModel(
            Capability("go"), (Rule.make(_cond(ctx, a | b, 0), [(F(1, 3), Effect(a)), (F(2, 3), Effect(b))]),)
        ),
        CapabilityModel(Capability("stay"), (Rule.make(_cond(ctx, a | b, 0), [(1, Effect())]),)),
        CapabilityModel(
            Capability("fix"), (Rule.make(_cond(ctx, a | b, b), [(F(1, 2), Effect(a)), (F(1, 2), Effect(0, b))]),)
        ),
    ]
    return CompoundModel(ctx, caps if with_stay else [caps[0], caps[2]])


def gamble_model() -> CompoundModel:
    """Atoms g (bit 0, goal), d (bit 1, dead end).  In {}: ``safe`` gives g or d,
    1/2 each; ``risky`` gives g with 1/2, nothing with 1/4, d with 1/4."""
    ctx = LogicContext(synthetic.propositional_vocabulary(2))
    g, d = 1, 2
    start = _cond(ctx, g | d, 0)
    return CompoundModel(
        ctx,
        [
            CapabilityModel(Capability("safe"), (Rule.make(start, [(F(1, 2), Effect(g)), (F(1, 2), Effect(d))]),)),
            CapabilityModel(
                Capability("risky"),
                (Rule.make(start, [(F(1, 2), Effect(g)), (F(1, 4), Effect()), (F(1, 4), Effect(d))]),),
            ),
        ],
    )


def trap_model(ctx: LogicContext, rng: np.random.Generator) -> CompoundModel:
    """A random model whose last atom is a trap: some effects set it, no rule applies
    once it holds (so it is absorbing).  Random models alone are mostly reversible and
    give probabilities of 0 or 1; the trap makes the unbounded values fractional."""
    n = len(ctx.vocab)
    trap = 1 << (n - 1)
    mgr, cur = ctx.smt.mgr, ctx.smt.cur
    caps = []
    for cm in synthetic.random_model(ctx, rng, n_capabilities=3, max_rules=3, max_effects=3).values():
        rules = []
        for r in cm.rules:
            effects: dict[Effect, Fraction] = {}
            for p, e in r.effects:
                e2 = Effect(e.add | (trap if rng.random() < 0.3 else 0), e.delete & ~trap)
                effects[e2] = effects.get(e2, F(0)) + p
            cond = Condition.formula(ctx, mgr.And(r.condition.smt, mgr.Not(cur[n - 1])))
            rules.append(Rule.make(cond, [(p, e) for e, p in effects.items()]))
        caps.append(CapabilityModel(cm.capability, tuple(rules)))
    return CompoundModel(ctx, caps)


def random_case(seed: int, n_atoms: int, kind: str) -> tuple[CompoundModel, State, Cube]:
    """A random model of the given kind, an initial state and a target cube over one or
    two atoms; every random choice comes from a numpy Generator seeded with ``seed``."""
    rng = np.random.default_rng(seed)
    ctx = LogicContext(synthetic.propositional_vocabulary(n_atoms))
    if kind == "trap":
        model = trap_model(ctx, rng)
    elif kind in ("partial", "total"):
        model = synthetic.random_model(ctx, rng, n_capabilities=3, max_rules=3, max_effects=3, total=kind == "total")
    else:
        truth = synthetic.random_model(ctx, rng, n_capabilities=3, max_rules=3, max_effects=3, total=True)
        data = synthetic.sample_dataset(truth, rng, 30, n_states=10)
        lb = LatticeBuilder(ctx, data)
        model = lb.pessimistic if kind == "h_and" else lb.optimistic
    init = int(rng.integers(0, 1 << n_atoms)) & ~(1 << (n_atoms - 1) if kind == "trap" else 0)
    atoms = rng.choice(n_atoms - (kind == "trap"), size=int(rng.integers(1, 3)), replace=False)
    mask = sum(1 << int(i) for i in atoms)
    value = mask & int(rng.integers(0, 1 << n_atoms))
    return model, init, Cube(mask, value)


# -- hand-solved ---------------------------------------------------------------------


def test_hand_solved_toy() -> None:
    m = toy_model()
    a = Cube(1, 1).holds
    # Pmax F<=k a: go then fix until a; 1/3, 1/3 + 2/3·1/2, + 2/3·1/2·1/3 (back in {} after a delete).
    assert [ex.pmax_reach(m, 0, a, k) for k in (0, 1, 2, 3)] == [0, F(1, 3), F(2, 3), F(7, 9)]
    assert ex.pmax_reach(m, 0, a) == 1
    assert ex.pmin_reach(m, 0, a) == 0  # stay forever
    assert [ex.pmin_reach(m, 0, a, k) for k in (0, 1, 5)] == [0, 0, 0]
    # Rmin: x = 1 + 2/3·y, y = 1 + 1/2·x  ⇒  x = 5/2.  Rmax: staying forever never arrives.
    assert ex.expected_executions(m, 0, a) == F(5, 2)
    assert ex.expected_executions(m, 0, a, maximise=True) == math.inf

    def not_a(s: State) -> bool:
        return not s & 1

    assert ex.globally(m, 0, not_a, 2) == 1
    assert ex.globally(m, 0, not_a, 2, maximise=False) == 1 - F(2, 3)
    # Without stay, every scheduler arrives: Pmin = 1 and Rmax = Rmin = 5/2.
    m2 = toy_model(with_stay=False)
    assert ex.pmin_reach(m2, 0, a) == 1
    assert ex.expected_executions(m2, 0, a, maximise=True) == F(5, 2)
    # States with a enable nothing: the self-loop, and the target holds there.
    mdp = ex.explore(m, 0)
    assert {mdp.states[i] for i in mdp.deadlocks()} == {1, 3}
    assert ex.pmax_reach(m, 1, a) == 1 and ex.expected_executions(m, 1, a) == 0


def test_hand_solved_gamble() -> None:
    m = gamble_model()
    g = Cube(1, 1).holds
    # risky: x = 1/2 + x/4 ⇒ 2/3; safe: 1/2.
    assert ex.pmax_reach(m, 0, g) == F(2, 3)
    assert ex.pmin_reach(m, 0, g) == F(1, 2)
    assert ex.pmax_reach(m, 0, g, 1) == F(1, 2)
    assert ex.pmax_reach(m, 0, g, 2) == F(5, 8)
    assert ex.pmin_reach(m, 0, g, 2) == F(1, 2)
    assert ex.expected_executions(m, 0, g) == math.inf  # the dead end: g is not sure
    done = Cube(3, 1).holds
    assert ex.expected_executions(m, 0, lambda s: s != 0) == 1
    assert ex.expected_executions(m, 0, lambda s: s != 0, maximise=True) == F(4, 3)
    assert ex.expected_executions(m, 0, done) == math.inf
    for exact in (False, None):
        assert ex.pmax_reach(m, 0, g, exact=exact) == pytest.approx(2 / 3, abs=1e-12)


def test_state_limit() -> None:
    model, init, _ = random_case(7, 5, "h_or")
    n = len(ex.explore(model, init))
    assert n > 2
    with pytest.raises(ex.StateSpaceLimitError):
        ex.explore(model, init, limit=n - 1)
    assert len(ex.explore(model, init, limit=n)) == n


# -- random models -------------------------------------------------------------------


def _q(ch: ex.Choice, v: Sequence[ex.Value]) -> ex.Value:
    return sum((p * v[t] for t, p in ch.successors), F(0))


@settings(max_examples=scaled(25))
@given(seed=seeds, n_atoms=st.integers(3, 5), kind=st.sampled_from(KINDS))
def test_bellman_equations_and_bounds(seed: int, n_atoms: int, kind: str) -> None:
    model, init, cube = random_case(seed, n_atoms, kind)
    mdp = ex.explore(model, init)
    goal = mdp.mask(cube.holds)
    reach_pre = [False] * len(mdp)
    for i in range(len(mdp)):  # can the target be reached at all (graph)?
        reach_pre[i] = goal[i]
    changed = True
    while changed:
        changed = False
        for s, cs in enumerate(mdp.choices):
            if not reach_pre[s] and any(reach_pre[t] for ch in cs for t, _ in ch.successors):
                reach_pre[s] = changed = True
    for maximise in (True, False):
        v = ex.reach_values(mdp, goal, maximise=maximise, exact=True)
        pick = max if maximise else min
        for s, cs in enumerate(mdp.choices):
            assert isinstance(v[s], Fraction)
            if goal[s]:
                assert v[s] == 1
            else:
                assert v[s] == pick(_q(ch, v) for ch in cs)
            if maximise:  # the least fixpoint: zero exactly where the target is unreachable
                assert (v[s] > 0) == reach_pre[s]
        previous: list[ex.Value] = [F(-1)] * len(mdp)
        for k in range(6):
            b = ex.bounded_reach_values(mdp, goal, k, maximise=maximise, exact=True)
            assert all(p <= x <= y for p, x, y in zip(previous, b, v, strict=True))
            previous = b
        floats = ex.reach_values(mdp, goal, maximise=maximise, exact=False)
        assert all(isinstance(x, float) and abs(x - float(y)) < 1e-9 for x, y in zip(floats, v, strict=True))
    vmax = ex.reach_values(mdp, goal, maximise=True, exact=True)
    vmin = ex.reach_values(mdp, goal, maximise=False, exact=True)
    assert all(x <= y for x, y in zip(vmin, vmax, strict=True))
    for bound in (0, 2, None):
        g = ex.globally(model, init, lambda s: not cube.holds(s), bound, maximise=True)
        assert g == 1 - ex.pmin_reach(model, init, cube.holds, bound)
    # Expected executions: 0 on the target, 1 + the best successor average elsewhere
    # where finite, and finite exactly where the target can be reached surely.
    for maximise in (True, False):
        r = ex.executions_values(mdp, goal, maximise=maximise, exact=True)
        sure = vmin if maximise else vmax
        for s, cs in enumerate(mdp.choices):
            assert (r[s] != math.inf) == (sure[s] == 1)
            if goal[s]:
                assert r[s] == 0
            elif r[s] != math.inf:
                finite = [1 + _q(ch, r) for ch in cs if all(r[t] != math.inf for t, _ in ch.successors)]
                assert r[s] == (max if maximise else min)(finite)
        rf = ex.executions_values(mdp, goal, maximise=maximise, exact=False)
        assert all(
            (x == math.inf) == (y == math.inf) and (x == math.inf or abs(x - float(y)) < 1e-9)
            for x, y in zip(rf, r, strict=True)
        )


# -- interval MDPs -------------------------------------------------------------------


def _widened(model: CompoundModel, states: Sequence[State], rng: np.random.Generator, width: Fraction) -> ex.Intervals:
    out: dict[tuple[State, str, State], ex.Interval] = {}
    for (s, c, s2), (p, _) in ex.point_intervals(model, states).items():
        lo = max(F(0), F(p) - width * F(int(rng.integers(0, 3)), 2))
        hi = min(F(1), F(p) + width * F(int(rng.integers(0, 3)), 2))
        out[(s, c, s2)] = (lo, hi)
    return out


@settings(max_examples=scaled(20))
@given(seed=seeds, n_atoms=st.integers(3, 5), kind=st.sampled_from(KINDS), bound=st.integers(0, 5))
def test_robust_value_iteration(seed: int, n_atoms: int, kind: str, bound: int) -> None:
    model, init, cube = random_case(seed, n_atoms, kind)
    rng = np.random.default_rng(seed + 1)
    states = ex.explore(model, init).states
    point = ex.point_intervals(model, states)
    exact = ex.pmax_reach(model, init, cube.holds, bound, exact=True)
    assert ex.robust_pmax(model, init, cube.holds, bound, point) == exact
    assert ex.robust_pmax(model, init, cube.holds, bound, {}) == exact  # missing = point
    assert ex.robust_pmax(model, init, cube.holds, bound, point, nature="min") == exact
    unbounded = ex.pmax_reach(model, init, cube.holds, exact=True)
    assert ex.robust_pmax(model, init, cube.holds, None, point) == pytest.approx(float(unbounded), abs=1e-8)
    narrow = _widened(model, states, rng, F(1, 10))
    wide = {k: (max(F(0), lo - F(1, 10)), min(F(1), hi + F(1, 10))) for k, (lo, hi) in narrow.items()}
    up_narrow = ex.robust_pmax(model, init, cube.holds, bound, narrow)
    up_wide = ex.robust_pmax(model, init, cube.holds, bound, wide)
    assert exact <= up_narrow <= up_wide <= 1
    down_narrow = ex.robust_pmax(model, init, cube.holds, bound, narrow, nature="min")
    down_wide = ex.robust_pmax(model, init, cube.holds, bound, wide, nature="min")
    assert 0 <= down_wide <= down_narrow <= exact
    assert ex.robust_pmax(model, init, cube.holds, None, wide) >= float(unbounded) - 1e-9


def test_robust_inner_maximisation_by_hand() -> None:
    m = gamble_model()
    g = Cube(1, 1).holds
    # risky in {} with Pr(g) ∈ [1/4, 3/4], Pr(stay) ∈ [0, 1/2], Pr(d) ∈ [0, 1/2]:
    # nature = max gives g its upper bound 3/4, the rest 1/4 to the better of stay
    # (value 3/4 after one step) and d (0): one step 3/4, two steps 3/4 + 1/4·3/4.
    iv: dict[tuple[State, str, State], ex.Interval] = {
        (0, "risky", 1): (F(1, 4), F(3, 4)),
        (0, "risky", 0): (F(0), F(1, 2)),
        (0, "risky", 2): (F(0), F(1, 2)),
    }
    assert ex.robust_pmax(m, 0, g, 1, iv) == F(3, 4)
    assert ex.robust_pmax(m, 0, g, 2, iv) == F(3, 4) + F(1, 4) * F(3, 4)
    assert ex.robust_pmax(m, 0, g, None, iv) == pytest.approx(1.0, abs=1e-9)
    # nature = min: g gets 1/4, d 1/2, stay 1/4; safe (1/2) is then the better choice.
    assert ex.robust_pmax(m, 0, g, 1, iv, nature="min") == F(1, 2)
    with pytest.raises(ex.IntervalError):
        ex.robust_pmax(m, 0, g, 1, {(0, "risky", 1): (F(0), F(1, 10))})  # Σ hi < 1
    with pytest.raises(ex.IntervalError):
        ex.robust_pmax(m, 0, g, 1, {(0, "risky", 1): (F(1, 2), F(1, 3))})  # lo > hi
    with pytest.raises(ex.IntervalError):
        ex.robust_pmax(m, 1, g, 1, {(1, "safe", 0): (F(0), F(1))})  # safe is not enabled in {g}

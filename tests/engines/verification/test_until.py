"""``Pmax=? / Pmin=? [ φ U ψ ]`` and ``[ φ U<=k ψ ]`` (capver.engines.verification.explicit's
:func:`until_values`, Storm's until through :class:`capver.engines.verification.checkers.StormChecker`):

* against a brute-force reference on tiny random models: bounded values by recursion
  over (state, steps left), unbounded ones by enumerating every memoryless
  deterministic scheduler (optimal for until in a finite MDP) and solving its Markov
  chain exactly;
* Storm (exact) and the explicit engine give the same Fraction in every reachable
  state on random models (the kinds of tests/engines/verification/test_storm.py), Storm's float engine
  agrees within its precision, and ``capver verify`` answers ``P... [ φ U ψ ]`` with
  each engine alike;
* F is the until with φ = true, and U with ψ = false is 0.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from capver import synthetic
from capver.core.state import Capability, Effect, State
from capver.engines.verification import explicit as ex
from capver.engines.verification import quantitative, storm
from capver.engines.verification.checkers import QUANTITATIVE_CHECKERS
from capver.engines.verification.prism import export_prism
from capver.io.properties_text import parse_property
from capver.logic.bdd import Cube
from capver.logic.condition import Condition, LogicContext
from capver.model.capability_model import CapabilityModel, CompoundModel, Rule
from tests.engines.verification.test_explicit_engine import KINDS, random_case, seeds
from tests.helpers.examples import scaled

F = Fraction
needs_storm = pytest.mark.skipif(not storm.available(), reason="stormpy is not installed: pip install 'stormpy>=2.0'")


# -- the brute-force reference ----------------------------------------------------------


def _graph(model: CompoundModel, init: State) -> dict[State, list[list[tuple[State, Fraction]]]]:
    """Reachable states → their choices (one per enabled capability, the deadlock
    self-loop where none is), from ``distribution`` alone."""
    out: dict[State, list[list[tuple[State, Fraction]]]] = {}
    todo = [init]
    while todo:
        s = todo.pop()
        if s in out:
            continue
        choices = [sorted(cm.distribution(s).items()) for cm in model.values() if cm.distribution(s)]
        out[s] = choices or [[(s, F(1))]]
        todo += [t for ch in out[s] for t, _ in ch]
    return out


def _bounded(
    graph: dict[State, list[list[tuple[State, Fraction]]]], hold: Cube, goal: Cube, k: int, maximise: bool
) -> dict[State, Fraction]:
    """V(s, j) = 1 on ψ, 0 on ¬φ ∧ ¬ψ or with no step left, else the best choice's
    average of V(·, j − 1)."""
    pick = max if maximise else min
    memo: dict[tuple[State, int], Fraction] = {}

    def v(s: State, j: int) -> Fraction:
        if goal.holds(s):
            return F(1)
        if not hold.holds(s) or j == 0:
            return F(0)
        if (s, j) not in memo:
            memo[(s, j)] = pick(sum((p * v(t, j - 1) for t, p in ch), F(0)) for ch in graph[s])
        return memo[(s, j)]

    return {s: v(s, k) for s in graph}


def _chain_value(
    graph: dict[State, list[list[tuple[State, Fraction]]]], policy: dict[State, int], hold: Cube, goal: Cube
) -> dict[State, Fraction]:
    """P(φ U ψ) in the Markov chain of a memoryless scheduler: 1 on ψ, 0 where ψ cannot
    be reached through φ ∧ ¬ψ states, else the unique solution of x = P x + b (by
    Gauss–Jordan over Fractions)."""
    succ = {s: graph[s][policy[s]] for s in graph}
    live = {s for s in graph if goal.holds(s)}
    grew = True
    while grew:
        grew = False
        for s in graph:
            if s not in live and hold.holds(s) and any(t in live for t, _ in succ[s]):
                live.add(s)
                grew = True
    unknown = sorted(s for s in live if not goal.holds(s))
    pos = {s: i for i, s in enumerate(unknown)}
    n = len(unknown)
    rows = [[F(0)] * (n + 1) for _ in range(n)]
    for s, i in pos.items():
        rows[i][i] += 1
        for t, p in succ[s]:
            if t in pos:
                rows[i][pos[t]] -= p
            elif goal.holds(t):
                rows[i][n] += p
    for c in range(n):
        r = next(r for r in range(c, n) if rows[r][c] != 0)
        rows[c], rows[r] = rows[r], rows[c]
        piv = rows[c][c]
        rows[c] = [x / piv for x in rows[c]]
        for r in range(n):
            if r != c and rows[r][c] != 0:
                f = rows[r][c]
                rows[r] = [a - f * b for a, b in zip(rows[r], rows[c], strict=True)]
    value = {s: F(0) for s in graph}
    for s in graph:
        if goal.holds(s):
            value[s] = F(1)
    for s, i in pos.items():
        value[s] = rows[i][n]
    return value


def _unbounded(
    graph: dict[State, list[list[tuple[State, Fraction]]]], hold: Cube, goal: Cube, maximise: bool
) -> dict[State, Fraction]:
    """The extreme over every memoryless deterministic scheduler, state by state."""
    pick = max if maximise else min
    states = sorted(graph)
    best: dict[State, Fraction] = {}
    for picks in itertools.product(*(range(len(graph[s])) for s in states)):
        value = _chain_value(graph, dict(zip(states, picks, strict=True)), hold, goal)
        for s in states:
            best[s] = value[s] if s not in best else pick(best[s], value[s])
    return best


def _tiny_case(seed: int) -> tuple[CompoundModel, State, Cube, Cube]:
    """A random gamble over 3–4 atoms (few schedulers to enumerate): atoms g (bit 0)
    and d (bit 1) are absorbing (no rule applies once either holds), the others are
    free; every capability has a rule on ¬g ∧ ¬d and maybe one more on a free literal,
    with 1–3 random effects over the free atoms, some of which also set g or d — so
    that unbounded values are fractional, not the 0 and 1 of reversible random
    models.  φ is true or a free literal, ψ is g, d or g and a free literal."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 5))
    ctx = LogicContext(synthetic.propositional_vocabulary(n))
    smt = ctx.smt
    live = smt.mgr.And(smt.mgr.Not(smt.cur[0]), smt.mgr.Not(smt.cur[1]))
    free = list(range(2, n))

    def effects() -> list[tuple[Fraction, Effect]]:
        out: dict[Effect, Fraction] = {}
        for p in synthetic.random_fraction_split(rng, int(rng.integers(1, 4))):
            e = synthetic.random_effect(rng, n, p_touch=0.5)
            trap = int(rng.choice(3, p=[0.5, 0.3, 0.2]))  # nothing, g, d
            e = Effect((e.add & ~3) | (1 << (trap - 1) if trap else 0), e.delete & ~3)
            out[e] = out.get(e, F(0)) + p
        return [(p, e) for e, p in out.items()]

    caps = []
    for k in range(int(rng.integers(1, 3))):
        rules = [Rule.make(Condition.formula(ctx, live), effects())]
        if rng.random() < 0.5:
            i = int(rng.choice(free))
            lit = smt.cur[i] if rng.random() < 0.5 else smt.mgr.Not(smt.cur[i])
            rules.append(Rule.make(Condition.formula(ctx, smt.mgr.And(live, lit)), effects()))
        caps.append(CapabilityModel(Capability(f"c{k}"), tuple(rules)))
    model = CompoundModel(ctx, caps)
    a = int(rng.choice(free))
    hold = Cube(0, 0) if rng.random() < 0.3 else Cube(1 << a, int(rng.integers(2)) << a)
    goal = [Cube(1, 1), Cube(2, 2), Cube(1 | 1 << a, 1 | int(rng.integers(2)) << a)][int(rng.integers(3))]
    init = int(rng.integers(1 << n)) & ~3 if rng.random() < 0.9 else int(rng.integers(1 << n))
    return model, init, hold, goal


def _values(
    mdp: ex.ExplicitMDP, hold: Cube, goal: Cube, bound: int | None, maximise: bool, exact: bool = True
) -> dict[State, ex.Value]:
    got = ex.until_values(mdp, mdp.mask(hold.holds), mdp.mask(goal.holds), bound, maximise=maximise, exact=exact)
    return dict(zip(mdp.states, got, strict=True))


@settings(max_examples=scaled(60), deadline=None)
@given(seed=seeds)
def test_until_equals_the_brute_force_reference(seed: int) -> None:
    model, init, hold, goal = _tiny_case(seed)
    graph = _graph(model, init)
    assert math.prod(len(cs) for cs in graph.values()) <= 16  # schedulers to enumerate
    mdp = ex.explore(model, init)
    assert set(mdp.states) == set(graph)
    for maximise in (True, False):
        for k in (0, 1, 2, 4):
            assert _values(mdp, hold, goal, k, maximise) == _bounded(graph, hold, goal, k, maximise)
        want = _unbounded(graph, hold, goal, maximise)
        assert _values(mdp, hold, goal, None, maximise) == want
        floats = _values(mdp, hold, goal, None, maximise, exact=False)
        assert all(abs(float(floats[s]) - float(want[s])) < 1e-9 for s in graph)
        assert ex.until(model, init, hold.holds, goal.holds, None, maximise) == want[init]


@settings(max_examples=scaled(20), deadline=None)
@given(seed=seeds, n_atoms=st.integers(3, 5), kind=st.sampled_from(KINDS))
def test_f_is_true_until_and_false_goal_is_zero(seed: int, n_atoms: int, kind: str) -> None:
    model, init, cube = random_case(seed, n_atoms, kind)
    mdp = ex.explore(model, init)
    goal = mdp.mask(cube.holds)
    everywhere = [True] * len(mdp)
    nowhere = [False] * len(mdp)
    for maximise in (True, False):
        for k in (0, 2, None):
            f = (
                ex.reach_values(mdp, goal, maximise=maximise, exact=True)
                if k is None
                else ex.bounded_reach_values(mdp, goal, k, maximise=maximise, exact=True)
            )
            assert ex.until_values(mdp, everywhere, goal, k, maximise=maximise, exact=True) == f
            assert set(ex.until_values(mdp, goal, nowhere, k, maximise=maximise, exact=True)) <= {0}


def test_until_by_hand() -> None:
    """The gamble of tests/engines/verification/test_explicit_engine.py (g: goal, d: dead end; from {} safe
    gives g or d, risky g, nothing or d): through ¬d the goal comes with 2/3 at best
    (risky until it decides), 1/2 at worst, and 1/2 / 5/8 within one / two steps."""
    from tests.engines.verification.test_explicit_engine import gamble_model

    m = gamble_model()
    g, not_d = Cube(1, 1).holds, Cube(2, 0).holds
    assert ex.until(m, 0, not_d, g) == F(2, 3)
    assert ex.until(m, 0, not_d, g, maximise=False) == F(1, 2)
    assert [ex.until(m, 0, not_d, g, k) for k in (0, 1, 2)] == [0, F(1, 2), F(5, 8)]
    # Through ¬g only ({} and {d}), d is reached with 1/2 at best (safe) and 1/3 at worst.
    d, not_g = Cube(2, 2).holds, Cube(1, 0).holds
    assert ex.until(m, 0, not_g, d) == F(1, 2)
    assert ex.until(m, 0, not_g, d, maximise=False) == F(1, 3)  # risky forever: 1/4 / (1 − 1/4)
    # A hold that fails at once: only the goal in the initial state counts.
    assert ex.until(m, 0, g, d) == 0 and ex.until(m, 2, g, d) == 1


# -- Storm ------------------------------------------------------------------------------


def _cube(n_atoms: int, rng: np.random.Generator) -> Cube:
    atom = int(rng.integers(n_atoms))
    return Cube(1 << atom, int(rng.integers(2)) << atom)


@needs_storm
@settings(max_examples=scaled(30), deadline=None)
@given(seed=seeds, n_atoms=st.integers(3, 5), kind=st.sampled_from(KINDS))
def test_storm_and_explicit_agree_on_until(seed: int, n_atoms: int, kind: str) -> None:
    from capver.engines.verification.prism import storm_model

    model, init, goal = random_case(seed, n_atoms, kind)
    hold = _cube(n_atoms, np.random.default_rng(seed + 1))
    export, sm = storm_model(model, init)
    mdp = ex.explore(model, init)
    h, g = export.cube(hold), export.cube(goal)
    for maximise in (True, False):
        for k in (0, 1, 3, None):
            want = _values(mdp, hold, goal, k, maximise)
            got = sm.values(storm.until_formula(h, g, k, maximise=maximise))
            assert got == want, (k, maximise)
    # The float engine, through the one-shot function (a property over variables).
    text = export_prism(model, init).text
    variables = export.names.variables
    hv = " & ".join(v if hold.value >> i & 1 else f"!{v}" for i, v in enumerate(variables) if hold.mask >> i & 1)
    gv = " & ".join(v if goal.value >> i & 1 else f"!{v}" for i, v in enumerate(variables) if goal.mask >> i & 1)
    for maximise in (True, False):
        got_float = storm.until(text, hv, gv, None, maximise, exact=False)
        assert isinstance(got_float, float)
        assert abs(got_float - float(_values(mdp, hold, goal, None, maximise)[init])) <= 1e-9


def _atom_text(cube: Cube) -> str:
    i = cube.mask.bit_length() - 1
    return f"p{i}" if cube.value else f"!p{i}"


@needs_storm
@settings(max_examples=scaled(10), deadline=None)
@given(seed=seeds, kind=st.sampled_from(KINDS))
# Storm's float engine gave 0.4999999999998931 for the exact 1/2 of P>=1/2 here, and
# the bound was VIOLATED by it alone until check decided near-ties on exact rationals.
@example(seed=304, kind="trap")
def test_every_checker_answers_until_properties_alike(seed: int, kind: str) -> None:
    model, init, goal = random_case(seed, 4, kind)
    hold = _cube(4, np.random.default_rng(seed + 2))
    caps = tuple(model)
    for text in (
        f"Pmax=? [ {_atom_text(hold)} U {_atom_text(goal)} ]",
        f"Pmin=? [ {_atom_text(hold)} U<=3 {_atom_text(goal)} ]",
        f"P>=1/2 [ {_atom_text(hold)} U {_atom_text(goal)} ]",
        f"Pmax=? [ {_atom_text(hold)} U {_atom_text(goal)} ] {{caps: {caps[0]}}}",
    ):
        prop = parse_property(text, model.vocabulary, caps)
        results = {name: quantitative.check(prop, model, init, make()) for name, make in QUANTITATIVE_CHECKERS.items()}
        exact = {results["explicit"].value, results["storm"].value}
        assert len(exact) == 1, (text, results)
        assert abs(float(results["storm-float"].value) - float(results["explicit"].value)) <= 1e-9
        assert len({r.holds for r in results.values()}) == 1

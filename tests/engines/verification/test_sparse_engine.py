"""The sparse engine (capver.engines.verification.sparse) and the precision guarantees
of every quantitative checker (capver.engines.verification.checkers).

* The vectorised build is the explicit engine's MDP (the rule semantics, not the BDD
  regions the build uses): the same states, choices and exact probabilities, on the
  random models of tests/engines/verification/test_explicit_engine.py (hypothesis) and on a model of 2,048
  states (more than one 64-bit word of atoms is covered by a 70-atom model).
* Its values are exact Fractions equal to the explicit engine's, to Storm's exact ones
  and to a brute force over every memoryless scheduler (tests/engines/verification/test_until.py's
  reference), for Pmax / Pmin of F, U and G, bounded and unbounded.
* The exactness step accepts the rounded float solution only when it is the value: a
  perturbed value, a wrong float solution (injected by a mock: the one fault
  injection here) or a too small rounding denominator are rejected, and the answer
  then comes from exact arithmetic.
* ``auto`` picks the explicit engine below its size threshold and the sparse engine
  above, and the text and JSON of ``capver verify`` name the engine and its guarantee.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capver import cli, synthetic
from capver.core.state import Capability, Effect, State
from capver.engines.verification import checkers, quantitative, sparse, storm
from capver.engines.verification import explicit as ex
from capver.io.properties_text import parse_property
from capver.logic.condition import Condition, LogicContext
from capver.model.capability_model import CapabilityModel, CompoundModel, Rule
from tests.engines.verification.test_explicit_engine import KINDS, random_case, seeds
from tests.engines.verification.test_until import _bounded, _graph, _tiny_case, _unbounded
from tests.helpers.examples import scaled
from tests.helpers.paths import ROOT

F = Fraction
needs_storm = pytest.mark.skipif(not storm.available(), reason="stormpy is not installed: pip install 'stormpy>=2.0'")
TOY = "models/toy_blocks.capm"


def transitions(mdp: sparse.SparseMDP) -> dict[tuple[State, str | None], dict[State, Fraction]]:
    """(state, capability) → {successor: exact probability} of a sparse MDP."""
    states = mdp.states()
    out: dict[tuple[State, str | None], dict[State, Fraction]] = {}
    for r in range(mdp.nr_choices):
        c = int(mdp.row_cap[r])
        key = (states[int(mdp.row_state[r])], None if c < 0 else mdp.capabilities[c])
        lo, hi = int(mdp.col_start[r]), int(mdp.col_start[r + 1])
        out[key] = {states[int(mdp.target[k])]: F(int(mdp.numerator[k]), int(mdp.row_den[r])) for k in range(lo, hi)}
        assert math.isclose(sum(float(p) for p in mdp.prob[lo:hi]), 1.0, abs_tol=1e-12)
    return out


def explicit_transitions(mdp: ex.ExplicitMDP) -> dict[tuple[State, str | None], dict[State, Fraction]]:
    return {
        (mdp.states[s], ch.capability): {mdp.states[t]: p for t, p in ch.successors}
        for s, cs in enumerate(mdp.choices)
        for ch in cs
    }


def toggles(n: int) -> CompoundModel:
    """n atoms; capability t_i sets atom i with probability 1/2 while it is false (and
    does nothing otherwise): all 2^n states are reachable from the empty one."""
    ctx = LogicContext(synthetic.propositional_vocabulary(n))
    caps = [
        CapabilityModel(
            Capability(f"t{i}"),
            (
                Rule.make(
                    Condition.formula(ctx, ctx.smt.mgr.Not(ctx.smt.cur[i])),
                    [(F(1, 2), Effect(1 << i)), (F(1, 2), Effect())],
                ),
            ),
        )
        for i in range(n)
    ]
    return CompoundModel(ctx, caps)


# -- the build ------------------------------------------------------------------------


@settings(max_examples=scaled(40), deadline=None)
@given(seed=seeds, n_atoms=st.integers(3, 5), kind=st.sampled_from(KINDS))
def test_the_build_is_the_explicit_engines_mdp(seed: int, n_atoms: int, kind: str) -> None:
    model, init, _ = random_case(seed, n_atoms, kind)
    got, want = sparse.build(model, init), ex.explore(model, init)
    assert got.state(0) == init
    assert (len(got), got.nr_choices, got.nr_transitions) == (len(want), want.nr_choices, want.nr_transitions)
    assert transitions(got) == explicit_transitions(want)


def test_the_build_of_every_state_of_a_product_model_and_of_two_words() -> None:
    m = toggles(11)
    got = sparse.build(m, 0)
    assert len(got) == 2**11 and sorted(got.states()) == list(range(2**11))
    assert transitions(got) == explicit_transitions(ex.explore(m, 0))
    # 70 atoms: states take two 64-bit words; only atoms 60..69 toggle.
    wide = toggles(70)
    sub = CompoundModel(wide.ctx, [wide[f"t{i}"] for i in range(60, 70)])
    got = sparse.build(sub, 0)
    assert got.rows.shape == (2**10, 2) and transitions(got) == explicit_transitions(ex.explore(sub, 0))
    with pytest.raises(ex.StateSpaceLimitError):
        sparse.build(m, 0, limit=100)


# -- values -----------------------------------------------------------------------------


@settings(max_examples=scaled(40), deadline=None)
@given(seed=seeds)
def test_values_equal_the_brute_force_over_memoryless_schedulers(seed: int) -> None:
    model, init, hold, goal = _tiny_case(seed)
    graph = _graph(model, init)
    mdp = sparse.build(model, init)
    states = mdp.states()
    g, stop = mdp.mask(goal.holds), ~mdp.mask(hold.holds)
    for maximise in (True, False):
        sol = sparse.reach(mdp, g, stop, maximise=maximise)
        assert dict(zip(states, sol.values, strict=True)) == _unbounded(graph, hold, goal, maximise)
        for k in (0, 1, 3):
            sol = sparse.reach(mdp, g, stop, k, maximise=maximise)
            assert sol.method == "exact"
            assert dict(zip(states, sol.values, strict=True)) == _bounded(graph, hold, goal, k, maximise)


PATHS = ("F {g}", "F<=3 {g}", "G !{g}", "G<=2 !{g}", "{h} U {g}", "{h} U<=2 {g}")


def _properties(model: CompoundModel, rng: np.random.Generator) -> list[str]:
    atoms = [str(a) for a in model.vocabulary.atoms]
    g, h = (atoms[int(i)] for i in rng.choice(len(atoms), size=2, replace=False))
    return [f"{q}=? [ {p.format(g=g, h='!' + h)} ]" for p in PATHS for q in ("Pmax", "Pmin")]


@settings(max_examples=scaled(25), deadline=None)
@given(seed=seeds, n_atoms=st.integers(3, 5), kind=st.sampled_from(KINDS))
def test_every_path_operator_agrees_with_the_explicit_engine(seed: int, n_atoms: int, kind: str) -> None:
    model, init, _ = random_case(seed, n_atoms, kind)
    sp_checker, ex_checker = sparse.SparseChecker(), quantitative.ExplicitChecker()
    for text in _properties(model, np.random.default_rng(seed)):
        prop = parse_property(text, model.vocabulary, tuple(model))
        got = quantitative.check(prop, model, init, sp_checker)
        want = quantitative.check(prop, model, init, ex_checker)
        assert isinstance(got.value, Fraction) and got.value == want.value, text
        assert got.guarantee in (quantitative.EXACT, quantitative.VERIFIED)


@needs_storm
@settings(max_examples=scaled(10), deadline=None)
@given(seed=seeds, n_atoms=st.integers(3, 5), kind=st.sampled_from(KINDS))
def test_sparse_equals_storm_exact_and_storm_float_is_within_its_bound(seed: int, n_atoms: int, kind: str) -> None:
    model, init, _ = random_case(seed, n_atoms, kind)
    exact, flt, sp = (checkers.make(n) for n in ("storm", "storm-float", "sparse"))
    for text in _properties(model, np.random.default_rng(seed)):
        prop = parse_property(text, model.vocabulary, tuple(model))
        s = quantitative.check(prop, model, init, exact)
        assert s.guarantee == quantitative.EXACT
        assert quantitative.check(prop, model, init, sp).value == s.value, text
        f = quantitative.check(prop, model, init, flt)
        if prop.query.path.bound is None:  # type: ignore[union-attr]
            assert f.guarantee == quantitative.sound(1e-12)
            assert abs(float(f.value) - float(s.value)) <= 1e-12
        else:
            assert f.guarantee == checkers.FLOAT_STEPS
            assert abs(float(f.value) - float(s.value)) <= 1e-9


# -- the exactness step -------------------------------------------------------------------


def _fractional_case() -> tuple[sparse.SparseMDP, np.ndarray, bool, list[Fraction]]:
    """A tiny random gamble whose Pmax or Pmin is fractional somewhere, and its values."""
    for seed in range(200):
        model, init, _, goal = _tiny_case(seed)
        mdp = sparse.build(model, init)
        g = mdp.mask(goal.holds)
        for maximise in (True, False):
            sol = sparse.reach(mdp, g, maximise=maximise)
            if any(0 < v < 1 for v in sol.values):
                assert sol.method == "verified"
                return mdp, g, maximise, sol.values
    raise AssertionError("no fractional case among 200 seeds")


def test_the_exactness_check_rejects_a_perturbed_value() -> None:
    mdp, g, maximise, values = _fractional_case()
    stop = np.zeros(len(mdp), dtype=bool)
    zero = sparse.zero_states(mdp, g, stop, maximise)
    assert sparse.verify_exact(mdp, g, stop, zero, values, maximise)
    i = next(i for i, v in enumerate(values) if 0 < v < 1)
    for delta in (F(1, 10**6), -F(1, 10**6), F(1, 10**15)):
        wrong = list(values)
        wrong[i] += delta
        assert not sparse.verify_exact(mdp, g, stop, zero, wrong, maximise)
    wrong = list(values)
    wrong[int(np.nonzero(g)[0][0])] = F(1, 2)  # a goal state must have value 1
    assert not sparse.verify_exact(mdp, g, stop, zero, wrong, maximise)


def test_a_wrong_float_solution_falls_back_to_exact_arithmetic(monkeypatch: pytest.MonkeyPatch) -> None:
    mdp, g, maximise, values = _fractional_case()
    real = sparse.float_reach
    calls = []

    def wrong(*args: object, **kwargs: object) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        got, policy, zero = real(*args, **kwargs)  # type: ignore[arg-type]
        bad = got.copy()
        bad[(0 < bad) & (bad < 1)] += 1e-3  # fault injection: a float solver that is off
        calls.append(1)
        return bad, policy, zero

    monkeypatch.setattr(sparse, "float_reach", wrong)
    sol = sparse.reach(mdp, g, maximise=maximise)
    assert calls and sol.method == "exact-fallback" and sol.values == values


def test_a_value_beyond_the_rounding_denominator_is_computed_exactly() -> None:
    mdp, g, maximise, values = _fractional_case()
    big = max(v.denominator for v in values)
    assert big > 1
    sol = sparse.reach(mdp, g, maximise=maximise, denominator=big - 1)
    assert sol.method == "exact-fallback" and sol.values == values


# -- auto, and what verify prints ---------------------------------------------------------


def test_auto_picks_by_the_models_size() -> None:
    big = toggles(11)  # 2,048 reachable states
    small = toggles(3)
    auto = checkers.AutoChecker()
    assert checkers.AUTO_EXPLICIT_STATES < 2**11
    prop = parse_property(f"Pmax=? [ F<=2 {big.vocabulary.atoms[0]} ]", big.vocabulary, tuple(big))
    r = quantitative.check(prop, big, 0, auto)
    assert (r.engine, r.guarantee, r.value) == ("sparse", quantitative.EXACT, F(3, 4))
    assert auto.choices[(id(big), 0)] == "sparse"
    prop = parse_property(
        f"Pmax=? [ F {small.vocabulary.atoms[0]} & {small.vocabulary.atoms[2]} ]", small.vocabulary, tuple(small)
    )
    r = quantitative.check(prop, small, 0, auto)
    assert (r.engine, r.guarantee, r.value) == ("explicit", quantitative.EXACT, 1)
    # The threshold is what decides: lowered below 8 states, the small model goes to sparse.
    low = checkers.AutoChecker(threshold=4)
    assert quantitative.check(prop, small, 0, low).engine == "sparse"


@pytest.mark.parametrize(
    ("engine", "guarantee"),
    [
        ("sparse", "exact: floating result rounded and verified in rationals"),
        ("explicit", "exact (rational)"),
        ("auto", "exact (rational)"),
    ],
)
def test_verify_names_the_engine_and_its_guarantee(
    engine: str, guarantee: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:

    monkeypatch.chdir(ROOT)
    code = cli.main(["verify", TOY, "--engine", engine, "--json", "--property", "Pmax=? [ F on(a,b) ]"])
    record = json.loads(capsys.readouterr().out.splitlines()[0])
    assert code == 0 and record["exact"] == "1"
    assert record["engine"] == ("explicit" if engine == "auto" else engine) and record["guarantee"] == guarantee
    cli.main(["verify", TOY, "--engine", engine, "--property", "Pmax=? [ F<=2 on(a,b) ]"])
    line = capsys.readouterr().out.splitlines()[0]
    assert line.endswith("Pmax = 0.5625 on the model (engine " + record["engine"] + ": exact (rational))")

"""The PRISM export (capver.engines.verification.prism) checked by Storm (stormpy) against capver's
own explicit engine (capver.engines.verification.explicit).

* Storm parses every export and builds exactly the explicit engine's MDP: the same
  reachable states (mapped back through the state valuations), choices and
  transitions — on random models (hypothesis, 3–5 atoms), learned h∧ / h∨, the
  shipped models and names that are PRISM keywords.
* Storm's exact engine (rationals) and the explicit engine give the same Fractions in
  every reachable state for Pmax/Pmin of F<=k and F, and for Rmin/Rmax of the
  executions (∞ alike); G<=k agrees too.  Storm's float engine is within its 1e-6.
* A real ``capver learn`` run (First Responders): both engines agree on h∧ in every
  state and on h∨ from the initial state.
* Hand-solved MDPs give the values worked out on paper in Storm as well.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.paths import ROOT

pytest.importorskip("stormpy", reason="stormpy is not installed: pip install 'stormpy>=2.0'")

from capver import cli
from capver.core.state import Capability, Effect, State
from capver.core.vocabulary import Atom, Literal, Predicate, Vocabulary
from capver.engines.verification import explicit as ex
from capver.engines.verification import storm
from capver.engines.verification.prism import (
    PRISM_KEYWORDS,
    PrismExport,
    export_prism,
    prism_identifier,
    storm_expected_executions,
    storm_model,
    storm_reach,
)
from capver.envs.ppddl import load_task
from capver.io import dsl
from capver.logic.bdd import Cube
from capver.logic.condition import Condition, LogicContext
from capver.model.capability_model import CapabilityModel, CompoundModel, Rule
from tests.engines.verification.test_explicit_engine import KINDS, gamble_model, random_case, seeds, toy_model
from tests.helpers.examples import scaled
from tests.helpers.untraced import untraced

MODELS = sorted((ROOT / "models").glob("*.capm"))
F = Fraction


def built(
    model: CompoundModel, init: State, *, exact: bool = True, deadlock_loop: bool = False
) -> tuple[PrismExport, storm.StormModel, ex.ExplicitMDP]:
    e = export_prism(model, init, deadlock_loop=deadlock_loop)
    sm = storm.build(e.text, exact=exact, state_bits=e.names.variables, init=init)
    return e, sm, ex.explore(model, init)


def assert_same_mdp(sm: storm.StormModel, mdp: ex.ExplicitMDP) -> None:
    assert len(set(sm.states)) == sm.nr_states
    assert set(sm.states) == set(mdp.states)
    assert sm.nr_choices == mdp.nr_choices
    assert sm.nr_transitions == mdp.nr_transitions
    assert sm.states[sm.initial_state] == mdp.states[0]
    assert sorted(sm.states[i] for i in sm.deadlocks()) == sorted(mdp.states[i] for i in mdp.deadlocks())


def assert_agree(storm_values: Mapping[State, storm.Value], mdp: ex.ExplicitMDP, values: Sequence[ex.Value]) -> None:
    """Equal where both are Fractions, within 1e-9 otherwise (∞ only with ∞)."""
    assert set(storm_values) == set(mdp.states)
    for s, v in zip(mdp.states, values, strict=True):
        w = storm_values[s]
        if (isinstance(v, Fraction) and isinstance(w, Fraction)) or math.isinf(v) or math.isinf(w):
            assert v == w, (s, v, w)
        else:
            assert abs(float(v) - float(w)) <= 1e-9, (s, v, w)


def check_everything(model: CompoundModel, init: State, cube: Cube, bounds: Sequence[int] = (0, 1, 3)) -> int:
    """Storm (exact) and the explicit engine (exact) on every query in every state;
    the number of values compared."""
    e, sm, mdp = built(model, init)
    assert_same_mdp(sm, mdp)
    goal = mdp.mask(cube.holds)
    target = e.cube(cube)
    n = 0
    for maximise in (True, False):
        opt = "max" if maximise else "min"
        for k in bounds:
            assert_agree(
                sm.values(f"P{opt}=? [F<={k} {target}]"),
                mdp,
                ex.bounded_reach_values(mdp, goal, k, maximise=maximise, exact=True),
            )
        assert_agree(
            sm.values(f"P{opt}=? [F {target}]"), mdp, ex.reach_values(mdp, goal, maximise=maximise, exact=True)
        )
        assert_agree(
            sm.values(f'R{{"executions"}}{opt}=? [F {target}]'),
            mdp,
            ex.executions_values(mdp, goal, maximise=maximise, exact=True),
        )
        n += (len(bounds) + 2) * len(mdp)
        assert sm.globally(f"!({target})", 2, maximise=maximise) == ex.globally(
            model, init, lambda s: not cube.holds(s), 2, maximise=maximise
        )
    return n


# -- hand-solved ---------------------------------------------------------------------


def test_hand_solved_in_storm() -> None:
    e, sm, mdp = built(toy_model(), 0)
    assert_same_mdp(sm, mdp)
    a = e.literals([Literal(Atom("p0"))])
    assert a == '"p0"'
    assert [sm.reach(a, k) for k in (0, 1, 2, 3)] == [0, F(1, 3), F(2, 3), F(7, 9)]
    assert sm.reach(a) == 1 and sm.reach(a, maximise=False) == 0
    assert sm.expected_executions(a) == F(5, 2)
    assert sm.expected_executions(a, maximise=True) == math.inf
    assert sm.globally(f"!{a}", 2, maximise=False) == F(1, 3)
    e, sm, _ = built(gamble_model(), 0)
    g = e.literals([Literal(Atom("p0"))])
    assert sm.reach(g) == F(2, 3) and sm.reach(g, maximise=False) == F(1, 2)
    assert sm.reach(g, 2) == F(5, 8)
    assert sm.expected_executions(f"{g} | {e.literals([Literal(Atom('p1'))])}", maximise=True) == F(4, 3)
    assert sm.expected_executions(g) == math.inf


def test_prism_text_of_the_toy() -> None:
    text = export_prism(toy_model(), 0).text
    assert "[go] !p0 & !p1 -> 1/3 : (p0'=true) + 2/3 : (p1'=true);" in text
    assert "[fix] !p0 & p1 -> 1/2 : (p1'=false) + 1/2 : (p0'=true);" in text
    assert "[stay] !p0 & !p1 -> 1 : true;" in text
    assert 'label "p0" = p0;' in text
    assert 'rewards "executions"' in text and "  [go] true : 1;" in text
    assert "  [] " not in text  # Storm fixes deadlocks itself
    assert "[] p0 -> true;" in export_prism(toy_model(), 0, deadlock_loop=True).text


# -- random and learned models -------------------------------------------------------


@settings(max_examples=scaled(30))
@given(seed=seeds, n_atoms=st.integers(3, 5), kind=st.sampled_from(KINDS))
def test_storm_and_explicit_agree_on_random_models(seed: int, n_atoms: int, kind: str) -> None:
    model, init, cube = random_case(seed, n_atoms, kind)
    assert check_everything(model, init, cube) > 0


@settings(max_examples=scaled(8))
@given(seed=seeds, n_atoms=st.integers(3, 5), kind=st.sampled_from(KINDS))
def test_deadlock_loop_changes_nothing(seed: int, n_atoms: int, kind: str) -> None:
    model, init, cube = random_case(seed, n_atoms, kind)
    e, sm, mdp = built(model, init, deadlock_loop=True)
    assert sm.deadlocks() == []  # the explicit self-loop: Storm has nothing to fix
    assert set(sm.states) == set(mdp.states) and sm.nr_choices == mdp.nr_choices
    target = e.cube(cube)
    goal = mdp.mask(cube.holds)
    assert_agree(sm.values(f"Pmax=? [F {target}]"), mdp, ex.reach_values(mdp, goal, exact=True))
    assert_agree(sm.values(f'R{{"executions"}}min=? [F {target}]'), mdp, ex.executions_values(mdp, goal, exact=True))


@settings(max_examples=scaled(6))
@given(seed=seeds, n_atoms=st.integers(3, 5), kind=st.sampled_from(KINDS))
def test_float_storm_is_within_its_precision(seed: int, n_atoms: int, kind: str) -> None:
    model, init, cube = random_case(seed, n_atoms, kind)
    e, sm, mdp = built(model, init, exact=False)
    goal = mdp.mask(cube.holds)
    for maximise in (True, False):
        got = sm.reach(e.cube(cube), maximise=maximise)
        assert isinstance(got, float)
        want = ex.reach_values(mdp, goal, maximise=maximise, exact=True)[0]
        assert abs(got - float(want)) <= 1e-5


def test_shipped_models() -> None:
    for path in MODELS:
        model = dsl.read(path).model
        n = len(model.vocabulary)
        for k, init in enumerate((0, model.vocabulary.full_mask, 0b1010101010101 & model.vocabulary.full_mask)):
            cube = Cube(1 << (k % n) | 1 << ((k + 3) % n), 1 << (k % n))
            assert check_everything(model, init, cube, bounds=(2,)) > 0, path


@pytest.fixture(scope="module")
def learned_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("storm") / "run"
    argv = [
        "learn",
        "--agent",
        "lao",
        "--domain",
        "first_responders",
        "--max-steps",
        "100",
        "--eval-sequences",
        "10",
        "--out",
        str(out),
        "--quiet",
    ]
    assert cli.main(argv) == 0
    return out


@pytest.mark.slow
def test_learned_first_responders(learned_run: Path) -> None:
    task = load_task("first_responders", "problem1")
    assert isinstance(task.goal, tuple)  # a conjunction of literals: (positive mask, negative mask)
    pos, neg = task.goal
    goal = Cube(pos | neg, pos)
    # h∧: every query in every state.
    h_and = dsl.read(learned_run / "h_and.capm").model
    init = h_and.vocabulary.state(task.vocabulary.atoms_of(task.initial_state))
    assert check_everything(h_and, init, goal) > 0
    # h∨ (thousands of states): from the initial state, through the io-level functions.
    parsed = dsl.read(learned_run / "h_or.capm")
    h_or = parsed.model
    node = parsed.ctx.bdd.cube(goal)
    # The explicit engine's reference values on h∨'s 4,608 states, exact Fractions, run
    # untraced: the tracer made them 3× slower (9.7 s → 27 s) under .ci/run, and every
    # line they run (explore, bounded_reach_values, reach_values, executions_values) is
    # measured by tests/engines/verification/test_explicit_engine.py (5 s), checked with
    # coverage's data of both.  Storm's side, capver's PRISM export, stays traced.
    with untraced():
        mdp = ex.explore(h_or, init)
        mask = mdp.mask(goal.holds)
        bounded = {m: ex.bounded_reach_values(mdp, mask, 8, maximise=m)[0] for m in (True, False)}
        unbounded = {m: ex.reach_values(mdp, mask, maximise=m)[0] for m in (True, False)}
        executions = ex.executions_values(mdp, mask)[0]
    assert len(mdp) > 100
    for maximise in (True, False):
        assert storm_reach(h_or, init, node, 8, maximise=maximise) == bounded[maximise]
        assert storm_reach(h_or, init, node, maximise=maximise) == unbounded[maximise]
    assert storm_expected_executions(h_or, init, node) == executions


# -- names and errors ----------------------------------------------------------------


def test_keywords_and_odd_names() -> None:
    preds = [Predicate(p) for p in ("init", "module", "F", "true", "deadlock", "x-y", "x_y", "9lives")]
    vocab = Vocabulary.build([*preds, Predicate("on", ("object", "object"))], objects={"a": "object", "b": "object"})
    ctx = LogicContext(vocab)
    n = len(vocab)
    names = ["F", "module", "on(a,b)&~clear(a)", "x y", "min", "rewards"]
    caps = [
        CapabilityModel(
            Capability(c),
            (
                Rule.make(
                    Condition.formula(ctx, ctx.smt.cube(Cube(1 << i, 0))),
                    [(F(1, 2), Effect(1 << i)), (F(1, 2), Effect())],
                ),
            ),
        )
        for i, c in enumerate(names)
    ]
    model = CompoundModel(ctx, caps)
    e, sm, mdp = built(model, 0)
    assert_same_mdp(sm, mdp)
    idents = list(e.names.variables) + list(e.names.actions.values()) + [e.names.module]
    assert len(set(idents)) == len(idents)
    assert not set(idents) & PRISM_KEYWORDS
    assert all(x.isidentifier() for x in idents)
    assert e.names.atoms["x-y"] != e.names.atoms["x_y"]
    assert e.names.actions["on(a,b)&~clear(a)"] == "on_a_b_and_not_clear_a"
    target = e.literals([Literal(Atom("init")), Literal(Atom("module"), False)])
    goal = Cube(0b11, 0b01)
    mask = mdp.mask(goal.holds)
    assert sm.reach(target, 2) == ex.bounded_reach_values(mdp, mask, 2, exact=True)[0]
    assert n == 12 and prism_identifier("") == "x" and prism_identifier("init") == "init_"


def test_one_shot_queries_accept_variables() -> None:
    e = export_prism(gamble_model(), 0)
    # A property over variables works when it is given while building (the one-shot
    # functions do that); a model built for many properties knows only the labels.
    assert storm.pmax_reach(e.text, "p0 & !p1") == F(2, 3)
    assert storm.pmax_reach(e.text, "p0", 1, maximise=False) == F(1, 2)
    assert storm.globally(e.text, "!p1", 1) == F(3, 4)
    assert storm.expected_executions(e.text, "p0 | p1") == 1
    sm = storm.build(e.text)
    assert sm.reach('"p0"') == F(2, 3)
    with pytest.raises(storm.StormError):
        sm.reach("p0 & !p1")  # (a lone "p0" passes: the label of that name is its variable)
    with pytest.raises(storm.StormError):
        sm.values('Pmax=? [F "p0"]')  # built without state_bits
    with pytest.raises(storm.StormError):
        storm.build("mdp\nmodule m\n x : bool init false;\n [a] x -> 2 : (x'=false);\n")
    _, sm2 = storm_model(gamble_model(), 0)
    assert sm2.build_seconds > 0 and sm2.nr_states == 3

"""Planning over capability models (capver.introspection.capability_planning): the
all-outcomes determinisation equals the model's support, plans are valid under the
model, predictions are exact, and executing the plans with the real agent reaches
the goal as often as the model predicts (the E3 idea).

Expected values are derived by hand from models/toy_blocks.capm (see the comments)."""

from __future__ import annotations

import argparse
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capver.agents.model_backed import ModelBackedAgent
from capver.commands import plan as plan_cmd
from capver.core.setting_args import SettingArgs
from capver.core.vocabulary import Vocabulary
from capver.engines.execution import ExecutionBudget
from capver.engines.learning import LearnConfig, Learner, Setting
from capver.errors import IntrospectionError, UsageError
from capver.introspection.capability_planning import (
    CapabilityProblem,
    execute_plan,
    goal_formula,
    goal_literals,
    ground_actions,
    plan_capabilities,
    plan_is_valid,
)
from capver.introspection.fol import And, Lit, Not, Or
from capver.io import dsl
from capver.io.literal_text import parse_dnf
from capver.settings import build_assessment
from tests.helpers.examples import scaled
from tests.helpers.paths import ROOT

TOY = ROOT / "models" / "toy_blocks.capm"
INIT_ATOMS = ["ontable(a)", "ontable(b)", "clear(a)", "clear(b)", "handempty"]
A_ON_B_ATOMS = ["on(a,b)", "ontable(b)", "clear(a)", "handempty"]


@pytest.fixture(scope="module")
def toy():
    return dsl.read(TOY).model


def _model_setting(model, init: int) -> Setting:
    agent = ModelBackedAgent(model)
    return Setting(
        agent,
        agent.simulator(init),
        agent.representation(),
        tuple(agent.capabilities),
        (init,),
        ExecutionBudget(max_steps=2, theta=None),
        symbolic_states=True,
    )


# -- goals ---------------------------------------------------------------------------
def parse_goal(text: str, vocab: Vocabulary, *, what: str = "goal"):
    return goal_formula(parse_dnf(text, vocab, what=what))


def test_goal_text_becomes_a_formula(toy) -> None:
    v = toy.vocabulary
    assert parse_goal("on(a,b) ~clear(a)", v) == And((Lit("on", ("a", "b")), Not(Lit("clear", ("a",)))))
    assert parse_goal("on(a, b)&handempty", v) == And((Lit("on", ("a", "b")), Lit("handempty", ())))
    assert parse_goal("ontable(a) | ~ clear(b) holding(a)", v) == Or(
        (Lit("ontable", ("a",)), And((Not(Lit("clear", ("b",))), Lit("holding", ("a",)))))
    )
    assert goal_literals(["on(a,b)"], ["clear(a)"]) == parse_goal("on(a,b) ~clear(a)", v)
    with pytest.raises(UsageError, match=r"--goal 'on\(a,c\)': column 1: on\(a,c\): unknown object 'c'"):
        parse_goal("on(a,c)", v, what="--goal")
    with pytest.raises(UsageError, match="unknown predicate 'above'"):
        parse_goal("above(a,b)", v)
    with pytest.raises(UsageError, match="unexpected '!!'"):
        parse_goal("on(a,b) !!", v)
    with pytest.raises(UsageError, match="unexpected end of the text"):
        parse_goal("on(a,b) | ", v)
    with pytest.raises(IntrospectionError, match="at least one literal"):
        goal_formula(())


# -- determinisation -------------------------------------------------------------------
def test_ground_actions_of_the_toy_model(toy) -> None:
    # pick-up-a: 2 rules x 2 effects; stack-a-on-b: 1 + 2 effects; put-down: 3 rules
    # x 1 effect; stack-b-on-a: no rule.  Every condition is a single cube.
    acts = ground_actions(toy)
    assert len(acts) == 4 + 3 + 3
    assert {a.name for a in acts} == {"pick-up-a", "stack-a-on-b", "put-down"}
    p = CapabilityProblem.build(toy, parse_goal("on(a,b)", toy.vocabulary), toy.vocabulary.state(INIT_ATOMS))
    v = toy.vocabulary
    # on(b,a) and holding(b) are added by no effect; holding(b) is deleted by put-down.
    assert not p.mutability.can_add(v.atoms[v.index("on(b,a)")])
    assert p.mutability.can_add(v.atoms[v.index("on(a,b)")])
    assert p.mutability.can_delete(v.atoms[v.index("holding(b)")])
    assert not p.mutability.can_add(v.atoms[v.index("holding(b)")])


@settings(max_examples=scaled(60), deadline=None)
@given(s=st.integers(min_value=0, max_value=(1 << 11) - 1))
def test_determinisation_is_the_support_of_the_model(toy, s: int) -> None:
    """For every state and capability: the successors of the applicable ground
    actions are exactly {s′ : Pr_h(s′ | s, c) > 0}, and the reward is ln Pr_h."""
    p = CapabilityProblem.build(toy, parse_goal("on(a,b)", toy.vocabulary), 0)
    for c in toy:
        got = {p.successor(s, a) for a in p.actions(s) if p.ground[a].name == c}
        assert got == set(toy.distribution(s, c))
    for a in p.actions(s):
        s2 = p.successor(s, a)
        assert p.reward(s, a, s2) == pytest.approx(math.log(toy.prob(s, p.ground[a].name, s2)))
    # one action per (capability, successor)
    keys = [(p.ground[a].name, p.successor(s, a)) for a in p.actions(s)]
    assert len(keys) == len(set(keys))


# -- plans on the toy model -------------------------------------------------------------
@pytest.mark.parametrize("planner", ["introspector", "greedy"])
def test_toy_plan_to_on_a_b_and_its_execution(toy, planner: str) -> None:
    v = toy.vocabulary
    init = v.state(INIT_ATOMS)
    plan = plan_capabilities(toy, parse_goal("on(a,b)", v), init, planner=planner, rng=np.random.default_rng(0))
    assert plan.solved and plan_is_valid(toy, plan)
    # The only way: pick a up (3/4), then stack it: rule 1 (p 1) and rule 2 (1/2 on b)
    # both apply, so Pr(on(a,b)) = (1 + 1/2)/2 = 3/4.
    assert plan.capability_names == ("pick-up-a", "stack-a-on-b")
    assert [str(m) for m in plan.milestones] == ["{+on(a,b)}"]
    assert plan.path_probability == Fraction(9, 16)
    assert plan.success_probability == Fraction(9, 16)
    # A failed grasp leaves a on the table, where stack-a-on-b has no rule.
    assert plan.unknown_probability == Fraction(1, 4)
    runs = 600
    report = execute_plan(plan, _model_setting(toy, init), np.random.default_rng(1), model=toy, runs=runs)
    # The agent behaves as the model (and stays put where it has no rule), so the
    # success count is Binomial(runs, 9/16): accept 4 standard deviations.
    sigma = math.sqrt(9 / 16 * 7 / 16 / runs)
    assert abs(report.success_rate - 9 / 16) <= 4 * sigma
    assert report.success_rate >= 9 / 16 - 4 * sigma  # ≈ 0.48
    assert report.on_path == report.successes  # the goal state is reached only along the plan
    assert report.predicted_possible == runs  # every end state (goal, or a on the table) is predicted
    assert report.failed_executions == 0


def test_greedy_finds_the_most_probable_path_to_a_disjunctive_goal(toy) -> None:
    v = toy.vocabulary
    init = v.state(A_ON_B_ATOMS)
    goal = parse_goal("ontable(a) | on(b,a)", v)
    greedy = plan_capabilities(toy, goal, init, planner="greedy", rng=np.random.default_rng(0))
    intro = plan_capabilities(toy, goal, init, planner="introspector", rng=np.random.default_rng(0))
    for p in (greedy, intro):
        assert p.solved and plan_is_valid(toy, p)
        # Nothing adds on(b,a): the only milestone is ontable(a).
        assert [str(m) for m in p.milestones] == ["{+ontable(a)}"]
    # pick-up-a then put-down (2/3 · 1) beats the slip of pick-up-a (1/3).
    assert greedy.capability_names == ("pick-up-a", "put-down")
    assert greedy.path_probability == Fraction(2, 3)
    assert greedy.path_probability >= intro.path_probability
    # Either branch of pick-up-a ends with a on the table after put-down.
    assert greedy.success_probability == 1 and greedy.unknown_probability == 0
    report = execute_plan(greedy, _model_setting(toy, init), np.random.default_rng(2), model=toy, runs=50)
    assert report.success_rate == 1.0


def test_unreachable_and_trivial_goals(toy) -> None:
    v = toy.vocabulary
    init = v.state(INIT_ATOMS)
    rng = np.random.default_rng(0)
    p = plan_capabilities(toy, parse_goal("on(b,a)", v), init, rng=rng)
    assert not p.solved and p.steps == () and p.milestones == ()
    # handempty is deleted by every grasp and holding(a) needs one: no state has both.
    p = plan_capabilities(toy, parse_goal("holding(a) handempty", v), init, rng=rng)
    assert not p.solved
    p = plan_capabilities(toy, parse_goal("ontable(b)", v), init, rng=rng)
    assert p.solved and p.steps == () and p.success_probability == 1
    with pytest.raises(IntrospectionError, match="unknown capability planner 'mcts'"):
        plan_capabilities(toy, parse_goal("ontable(b)", v), init, planner="mcts", rng=rng)
    with pytest.raises(IntrospectionError, match="horizon"):
        CapabilityProblem.build(toy, parse_goal("ontable(b)", v), init, horizon=0)
    with pytest.raises(IntrospectionError, match="unknown predicate"):
        CapabilityProblem.build(toy, Lit("above", ("a", "b")), init)


# -- the LAO* agent on Blocksworld, with a learned h∧ -----------------------------------
def test_plan_with_learned_h_and_on_lao_blocks() -> None:
    rng = np.random.default_rng(0)
    assessment = build_assessment("lao", SettingArgs(domain="blocks"), rng)
    setting = assessment.setting
    learner = Learner(
        assessment.ctx,
        setting,
        LearnConfig(method="mcqs-s", max_steps=60),
        np.random.default_rng(0),
        grow=assessment.grow,
    )
    learner.run()
    h = learner.h_and
    # Blocksworld is deterministic and LAO*'s policy is a function of (intent, state):
    # every observed (s, c) has one outcome, so h∧ is deterministic.
    assert all(p == 1 for cm in h.values() for r in cm.rules for p, _ in r.effects)
    vocab = setting.alpha.vocabulary
    init = setting.alpha(setting.initial_states[0])
    goal = parse_goal("on(a,b)", vocab)
    for planner in ("introspector", "greedy"):
        plan = plan_capabilities(h, goal, init, planner=planner, rng=np.random.default_rng(0))
        assert plan.solved and plan_is_valid(h, plan)
        # Θ = 1 cuts every execution after one PDDL action; on(a,b) from the all-on-table
        # start needs a pick-up and a stack.
        assert len(plan.steps) >= 2
        # Only observed behaviour: every planned step is a transition of D.
        for s, a, s2 in zip(plan.states, plan.steps, plan.states[1:]):
            assert learner.data.count(s, a.name, s2) > 0
        assert plan.success_probability == 1 and plan.unknown_probability == 0
        # Deterministic world, stationary agent, observed transitions: every run must
        # follow the plan and reach the goal.
        report = execute_plan(plan, setting, np.random.default_rng(1), model=h, runs=10)
        assert report.success_rate == 1.0
        assert report.on_path == report.runs == report.predicted_possible
        assert report.failed_executions == 0


# -- the command -----------------------------------------------------------------------
def _cli(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    plan_cmd.add_arguments(parser)
    return parser.parse_args(argv)


def test_plan_command(capsys) -> None:
    init = " ".join(INIT_ATOMS)
    rc = plan_cmd.run(_cli([str(TOY), "--goal", "on(a,b)", "--init", init, "--execute-with", "model", "--runs", "200"]))
    assert rc == 0
    out = capsys.readouterr().out
    assert "milestones (mutations of the goal from the initial state): {+on(a,b)}" in out
    assert "1. pick-up-a" in out and "2. stack-a-on-b" in out
    assert "goal probability 9/16 (0.5625)" in out
    assert "executed 200 times" in out
    rc = plan_cmd.run(_cli([str(TOY), "--goal", "on(b,a)", "--init", init, "--planner", "greedy"]))
    assert rc == 1
    assert "no plan reaches the goal" in capsys.readouterr().out
    with pytest.raises(UsageError, match=r"--goal 'on\(a,b\) ~clear\(c\)': column 10: clear\(c\): unknown object 'c'"):
        plan_cmd.run(_cli([str(TOY), "--goal", "on(a,b) ~clear(c)", "--init", init]))
    with pytest.raises(UsageError, match=r"--init 'ontable\(z\)'"):
        plan_cmd.run(_cli([str(TOY), "--goal", "on(a,b)", "--init", "ontable(z)"]))
    with pytest.raises(FileNotFoundError):  # the CLI turns it into a one-line error
        plan_cmd.run(_cli(["nowhere.capm", "--goal", "on(a,b)"]))

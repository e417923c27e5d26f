"""The environment's cut when one execution takes several environment steps (Θ > 1):
an execution may cross states that break an Until's hold condition without ending in
one, so only the states from which the goal is out of reach altogether are worth 0
(environment.World.stepwise)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import capver
from capver.engines.verification.agent_verdict import AgentVerdict, LatticeVerdict, Tier
from capver.engines.verification.quantitative import QuantitativeResult

UNTIL = "handempty(robot) U on(a,b)"


@pytest.fixture(scope="module")
def theta_inf() -> capver.LearnResult:
    """The LAO* agent on Blocksworld with Θ = ∞: one execution stacks a block, through
    states where the hand is full."""
    return capver.learn(capver.load_setting("lao", domain="blocks", theta=None, seed=1), max_steps=400, seed=1)


def test_an_until_bound_with_several_steps_per_execution_contains_the_observed_run(
    theta_inf: capver.LearnResult,
) -> None:
    witnessed = theta_inf.verify(f"E [ {UNTIL} ]").result
    assert isinstance(witnessed, LatticeVerdict)
    assert (witnessed.verdict, witnessed.tier) == (AgentVerdict.HOLDS, Tier.OBSERVED)
    bounded = theta_inf.verify(f"P<0.5 [ {UNTIL} ]")
    q = bounded.result
    assert isinstance(q, QuantitativeResult) and q.agent is not None
    # The agent was seen to stack a on b in one execution with the hand empty before
    # and after: its Pmax is not 0, and h∧'s value (1) lies inside the bound.
    assert q.agent.upper >= float(q.value) == 1.0
    assert "HOLDS for the agent" not in str(bounded)


def test_with_one_step_per_execution_the_hold_condition_still_cuts() -> None:
    """Θ = 1: every state of an environment run is a state of the agent's run, so a
    state from which the goal needs a full hand first is worth 0 to every agent."""
    result = capver.learn(capver.load_setting("lao", domain="blocks"), max_steps=200, seed=1)
    world = result._world()
    assert world is not None and world.stepwise
    bounded = result.verify(f"Pmax=? [ {UNTIL} ]").result
    assert isinstance(bounded, QuantitativeResult) and bounded.agent is not None
    # From the start, stacking needs a held block: no run keeps the hand empty until on(a,b).
    assert bounded.agent.upper == 0.0


UNTILS = ("handempty(robot) U on(a,b)", "!holding(a) U on(b,a)", "handempty(robot) U<=2 on(c,d)")


@settings(max_examples=6, deadline=None)
@given(st.sampled_from([1, 2, None]), st.integers(0, 50), st.sampled_from(UNTILS))
def test_no_bound_contradicts_an_observed_witness_in_the_same_answer(theta: int | None, seed: int, until: str) -> None:
    """For all Θ and seeds: where E [ ψ U φ ] is witnessed by the data, the agent's Pmax
    of ψ U φ is bounded above by at least h∧'s value of it, which the witness makes
    positive; the environment's cut never takes that away."""
    result = capver.learn(capver.load_setting("lao", domain="blocks", theta=theta, seed=seed), max_steps=150, seed=seed)
    witnessed = result.verify(f"E [ {until} ]").result
    q = result.verify(f"Pmax=? [ {until} ]").result
    assert isinstance(witnessed, LatticeVerdict) and isinstance(q, QuantitativeResult) and q.agent is not None
    if witnessed.tier is Tier.OBSERVED and witnessed.verdict is AgentVerdict.HOLDS:
        assert float(q.value) > 0
        assert q.agent.upper >= float(q.value) - 1e-12

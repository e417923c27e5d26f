"""Plugging in an agent and an environment capver did not write (docs/your_agent.md):
gym_setting checks its inputs at the door, failed executions are never evidence,
a seeded run is reproducible, and a verification prints and serialises as
``capver verify`` does.  The environment is gymnasium's own FrozenLake."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import capver
from capver.errors import AgentFailureError, FailureWarning, SettingWarning, UsageError

RIGHT, DOWN = 2, 1


def lake_alpha(x: Any) -> set[str]:
    lake = x.env.unwrapped
    cell = lake.desc.flat[lake.s]
    return {"goal"} if cell == b"G" else {"hole"} if cell == b"H" else set()


class Walker:
    """Right, right, down, down, ... on the lake; stops on the goal."""

    name = "walker"

    def begin(self, capability: capver.Capability, sim: Any, rng: np.random.Generator) -> None:
        self.k = 0

    def act(self, sim: Any, rng: np.random.Generator) -> int | capver.Stop:
        if "goal" in lake_alpha(sim.get_state()):
            return capver.Stop("goal")
        self.k += 1
        return RIGHT if self.k % 2 else DOWN


class Crasher(Walker):
    name = "crasher"

    def act(self, sim: Any, rng: np.random.Generator) -> int | capver.Stop:
        raise RuntimeError("the policy file is missing")


class SometimesCrashes(Walker):
    """Crashes on every other execution (the learner's generator decides)."""

    name = "sometimes"

    def begin(self, capability: capver.Capability, sim: Any, rng: np.random.Generator) -> None:
        super().begin(capability, sim, rng)
        self.broken = bool(rng.random() < 0.5)

    def act(self, sim: Any, rng: np.random.Generator) -> int | capver.Stop:
        if self.broken:
            raise RuntimeError("flaky")
        return super().act(sim, rng)


def lake(slippery: bool = True) -> gym.Env[Any, Any]:
    return gym.make("FrozenLake-v1", is_slippery=slippery).unwrapped


def setting(agent: Any = None, *, env: Any = None, alpha: Any = lake_alpha, caps: Any = ("goal",), **kw: Any) -> Any:
    kw.setdefault("vocabulary", ["goal", "hole"])
    kw.setdefault("name", "lake")
    return capver.gym_setting(env if env is not None else lake(), agent or Walker(), alpha, caps, **kw)


MISTAKES: list[tuple[dict[str, Any], str]] = [
    ({"alpha": lambda x: "goal"}, "α returned the single atom 'goal'; expected a set or list of atoms"),
    ({"alpha": lambda x: {"nope"}}, "α returned the atom nope, which is not in the vocabulary (2 atoms: goal, hole)"),
    ({"alpha": lambda x: 3.5}, "α returned float; expected a set or list of atoms"),
    ({"caps": ["gaol"]}, "capability 'gaol': intent 'gaol': column 1: unknown predicate 'gaol'"),
    ({"caps": [capver.Capability("g", (capver.Literal(capver.Atom("gaol")),))]}, "its intent names gaol"),
    ({"caps": ["goal", "goal"]}, "capability 'goal' is given twice"),
    ({"caps": []}, "expected at least one capability"),
    ({"step_cap": 0}, "argument 'step_cap': expected a whole number >= 1, got 0"),
    ({"theta": 0}, "argument 'theta': expected a whole number >= 1 or None (∞), got 0"),
    ({"vocabulary": None}, "argument 'vocabulary': expected the Vocabulary of α's atoms"),
    ({"vocabulary": ["p", "p(a)"]}, "predicate 'p' has 0 arguments in an earlier atom"),
    ({"initial_states": []}, "argument 'initial_states': expected at least one state"),
]


@pytest.mark.parametrize(("change", "message"), MISTAKES, ids=[m for _, m in MISTAKES])
def test_a_mistake_is_one_line_before_learning(change: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError) as info:
        setting(**change)
    text = str(info.value)
    assert text.startswith("gym_setting: ") and message in text and "\n" not in text, text


def test_an_agent_without_begin_and_act_is_refused() -> None:
    with pytest.raises(UsageError, match="expected an object with a begin\\(\\) method"):
        setting(agent=object())


def test_alpha_may_return_atoms_strings_or_a_bitset() -> None:
    for returns in (lambda x: ["goal"], lambda x: {capver.Atom("goal")}, lambda x: 1, lambda x: frozenset({"goal"})):
        a = setting(alpha=returns)
        assert a.setting.alpha(a.setting.initial_states[0]) == a.ctx.vocab.state(["goal"])


def test_a_time_limit_is_said_in_one_line_and_restarts_with_every_execution() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        a = setting(env=gym.make("FrozenLake-v1", is_slippery=True, max_episode_steps=7))
    said = [str(w.message) for w in caught if issubclass(w.category, SettingWarning)]
    assert len(said) == 1 and "max_episode_steps=7" in said[0] and "truncated after 7 steps" in said[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FailureWarning)
        result = capver.learn(a, method="random", max_steps=300, seed=0)
    # Truncated executions are failures; no execution ever took more than 7 steps.
    assert all(steps <= 7 for _, steps, _ in result.data.failed())
    assert all("truncated by the environment after 7 steps" in why for _, _, why in result.data.failed())


def test_a_crashing_agent_stops_learning_with_one_line_and_no_verdict() -> None:
    with pytest.raises(AgentFailureError) as info:
        capver.learn(setting(Crasher()), method="mcqs-e", max_steps=2000, seed=0, properties=['"safe": A [ G !hole ]'])
    text = str(info.value)
    assert "capability 'goal': all 10 executions failed" in text and "RuntimeError: the policy file is missing" in text
    assert "\n" not in text


def test_failed_executions_are_never_evidence() -> None:
    """Half the executions crash: they are counted and kept, but D holds only the
    others, so the tiers rest on real behaviour alone."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = capver.learn(setting(SometimesCrashes()), method="random", max_steps=400, seed=1)
    p = result.progress
    assert p.failures > 0 and p.executions == len(result.data) + p.failures
    assert result.data.failure_count == p.failures
    assert sum(1 for w in caught if issubclass(w.category, FailureWarning)) == 1
    # A crash ends an execution where it started: as evidence it would be ⟨s, goal, s⟩.
    start = result.data.vocab.state([])
    assert result.data.count(start, "goal", start) == 0
    assert all(t.s == t.s_next for t, _, _ in result.data.failed())


def test_a_run_of_a_crashing_agent_gives_no_verdict_from_its_failures(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every execution crashes, and learning is let go on: nothing is tried, so
    nothing is observed or confident."""
    from capver.engines import learning
    from capver.engines.verification.agent_verdict import Tier

    monkeypatch.setattr(learning, "FAILURE_LIMIT", 10**6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FailureWarning)
        result = capver.learn(setting(Crasher()), method="random", max_queries=3, seed=0)
    assert len(result.data) == 0 and result.progress.failures == result.progress.executions > 10
    checked = result.verify('"safe": A [ G !hole ]')
    assert checked.result.tier not in (Tier.OBSERVED, Tier.CONFIDENT)
    assert "HOLDS" not in str(checked)


@settings(max_examples=5, deadline=None)
@given(st.integers(0, 2**16))
def test_a_seeded_run_is_reproducible_bit_for_bit(seed: int) -> None:
    """For all seeds: the same seed, the same data (fresh draws after every restore)."""
    runs = [capver.learn(setting(), method="mcqs-s", max_steps=150, seed=seed) for _ in range(2)]
    assert sorted(runs[0].data.items()) == sorted(runs[1].data.items())
    assert runs[0].progress.steps == runs[1].progress.steps


def test_a_slippery_lake_is_learned_stochastic() -> None:
    """The walker's first move slips: from the start, h∧ sees more than one outcome."""
    result = capver.learn(setting(theta=None), method="random", max_steps=600, seed=0)
    start = result.data.vocab.state([])
    assert len(result.data.successors(start, "goal")) == 2  # the goal and a hole


def test_several_initial_states_are_not_guessed_between() -> None:
    sim = capver.GymSimulator(lake(), seed=0)
    x0 = sim.reset(seed=0)
    sim.env.unwrapped.s = 5  # the hole at row 1, column 1
    hole = sim.get_state()
    a = capver.gym_setting(sim, Walker(), lake_alpha, ["goal"], initial_states=[x0, hole], vocabulary=["goal", "hole"])
    result = capver.learn(a, method="random", max_steps=100, seed=0)
    with pytest.raises(UsageError, match="the setting has 2 initial states"):
        result.verify("E [ F goal ]")
    assert "HOLDS" in str(result.verify("E [ F hole ]", init="hole"))
    assert str(result.verify("A [ G !hole ]", init="")).startswith("p1: A [ G !hole ] —")


def test_a_verification_prints_and_serialises_as_capver_verify(tmp_path: Path) -> None:
    import subprocess
    import sys

    result = capver.learn(setting(), method="mcqs-e", max_steps=400, seed=0)
    run = result.save(tmp_path / "run")
    for prop in ("E [ F goal ] {caps: goal}", "Pmax=? [ F<=1 goal ] {caps: goal}"):
        checked = result.verify(prop)
        cli = subprocess.run(
            [sys.executable, "-m", "capver", "verify", str(run.path), "--property", prop, "--json"],
            capture_output=True,
            text=True,
            check=False,
        )
        record = json.loads(cli.stdout.splitlines()[0])
        mine = checked.to_json()
        # Everything but the time the check took.
        assert {k: v for k, v in record.items() if k in mine and k != "seconds"} == {
            k: v for k, v in mine.items() if k != "seconds"
        }, (record, mine)
        text = subprocess.run(
            [sys.executable, "-m", "capver", "verify", str(run.path), "--property", prop],
            capture_output=True,
            text=True,
            check=False,
        ).stdout
        assert text.startswith(str(checked)), (text, str(checked))

"""Every simulator capver has keeps its randomness across a restore (section 2: the
simulator can be reverted to any earlier state; reverting restores the *state*, never
the random draws that followed it).

One shared test: from a restored state, repeated steps must give the outcomes the
environment's own dynamics give, with their frequencies.  The truth is the
environment's exact distribution where it has one (gymnasium's ``P`` for FrozenLake,
the PPDDL task's outcomes, the tabletop's success probability), else the outcomes of
independently seeded fresh copies (Crafter), and the one outcome of a deterministic
simulator (MiniGrid, the kitchen, the symbolic simulator).  The test is a χ² test at
p < 1e-6 on seeded draws, so it cannot flake; a snapshot that carries its generator
(the deep copy before it was re-seeded) replays one outcome and fails it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass
from typing import Any
from unittest import mock

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.toy_text.frozen_lake import FrozenLakeEnv
from scipy import stats

from capver.envs.base import Simulator
from capver.envs.gym_adapter import DeepcopyCodec, GymSimulator, StateApiCodec

DRAWS = 400
RIGHT = 2


@dataclass(frozen=True)
class Case:
    """A simulator in a state x, an action, how to read an outcome, and the truth:
    ``expected`` maps outcomes to probabilities, or ``fresh`` draws one outcome from a
    freshly seeded copy."""

    sim: Simulator[Any]
    x: Any
    action: Any
    outcome: Callable[[Simulator[Any], Any], Hashable]
    expected: dict[Hashable, float] | None = None
    fresh: Callable[[int], Hashable] | None = None


class LakeWithStateApi(FrozenLakeEnv):
    """gymnasium's FrozenLake with a state API (its cell), for :class:`StateApiCodec`."""

    def get_state(self) -> int:
        return int(self.s)

    def set_state(self, s: int) -> None:
        self.s = s


def _lake_truth(env: gym.Env[Any, Any], cell: int, action: int) -> dict[Hashable, float]:
    out: Counter[Hashable] = Counter()
    for p, s2, _, _ in env.unwrapped.P[cell][action]:  # type: ignore[attr-defined]
        out[s2] += p
    return dict(out)


def _lake_cell(sim: Simulator[Any], _: Any) -> Hashable:
    return int(sim.env.unwrapped.s)  # type: ignore[attr-defined]


def frozen_lake_deepcopy() -> Case:
    env = gym.make("FrozenLake-v1", is_slippery=True)  # TimeLimit, OrderEnforcing, checker: the user's path
    sim = GymSimulator(env, seed=1)
    assert isinstance(sim.codec, DeepcopyCodec)
    x = sim.reset(seed=1)
    return Case(sim, x, RIGHT, _lake_cell, _lake_truth(env, 0, RIGHT))


def frozen_lake_state_api() -> Case:
    env = LakeWithStateApi(is_slippery=True)
    sim = GymSimulator(env, seed=2)
    assert isinstance(sim.codec, StateApiCodec)
    sim.reset(seed=2)
    return Case(sim, 6, RIGHT, _lake_cell, _lake_truth(env, 6, RIGHT))


def ppddl() -> Case:
    from capver.envs.ppddl import PPDDLSimulator, load_task

    task = load_task("tireworld", "problem1")
    sim = PPDDLSimulator(task, seed=3)
    s = task.initial_state
    # The first state on a fixed walk with a stochastic action (tireworld's flat tyre).
    rng = np.random.default_rng(0)
    for _ in range(50):
        for a in task.applicable(s):
            if len(task.outcomes(s, a)) > 1:
                return Case(sim, s, a, lambda _, y: y, {t: float(p) for p, t in task.outcomes(s, a)})
        actions = task.applicable(s)
        s = task.sample(s, actions[int(rng.integers(len(actions)))], rng)
    raise AssertionError("no stochastic action on the walk")


def tabletop() -> Case:
    from capver.envs.tabletop import (
        TabletopConfig,
        TabletopSimulator,
        all_skills,
        apply_skill,
        feasible,
        random_scene,
        success_probability,
    )

    config = TabletopConfig()
    rng = np.random.default_rng(4)
    for _ in range(100):
        x = random_scene(config, rng)
        for k in all_skills(config):
            p = success_probability(config, x, k) if feasible(config, x, k) else 0.0
            if 0.0 < p < 1.0:
                works = apply_skill(config, x, k, _Always(0.0))
                fails = apply_skill(config, x, k, _Always(0.999999))
                return Case(TabletopSimulator(config, x, seed=4), x, k, lambda _, y: y, {works: p, fails: 1 - p})
    raise AssertionError("no uncertain skill in 100 scenes")


class _Always:
    """A generator whose ``random()`` always returns ``u``: the success draw forced."""

    def __init__(self, u: float) -> None:
        self.u = u

    def random(self) -> float:
        return self.u


def crafter() -> Case:
    from capver.envs.crafter_env import CrafterSimulator

    noop = 0
    sim = CrafterSimulator(world_seed=0, dice_seed=5)
    x = sim.initial_state

    def objects(s: Simulator[Any], y: Any) -> Hashable:
        return tuple(o[:3] for o in y.objects)  # which creatures stand where

    # crafter imported above, without gym, by capver's CrafterSimulator
    from crafter import constants, engine  # type: ignore[import-untyped]

    # Each crafter.Env reads its PNG textures from disk (imageio): 9.2 of the 9.5 s the
    # 400 fresh copies below took (this case took 19 s in CI's last run, under coverage).
    # Textures only draw observation images, never the world, the creatures or the dice
    # the outcome depends on, so the copies share one set read here: each still generates
    # its own world and draws from its own seed (the same outcomes, measured).
    textures = engine.Textures(constants.root / "assets")

    def fresh(i: int) -> Hashable:
        with mock.patch.object(engine, "Textures", lambda _directory: textures):
            other = CrafterSimulator(world_seed=0, dice_seed=10_000 + i)
        return objects(other, other.step(noop))

    return Case(sim, x, noop, objects, fresh=fresh)


def minigrid() -> Case:
    from capver.envs.minigrid_env import minigrid_simulator

    sim = minigrid_simulator()
    x = sim.reset(seed=6)
    sim.set_state(x)
    after = sim.step(2)
    return Case(sim, x, 2, lambda _, y: y, {after: 1.0})


def kitchen() -> Case:
    from capver.envs.kitchen import kitchen_simulator

    sim = kitchen_simulator()
    x = sim.reset(seed=7)
    sim.set_state(x)
    action = sim.available_actions()[0]
    after = sim.step(action)
    return Case(sim, x, action, lambda _, y: y, {after: 1.0})


def symbolic() -> Case:
    from capver.core.state import Effect
    from capver.envs.symbolic import SymbolicSimulator
    from capver.synthetic import propositional_vocabulary

    effect = Effect(add=0b10, delete=0b01)
    sim = SymbolicSimulator(propositional_vocabulary(3), 0b001, [effect])
    return Case(sim, 0b001, effect, lambda _, y: y, {0b010: 1.0})


CASES: dict[str, Callable[[], Case]] = {
    "gymnasium FrozenLake, deep copy": frozen_lake_deepcopy,
    "gymnasium FrozenLake, state API": frozen_lake_state_api,
    "PPDDL tireworld": ppddl,
    "tabletop": tabletop,
    "Crafter": crafter,
    "MiniGrid": minigrid,
    "kitchen": kitchen,
    "symbolic": symbolic,
}


def draws(case: Case, n: int = DRAWS) -> Iterator[Hashable]:
    """``n`` steps of ``case.action``, each from a fresh restore of ``case.x``."""
    for _ in range(n):
        case.sim.set_state(case.x)
        y = case.sim.step(case.action)
        yield case.outcome(case.sim, y)


def chi_square_p(seen: Counter[Hashable], expected: dict[Hashable, float]) -> float:
    assert set(seen) <= set(expected), f"outcomes the environment cannot produce: {set(seen) - set(expected)}"
    keys = sorted(expected, key=repr)
    if len(keys) == 1:
        return 1.0
    observed = np.array([seen[k] for k in keys], dtype=float)
    return float(stats.chisquare(observed, np.array([expected[k] for k in keys]) * observed.sum()).pvalue)


def homogeneity_p(a: Counter[Hashable], b: Counter[Hashable]) -> float:
    """χ² test that two samples come from one distribution (outcomes seen fewer than
    10 times in both pooled into one cell)."""
    common = [k for k in set(a) | set(b) if a[k] + b[k] >= 10]
    rows = [[a[k] for k in common] + [sum(a.values()) - sum(a[k] for k in common)]]
    rows.append([b[k] for k in common] + [sum(b.values()) - sum(b[k] for k in common)])
    table = np.array(rows)
    table = table[:, table.sum(axis=0) > 0]
    if table.shape[1] < 2:
        return 1.0
    return float(stats.chi2_contingency(table).pvalue)


@pytest.mark.parametrize("name", list(CASES))
def test_a_restored_state_steps_with_the_environments_own_frequencies(name: str) -> None:
    case = CASES[name]()
    seen = Counter(draws(case))
    if case.expected is not None:
        if len(case.expected) > 1:
            assert len(seen) > 1, f"{name}: every restore gave {next(iter(seen))!r}: the draws were replayed"
        assert chi_square_p(seen, case.expected) > 1e-6, (name, seen, case.expected)
    else:
        assert case.fresh is not None
        truth = Counter(case.fresh(i) for i in range(DRAWS))
        assert len(seen) > 1 and len(truth) > 1, f"{name}: one outcome only"
        assert homogeneity_p(seen, truth) > 1e-6, (name, seen.most_common(5), truth.most_common(5))


@pytest.mark.parametrize("name", ["gymnasium FrozenLake, deep copy", "gymnasium FrozenLake, state API", "Crafter"])
def test_a_seeded_simulator_replays_its_run_bit_for_bit(name: str) -> None:
    """Fresh randomness after a restore, and the same randomness for the same seed."""
    first, second = CASES[name](), CASES[name]()
    assert list(draws(first, 60)) == list(draws(second, 60))


def test_time_limits_restart_at_every_restore() -> None:
    """A TimeLimit's counter is per execution: a chain of restores and steps never
    truncates a step that is within the limit of its own execution."""
    env = gym.make("FrozenLake-v1", is_slippery=False, max_episode_steps=3)
    sim = GymSimulator(env, seed=0)
    x = sim.reset(seed=0)
    for _ in range(10):
        sim.set_state(x)
        sim.step(RIGHT)
        sim.step(RIGHT)
        assert not sim.truncated and not sim.episode_over
    sim.step(1)  # the third step of this execution reaches the limit
    assert sim.truncated and sim.episode_over and sim.available_actions() == ()

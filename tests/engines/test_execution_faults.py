"""A fault during a capability execution is recorded against the part that raised
it (section 3.3's execution): the agent, the simulator or the representation α.
The real LAO* agent and PPDDL simulator run; the faults are injected by thin
wrappers, since the real parts do not fail on their own."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from capver.agents.lao_agent import LAOAgent
from capver.engines.discovery import discover
from capver.engines.execution import ExecutionBudget, execute
from capver.envs.ppddl import AtomsRepresentation, PPDDLSimulator, load_task


class _BrokenStep:
    """The real simulator, whose step raises after ``after`` good steps."""

    def __init__(self, sim: PPDDLSimulator, after: int) -> None:
        self.sim, self.after = sim, after

    def __getattr__(self, name: str) -> Any:
        return getattr(self.sim, name)

    def step(self, action: Any) -> Any:
        if self.after == 0:
            raise RuntimeError("simulator crashed")
        self.after -= 1
        return self.sim.step(action)


class _BrokenAlpha:
    """The real α, which raises on the ``after``-th call."""

    def __init__(self, alpha: AtomsRepresentation, after: int) -> None:
        self.alpha, self.after = alpha, after
        self.vocabulary = alpha.vocabulary

    def __call__(self, x: Any) -> int:
        if self.after == 0:
            raise KeyError("unknown pixel")
        self.after -= 1
        return self.alpha(x)


@pytest.fixture(scope="module")
def blocks() -> tuple[Any, ...]:
    task = load_task("blocks", "problem1")
    sim = PPDDLSimulator(task, seed=0)
    alpha = AtomsRepresentation(task)
    caps = discover(sim, alpha, np.random.default_rng(0), n_walks=3, length=20).capabilities
    # a capability the agent can act on from the initial state (its first step is an action)
    return task, sim, alpha, caps


def _first_acting(task: Any, sim: Any, alpha: Any, caps: Any) -> Any:
    for c in caps:
        ex = execute(
            LAOAgent(task), sim, alpha, c, task.initial_state, np.random.default_rng(0), ExecutionBudget(theta=None)
        )
        if ex.steps > 0 and not ex.failed:
            return c
    raise AssertionError("no capability acts from the initial state")


def test_a_simulator_fault_is_the_simulator_s(blocks: tuple[Any, ...]) -> None:
    task, sim, alpha, caps = blocks
    c = _first_acting(task, sim, alpha, caps)
    ex = execute(
        LAOAgent(task),
        _BrokenStep(sim, 0),
        alpha,
        c,
        task.initial_state,
        np.random.default_rng(0),
        ExecutionBudget(theta=None),
    )
    assert ex.failure == "simulator raised RuntimeError: simulator crashed"
    assert ex.steps == 0


def test_an_alpha_fault_is_alpha_s(blocks: tuple[Any, ...]) -> None:
    task, sim, alpha, caps = blocks
    c = _first_acting(task, sim, alpha, caps)
    # α's first call (the start state) succeeds; the one after the first step raises.
    ex = execute(
        LAOAgent(task),
        sim,
        _BrokenAlpha(alpha, 1),
        c,
        task.initial_state,
        np.random.default_rng(0),
        ExecutionBudget(theta=None),
    )
    assert ex.failure == "representation α raised KeyError: 'unknown pixel'"
    assert ex.steps == 1

"""Executing a capability and turning the trajectory into a transition (section 3.3;
the earlier paper's "trajectory extraction").

The agent acts from x₀; the trajectory x₀, x₁, …, x_k is abstracted with α, runs of
identical symbolic states are collapsed, and the run is cut once Θ symbolic changes
have happened (temporal length Θ; ``None`` means ∞).  The result is ⟨s₀, c, s_j⟩
plus the number of simulator steps taken, the paper's cost measure.

An execution also ends, without fault, when an episodic simulator
(:class:`~capver.envs.base.Episodic`, e.g. a gymnasium environment) reports that its
episode ended: nothing the agent does can change the state after that.  A truncating
step (a ``TimeLimit``) ends it as a failure, like the step budget.

Faults never escape: an agent that raises, returns an action the simulator rejects,
or exceeds its step or wall-clock budget yields an :class:`Execution` whose
``failure`` says why; its transition is the abstraction of the states it did reach.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from capver.agents.base import Agent, Stop
from capver.core.state import Capability, State, Transition
from capver.envs.base import Episodic, Representation, Simulator


class _DeadlinePassed(Exception):
    pass


class _AgentWorker:
    """Runs the agent's begin/act calls of one execution in a daemon thread so that a
    call that hangs can be abandoned at the wall-clock deadline.  Only agent code
    runs there: the executor alone steps the simulator, so an abandoned call cannot
    touch later states."""

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self._calls: queue.SimpleQueue[Callable[[], Any] | None] = queue.SimpleQueue()
        self._results: queue.SimpleQueue[tuple[bool, Any]] = queue.SimpleQueue()
        threading.Thread(target=self._serve, name="capver-agent", daemon=True).start()

    def _serve(self) -> None:
        while (fn := self._calls.get()) is not None:
            try:
                self._results.put((True, fn()))
            except BaseException as exc:  # noqa: BLE001 - re-raised in the executor's thread
                self._results.put((False, exc))

    def call(self, fn: Callable[[], Any]) -> Any:
        self._calls.put(fn)
        try:
            ok, value = self._results.get(timeout=max(0.0, self.deadline - time.monotonic()))
        except queue.Empty:
            raise _DeadlinePassed from None
        if not ok:
            raise value
        return value

    def close(self) -> None:
        self._calls.put(None)  # a hung worker never reads it and stays abandoned


class _Fault(Exception):
    """An exception raised inside one part of an execution (the agent, the simulator
    or α), with the part named."""


T = TypeVar("T")


def _attributed(who: str, fn: Callable[[], T]) -> T:
    try:
        return fn()
    except (_DeadlinePassed, _Fault):
        raise
    except Exception as exc:  # any fault of the part is recorded, not raised
        raise _Fault(f"{who} raised {type(exc).__name__}: {exc}") from exc


@dataclass(frozen=True, slots=True)
class ExecutionBudget:
    """Per-execution limits: low-level steps, temporal length Θ, wall-clock seconds."""

    max_steps: int = 200
    theta: int | None = 1
    max_seconds: float | None = None


@dataclass(frozen=True, slots=True)
class Execution:
    """The outcome of one capability execution."""

    transition: Transition
    steps: int
    symbolic_trajectory: tuple[State, ...]
    stop_reason: str
    failure: str | None = None
    crashed: bool = False  # failed by a fault (something raised, an invalid action), not a budget

    @property
    def failed(self) -> bool:
        return self.failure is not None


def execute(
    agent: Agent,
    sim: Simulator[Any],
    alpha: Representation[Any],
    capability: Capability,
    x0: Any,
    rng: np.random.Generator,
    budget: ExecutionBudget = ExecutionBudget(),
) -> Execution:
    """Run ``agent`` on ``capability`` from environment state ``x0``."""
    sim.set_state(x0)
    s0 = alpha(sim.get_state())
    traj = [s0]
    steps = 0
    failure: str | None = None
    crashed = False
    reason = "done"
    deadline = None if budget.max_seconds is None else time.monotonic() + budget.max_seconds
    # Only with a wall-clock budget do agent calls go through a worker thread, so the
    # common case pays nothing for it.
    worker = None if deadline is None else _AgentWorker(deadline)

    def agent_call(fn: Callable[[], T]) -> T:
        return _attributed("agent", fn if worker is None else lambda: worker.call(fn))

    episodic = sim if isinstance(sim, Episodic) else None
    try:
        agent_call(lambda: agent.begin(capability, sim, rng))
        while True:
            if episodic is not None and steps and episodic.episode_over:
                if episodic.truncated:
                    failure = reason = f"truncated by the environment after {steps} steps (its time limit)"
                else:
                    reason = "the episode ended"
                break
            if budget.theta is not None and len(traj) - 1 >= budget.theta:
                reason = "theta"
                break
            if steps >= budget.max_steps:
                failure = reason = f"step budget of {budget.max_steps} exhausted"
                break
            if deadline is not None and time.monotonic() > deadline:
                failure = reason = f"wall-clock budget of {budget.max_seconds}s exhausted"
                break
            action = agent_call(lambda: agent.act(sim, rng))
            if isinstance(action, Stop):
                reason = action.reason
                break
            if action not in _attributed("simulator", sim.available_actions):
                failure = reason = f"invalid action {action!r}"
                crashed = True
                break
            x = _attributed("simulator", lambda: sim.step(action))  # noqa: B023 - called at once
            steps += 1
            s = _attributed("representation α", lambda: alpha(x))  # noqa: B023 - called at once
            if s != traj[-1]:
                traj.append(s)
    except _DeadlinePassed:
        failure = reason = f"wall-clock budget of {budget.max_seconds}s exhausted"
    except _Fault as fault:
        # Recorded, not raised: the run goes on, and the words say whose fault it was.
        failure = reason = str(fault)
        crashed = True
    finally:
        if worker is not None:
            worker.close()
    return Execution(Transition(s0, capability.name, traj[-1]), steps, tuple(traj), reason, failure, crashed)


def derived_streams(entropy: tuple[int, ...]) -> tuple[np.random.Generator, int]:
    """The agent's Generator and the simulator's reset seed of one unit of parallel
    work (an execution of a query, a chunk of D′), from its own entropy words.

    Work run on several workers cannot share one stream of random choices: the
    stream would be consumed in completion order.  Each unit therefore gets two
    independent children of ``SeedSequence(entropy)``, and reseeds the simulator
    with the second (``reset(seed)`` seeds a simulator's own randomness, e.g. the
    PPDDL outcome sampler), so its outcome depends on its entropy alone."""
    agent_seq, sim_seq = np.random.SeedSequence(entropy).spawn(2)
    return np.random.default_rng(agent_seq), int(sim_seq.generate_state(1)[0])

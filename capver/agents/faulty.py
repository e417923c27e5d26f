"""Fault-injecting wrappers around a real agent, for testing that an assessment
survives misbehaving BBAIs (section 3.3, robust query execution).

Each wrapper delegates to the wrapped agent and injects one kind of fault: it
raises, never stops (runs past the step budget), is slow (runs past the
wall-clock budget), hangs inside ``act``, or returns an action the simulator does
not offer.  These are the only stand-ins the test-suite uses; the agent underneath
is always a real one.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np

from capver.agents.base import Agent, Stop
from capver.core.state import Capability
from capver.envs.base import Action, Simulator


class InjectedFault(RuntimeError):
    """The exception :class:`RaisingAgent` raises."""


class RaisingAgent:
    """Raises :class:`InjectedFault` on its ``at``-th ``act`` call (0: in ``begin``)."""

    def __init__(self, inner: Agent, at: int = 1, message: str = "injected fault") -> None:
        self.inner = inner
        self.name = f"raising({inner.name})"
        self.at = at
        self.message = message
        self._calls = 0

    def begin(self, capability: Capability, sim: Simulator[Any], rng: np.random.Generator) -> None:
        self._calls = 0
        if self.at == 0:
            raise InjectedFault(self.message)
        self.inner.begin(capability, sim, rng)

    def act(self, sim: Simulator[Any], rng: np.random.Generator) -> Action | Stop:
        self._calls += 1
        if self._calls == self.at:
            raise InjectedFault(self.message)
        return self.inner.act(sim, rng)


class RunawayAgent:
    """Ignores the wrapped agent's ``Stop`` and keeps taking the first available
    action forever, so only the executor's step budget (or Θ) ends the run."""

    def __init__(self, inner: Agent) -> None:
        self.inner = inner
        self.name = f"runaway({inner.name})"

    def begin(self, capability: Capability, sim: Simulator[Any], rng: np.random.Generator) -> None:
        self.inner.begin(capability, sim, rng)

    def act(self, sim: Simulator[Any], rng: np.random.Generator) -> Action | Stop:
        action = self.inner.act(sim, rng)
        if isinstance(action, Stop):
            available = sim.available_actions()
            if not available:
                return action
            return available[0]
        return action


class SlowAgent:
    """Sleeps ``delay`` seconds before every ``act`` and ignores ``Stop`` like
    :class:`RunawayAgent`, so the wall-clock budget is what ends the run."""

    def __init__(self, inner: Agent, delay: float) -> None:
        self.inner = RunawayAgent(inner)
        self.name = f"slow({inner.name})"
        self.delay = delay

    def begin(self, capability: Capability, sim: Simulator[Any], rng: np.random.Generator) -> None:
        self.inner.begin(capability, sim, rng)

    def act(self, sim: Simulator[Any], rng: np.random.Generator) -> Action | Stop:
        time.sleep(self.delay)
        return self.inner.act(sim, rng)


class HangingAgent:
    """Blocks inside ``act`` until :meth:`release` is called or ``hang_seconds``
    pass — a fault a deadline checked *between* ``act`` calls cannot interrupt."""

    def __init__(self, inner: Agent, hang_seconds: float = 3600.0) -> None:
        self.inner = inner
        self.name = f"hanging({inner.name})"
        self.hang_seconds = hang_seconds
        self._released = threading.Event()

    def release(self) -> None:
        self._released.set()

    def begin(self, capability: Capability, sim: Simulator[Any], rng: np.random.Generator) -> None:
        self.inner.begin(capability, sim, rng)

    def act(self, sim: Simulator[Any], rng: np.random.Generator) -> Action | Stop:
        self._released.wait(self.hang_seconds)
        return self.inner.act(sim, rng)


class InvalidActionAgent:
    """Returns ``bogus`` (by default an object no simulator offers) on its
    ``at``-th ``act`` call instead of the wrapped agent's choice."""

    def __init__(self, inner: Agent, at: int = 1, bogus: Action = "<no such action>") -> None:
        self.inner = inner
        self.name = f"invalid({inner.name})"
        self.at = at
        self.bogus = bogus
        self._calls = 0

    def begin(self, capability: Capability, sim: Simulator[Any], rng: np.random.Generator) -> None:
        self._calls = 0
        self.inner.begin(capability, sim, rng)

    def act(self, sim: Simulator[Any], rng: np.random.Generator) -> Action | Stop:
        self._calls += 1
        if self._calls == self.at:
            return self.bogus
        return self.inner.act(sim, rng)

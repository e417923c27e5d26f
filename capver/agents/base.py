"""Black-box agents (BBAIs) and their capabilities (section 2.1).

An agent receives an intent (a conjunction of ground literals, carried by a
:class:`~capver.core.state.Capability`) and then, step by step, chooses low-level
actions in the simulator until it decides to stop.  The assessor sees only the
simulator states it passes through (see :mod:`capver.engines.execution`).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from capver.core.state import Capability
from capver.envs.base import Action, Simulator


class Stop:
    """The agent's termination β_i fired (it believes the intent holds, or it gives
    up).  ``reason`` is kept in the execution record."""

    __slots__ = ("reason",)

    def __init__(self, reason: str = "done") -> None:
        self.reason = reason

    def __repr__(self) -> str:
        return f"Stop({self.reason!r})"


@runtime_checkable
class Agent(Protocol):
    """A black-box agent that pursues intents in a simulator."""

    name: str

    def begin(self, capability: Capability, sim: Simulator[Any], rng: np.random.Generator) -> None:
        """Start pursuing ``capability.intent`` from the simulator's current state."""
        ...

    def act(self, sim: Simulator[Any], rng: np.random.Generator) -> Action | Stop:
        """The next low-level action, or :class:`Stop`."""
        ...

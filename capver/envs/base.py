"""The simulator S_E and representation function α of section 2.

MCQS assumes only that the simulator can be reset, reverted to any earlier state,
stepped, and asked for its available actions; and that α maps an environment state
x ∈ X to the set of ground atoms true in it (a bitset over a vocabulary).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, Protocol, runtime_checkable

# typing.TypeVar takes a default (PEP 696) only from Python 3.13 on.
from typing_extensions import TypeVar

from capver.core.state import State
from capver.core.vocabulary import Vocabulary

X = TypeVar("X")
X_contra = TypeVar("X_contra", contravariant=True)
Action = Hashable
A = TypeVar("A", bound=Hashable, default=Any)
"""The action type of a simulator.  A simulator accepts only its own kind of action
(a PPDDL simulator ground actions, a symbolic one effects), so ``step`` cannot take
every Hashable; ``Simulator[X]`` leaves it unspecified (Any)."""


@runtime_checkable
class Simulator(Protocol[X, A]):
    """A resettable, revertible simulator of environment states X, stepped by
    actions A (those :meth:`available_actions` returns)."""

    def reset(self, seed: int | None = None) -> X:
        """Start an episode; returns the initial state."""
        ...

    def get_state(self) -> X:
        """A snapshot of the current state that :meth:`set_state` accepts later."""
        ...

    def set_state(self, x: X) -> None:
        """Revert to a snapshot taken earlier."""
        ...

    def step(self, action: A) -> X:
        """Apply a low-level action; returns the next state."""
        ...

    def available_actions(self) -> Sequence[A]:
        """The actions that may be passed to :meth:`step` in the current state."""
        ...


@runtime_checkable
class Episodic(Protocol):
    """A simulator whose episodes end (gymnasium's ``terminated`` / ``truncated``):
    an execution stops once :attr:`episode_over` is true after a step."""

    @property
    def episode_over(self) -> bool: ...

    @property
    def truncated(self) -> bool:
        """The episode was cut short (a time limit), not ended by the environment."""
        ...


@runtime_checkable
class Representation(Protocol[X_contra]):
    """α : X → S."""

    @property
    def vocabulary(self) -> Vocabulary: ...

    def __call__(self, x: X_contra) -> State: ...


class InvalidActionError(Exception):
    """Raised by a simulator's ``step`` for an action that is not available.

    Deliberately not a CapverError: it is the agent's fault, recorded as a failed
    execution by the executor, never shown to a user as a capver bug."""

    def __init__(self, action: Any) -> None:
        super().__init__(f"action {action!r} is not available in this state")
        self.action = action

"""Adapter from a gymnasium environment to the simulator S_E of section 2.

Section 2 asks only that the simulator can be reset, reverted to any previously
encountered state, stepped, and asked for its available actions.  Gymnasium gives
reset/step; reverting needs a *snapshot* of the environment, which this module takes
through a :class:`SnapshotCodec`:

* :class:`StateApiCodec` uses the environment's own state API (methods such as
  ``get_state``/``set_state`` or ALE's ``clone_state``/``restore_state``) - fast and
  exact when the environment has one;
* :class:`DeepcopyCodec` deep-copies the whole wrapper chain - works for any
  environment but is slow (about 1 ms for a MiniGrid grid; see ``capver bench
  minigrid``).

:func:`codec_for` picks the state API when present, else deep copy.

A snapshot is the environment's *state*, never its dice.  A deep copy would also copy
the random generator, so every execution from a restored state would replay the same
draws and a slippery world would look deterministic.  :class:`GymSimulator` therefore
re-seeds the environment's generators (``np_random`` and its spaces') after every
restore from a stream of its own, which ``reset(seed)`` seeds: executions from one
state differ as repeated plays do, and a seeded run is reproducible bit for bit.

Episodes end as gymnasium says: once a step returns ``terminated`` or ``truncated``
no action is available (:attr:`GymSimulator.episode_over`), and the execution ends
there.  Time limits are per execution: a restore sets the elapsed-step counter of
every ``TimeLimit`` wrapper in the chain back to 0, so a wrapper's
``max_episode_steps`` bounds each execution (beside the setting's ``step_cap``) and
never leaks from one execution into the next.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.wrappers import TimeLimit

from capver.envs.base import Action, InvalidActionError
from capver.errors import SimulatorError

X = TypeVar("X")


class SnapshotCodec(Protocol[X]):
    """Takes and restores snapshots of a gymnasium environment."""

    def capture(self, env: gym.Env[Any, Any]) -> X:
        """A snapshot of ``env`` that later mutation of ``env`` cannot change."""
        ...

    def restore(self, env: gym.Env[Any, Any], x: X) -> gym.Env[Any, Any]:
        """Bring the environment into state ``x``; returns the environment to use from
        now on (the same object for in-place codecs, a fresh copy for deep copies)."""
        ...

    def view(self, env: gym.Env[Any, Any]) -> X:
        """The state of ``env`` for reading it now (α reads each step's state): it may
        share ``env`` and change with it, so it is never restored."""
        ...


@dataclass(frozen=True, slots=True)
class DeepcopySnapshot:
    """A deep copy of a whole environment and its wrappers (its random generator is
    replaced by a fresh one when it is restored)."""

    env: gym.Env[Any, Any]


@dataclass(frozen=True, slots=True)
class DeepcopyCodec:
    """Snapshots by :func:`copy.deepcopy` of the environment object."""

    def capture(self, env: gym.Env[Any, Any]) -> DeepcopySnapshot:
        return DeepcopySnapshot(copy.deepcopy(env))

    def restore(self, env: gym.Env[Any, Any], x: DeepcopySnapshot) -> gym.Env[Any, Any]:
        if not isinstance(x, DeepcopySnapshot):
            raise SimulatorError(
                f"snapshot: expected a DeepcopySnapshot taken by DeepcopyCodec, got {type(x).__name__}"
            )
        # Copy again: the snapshot must survive the steps taken after reverting to it.
        return copy.deepcopy(x.env)

    def view(self, env: gym.Env[Any, Any]) -> DeepcopySnapshot:
        # No copy: a step's state is read by α at once, and a copy of a large
        # environment (Taxi's: 10 ms) at every step would cost more than the step.
        return DeepcopySnapshot(env)


@dataclass(frozen=True, slots=True)
class StateApiCodec:
    """Snapshots through the unwrapped environment's own state methods.

    ``getter``/``setter`` name the methods (``get_state``/``set_state`` by default).
    The getter must return a value that later steps do not mutate.  Wrapper state
    (e.g. a ``TimeLimit`` counter) is not part of such a snapshot."""

    getter: str = "get_state"
    setter: str = "set_state"

    def capture(self, env: gym.Env[Any, Any]) -> Any:
        return getattr(env.unwrapped, self.getter)()

    def restore(self, env: gym.Env[Any, Any], x: Any) -> gym.Env[Any, Any]:
        getattr(env.unwrapped, self.setter)(x)
        return env

    def view(self, env: gym.Env[Any, Any]) -> Any:
        return self.capture(env)


_STATE_APIS: tuple[tuple[str, str], ...] = (
    ("get_state", "set_state"),
    ("clone_state", "restore_state"),
)


def codec_for(env: gym.Env[Any, Any]) -> SnapshotCodec[Any]:
    """The environment's own state API if it has one, else :class:`DeepcopyCodec`."""
    inner = env.unwrapped
    for getter, setter in _STATE_APIS:
        if callable(getattr(inner, getter, None)) and callable(getattr(inner, setter, None)):
            return StateApiCodec(getter, setter)
    return DeepcopyCodec()


def discrete_actions(space: spaces.Space[Any]) -> tuple[int, ...]:
    """The action list of a :class:`gymnasium.spaces.Discrete` space."""
    if not isinstance(space, spaces.Discrete):
        raise SimulatorError(
            f"action space {space}: only Discrete spaces have a finite action list; pass actions=... to GymSimulator"
        )
    start = int(space.start)
    return tuple(range(start, start + int(space.n)))


class GymSimulator(Generic[X]):
    """A :class:`~capver.envs.base.Simulator` over a gymnasium environment.

    States are snapshots taken by ``codec``.  ``step`` returns the state after the
    action for reading (the codec's :meth:`~SnapshotCodec.view`, which a deep-copy
    codec does not copy); :meth:`get_state` is the snapshot to restore later.  The
    reward, termination flags and info of the last step are kept in
    :attr:`last_reward`, :attr:`terminated`, :attr:`truncated` and :attr:`last_info`.
    After a terminating or truncating step no action is available (gymnasium leaves
    such steps undefined) until :meth:`reset` or :meth:`set_state`.

    ``seed`` seeds the stream that re-seeds the environment after each restore (see
    the module docstring); ``reset(seed)`` seeds it again, with the environment.
    """

    def __init__(
        self,
        env: gym.Env[Any, Any],
        codec: SnapshotCodec[X] | None = None,
        actions: Sequence[Action] | None = None,
        reset_options: Mapping[str, Any] | None = None,
        seed: int | None = None,
    ) -> None:
        self._env = env
        self._dice = _dice(seed)
        # The snapshot the environment is in, while no step has changed it: restoring
        # it again (the next execution of a chain starts where the last one ended)
        # needs no copy.
        self._current: X | None = None
        self._codec: SnapshotCodec[X] = codec if codec is not None else codec_for(env)
        self._actions: tuple[Action, ...] = (
            tuple(actions) if actions is not None else discrete_actions(env.action_space)
        )
        if not self._actions:
            raise SimulatorError("argument 'actions': expected at least one action")
        self._action_set = frozenset(self._actions)
        self._reset_options = dict(reset_options) if reset_options is not None else None
        self.last_reward: float = 0.0
        self.terminated = False
        self.truncated = False
        self.last_info: dict[str, Any] = {}
        self.last_observation: Any = None

    @property
    def env(self) -> gym.Env[Any, Any]:
        """The environment currently driven (a deep-copy codec replaces it on restore).
        Whoever holds it may step it, so the next :meth:`get_state` takes a fresh
        snapshot."""
        self._current = None
        return self._env

    @property
    def codec(self) -> SnapshotCodec[X]:
        return self._codec

    @property
    def episode_over(self) -> bool:
        """The last step returned ``terminated`` or ``truncated``: the episode has
        ended and no action is available until a reset or a restore."""
        return self.terminated or self.truncated

    def reset(self, seed: int | None = None) -> X:
        if seed is not None:
            self._dice = _dice(seed)
        self._current = None
        self.last_observation, info = self._env.reset(seed=seed, options=self._reset_options)
        self._clear(dict(info))
        return self.get_state()

    def get_state(self) -> X:
        if self._current is None:
            self._current = self._codec.capture(self._env)
        return self._current

    def set_state(self, x: X) -> None:
        if x is not self._current:
            self._env = self._codec.restore(self._env, x)
            self._current = x
        _restart_time_limits(self._env)
        _reseed(self._env, self._dice)
        self.last_observation = None
        self._clear({})

    def step(self, action: Action) -> X:
        if self.terminated or self.truncated or action not in self._action_set:
            raise InvalidActionError(action)
        self._current = None
        obs, reward, terminated, truncated, info = self._env.step(action)
        self.last_observation = obs
        self.last_reward = float(reward)
        self.terminated = bool(terminated)
        self.truncated = bool(truncated)
        self.last_info = dict(info)
        return self._codec.view(self._env)

    def available_actions(self) -> Sequence[Action]:
        if self.terminated or self.truncated:
            return ()
        return self._actions

    def _clear(self, info: dict[str, Any]) -> None:
        self.last_reward = 0.0
        self.terminated = False
        self.truncated = False
        self.last_info = info


def _dice(seed: int | None) -> np.random.Generator:
    """The stream that re-seeds a restored environment, apart from the stream
    ``env.reset(seed)`` seeds with the same number."""
    return np.random.default_rng(None if seed is None else (seed, 0x6D))


def _reseed(env: gym.Env[Any, Any], dice: np.random.Generator) -> None:
    """Fresh generators for the environment and its spaces, drawn from ``dice``: a
    restored deep copy would otherwise replay the draws taken after the snapshot."""
    inner = env.unwrapped
    inner.np_random = np.random.default_rng(int(dice.integers(2**63)))
    for space in {id(sp): sp for sp in (env.action_space, env.observation_space, inner.action_space)}.values():
        space.seed(int(dice.integers(2**63)))


def time_limits(env: gym.Env[Any, Any]) -> list[TimeLimit[Any, Any]]:
    """The ``TimeLimit`` wrappers in the chain of ``env``, outermost first."""
    found = []
    while isinstance(env, gym.Wrapper):
        if isinstance(env, TimeLimit):
            found.append(env)
        env = env.env
    return found


def _restart_time_limits(env: gym.Env[Any, Any]) -> None:
    # Each execution is an episode from its restored state: its time limit counts
    # that execution's steps, not those of the chain of executions before it.
    for wrapper in time_limits(env):
        wrapper._elapsed_steps = 0  # type: ignore[assignment]  # typed None until the first reset

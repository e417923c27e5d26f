"""A simulator whose environment states are symbolic states (section 2 with X = S
and α the identity).

It is the world of the model-backed agent (:mod:`capver.agents.model_backed`),
whose behaviour is a given true capability model h⋆: a capability's outcome is an
effect η, so the simulator's low-level actions are effects and stepping with η
applies it, s′ = apply(s, η) = (s ∖ η⁻) ∪ η⁺.  The action set is fixed when the
simulator is built (the effects h⋆ can produce), which keeps ``available_actions``
a short list that random walks and the executor's validity check can use.

The assessor sees exactly what it sees for any other environment: states through
``get_state``/α and nothing about which rule or effect produced them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from capver.core.state import Effect, State
from capver.core.vocabulary import Vocabulary
from capver.envs.base import InvalidActionError


class SymbolicSimulator:
    """S_E over bitset states of ``vocab`` with effects as low-level actions."""

    def __init__(self, vocab: Vocabulary, initial_state: State, actions: Iterable[Effect]) -> None:
        self.vocabulary = vocab
        self._check(initial_state, "initial_state")
        self.initial_state = initial_state
        self._actions: tuple[Effect, ...] = tuple(sorted(set(actions)))
        self._action_set = frozenset(self._actions)
        full = vocab.full_mask
        for eta in self._actions:
            if (eta.add | eta.delete) & ~full:
                raise ValueError(f"effect {eta} mentions atoms outside the vocabulary")
        self._state = initial_state

    def _check(self, s: object, what: str) -> None:
        if not isinstance(s, int) or s < 0 or s & ~self.vocabulary.full_mask:
            raise ValueError(f"{what} must be a bitset over the {len(self.vocabulary)} atoms, got {s!r}")

    def reset(self, seed: int | None = None) -> State:
        # Deterministic: the seed is accepted for protocol compatibility only.
        self._state = self.initial_state
        return self._state

    def get_state(self) -> State:
        return self._state

    def set_state(self, x: State) -> None:
        self._check(x, "state")
        self._state = x

    def step(self, action: Effect) -> State:
        if action not in self._action_set:
            raise InvalidActionError(action)
        self._state = action.apply(self._state)
        return self._state

    def available_actions(self) -> Sequence[Effect]:
        return self._actions


class IdentityRepresentation:
    """α(x) = x for simulators whose states already are bitsets over ``vocabulary``."""

    def __init__(self, vocab: Vocabulary) -> None:
        self._vocab = vocab

    @property
    def vocabulary(self) -> Vocabulary:
        return self._vocab

    def __call__(self, x: State) -> State:
        return x

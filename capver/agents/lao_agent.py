"""The LAO* agent of section 4.2: a planning BBAI on PPDDL (PDDLGym) domains.

Asked to achieve an intent i (a conjunction of literals, ``capability.intent``), the
agent plans with LAO* (:mod:`capver.planning.lao_star`) over the domain's true
dynamics — ``task.applicable`` and ``task.outcomes`` — minimising the expected
number of steps to a state satisfying i, and executes the policy in the simulator:

* it stops with ``Stop("achieved")`` as soon as the intent holds;
* it re-plans whenever it finds itself in a state its policies do not cover;
* it stops with ``Stop("gave up")`` where the intent is unreachable (a dead end)
  or costs more than the dead-end penalty in expectation.

The agent observes the simulator's state (the environment is fully observable) and
knows the domain model; it reads nothing else from the simulator.  One planner per
intent keeps its explicit graph, and every state a converged solution graph covers
is cached with its action, so repeated executions of a capability (what an
assessment does) cost one dictionary lookup per step.  Because LAO*'s tie-breaking
makes its policy a function of (intent, state) — see :mod:`capver.planning.lao_star`
— the cache does not make the agent's behaviour depend on what it was asked before:
its capabilities are stationary, as the paper's capability models assume.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from fractions import Fraction
from typing import Any, Protocol

import numpy as np

from capver.agents.base import Stop
from capver.core.state import Capability, State
from capver.core.vocabulary import Vocabulary
from capver.envs.base import Action, Simulator
from capver.planning.lao_star import (
    DEFAULT_DEAD_END_PENALTY,
    LAOResult,
    LAOStar,
    goal_count_heuristic,
)


class PlanningTask(Protocol):
    """What the agent needs from a domain (a :class:`capver.envs.ppddl.PPDDLTask`)."""

    @property
    def vocabulary(self) -> Vocabulary: ...

    def applicable(self, s: State) -> Sequence[Any]: ...

    def outcomes(self, s: State, a: Any) -> list[tuple[Fraction, State]]: ...


class TaskMDP:
    """A planning task's true dynamics as an :class:`~capver.planning.mdp.MDP`."""

    def __init__(self, task: PlanningTask) -> None:
        self.task = task

    def actions(self, s: State) -> Sequence[Hashable]:
        return self.task.applicable(s)

    def outcomes(self, s: State, a: Hashable) -> list[tuple[Fraction, State]]:
        return self.task.outcomes(s, a)


Intent = tuple[int, int]  # (positive mask, negative mask)


class LAOAgent:
    """A BBAI that pursues each intent with an LAO* policy (module docstring)."""

    name = "lao"

    def __init__(
        self,
        task: PlanningTask,
        *,
        dead_end_penalty: float = DEFAULT_DEAD_END_PENALTY,
        epsilon: float = 1e-9,
        max_expansions: int | None = None,
    ) -> None:
        self.task = task
        self.vocab = task.vocabulary
        self.mdp = TaskMDP(task)
        self.dead_end_penalty = dead_end_penalty
        self.epsilon = epsilon
        self.max_expansions = max_expansions
        self._planners: dict[Intent, LAOStar[State, Any]] = {}
        self._policies: dict[Intent, dict[State, Any]] = {}
        self._intent: Intent | None = None
        self._policy: dict[State, Any] = {}
        self.plans = 0  # LAO* calls made (cache misses)

    # -- planning -------------------------------------------------------------------------
    def planner(self, intent: Intent) -> LAOStar[State, Any]:
        p = self._planners.get(intent)
        if p is None:
            pos, neg = intent
            p = LAOStar(
                self.mdp,
                lambda s: (s & pos) == pos and not (s & neg),
                # Goal count is admissible for one literal; for a conjunction, one
                # step may satisfy several literals, so only "not yet there" counts.
                goal_count_heuristic(pos, neg, per_step=max(1, (pos | neg).bit_count())),
                dead_end_penalty=self.dead_end_penalty,
                epsilon=self.epsilon,
                max_expansions=self.max_expansions,
            )
            self._planners[intent] = p
        return p

    def plan(self, intent: Intent, s: State) -> LAOResult[State, Any]:
        """Solve from ``s`` and cache the solution graph's actions (None: give up)."""
        self.plans += 1
        res = self.planner(intent).solve(s)
        cache = self._policies.setdefault(intent, {})
        cache.update(res.policy)
        for g in res.gave_up:
            cache[g] = None
        return res

    def policy_action(self, intent: Intent, s: State) -> Any | None:
        """The action the agent takes in ``s`` for ``intent`` (None: it gives up)."""
        cache = self._policies.get(intent)
        if cache is None or s not in cache:
            self.plan(intent, s)
            cache = self._policies[intent]
        return cache.get(s)

    def clear_cache(self) -> None:
        self._planners.clear()
        self._policies.clear()

    # -- Agent protocol -------------------------------------------------------------------
    def begin(self, capability: Capability, sim: Simulator[Any], rng: np.random.Generator) -> None:
        self._intent = self.vocab.literals(capability.intent)
        self._policy = self._policies.setdefault(self._intent, {})

    def act(self, sim: Simulator[Any], rng: np.random.Generator) -> Action | Stop:
        if self._intent is None:
            raise RuntimeError("act() called before begin()")
        s = sim.get_state()
        pos, neg = self._intent
        if (s & pos) == pos and not (s & neg):
            return Stop("achieved")
        try:
            a = self._policy[s]
        except KeyError:
            a = self.policy_action(self._intent, s)
        if a is None:
            return Stop("gave up")
        return a

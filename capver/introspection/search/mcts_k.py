"""MCTS[K] and MCTS-U[K], the Monte Carlo tree search baselines of section 4 of the
introspection paper: "MCTS[K], pure Monte Carlo tree search (Coulom, 2007); and
MCTS-U[K], Monte Carlo tree search with the pUCT rule (Rosin, 2010)".

Both run on the project's one MCTS engine, :mod:`capver.engines.mcts`.
:class:`EngineProblem` adapts a :class:`~.problem.PlanningProblem` to the engine's
``SearchProblem``: ``transition(s, a) = (T̂(s, a), R̂(s, a, s′), Ĉ(s, a, s′) ≠ 0)``
and ``key = identity`` (the planners' problems are deterministic, so every edge has
one child).

Receding horizon: at every real step a fresh tree is rooted at the current state
(at its absolute depth, so the engine's horizon H is the episode's), K iterations
are run with the ``"mean"`` backup (Q = average sampled return, the paper's "pure"
Monte Carlo value) and random rollouts below new leaves, and the action with the
highest Q among the actions tried is executed.  MCTS-U passes the uniform prior
P(s, a) = 1/|A(s)| and so selects by pUCT, ``Q + λ·P·√N / (1 + n)``.

Readings we chose where the paper is silent (it gives no constants):

* the exploration constant λ defaults to 1 for both (the engine's default), with
  returns left unnormalised — the planner does not know the reward range;
* a tree is not reused across real steps (each step is "K iterations from the
  current state");
* the final choice ignores actions with no visit: pUCT creates an edge for every
  action at a node's first selection, and an unvisited edge's Q of 0 would
  otherwise beat every tried action on a problem with step penalties;
* ties of Q are broken by visit count, then by the problem's action order.

``expanded`` counts tree nodes created, ``generated`` counts forward-model calls
(tree descents and rollouts).  The budget is checked every :data:`CHUNK` iterations.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from capver.engines.mcts import MCTS, Backup, MCTSConfig, Node
from capver.errors import IntrospectionError
from capver.introspection.search.problem import (
    Clock,
    PlanningProblem,
    PlanResult,
    SearchBudget,
)

CHUNK = 32
"""Iterations between two budget checks."""


@dataclass(frozen=True, slots=True)
class EngineProblem:
    """A deterministic planning problem as the engine's ``SearchProblem``; counts
    forward-model calls on ``clock``."""

    problem: PlanningProblem
    clock: Clock
    # The K budget counts every forward-model call, so paths are re-simulated on each
    # iteration as in the measurements of MCTS[K] so far.
    deterministic: ClassVar[bool] = False

    def actions(self, s: Hashable) -> Sequence[Hashable]:
        return self.problem.actions(s)

    def transition(self, s: Hashable, a: Hashable, rng: np.random.Generator) -> tuple[Hashable, float, bool]:
        p = self.problem
        s2 = p.successor(s, a)
        self.clock.generated += 1
        return s2, float(p.reward(s, a, s2)), p.termination(s, a, s2) != 0

    def key(self, s: Hashable) -> Hashable:
        return s


def uniform_prior(problem: PlanningProblem) -> Callable[[Hashable, Hashable], float]:
    """P(s, a) = 1/|A(s)|, with |A(s)| cached per state (pUCT evaluates the prior
    for every action at every selection, and ``actions`` may be costly)."""
    counts: dict[Hashable, int] = {}

    def prior(s: Hashable, a: Hashable) -> float:
        n = counts.get(s)
        if n is None:
            n = counts[s] = max(len(problem.actions(s)), 1)
        return 1.0 / n

    return prior


def greedy_action(node: Node) -> Hashable | None:
    """argmax Q over the visited actions of ``node`` (ties: more visits, then the
    earlier action in the problem's order); None if no action was visited."""
    tried = [a for a, e in node.edges.items() if e.visits > 0]
    if not tried:
        return None
    order = {a: i for i, a in enumerate(node.order)}
    return max(tried, key=lambda a: (node.edges[a].q(Backup.MEAN), node.edges[a].visits, -order[a]))


def receding_horizon_mcts(
    name: str,
    problem: PlanningProblem,
    rng: np.random.Generator,
    budget: SearchBudget | None,
    *,
    k: int,
    exploration: float,
    puct: bool,
) -> PlanResult:
    """Plan by K engine iterations per real step (module docstring)."""
    if k < 1:
        raise IntrospectionError(f"planner {name!r}: K must be positive, got {k}")
    clock = Clock(budget if budget is not None else SearchBudget())
    adapter = EngineProblem(problem, clock)
    config = MCTSConfig(
        iterations=min(CHUNK, k), horizon=problem.horizon, exploration=exploration, backup=Backup.MEAN, rollout=True
    )
    prior = uniform_prior(problem) if puct else None
    s = problem.initial
    plan: list[Hashable] = []
    ret = 0.0
    term = 0
    while len(plan) < problem.horizon and term == 0 and not clock.out_of_budget():
        engine = MCTS(adapter, config, rng, prior)
        root = engine.new_node(s, len(plan))
        if root.terminal:
            break  # no applicable action: a dead end
        done = 0
        while done < k and not clock.out_of_budget():
            n = min(CHUNK, k - done)
            if n != engine.config.iterations:
                engine = MCTS(adapter, dataclasses.replace(config, iterations=n), rng, prior)
            before = engine.nodes_created
            engine.search(s, root)
            clock.expanded += engine.nodes_created - before
            done += n
        a = greedy_action(root)
        if a is None:
            break  # the budget ran out before a single iteration
        s2 = problem.successor(s, a)
        ret += problem.reward(s, a, s2)
        term = problem.termination(s, a, s2)
        plan.append(a)
        s = s2
    return PlanResult(
        name, tuple(plan), ret, term == 1, clock.expanded, clock.generated, clock.elapsed(), clock.exceeded
    )


@dataclass(frozen=True, slots=True)
class MCTSK:
    """MCTS[K]: UCT selection, K iterations per real step."""

    k: int = 100
    exploration: float = 1.0
    name: str = "mcts"

    def solve(
        self, problem: PlanningProblem, rng: np.random.Generator, budget: SearchBudget | None = None
    ) -> PlanResult:
        return receding_horizon_mcts(
            self.name, problem, rng, budget, k=self.k, exploration=self.exploration, puct=False
        )


@dataclass(frozen=True, slots=True)
class MCTSU:
    """MCTS-U[K]: pUCT selection with a uniform prior, K iterations per real step."""

    k: int = 100
    exploration: float = 1.0
    name: str = "mcts-u"

    def solve(
        self, problem: PlanningProblem, rng: np.random.Generator, budget: SearchBudget | None = None
    ) -> PlanResult:
        return receding_horizon_mcts(self.name, problem, rng, budget, k=self.k, exploration=self.exploration, puct=True)

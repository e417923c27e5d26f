"""The planning-problem interface every planner of :mod:`capver.introspection.search`
works on (the deterministic MDP of section 2.1 of the introspection paper), plan
results, budgets and plan re-simulation.

See :mod:`capver.introspection.search` for the contract in prose.
"""

from __future__ import annotations

import time
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar, runtime_checkable

import numpy as np

from capver.errors import IntrospectionError

S = TypeVar("S", bound=Hashable)
S_contra = TypeVar("S_contra", bound=Hashable, contravariant=True)
A = TypeVar("A", bound=Hashable)

REWARD = "reward"
TERMINATION = "termination"


@runtime_checkable
class PlanningProblem(Protocol[S, A]):
    """A deterministic episodic MDP given by black-box forward models T̂, R̂, Ĉ."""

    @property
    def initial(self) -> S: ...

    @property
    def horizon(self) -> int:
        """H: episodes end (unsuccessfully) after this many steps."""
        ...

    def actions(self, s: S) -> Sequence[A]:
        """Applicable actions, in a deterministic order."""
        ...

    def successor(self, s: S, a: A) -> S: ...

    def reward(self, s: S, a: A, s_next: S) -> float: ...

    def termination(self, s: S, a: A, s_next: S) -> int:
        """C(s, a, s′): −1 failure, 0 continue, 1 success."""
        ...

    def format_action(self, a: A) -> str: ...


class MilestoneGoal(Protocol[S_contra]):
    """One way to reach a milestone (for relational problems: one mutation)."""

    def distance(self, s: S_contra) -> int:
        """Heuristic distance; 0 iff ``s`` satisfies the goal."""
        ...

    def describe(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Milestones(Generic[S]):
    """What the introspector should pursue from a state: transitions whose reward
    equals ``target`` (``kind == "reward"``) or whose termination is success
    (``kind == "termination"``), steered towards any of ``goals``."""

    kind: str
    target: float
    goals: tuple[MilestoneGoal[S], ...]


@runtime_checkable
class IntrospectableProblem(PlanningProblem[S, A], Protocol[S, A]):
    """A problem whose models can be introspected for milestones (section 3)."""

    def milestones(self, s: S) -> Milestones[S] | None:
        """Milestones from ``s``; None if no reward and no success is reachable."""
        ...


@dataclass(frozen=True, slots=True)
class SearchBudget:
    """Per-run limits: wall-clock seconds, node expansions and stored nodes (the
    last keeps exhaustive search from exhausting memory before its timeout)."""

    timeout: float | None = None
    max_expansions: int | None = None
    max_nodes: int | None = 3_000_000


class Clock:
    """Tracks a run against its :class:`SearchBudget` (mutable, one per run)."""

    __slots__ = ("budget", "exceeded", "expanded", "generated", "start")

    def __init__(self, budget: SearchBudget) -> None:
        self.budget = budget
        self.start = time.perf_counter()
        self.expanded = 0
        self.generated = 0
        self.exceeded = False

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def out_of_budget(self) -> bool:
        """Checked once per expansion; latches once exceeded."""
        b = self.budget
        if self.exceeded:
            return True
        if (
            (b.timeout is not None and self.elapsed() > b.timeout)
            or (b.max_expansions is not None and self.expanded >= b.max_expansions)
            or (b.max_nodes is not None and self.generated >= b.max_nodes)
        ):
            self.exceeded = True
        return self.exceeded


@dataclass(frozen=True, slots=True)
class PlanResult(Generic[A]):
    """What a planner returns.  ``plan`` is None when it found nothing to return
    (budget exhausted); ``ret`` is the plan's return Σ rᵢ and ``success`` whether its
    last transition terminates with success."""

    planner: str
    plan: tuple[A, ...] | None
    ret: float
    success: bool
    expanded: int
    generated: int
    runtime: float
    timed_out: bool

    @property
    def solved(self) -> bool:
        return self.plan is not None and self.success


class Planner(Protocol):
    @property
    def name(self) -> str:
        """Read-only here, so a frozen dataclass field provides it."""
        ...

    def solve(
        self, problem: PlanningProblem, rng: np.random.Generator, budget: SearchBudget | None = None
    ) -> PlanResult: ...


@dataclass(frozen=True, slots=True)
class Rollout(Generic[S]):
    """The re-simulation of a plan."""

    states: tuple[S, ...]
    ret: float
    termination: int

    @property
    def success(self) -> bool:
        return self.termination == 1


def simulate(problem: PlanningProblem[S, A], plan: Sequence[A]) -> Rollout[S]:
    """Execute ``plan`` from the initial state, checking that every action is
    applicable, that the plan stops when the episode terminates and that it fits the
    horizon.  Raises :class:`IntrospectionError` otherwise."""
    if len(plan) > problem.horizon:
        raise IntrospectionError(f"plan of {len(plan)} steps exceeds the horizon {problem.horizon}")
    s = problem.initial
    states = [s]
    ret = 0.0
    term = 0
    for i, a in enumerate(plan):
        if term != 0:
            raise IntrospectionError(f"plan continues after the episode terminated (step {i + 1})")
        if a not in problem.actions(s):
            raise IntrospectionError(f"step {i + 1}: action {problem.format_action(a)} is not applicable")
        s2 = problem.successor(s, a)
        ret += problem.reward(s, a, s2)
        term = problem.termination(s, a, s2)
        s = s2
        states.append(s)
    return Rollout(tuple(states), ret, term)

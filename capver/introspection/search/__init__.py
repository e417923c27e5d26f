"""Planners of the model-introspection paper (002), one module per algorithm (as in
pyperplan): :mod:`.introspector` (bilevel milestone search, sections 4 and 5.3),
:mod:`.greedy` (GREEDY, exhaustive best-first), :mod:`.random_k` (RANDOM[K]) and
:mod:`.beam` (BEAM[K]) and :mod:`.mcts_k` (MCTS[K] and MCTS-U[K], on the project's
shared engine :mod:`capver.engines.mcts`).  :data:`PLANNERS` is the registry a
command line takes its choices from; ``make_planner(name, k=...)`` builds one.

The problem interface
---------------------
Every planner takes a :class:`~.problem.PlanningProblem` — a deterministic episodic
MDP given by black-box forward models:

* ``initial`` — the initial state s₀ (hashable; relational problems use ``int``
  bitsets, the grid ``(x, y)``);
* ``horizon`` — H, the maximum number of steps of an episode;
* ``actions(s)`` — applicable actions, in a deterministic order (hashable);
* ``successor(s, a)`` — T̂(s, a);
* ``reward(s, a, s′)`` — R̂ (for relational problems a FOL decision list);
* ``termination(s, a, s′)`` — Ĉ ∈ {−1 failure, 0 continue, 1 success} (a FOL
  decision list); an episode ends at the first non-zero value or after H steps;
* ``format_action(a)`` — a printable name.

The introspector additionally needs ``milestones(s) -> Milestones | None``
(:class:`~.problem.IntrospectableProblem`): a kind (``"reward"``: reach a transition
paying ``target``; ``"termination"``: reach a successful termination) and goals with
a heuristic ``distance(s)`` (0 iff reached).  Relational problems compute them by
state mutation (:mod:`capver.introspection.mutation`); the grid of section 4 supplies
the hand-derived milestone (0, 0) and Manhattan distance.

A planner is an object with a ``name`` and ``solve(problem, rng, budget) ->
PlanResult``; ``rng`` (a ``numpy.random.Generator``) is its only source of
randomness and ``budget`` bounds wall-clock time, expansions and stored nodes.
:func:`~.problem.simulate` re-executes a plan against the problem.

The MCTS baselines plug a problem into the engine through
:class:`~.mcts_k.EngineProblem` (the engine's ``SearchProblem``: ``actions(s)``,
``transition(s, a, rng) = (T̂(s, a), R̂(s, a, s′), Ĉ(s, a, s′) ≠ 0)``, ``key =
identity``), with ``MCTSConfig(horizon=problem.horizon, backup=Backup.MEAN)``; MCTS-U
passes a uniform ``prior`` (pUCT).  They plan with a receding horizon: K iterations
from each state reached, then the argmax-Q action.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from capver.errors import IntrospectionError
from capver.introspection.search.beam import Beam
from capver.introspection.search.greedy import Greedy
from capver.introspection.search.introspector import Introspector
from capver.introspection.search.mcts_k import MCTSK, MCTSU
from capver.introspection.search.problem import (
    IntrospectableProblem,
    Milestones,
    Planner,
    PlanningProblem,
    PlanResult,
    Rollout,
    SearchBudget,
    simulate,
)
from capver.introspection.search.random_k import RandomK


class _KPlanner(Planner, Protocol):
    """A planner with a budget K (``k``, also its constructor's keyword)."""

    @property
    def k(self) -> int: ...


_K_PLANNERS: dict[str, Callable[..., _KPlanner]] = {
    "random": RandomK,
    "beam": Beam,
    "mcts": MCTSK,
    "mcts-u": MCTSU,
}

PLANNERS: dict[str, Callable[..., Planner]] = {
    "introspector": Introspector,
    "greedy": Greedy,
    **_K_PLANNERS,
}
"""Planner name -> constructor; "random", "beam", "mcts" and "mcts-u" take the
budget ``k``."""

TAKES_K = frozenset(_K_PLANNERS)


def make_planner(name: str, k: int | None = None) -> Planner:
    """The planner registered as ``name``; ``k`` is K of RANDOM[K], BEAM[K], MCTS[K]
    and MCTS-U[K]."""
    try:
        ctor = PLANNERS[name]
    except KeyError:
        raise IntrospectionError(f"unknown planner {name!r}; expected one of {sorted(PLANNERS)}") from None
    if name in TAKES_K and k is not None:
        if k < 1:
            raise IntrospectionError(f"planner {name!r}: K must be positive, got {k}")
        return ctor(k=k)
    return ctor()


def planner_label(name: str, k: int | None = None) -> str:
    """The paper's spelling, e.g. ``BEAM[100]``."""
    if name in TAKES_K:
        kk = k if k is not None else _K_PLANNERS[name]().k
        return f"{name.upper()}[{kk}]"
    return name.upper() if name == "greedy" else name


__all__ = [
    "MCTSK",
    "MCTSU",
    "PLANNERS",
    "TAKES_K",
    "Beam",
    "Greedy",
    "IntrospectableProblem",
    "Introspector",
    "Milestones",
    "PlanResult",
    "Planner",
    "PlanningProblem",
    "RandomK",
    "Rollout",
    "SearchBudget",
    "make_planner",
    "planner_label",
    "simulate",
]

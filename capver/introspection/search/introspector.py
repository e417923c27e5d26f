"""The introspector planner (sections 4 and 5.3 of the introspection paper): bilevel
search over milestones.

Outer level — greedy search through milestone space: from the current state s ask
the problem for its milestones (Ĝ(s); for relational problems the mutations of the
r_max formula of R̂, or of Ĉ's success formula once no reward milestone is left),
order the goals by their heuristic distance from s and hand them, closest first, to
the inner search; commit to the first milestone reached, continue from there.  This
repeats — "several milestones in succession" — until a transition ends the episode,
the horizon is used up or no milestone can be reached.

Inner level — greedy best-first search (GBFS) ordered by the goal's distance (for
relational problems the STRIPS literal-counting heuristic: literals of the mutation
not yet satisfied), ties by depth then insertion, with duplicate detection.  A
generated transition is a goal if it actually yields the target: reward equal to
r_max (and not a failure) for reward milestones, termination success for the
termination milestone.  The mutation steers the search; the real models decide when
it has arrived (so an approximate mutation, e.g. one with a ``Prev`` condition, can
cost time but never yields a wrong plan).  Other terminal transitions are pruned.

The paper's Appendix E pseudocode is missing from our copy; the outer level is
greedy without backtracking over committed milestones (it does fall back to the next
goal when the inner search cannot reach one).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

from capver.errors import IntrospectionError
from capver.introspection.search.problem import (
    REWARD,
    Clock,
    IntrospectableProblem,
    MilestoneGoal,
    Milestones,
    PlanningProblem,
    PlanResult,
    SearchBudget,
)


@dataclass(frozen=True, slots=True)
class _Leg:
    plan: tuple
    state: object
    ret: float
    termination: int


@dataclass(frozen=True, slots=True)
class Introspector:
    name: str = "introspector"

    def solve(
        self, problem: PlanningProblem, rng: np.random.Generator, budget: SearchBudget | None = None
    ) -> PlanResult:
        if not isinstance(problem, IntrospectableProblem):
            raise IntrospectionError(
                f"the introspector needs a problem with a milestones(s) method; {type(problem).__name__} has none"
            )
        clock = Clock(budget if budget is not None else SearchBudget())
        s = problem.initial
        plan: list[object] = []
        ret = 0.0
        success = False
        while len(plan) < problem.horizon and not clock.out_of_budget():
            ms = problem.milestones(s)
            if ms is None:
                break
            leg = None
            for goal in sorted(ms.goals, key=lambda g: g.distance(s)):
                leg = _inner(problem, s, goal, ms, problem.horizon - len(plan), clock)
                if leg is not None or clock.exceeded:
                    break
            if leg is None:
                break
            plan.extend(leg.plan)
            ret += leg.ret
            s = leg.state
            if leg.termination != 0:
                success = leg.termination == 1
                break
        return PlanResult(
            self.name, tuple(plan), ret, success, clock.expanded, clock.generated, clock.elapsed(), clock.exceeded
        )


def _inner(
    problem: PlanningProblem,
    start: object,
    goal: MilestoneGoal,
    ms: Milestones,
    max_depth: int,
    clock: Clock,
) -> _Leg | None:
    """GBFS from ``start`` towards ``goal``; None if it is unreachable within
    ``max_depth`` steps or the budget runs out."""
    states = [start]
    parent = [-1]
    action: list[object] = [None]
    ret = [0.0]
    seen = {start}
    heap = [(goal.distance(start), 0, 0, 0)]
    counter = 1
    want_reward = ms.kind == REWARD
    while heap:
        if clock.out_of_budget():
            return None
        _h, d, _, i = heapq.heappop(heap)
        if d >= max_depth:
            continue
        clock.expanded += 1
        s = states[i]
        for a in problem.actions(s):
            s2 = problem.successor(s, a)
            clock.generated += 1
            r = problem.reward(s, a, s2)
            t = problem.termination(s, a, s2)
            if (want_reward and r == ms.target and t != -1) or (not want_reward and t == 1):
                plan = [a]
                j = i
                while parent[j] >= 0:
                    plan.append(action[j])
                    j = parent[j]
                return _Leg(tuple(reversed(plan)), s2, ret[i] + r, t)
            if t != 0 or s2 in seen:
                continue
            seen.add(s2)
            states.append(s2)
            parent.append(i)
            action.append(a)
            ret.append(ret[i] + r)
            heapq.heappush(heap, (goal.distance(s2), d + 1, counter, len(states) - 1))
            counter += 1
    return None

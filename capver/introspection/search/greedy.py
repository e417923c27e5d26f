"""GREEDY, the exhaustive best-first baseline of sections 4 and 5.4 of the
introspection paper: "exhaustive best-first search", the "typical cost of ensuring
maximum score".

Nodes are ordered by their return so far (highest first), ties by depth (shallowest
first) and then by insertion, and the search stops at the first popped node whose
transition ended the episode with success.  With a step penalty (the grid) this is
uniform-cost search and the plan is optimal; with rewards only at the end (the
relational domains) it is breadth-first search and the plan is a shortest one.
States are de-duplicated (a state is not re-entered unless with a higher return).
"exhaustive" is read as "systematic": nothing is pruned except duplicates and the
horizon.  If the frontier empties without success, the best complete plan found
(terminated, at the horizon or at a dead end) is returned.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

from capver.introspection.search.problem import (
    Clock,
    PlanningProblem,
    PlanResult,
    SearchBudget,
)


@dataclass(frozen=True, slots=True)
class Greedy:
    name: str = "greedy"

    def solve(
        self, problem: PlanningProblem, rng: np.random.Generator, budget: SearchBudget | None = None
    ) -> PlanResult:
        clock = Clock(budget if budget is not None else SearchBudget())
        horizon = problem.horizon
        # Parallel arrays instead of node objects: exhaustive search stores millions.
        states = [problem.initial]
        parent = [-1]
        action: list[object] = [None]
        ret = [0.0]
        depth = [0]
        best_ret: dict[tuple[object, int], float] = {(problem.initial, 0): 0.0}
        heap: list[tuple[float, int, int, int, int]] = [(-0.0, 0, 0, 0, 0)]
        counter = 1
        complete: tuple[float, bool, int] | None = None  # (return, success, node)

        def result(node: int | None, success: bool, timed_out: bool) -> PlanResult:
            plan = None if node is None else _path(parent, action, node)
            r = 0.0 if node is None else ret[node]
            return PlanResult(self.name, plan, r, success, clock.expanded, clock.generated, clock.elapsed(), timed_out)

        while heap:
            if clock.out_of_budget():
                return result(None, False, True)
            neg_g, d, _, term, i = heapq.heappop(heap)
            if best_ret.get((states[i], term), -np.inf) > -neg_g:
                continue  # a better path to this state was found after this push
            if term != 0 or d >= horizon:
                cand = (ret[i], term == 1, i)
                if term == 1:
                    return result(i, True, False)
                if complete is None or cand[:2] > complete[:2]:
                    complete = cand
                continue
            clock.expanded += 1
            s = states[i]
            acts = problem.actions(s)
            if not acts and (complete is None or (ret[i], False) > complete[:2]):
                complete = (ret[i], False, i)
            for a in acts:
                s2 = problem.successor(s, a)
                g2 = ret[i] + problem.reward(s, a, s2)
                t2 = problem.termination(s, a, s2)
                key = (s2, t2)
                if best_ret.get(key, -np.inf) >= g2:
                    continue
                best_ret[key] = g2
                clock.generated += 1
                states.append(s2)
                parent.append(i)
                action.append(a)
                ret.append(g2)
                depth.append(d + 1)
                heapq.heappush(heap, (-g2, d + 1, counter, t2, len(states) - 1))
                counter += 1
        if complete is None:
            return result(None, False, False)
        return result(complete[2], complete[1], False)


def _path(parent: list[int], action: list[object], node: int) -> tuple:
    out = []
    while parent[node] >= 0:
        out.append(action[node])
        node = parent[node]
    return tuple(reversed(out))

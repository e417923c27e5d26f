"""RANDOM[K] of section 4 of the introspection paper: "a policy which chooses the
best out of K random plans".  Each plan is a uniformly random rollout from the
initial state until the episode terminates, the horizon is reached or no action is
applicable; the plan with the highest return wins (ties: the successful one, then
the earliest).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from capver.introspection.search.problem import (
    Clock,
    PlanningProblem,
    PlanResult,
    SearchBudget,
)


@dataclass(frozen=True, slots=True)
class RandomK:
    k: int = 100
    name: str = "random"

    def solve(
        self, problem: PlanningProblem, rng: np.random.Generator, budget: SearchBudget | None = None
    ) -> PlanResult:
        clock = Clock(budget if budget is not None else SearchBudget())
        best: tuple[float, bool, tuple] | None = None
        for _ in range(self.k):
            s = problem.initial
            plan: list[object] = []
            ret = 0.0
            term = 0
            while len(plan) < problem.horizon:
                if clock.out_of_budget():
                    break
                acts = problem.actions(s)
                clock.expanded += 1
                if not acts:
                    break
                a = acts[int(rng.integers(len(acts)))]
                s2 = problem.successor(s, a)
                clock.generated += 1
                ret += problem.reward(s, a, s2)
                term = problem.termination(s, a, s2)
                plan.append(a)
                s = s2
                if term != 0:
                    break
            if clock.exceeded:
                break
            if best is None or (ret, term == 1) > best[:2]:
                best = (ret, term == 1, tuple(plan))
        if best is None:
            return PlanResult(
                self.name, None, 0.0, False, clock.expanded, clock.generated, clock.elapsed(), clock.exceeded
            )
        return PlanResult(
            self.name, best[2], best[0], best[1], clock.expanded, clock.generated, clock.elapsed(), clock.exceeded
        )

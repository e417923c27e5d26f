"""BEAM[K] of section 4 of the introspection paper: width-K beam search.

Layer by layer up to the horizon, every node of the beam is expanded; children are
de-duplicated by state (keeping the higher return) and the K with the highest return
so far form the next beam, ties broken uniformly at random (through the passed-in
generator).  Transitions that end the episode yield complete plans; the best
complete plan (highest return, then success, then earliest) is returned.
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
class Beam:
    k: int = 100
    name: str = "beam"

    def solve(
        self, problem: PlanningProblem, rng: np.random.Generator, budget: SearchBudget | None = None
    ) -> PlanResult:
        clock = Clock(budget if budget is not None else SearchBudget())
        beam: list[tuple[float, object, tuple]] = [(0.0, problem.initial, ())]
        best: tuple[float, bool, tuple] | None = None

        def offer(g: float, success: bool, plan: tuple) -> None:
            nonlocal best
            if best is None or (g, success) > best[:2]:
                best = (g, success, plan)

        for _ in range(problem.horizon):
            children: dict[object, tuple[float, object, tuple]] = {}
            for g, s, plan in beam:
                if clock.out_of_budget():
                    break
                clock.expanded += 1
                acts = problem.actions(s)
                if not acts:
                    offer(g, False, plan)
                for a in acts:
                    s2 = problem.successor(s, a)
                    clock.generated += 1
                    g2 = g + problem.reward(s, a, s2)
                    t2 = problem.termination(s, a, s2)
                    if t2 != 0:
                        offer(g2, t2 == 1, (*plan, a))
                    elif s2 not in children or children[s2][0] < g2:
                        children[s2] = (g2, s2, (*plan, a))
            if clock.exceeded or not children:
                beam = []
                break
            cands = list(children.values())
            order = rng.permutation(len(cands))
            shuffled = [cands[int(j)] for j in order]
            shuffled.sort(key=lambda c: -c[0])  # stable: random order among equal returns
            beam = shuffled[: self.k]
        for g, _s, plan in beam:
            offer(g, False, plan)  # cut off by the horizon
        if best is None:
            return PlanResult(
                self.name, None, 0.0, False, clock.expanded, clock.generated, clock.elapsed(), clock.exceeded
            )
        return PlanResult(
            self.name, best[2], best[0], best[1], clock.expanded, clock.generated, clock.elapsed(), clock.exceeded
        )

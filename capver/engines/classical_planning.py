"""Classical planning on the all-outcomes determinisation of a capability model (the
determinised export of :mod:`capver.io.ppddl_export.determinised`): pyperplan's
searches (:data:`BLIND_SEARCHES`, :data:`HEURISTIC_SEARCHES`) solve its files, and a
plan is replayed under the model's Pr_h(s′ | s, c) (paper, section 2) to check that
every step's outcome is possible and the goal holds at the end.

The export is read through :class:`DeterminisedProblem` (its initial state, goal,
actions and files), so that this engine does not import the file layer."""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Protocol

from capver.core.state import Effect, State
from capver.core.vocabulary import Literal, Vocabulary
from capver.errors import PlanningError
from capver.model.capability_model import CompoundModel


class DeterminisedAction(Protocol):
    """What a plan step needs of a determinised action: the capability it executes
    and the one outcome it picks."""

    @property
    def capability(self) -> str: ...

    @property
    def effect(self) -> Effect: ...


class DeterminisedProblem(Protocol):
    """What solving and replaying need of a determinised export
    (:class:`capver.io.ppddl_export.DeterminizedExport`)."""

    @property
    def init(self) -> State: ...

    @property
    def goal(self) -> tuple[Literal, ...]: ...

    @property
    def actions(self) -> Mapping[str, DeterminisedAction]: ...

    def write(self, directory: str | Path) -> tuple[Path, Path]: ...


def goal_holds(vocab: Vocabulary, goal: Sequence[Literal], s: State) -> bool:
    pos, neg = vocab.literals(goal)
    return (s & pos) == pos and not s & neg


BLIND_SEARCHES = ("bfs", "ids")
HEURISTIC_SEARCHES = ("astar", "wastar", "gbf", "ehs")
"""pyperplan's searches usable here (its ``sat`` search needs an external SAT solver)."""


def check_search(search: str, heuristic: str | None) -> None:
    """Raise :class:`PlanningError` unless pyperplan can run ``search`` with
    ``heuristic`` (blind searches take none, the others need one)."""
    from pyperplan import planner

    if search not in BLIND_SEARCHES + HEURISTIC_SEARCHES:
        raise PlanningError(
            f"unknown pyperplan search {search!r}; expected one of {list(BLIND_SEARCHES + HEURISTIC_SEARCHES)}"
        )
    if heuristic is not None and heuristic not in planner.HEURISTICS:
        raise PlanningError(f"unknown pyperplan heuristic {heuristic!r}; expected one of {sorted(planner.HEURISTICS)}")
    if search in BLIND_SEARCHES and heuristic is not None:
        raise PlanningError(f"pyperplan search {search!r} takes no heuristic; expected one of {HEURISTIC_SEARCHES}")
    if search in HEURISTIC_SEARCHES and heuristic is None:
        raise PlanningError(f"pyperplan search {search!r} needs a heuristic, e.g. 'hff'")


def solve(
    domain_path: str | Path,
    problem_path: str | Path,
    *,
    search: str = "bfs",
    heuristic: str | None = None,
) -> list[str] | None:
    """Run pyperplan on classical PDDL files; the plan as action names, or None when
    the search finds none (the default breadth-first search is complete and finds a
    shortest plan).  ``search`` and ``heuristic`` are pyperplan's names (e.g.
    ``"gbf"`` with ``"hff"``)."""
    from pyperplan import planner

    check_search(search, heuristic)
    heur = None if heuristic is None else planner.HEURISTICS[heuristic]
    plan = planner.search_plan(str(domain_path), str(problem_path), planner.SEARCHES[search], heur)
    if plan is None:
        return None
    # pyperplan names a ground operator "(name args)"; the exported actions have no arguments
    return [op.name.strip("()").split()[0] for op in plan]


def solve_export(det: DeterminisedProblem, *, search: str = "bfs", heuristic: str | None = None) -> list[str] | None:
    """:func:`solve` on a determinised export, through a temporary directory."""
    with tempfile.TemporaryDirectory(prefix="capver-det-") as tmp:
        d, p = det.write(tmp)
        return solve(d, p, search=search, heuristic=heuristic)


@dataclass(frozen=True, slots=True)
class PlanStep:
    """One plan step replayed on the model: ``probability`` = Pr_h(s′ | s, c) of the
    step's determinised outcome s′ = apply(s, η)."""

    action: str
    capability: str
    state: State
    next_state: State
    probability: Fraction


@dataclass(frozen=True, slots=True)
class PlanValidation:
    """A plan of the determinised export replayed with the model's Pr_h."""

    steps: tuple[PlanStep, ...]
    goal_reached: bool
    failure: str | None = None

    @property
    def valid(self) -> bool:
        """Every step has positive probability and the goal holds at the end."""
        return self.failure is None and self.goal_reached

    @property
    def probability(self) -> Fraction:
        """Probability that executing the capabilities yields exactly this outcome chain."""
        out = Fraction(1)
        for st in self.steps:
            out *= st.probability
        return out


def validate_plan(model: CompoundModel, det: DeterminisedProblem, plan: Sequence[str]) -> PlanValidation:
    """Replay ``plan`` (action names of ``det``) from ``det.init`` with the model:
    each step's outcome must have Pr_h(s′ | s, c) > 0, and ``det.goal`` must hold at
    the end."""
    vocab = model.vocabulary
    s = det.init
    steps: list[PlanStep] = []
    for name in plan:
        a = det.actions.get(name)
        if a is None:
            return PlanValidation(
                tuple(steps), False, f"step {len(steps) + 1}: {name!r} is not an action of the export"
            )
        s2 = a.effect.apply(s)
        p = model.prob(s, a.capability, s2)
        steps.append(PlanStep(name, a.capability, s, s2, p))
        if p == 0:
            return PlanValidation(
                tuple(steps),
                False,
                f"step {len(steps)}: capability {a.capability!r} cannot lead from {vocab.format_state(s)} "
                f"to {vocab.format_state(s2)} under the model",
            )
        s = s2
    return PlanValidation(tuple(steps), goal_holds(vocab, det.goal, s))


__all__ = [
    "BLIND_SEARCHES",
    "HEURISTIC_SEARCHES",
    "DeterminisedAction",
    "DeterminisedProblem",
    "PlanStep",
    "PlanValidation",
    "check_search",
    "goal_holds",
    "solve",
    "solve_export",
    "validate_plan",
]

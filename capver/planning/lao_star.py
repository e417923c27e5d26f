"""LAO* (Hansen & Zilberstein 2001, "LAO*: A heuristic search algorithm that finds
solutions with loops") for goal-directed stochastic shortest-path problems — the
planner inside the paper's LAO* agent (section 4.2).

Problem.  Every action costs one step; goal states are absorbing with cost 0; the
planner minimises the expected number of steps to a goal.  Dead ends (states with no
applicable action, or from which no goal is reachable) would make that expectation
infinite, so the planner uses a *finite dead-end penalty* P (the fSSPUDE
formulation of Kolobov, Mausam & Weld 2012): in every state the agent may also
"give up" at cost P, i.e.

    V(s) = 0                                          if s is a goal
    V(s) = min(P, min_a 1 + Σ_{s′} T(s, a, s′) V(s′))  otherwise.

Giving up is the agent's ``Stop("gave up")``.  P must exceed the expected cost of
every plan the agent should attempt; with P larger than any such cost the policy is
the usual expected-step-optimal policy and give-up happens exactly at dead ends.
A policy that risks a dead end with probability q pays q·P for it, which is what
makes a shorter but riskier route worse in expectation.

Search.  The improved variant (ILAO*): each pass is a depth-first traversal of the
best partial solution graph from the start state; unexpanded tips met on the way are
expanded (successors get the heuristic value, goals 0) and every visited state is
backed up in post-order.  The search stops after a pass that expanded nothing,
changed no best action (so the pass traversed the final solution graph) and whose
largest Bellman residual is below ε (ε-consistency of the solution graph).
With an admissible heuristic, values stay lower bounds of V* (Bellman backups are
monotone), so the solution graph's policy is optimal up to ε.

Dead-end detection.  Value iteration alone would only creep towards P in a trap
(one unit per pass for a deterministic loop).  Instead, when passes expand nothing
but do not converge, the explicit graph is analysed (at most once per version of
the graph, and only after such passes have visited a quarter as many states as the
graph has, so the analyses cost no more than the passes): states from which
neither a goal nor an unexpanded state is reachable through any action are
*proven* dead ends; they get value P and become terminal.  States with
no applicable action are dead ends as soon as they are expanded.

Tie-breaking.  Among actions whose Q-values lie within ``tie_tolerance`` of the
minimum, the planner takes the one that comes first in ``mdp.actions(s)``.  Because
values are lower bounds that are exact on the converged solution graph, this makes
the policy a function of (goal, state) only — the same whether the planner starts
cold or reuses an explicit graph built for other start states — and it is what
gives the LAO* agent the object preferences section 4.2 reports for its
place-block capability: when putting a held block on B or on C is equally good, the
agent always picks whichever action the domain enumerates first, in every state,
which a learned model records as an object-specific (non-liftable) capability.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Generic, TypedDict, TypeVar, Unpack

from capver.errors import PlanningError
from capver.planning.mdp import MDP

S = TypeVar("S", bound=Hashable)
A = TypeVar("A", bound=Hashable)

DEFAULT_DEAD_END_PENALTY = 1000.0


def goal_count_heuristic(pos: int, neg: int, per_step: int = 1) -> Callable[[int], float]:
    """h(s) = ⌈(#unsatisfied intent literals) / per_step⌉ over bitset states.

    Counting unsatisfied literals is admissible only when one step can satisfy at
    most ``per_step`` of them at once; pass the largest number of intent atoms a
    single outcome can change (1 is exact for single-literal intents, which is what
    capability discovery produces).
    """
    if per_step < 1:
        raise ValueError(f"per_step must be at least 1, got {per_step}")

    def h(s: int) -> float:
        unsat = (pos & ~s).bit_count() + (neg & s).bit_count()
        return float(-(-unsat // per_step))

    return h


def _zero(_: object) -> float:
    return 0.0


@dataclass(frozen=True, slots=True)
class LAOResult(Generic[S, A]):
    """The converged best solution graph from ``initial``.

    ``policy`` maps every non-terminal state of the graph to its action; goal states,
    dead ends and states where giving up is cheaper have none.  ``values`` holds V
    for every state of the graph (0 at goals, the penalty where the agent gives up).
    """

    initial: S
    policy: Mapping[S, A]
    values: Mapping[S, float]
    goals: frozenset[S]
    dead_ends: frozenset[S]
    gave_up: frozenset[S]
    penalty: float
    expansions: int
    backups: int

    def action(self, s: S) -> A | None:
        return self.policy.get(s)

    @property
    def value(self) -> float:
        return self.values[self.initial]

    @property
    def solvable(self) -> bool:
        """The initial state is a goal or the policy pursues one (does not give up)."""
        return self.initial not in self.gave_up


class LAOStar(Generic[S, A]):
    """An LAO* planner for one goal over one MDP.

    The explicit graph, values and dead ends persist between :meth:`solve` calls, so
    solving from many start states (as an agent re-planning for one intent does)
    reuses earlier work; see the module docstring for why the returned policies do
    not depend on that history.
    """

    def __init__(
        self,
        mdp: MDP[S, A],
        is_goal: Callable[[S], bool],
        heuristic: Callable[[S], float] = _zero,
        *,
        dead_end_penalty: float = DEFAULT_DEAD_END_PENALTY,
        epsilon: float = 1e-9,
        tie_tolerance: float = 1e-6,
        max_expansions: int | None = None,
    ) -> None:
        if not dead_end_penalty > 0:
            raise ValueError(f"dead_end_penalty must be positive, got {dead_end_penalty}")
        if not epsilon > 0:
            raise ValueError(f"epsilon must be positive, got {epsilon}")
        self.mdp = mdp
        self.is_goal = is_goal
        self.heuristic = heuristic
        self.penalty = float(dead_end_penalty)
        self.epsilon = float(epsilon)
        self.tie_tolerance = float(tie_tolerance)
        self.max_expansions = max_expansions
        self._value: dict[S, float] = {}
        self._goals: set[S] = set()
        self._dead: set[S] = set()
        # expanded non-goal states: (action, ((p, s′), ...)) in the MDP's action order
        self._succ: dict[S, tuple[tuple[A, tuple[tuple[float, S], ...]], ...]] = {}
        self._pred: dict[S, list[S]] = {}
        self._best: dict[S, A | None] = {}
        # the outcomes of _best[s], kept beside it: every pass walks them
        self._best_outs: dict[S, tuple[tuple[float, S], ...]] = {}
        self._version = 0  # bumped on every expansion; dead-end analysis is per version
        self._analysed = -1
        self._changed = False
        self.expansions = 0
        self.backups = 0

    # -- the explicit graph --------------------------------------------------------------
    def _know(self, s: S) -> None:
        if s in self._value:
            return
        if self.is_goal(s):
            self._goals.add(s)
            self._value[s] = 0.0
        else:
            h = float(self.heuristic(s))
            if h < 0 or math.isnan(h):
                raise PlanningError(f"heuristic returned {h} for state {s!r}; expected a value >= 0")
            self._value[s] = min(h, self.penalty)

    def _expand(self, s: S) -> None:
        if self.max_expansions is not None and self.expansions >= self.max_expansions:
            raise PlanningError(f"LAO* exceeded its budget of {self.max_expansions} state expansions")
        self.expansions += 1
        self._version += 1
        entries = []
        for a in self.mdp.actions(s):
            merged: dict[S, float] = {}
            for p, t in self.mdp.outcomes(s, a):
                if p > 0:
                    merged[t] = merged.get(t, 0.0) + float(p)
            # An action that surely stays put costs a step and changes nothing, so it
            # is never better than the state's own value: leave it out.
            if not merged or (len(merged) == 1 and s in merged):
                continue
            for t in merged:
                self._know(t)
                self._pred.setdefault(t, []).append(s)
            entries.append((a, tuple(merged.items())))
        self._succ[s] = tuple((a, tuple((p, t) for t, p in outs)) for a, outs in entries)
        if not entries:
            self._mark_dead(s)

    def _mark_dead(self, s: S) -> None:
        self._dead.add(s)
        self._value[s] = self.penalty
        self._best[s] = None
        self._best_outs[s] = ()

    def _terminal(self, s: S) -> bool:
        return s in self._goals or s in self._dead

    def _backup(self, s: S) -> float:
        """Bellman backup of an expanded, non-terminal state; returns the residual."""
        # The hot loop of every planning call, tuned for learning speed: the sums keep
        # their order (q = 1 + p₁v₁ + p₂v₂ + …, left to right) so that values, and with them
        # tie-breaking and the number of passes, do not depend on this rewrite.
        self.backups += 1
        v = self._value
        succ = self._succ[s]
        best_q = math.inf
        qs = []
        for _, outs in succ:
            q = 1.0
            for p, t in outs:
                q += p * v[t]
            qs.append(q)
            if q < best_q:  # noqa: PLR1730 - a comparison costs less than a call of min() here
                best_q = q
        if best_q < self.penalty:
            limit = best_q + self.tie_tolerance
            i = 0
            while qs[i] > limit:
                i += 1
            a, best_outs = succ[i]
            new = best_q
        else:
            a, best_outs = None, ()
            new = self.penalty
        best = self._best
        if best.get(s, a) != a:
            self._changed = True
        best[s] = a
        self._best_outs[s] = best_outs
        old = v[s]
        v[s] = new
        return abs(new - old)

    def _best_outcomes(self, s: S) -> tuple[tuple[float, S], ...]:
        return self._best_outs.get(s, ())

    def _pass(self, s0: S) -> tuple[bool, bool, float, int]:
        """One ILAO* pass; returns (expanded something, changed a best action,
        largest residual, states visited).  A best action that changes in post-order
        may lead to states this pass did not visit, so such a pass cannot certify
        convergence."""
        self._changed = False
        expanded = False
        residual = 0.0
        visited = {s0}
        stack: list[tuple[S, bool]] = [(s0, False)]
        goals, dead, succ, best_outs = self._goals, self._dead, self._succ, self._best_outs
        backup = self._backup
        while stack:
            s, post = stack.pop()
            if post:
                r = backup(s)
                if r > residual:  # noqa: PLR1730 - as in _backup
                    residual = r
                continue
            if s in goals or s in dead:
                continue
            if s not in succ:
                self._expand(s)
                expanded = True
                if not self._terminal(s):
                    residual = max(residual, backup(s))
                continue
            stack.append((s, True))
            for _, t in reversed(best_outs.get(s, ())):
                if t not in visited:
                    visited.add(t)
                    stack.append((t, False))
        return expanded, self._changed, residual, len(visited)

    def _detect_dead_ends(self) -> None:
        """Mark expanded states that reach neither a goal nor an unexpanded state."""
        self._analysed = self._version
        alive: set[S] = set()
        frontier = [s for s in self._value if s in self._goals or (s not in self._succ and s not in self._dead)]
        alive.update(frontier)
        while frontier:
            t = frontier.pop()
            for s in self._pred.get(t, ()):
                if s not in alive and s not in self._dead:
                    alive.add(s)
                    frontier.append(s)
        for s in self._succ:
            if s not in alive and s not in self._dead:
                self._mark_dead(s)

    # -- public -----------------------------------------------------------------------------
    def solve(self, s0: S) -> LAOResult[S, A]:
        """Run LAO* from ``s0`` until its best solution graph is ε-consistent."""
        self._know(s0)
        stalled = 0  # states visited by passes that expanded nothing, since the last analysis
        while True:
            expanded, changed, residual, visited = self._pass(s0)
            if expanded:
                continue
            if residual < self.epsilon and not changed:
                break
            # The analysis costs O(explicit graph); running it only once the stalled
            # passes have cost a quarter of that keeps the total linear when a goal is
            # unreachable and the whole reachable space must be expanded.
            stalled += visited
            if self._analysed != self._version and 4 * stalled >= len(self._value):
                self._detect_dead_ends()
                stalled = 0
        return self._result(s0)

    def _result(self, s0: S) -> LAOResult[S, A]:
        policy: dict[S, A] = {}
        values: dict[S, float] = {}
        goals, dead, gave_up = set(), set(), set()
        stack = [s0]
        values[s0] = self._value[s0]
        while stack:
            s = stack.pop()
            if s in self._goals:
                goals.add(s)
                continue
            a = self._best.get(s)
            if a is None:
                gave_up.add(s)
                if s in self._dead:
                    dead.add(s)
                continue
            policy[s] = a
            for _, t in self._best_outcomes(s):
                if t not in values:
                    values[t] = self._value[t]
                    stack.append(t)
        return LAOResult(
            initial=s0,
            policy=policy,
            values=values,
            goals=frozenset(goals),
            dead_ends=frozenset(dead),
            gave_up=frozenset(gave_up),
            penalty=self.penalty,
            expansions=self.expansions,
            backups=self.backups,
        )

    @property
    def dead_ends(self) -> frozenset[S]:
        """Every dead end proven so far (across all :meth:`solve` calls)."""
        return frozenset(self._dead)

    def value(self, s: S) -> float | None:
        """The current value estimate of a known state, else None."""
        return self._value.get(s)


class LAOStarOptions(TypedDict, total=False):
    """The keyword options of :class:`LAOStar`, for :func:`solve`."""

    dead_end_penalty: float
    epsilon: float
    tie_tolerance: float
    max_expansions: int | None


def solve(
    mdp: MDP[S, A],
    s0: S,
    is_goal: Callable[[S], bool],
    heuristic: Callable[[S], float] = _zero,
    **options: Unpack[LAOStarOptions],
) -> LAOResult[S, A]:
    """One-shot LAO* from ``s0`` (see :class:`LAOStar` for the options)."""
    return LAOStar(mdp, is_goal, heuristic, **options).solve(s0)

"""Confidence bounds on an agent's quantitative values from its data D: two-sided
anytime-valid bounds, and the Clopper–Pearson interval they are built from.

**Two-sided bounds on the agent** (:func:`agent_reach_bounds`,
:func:`agent_globally_bounds`, :func:`agent_rmin_bounds`): a lower and an upper bound
on the agent's Pmax and on its Pmin of ``φ U<=k ψ`` (``F`` is ``true U``, k may be
absent), ``G φ`` / ``G<=k φ`` by duality (Pmax[G φ] = 1 − Pmin[F ¬φ],
Pmin[G φ] = 1 − Pmax[F ¬φ]), and a lower bound on its Rmin of ``F ψ`` (expected
capability executions), all from the bounds of
:class:`~capver.engines.verification.sampling.SamplingBounds`.

*Assumptions.*  A1 of :mod:`~capver.engines.verification.sampling` (the agent is
Markov in the abstract states; which pair is executed next may depend on the data,
and the user may stop at any time), and the agent's capabilities are the declared
ones, ``data.capability_table`` (those the property allows): in a state s the
agent's scheduler chooses among the capabilities enabled there, and every tried pair
is enabled.  The agent's value is that of its MDP from ``init``, deadlocks fixed by a
self-loop as in :mod:`~capver.engines.verification.explicit`.

*Statement.*  Let G be the event of the sampling module: every tried pair's unseen
mass is ≤ ε(s, c) and every observed outcome's probability lies in its interval.
Pr(G) ≥ 1 − δ, and on G every bound computed here from the data holds:
lower ≤ the agent's value ≤ upper — for every property, initial state and stopping
time at once (all follow from the one event G; no union over properties is needed).

*Construction.*  The states X are those reached from ``init`` through observed
outcomes of tried pairs (ψ-states and states outside φ ∨ ψ are not expanded; for a
bound k, neither are the states at breadth-first depth k, whose values are never
used).  At an expanded state each tried pair is a choice whose distributions put
p(s′) ∈ [lo, hi] on each observed s′ and p(u) ∈ [0, ū] on one extra *unseen* outcome
u, in total 1, where ū = max(min(ε, 1 − Σ lo), 1 − Σ hi).  On G the true
distribution, its unobserved successors lumped into u, is among them (its unseen
mass is ≤ ε and = 1 − Σ P(s′) ≤ 1 − Σ lo); the term 1 − Σ hi only matters off G,
where it keeps the set non-empty.  u is worth the worst case for the direction: 1
in upper bounds (an unseen outcome might reach the goal), 0 in lower bounds (and in
the Rmin bound the goal, cost 0 after the step).  Nature picks its distribution
greedily by successor value (all lower ends, then the rest in order of value), which
is optimal over such a set.  Per bound:

====================  ====================  ======================  ================
bound                 tried pair            untried pair (s, c)     no choice at s
====================  ====================  ======================  ================
upper on Pmax         max, nature max       a choice worth 1        0 (deadlock)
lower on Pmax         max, nature min       left out (a)            0
upper on Pmin         min, nature max       left out (b)            1 (c)
lower on Pmin         min, nature min       a choice worth 0 (d)    0
lower on Rmin         min, 1 + nature min   a choice worth 1 (e)    ∞ (deadlock)
====================  ====================  ======================  ================

(a) the agent's Pmax is at least what any scheduler over tried (hence enabled) pairs
achieves; (b) its Pmin is at most the minimum over tried pairs; (c) a state with no
tried pair: nothing is known, and every probability is ≤ 1; (d) the minimising
scheduler might pick an untried pair that never reaches the goal; (e) one
execution, after which the goal may hold.

*Proof sketch.*  Let B be the agent's Bellman operator on all states and T the one
above, reading a vector v on X as worth what u is worth outside X.  On G,
T v ≥ B v pointwise on X for every such v (upper bounds), and T v ≤ B v (lower bounds):
a tried pair's true distribution is admitted and its successors outside X are worth
no more (less) than u; an enabled untried pair is worth at most 1 (at least 0, at
least 1 execution); a state where nothing is enabled is a deadlock, worth 0 (Rmin:
∞).  B is monotone.  Bounded (k steps from the ψ-indicator x₀):
T_upper^k(x₀) ≥ B^k(x₀) = the agent's value ≥ T_lower^k(x₀).  Unbounded: the
agent's value V is the least fixpoint of B.  Lower bounds iterate from x₀ ≤ V (Rmin:
from 0), upper bounds from the vector that is 1 on every state of φ ∨ ψ, ≥ V; one
state's update keeps w ≤ V (w ≥ V), because T w(s) ≤ B w(s) ≤ B V(s) = V(s).  So
*every* iterate is a bound, also when states are updated in place (Gauss–Seidel,
used here) and when the iteration stops early (``tolerance``, ``max_iterations``;
``converged`` says which): stopping costs tightness, never soundness.  From 1 an
upper bound approaches the greatest fixpoint of T from above, not its least one;
that is still a bound, and the gap is real (next paragraph).  Rmin is the least
fixpoint of its Bellman operator in [0, ∞] (non-negative costs, finitely many
states and choices), so the same argument holds for its lower bound.

*Where the bounds are wide.*  Unbounded upper bounds are 1 wherever a scheduler can
stay forever among tried pairs with ε > 0 (a capability that keeps "doing nothing"):
repeated forever, an unseen outcome of mass up to ε happens with probability 1, and
the data cannot exclude that it reaches the goal.  Bounded properties lose at most
about ε per step and are informative.  Untried pairs make the upper bound on Pmax 1
and the lower bound on Pmin 0 where they are met; :class:`AgentBounds` names up to
five, those that widen the bound first, and the largest ε of the pairs used — the
queries that narrow the bounds.

*No finite upper bound on Rmin* (unless ``init`` satisfies ψ): ε > 0 at every tried
pair, and an unseen outcome might lead to a state from which ψ is never reached.
An agent with such an outcome of mass η at the pairs of ``init`` has Rmin = ∞, and as
η → 0 its data's distribution tends to that of the agent without it; a bound that
holds with probability ≥ 1 − δ for every agent is therefore ∞ with probability
≥ 1 − δ.  The upper end of an Rmin bound is ``inf``.

*Scope "observed"* (``scope="observed"``): ε is taken as 0 and untried pairs are left
out in every direction (a state without a tried pair is a deadlock).  The bounds are
then those of an agent with no outcomes and pairs beyond the observed ones: valid at
1 − δ only under that assumption (effect and transition completeness on the states
met), as the h∧ reading of the data.

*What the environment settles* (``hopeless``, from
:func:`~capver.engines.verification.environment.hopeless`).  Where the environment is
known as a finite transition system, a state from which none of its runs reaches ψ
(through φ) has value 0 for every agent, whatever its data: such a state is not
expanded and is worth 0 in every probability bound, as a state outside φ ∨ ψ is, and
∞ in the lower bound on Rmin (no run of any agent reaches ψ from it).  Sound because
B's value there is 0 (∞ for Rmin: every run of the agent is a run of the environment), so T v ≥
B v (T v ≤ B v) still holds there; the upper bounds can only go down (an untried pair
or a state without data there no longer stands for 1), and on the good event the
lower bounds are unchanged (they are ≤ the agent's value, 0).

*Floats.*  Values are floats; rounding (≈ 1e-16 per operation) is not accounted for.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from capver.core.state import State
from capver.engines.verification.binomial import beta_ppf, betainc, clopper_pearson
from capver.engines.verification.explicit import Target

if TYPE_CHECKING:
    # The two-sided bounds only read the SamplingBounds they are given.
    from capver.engines.verification.sampling import SamplingBounds


# =====================================================================================
# Two-sided anytime-valid bounds on the agent (module docstring)
# =====================================================================================

Scope = Literal["sound", "observed"]
"""What stands in for untried pairs and unseen outcomes in the two-sided bounds: the
worst case for the direction (sound), or nothing (observed: completeness assumed)."""

Quantity = Literal["Pmax", "Pmin", "Rmin"]

MAX_LISTED = 5
"""How many untried pairs an :class:`AgentBounds` names."""


@dataclass(frozen=True, slots=True)
class AgentBounds:
    """``lower`` ≤ the agent's ``quantity`` ≤ ``upper``, at confidence 1 − ``delta``
    together with every other bound computed from the same data and δ (module
    docstring, with its assumptions; ``upper`` is ``inf`` for Rmin).

    ``tried`` / ``untried``: the tried and the untried pairs (s, c) met at the
    expanded states of the construction.  ``untried_pairs``: up to
    :data:`MAX_LISTED` of the untried ones — the queries that narrow the bound —
    first those at states where they widen it (an untried pair stands for 1 in the
    upper bound on Pmax, for 0 in the lower bound on Pmin, for one execution in the
    lower bound on Rmin; it widens the bound where the value without the untried
    pairs is worse than that), then the others, each group breadth first from the
    initial state.  ``max_epsilon``: the largest
    missing-mass bound ε among the tried pairs met, at ``widest_pair`` (0 and None
    when none was met).  ``converged``: whether unbounded value iteration met its
    tolerance; the bounds hold either way, only less tight.  ``environment``: the
    environment whose hopeless states were taken as worth 0 (None: the data alone)."""

    quantity: Quantity
    lower: float
    upper: float
    delta: float
    scope: Scope
    tried: int
    untried: int
    untried_pairs: tuple[tuple[State, str], ...]
    max_epsilon: float
    widest_pair: tuple[State, str] | None
    converged: bool = True
    environment: str | None = None

    @property
    def width(self) -> float:
        """upper − lower; 0 when both are ∞ (an Rmin no agent can make finite)."""
        return 0.0 if self.lower == self.upper else self.upper - self.lower

    def contains(self, value: float) -> bool:
        return self.lower <= value <= self.upper


_GOAL, _STOP, _OPEN, _FRONTIER, _HOPELESS = range(5)  # kinds of states of an _Arena


@dataclass(frozen=True, slots=True)
class _Row:
    """A tried pair as a choice: (successor index, lo, hi) per observed outcome, and
    ū, the most mass the unseen outcome may take."""

    outcomes: tuple[tuple[int, float, float], ...]
    unseen: float


@dataclass(frozen=True, slots=True)
class _Arena:
    """The interval MDP of the data from ``states[0]`` (module docstring,
    construction); ``kind`` per state: ψ, outside φ ∨ ψ, expanded, or beyond the
    step bound."""

    states: tuple[State, ...]
    kind: tuple[int, ...]
    rows: tuple[tuple[_Row, ...], ...]
    untried: tuple[tuple[str, ...], ...]
    max_epsilon: float
    widest_pair: tuple[State, str] | None


@dataclass(frozen=True, slots=True)
class _Side:
    """One bound's reading of an arena: a row of the module docstring's table."""

    upper: bool  # nature maximises and the unseen outcome is worth 1 (else minimises, 0)
    maximise: bool  # the scheduler's choice among the pairs
    untried: float | None  # what an untried pair is worth as a choice; None: left out
    empty: float  # the value of an expanded state without a choice (sound scope)
    empty_observed: float  # the same in the observed scope, where such a state is a deadlock
    goal: float = 1.0  # the value of a ψ-state
    cost: float = 0.0  # added per execution (1 for expected executions)
    hopeless: float = 0.0  # the value of a state from which no run of the environment reaches ψ


_PMAX_UPPER = _Side(upper=True, maximise=True, untried=1.0, empty=0.0, empty_observed=0.0)
_PMAX_LOWER = _Side(upper=False, maximise=True, untried=None, empty=0.0, empty_observed=0.0)
_PMIN_UPPER = _Side(upper=True, maximise=False, untried=None, empty=1.0, empty_observed=0.0)
_PMIN_LOWER = _Side(upper=False, maximise=False, untried=0.0, empty=0.0, empty_observed=0.0)
_RMIN_LOWER = _Side(
    upper=False,
    maximise=False,
    untried=1.0,
    empty=math.inf,
    empty_observed=math.inf,
    goal=0.0,
    cost=1.0,
    hopeless=math.inf,
)


def _arena(
    bounds: SamplingBounds,
    init: State,
    goal: Target,
    hold: Target | None,
    horizon: int | None,
    capabilities: Collection[str] | None,
    scope: Scope,
    hopeless: Target | None = None,
) -> _Arena:
    if scope not in ("sound", "observed"):
        raise ValueError(f"scope must be 'sound' or 'observed', got {scope!r}")
    if horizon is not None and horizon < 0:
        raise ValueError(f"step bound {horizon} is negative")
    caps = [c for c in bounds.data.capability_table if capabilities is None or c in capabilities]
    states: list[State] = [init]
    index: dict[State, int] = {init: 0}
    depth = [0]
    kinds: list[int] = []
    rows: list[tuple[_Row, ...]] = []
    untried: list[tuple[str, ...]] = []
    max_epsilon, widest = 0.0, None
    i = 0
    while i < len(states):
        s = states[i]
        mine: list[_Row] = []
        missing: list[str] = []
        if goal(s):
            kind = _GOAL
        elif hopeless is not None and hopeless(s):
            kind = _HOPELESS
        elif hold is not None and not hold(s):
            kind = _STOP
        elif horizon is not None and depth[i] >= horizon:
            kind = _FRONTIER  # its value after the remaining 0 steps is all that is used
        else:
            kind = _OPEN
            for c in caps:
                pb = bounds.pair(s, c)
                if pb is None:
                    missing.append(c)
                    continue
                if widest is None or pb.epsilon > max_epsilon:
                    max_epsilon, widest = pb.epsilon, (s, c)
                outcomes = []
                for s2, lo, hi in pb.intervals:
                    j = index.get(s2)
                    if j is None:
                        j = index[s2] = len(states)
                        states.append(s2)
                        depth.append(depth[i] + 1)
                    outcomes.append((j, lo, hi))
                room = 0.0 if scope == "observed" else min(pb.epsilon, 1.0 - sum(lo for _, lo, _ in outcomes))
                # Off the good event the intervals may leave mass nowhere to go (Σ hi + ε < 1);
                # the unseen outcome takes it, so that every row is a distribution.
                forced = 1.0 - sum(hi for _, _, hi in outcomes)
                mine.append(_Row(tuple(outcomes), max(room, forced, 0.0)))
        kinds.append(kind)
        rows.append(tuple(mine))
        untried.append(tuple(missing))
        i += 1
    return _Arena(tuple(states), tuple(kinds), tuple(rows), tuple(untried), max_epsilon, widest)


def _nature(row: _Row, v: list[float], side: _Side) -> float:
    """The expected value after one execution of the row's pair, for the distribution
    nature picks within the intervals: the largest (upper bounds) or the smallest."""
    items = [(v[j], lo, hi) for j, lo, hi in row.outcomes]
    items.append((1.0 if side.upper else 0.0, 0.0, row.unseen))
    items.sort(key=lambda x: x[0], reverse=side.upper)
    rest = 1.0 - sum(lo for _, lo, _ in items)
    total = 0.0
    for value, lo, hi in items:
        add = min(hi - lo, rest) if rest > 0 else 0.0
        rest -= add
        mass = lo + add
        if mass > 0:  # a successor that gets no mass costs nothing, even at value ∞ (Rmin)
            total += mass * value
    return total


def _backup(arena: _Arena, side: _Side, scope: Scope, i: int, v: list[float]) -> float:
    values = [side.cost + _nature(row, v, side) for row in arena.rows[i]]
    if arena.untried[i] and side.untried is not None and scope == "sound":
        values.append(side.untried)
    if not values:
        return side.empty if scope == "sound" else side.empty_observed
    best = max(values) if side.maximise else min(values)
    # Off the good event Σ lo may exceed 1; a probability bound stays in [0, 1].
    return best if side.cost else min(max(best, 0.0), 1.0)


def _solve(
    arena: _Arena, side: _Side, scope: Scope, horizon: int | None, tolerance: float, max_iterations: int
) -> tuple[list[float], bool]:
    """The bound in every state of the arena, and whether the iteration converged
    (module docstring: every iterate is a bound)."""
    v = [side.goal if k == _GOAL else side.hopeless if k == _HOPELESS else 0.0 for k in arena.kind]
    expanded = [i for i, k in enumerate(arena.kind) if k == _OPEN]
    if horizon is not None:
        for _ in range(horizon):
            nxt = list(v)
            for i in expanded:
                nxt[i] = _backup(arena, side, scope, i, v)
            v = nxt
        return v, True
    if side.upper:
        for i in expanded:
            v[i] = 1.0  # above the agent's value: iterates from here stay above it
    # In place, deepest states first: values flow back from ψ in fewer sweeps.
    order = expanded[::-1]
    for _ in range(max_iterations):
        change = 0.0
        for i in order:
            new, old = _backup(arena, side, scope, i, v), v[i]
            if new != old:
                v[i] = new
                if math.isinf(new) or math.isinf(old):
                    change = math.inf
                else:
                    change = max(change, abs(new - old) / max(1.0, abs(old)) if side.cost else abs(new - old))
        if change < tolerance:
            return v, True
    return v, False


def _listed(
    arena: _Arena, side: _Side, scope: Scope, horizon: int | None, tolerance: float, max_iterations: int
) -> tuple[tuple[State, str], ...]:
    """Up to :data:`MAX_LISTED` untried pairs met: first those at states whose value
    in ``side``'s bound without the untried pairs is worse than their stand-in (they
    widen the bound there), then the others, each group breadth first."""
    if not any(arena.untried):
        return ()
    decisive: list[tuple[State, str]] = []
    others: list[tuple[State, str]] = []
    stand_in = side.untried
    without = None
    if scope == "sound" and stand_in is not None:
        without, _ = _solve(arena, replace(side, untried=None), scope, horizon, tolerance, max_iterations)
    slack = 1e-9  # float noise must not make a pair decisive
    for i, missing in enumerate(arena.untried):
        if not missing:
            continue
        decides = (
            without is not None
            and stand_in is not None
            and (without[i] < stand_in - slack if side.maximise else without[i] > stand_in + slack)
        )
        (decisive if decides else others).extend((arena.states[i], c) for c in missing)
    return tuple((decisive + others)[:MAX_LISTED])


def agent_reach_bounds(
    bounds: SamplingBounds,
    init: State,
    goal: Target,
    bound: int | None,
    *,
    maximise: bool,
    hold: Target | None = None,
    capabilities: Collection[str] | None = None,
    scope: Scope = "sound",
    hopeless: Target | None = None,
    tolerance: float = 1e-10,
    max_iterations: int = 10_000,
) -> AgentBounds:
    """Bounds on the agent's Pmax (Pmin unless ``maximise``) of ``hold U<=bound goal``
    from ``init`` (``F`` when ``hold`` is None, unbounded when ``bound`` is None) at
    the confidence 1 − δ of ``bounds`` (module docstring).  ``capabilities``
    restricts the scheduler (None: every declared capability).  ``hopeless``: states
    known to be worth 0 for every agent (module docstring, *What the environment
    settles*).  Unbounded value iteration stops when a sweep changes no value by
    ``tolerance`` or more, or after ``max_iterations`` sweeps."""
    arena = _arena(bounds, init, goal, hold, bound, capabilities, scope, hopeless)
    low_side, up_side = (_PMAX_LOWER, _PMAX_UPPER) if maximise else (_PMIN_LOWER, _PMIN_UPPER)
    low, low_ok = _solve(arena, low_side, scope, bound, tolerance, max_iterations)
    up, up_ok = _solve(arena, up_side, scope, bound, tolerance, max_iterations)
    # Untried pairs widen the upper bound on Pmax and the lower bound on Pmin.
    listed = _listed(arena, up_side if maximise else low_side, scope, bound, tolerance, max_iterations)
    return AgentBounds(
        "Pmax" if maximise else "Pmin",
        low[0],
        up[0],
        bounds.delta,
        scope,
        sum(map(len, arena.rows)),
        sum(map(len, arena.untried)),
        listed,
        arena.max_epsilon,
        arena.widest_pair,
        low_ok and up_ok,
    )


def agent_globally_bounds(
    bounds: SamplingBounds,
    init: State,
    invariant: Target,
    bound: int | None,
    *,
    maximise: bool,
    capabilities: Collection[str] | None = None,
    scope: Scope = "sound",
    hopeless: Target | None = None,
    tolerance: float = 1e-10,
    max_iterations: int = 10_000,
) -> AgentBounds:
    """Bounds on the agent's Pmax (Pmin) of ``G<=bound invariant``, by duality from
    those on its Pmin (Pmax) of ``F<=bound ¬invariant``: [1 − upper, 1 − lower].
    ``hopeless``: states from which no agent can break the invariant (its
    probability of ``F ¬invariant`` is 0 there)."""
    dual = agent_reach_bounds(
        bounds,
        init,
        lambda s: not invariant(s),
        bound,
        maximise=not maximise,
        capabilities=capabilities,
        scope=scope,
        hopeless=hopeless,
        tolerance=tolerance,
        max_iterations=max_iterations,
    )
    return replace(dual, quantity="Pmax" if maximise else "Pmin", lower=1.0 - dual.upper, upper=1.0 - dual.lower)


def agent_rmin_bounds(
    bounds: SamplingBounds,
    init: State,
    goal: Target,
    *,
    capabilities: Collection[str] | None = None,
    scope: Scope = "sound",
    hopeless: Target | None = None,
    tolerance: float = 1e-10,
    max_iterations: int = 10_000,
) -> AgentBounds:
    """A lower bound on the agent's Rmin of ``F goal`` (the fewest expected capability
    executions over schedulers) from ``init``; the upper end is ``inf`` (0 when
    ``init`` satisfies ``goal``): no finite upper bound follows from the data
    (module docstring).  ``hopeless``: states from which no agent reaches the goal,
    where Rmin is ∞.  ``tolerance`` is relative to the value."""
    arena = _arena(bounds, init, goal, None, None, capabilities, scope, hopeless)
    low, ok = _solve(arena, _RMIN_LOWER, scope, None, tolerance, max_iterations)
    upper = 0.0 if arena.kind[0] == _GOAL else math.inf
    return AgentBounds(
        "Rmin",
        low[0],
        upper,
        bounds.delta,
        scope,
        sum(map(len, arena.rows)),
        sum(map(len, arena.untried)),
        _listed(arena, _RMIN_LOWER, scope, None, tolerance, max_iterations),
        arena.max_epsilon,
        arena.widest_pair,
        ok,
    )


__all__ = [
    "MAX_LISTED",
    "AgentBounds",
    "Quantity",
    "Scope",
    "agent_globally_bounds",
    "agent_reach_bounds",
    "agent_rmin_bounds",
    "beta_ppf",
    "betainc",
    "clopper_pearson",
]

"""capver's own explicit-state model checker for the MDP of a capability model
(paper, section 2: in state s the choices are the capabilities c with R_s ≠ ∅, each
leading to s′ with probability Pr_h(s′ | s, c)), independent of Storm.

**States.**  :func:`explore` enumerates the states reachable from the initial state
through ``CapabilityModel.distribution`` — the rule semantics itself, not the BDD
regions the PRISM export uses, so agreement with Storm checks the translation too —
and raises :class:`StateSpaceLimitError` past a limit.  A state where no capability
is enabled gets one unlabelled self-loop (``capability=None``, no reward), exactly as
Storm and PRISM fix deadlocks, so both engines solve the same MDP.

**Bounded properties** (Pmax/Pmin of F<=k φ; G<=k φ as 1 − Pmin/Pmax of F<=k ¬φ):
k steps of value iteration, in :class:`fractions.Fraction` s when exact.

**Unbounded reachability** (Pmax/Pmin of F φ): graph pre-computation first — the
states with probability 0 (Prob0E for max: no path to φ; Prob0A for min: some
scheduler avoids φ forever) and 1 (Prob1E / Prob1A) — then policy iteration on the
remaining states, each policy evaluated by solving its linear system
(I − P_σ) x = b exactly (sparse Gaussian elimination over Fractions).  The
pre-computation is what makes the systems non-singular: for min, no remaining state
can stay among the remaining states forever under any policy; for max, the start
policy is the attractor policy (each state moves one BFS layer closer to the
probability-1 states), which leaves them with probability 1, and switching only on
strict improvement keeps that property (the states of highest value in a closed set
would have to be unswitched and closed under the old policy).

**Until** (Pmax/Pmin of φ U ψ and φ U<=k ψ): a run decides the formula at its
first state outside φ ∧ ¬ψ — satisfied there if ψ holds, failed if not, and nothing
after matters — so those states are made absorbing (:func:`absorbing`: one
unlabelled self-loop) and the value is that of F ψ (F<=k ψ) on the result, by the
reachability algorithms above.  On the absorbing MDP a ψ state is the target (value
1) and a ¬φ ∧ ¬ψ state can reach nothing else (value 0), which is the until's
meaning; F ψ is the special case φ = true.

**Expected executions** (Rmin/Rmax of F φ, one unit per capability execution): ∞
where the target is not reached with probability 1 under the best (Rmin: Prob1E) or
every (Rmax: Prob1A) scheduler, the convention of PRISM and Storm; elsewhere policy
iteration over the choices that stay in that set (for Rmin starting from the
attractor policy; every step costs 1, so a policy that never arrives costs ∞ and is
never an improvement).

**Exact or float.**  ``exact=True`` computes in Fractions and returns Fractions;
``exact=False`` runs the same algorithms on floats (comparisons with a tolerance)
and returns floats; the default (None) is exact up to :data:`EXACT_STATE_LIMIT`
states.  Infinite expectations are the float ``inf`` either way.

**Interval MDPs** (:func:`robust_reach`, :func:`robust_pmax`): each (s, c, s′) may
carry an interval [lo, hi] of probabilities instead of Pr_h(s′|s,c) (missing ones are
the point value [p, p]).  Value iteration whose inner step picks, among the
distributions within the intervals, the best (``nature="max"``; the standard
construction: all lower bounds, then the remaining mass to the successors in order
of decreasing value, each up to its upper bound) or the worst (``nature="min"``,
increasing value) for the current values.  Bounded: exact k steps.  Unbounded:
float iteration from 0 until the largest change is below ``tolerance`` — iteration
from below converges to the value, but the stopping rule is not a proof of precision.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal

from capver.core.state import State
from capver.errors import CapverError
from capver.model.capability_model import CompoundModel

Value = Fraction | float
"""A probability or an expected number of executions: a Fraction when computed
exactly, else a float (and ``inf`` for an infinite expectation)."""

Target = Callable[[State], bool]
"""A set of states by its membership test, e.g. ``Cube(mask, value).holds`` or
``lambda s: ctx.bdd.evaluate(node, s)``."""

Interval = tuple[Fraction | float, Fraction | float]
Intervals = Mapping[tuple[State, str, State], Interval]
"""(s, c, s′) → [lo, hi]: the interval of Pr(s′ | s, c) of an interval MDP."""

DEFAULT_STATE_LIMIT = 200_000
EXACT_STATE_LIMIT = 5_000
"""Above this many reachable states ``exact=None`` computes in floats: exact
Gaussian elimination grows the rationals' sizes with the fill-in."""

FLOAT_TOLERANCE = 1e-12
"""Float policy iteration switches a choice only if it is better by more than this."""

INFINITY = math.inf


class StateSpaceLimitError(CapverError, ValueError):
    """More states are reachable than the explicit engine was allowed to enumerate."""


class IntervalError(CapverError, ValueError):
    """Intervals that do not define a set of distributions (lo > hi, outside [0, 1],
    Σ lo > 1 or Σ hi < 1), or that are given for a capability not enabled in a state."""


@dataclass(frozen=True, slots=True)
class Choice:
    """One choice of a state: capability ``capability`` (None for the self-loop of a
    state where no capability is enabled) and its successors as (index, p)."""

    capability: str | None
    successors: tuple[tuple[int, Fraction], ...]


@dataclass(frozen=True, slots=True)
class ExplicitMDP:
    """The reachable part of a model's MDP; state 0 is the initial state."""

    states: tuple[State, ...]
    index: Mapping[State, int]
    choices: tuple[tuple[Choice, ...], ...]
    _pre: list[list[tuple[int, int]]] = field(default_factory=list, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.states)

    @property
    def nr_choices(self) -> int:
        return sum(len(cs) for cs in self.choices)

    @property
    def nr_transitions(self) -> int:
        return sum(len(ch.successors) for cs in self.choices for ch in cs)

    def deadlocks(self) -> list[int]:
        """The states where no capability is enabled (they have the self-loop)."""
        return [i for i, cs in enumerate(self.choices) if cs[0].capability is None]

    def mask(self, target: Target) -> list[bool]:
        return [bool(target(s)) for s in self.states]

    def predecessors(self) -> list[list[tuple[int, int]]]:
        """pre[t] = the (state, choice number) pairs that have t among their
        successors (computed once: every graph algorithm searches backwards)."""
        pre = self._pre
        if not pre:
            pre.extend([] for _ in range(len(self.states)))
            for s, cs in enumerate(self.choices):
                for a, ch in enumerate(cs):
                    for t, _ in ch.successors:
                        pre[t].append((s, a))
        return pre


def explore(model: CompoundModel, init: State, limit: int = DEFAULT_STATE_LIMIT) -> ExplicitMDP:
    """The states reachable from ``init`` (breadth first) with their choices;
    :class:`StateSpaceLimitError` when there are more than ``limit``."""
    states: list[State] = [init]
    index: dict[State, int] = {init: 0}
    choices: list[tuple[Choice, ...]] = []
    caps = list(model.values())
    i = 0
    while i < len(states):
        s = states[i]
        mine: list[Choice] = []
        for cm in caps:
            dist = cm.distribution(s)
            if not dist:
                continue
            succ = []
            for s2, p in sorted(dist.items()):
                j = index.get(s2)
                if j is None:
                    if len(states) >= limit:
                        raise StateSpaceLimitError(
                            f"more than {limit} states are reachable from {model.vocabulary.format_state(init)}"
                        )
                    j = len(states)
                    index[s2] = j
                    states.append(s2)
                succ.append((j, p))
            mine.append(Choice(cm.name, tuple(succ)))
        if not mine:
            mine.append(Choice(None, ((i, Fraction(1)),)))  # Storm's deadlock fix
        choices.append(tuple(mine))
        i += 1
    return ExplicitMDP(tuple(states), index, tuple(choices))


# =====================================================================================
# Numbers: the same algorithms over Fractions (exact) or floats
# =====================================================================================


@dataclass(frozen=True, slots=True)
class _Arith:
    exact: bool

    def num(self, p: Fraction) -> Value:
        return p if self.exact else float(p)

    @property
    def zero(self) -> Value:
        return Fraction(0) if self.exact else 0.0

    @property
    def one(self) -> Value:
        return Fraction(1) if self.exact else 1.0

    def better(self, a: Value, b: Value, maximise: bool) -> bool:
        """a is strictly better than b (beyond the float tolerance)."""
        if self.exact:
            return a > b if maximise else a < b
        tol = FLOAT_TOLERANCE * max(1.0, abs(float(b)))
        return a > b + tol if maximise else a < b - tol


def _arith(mdp: ExplicitMDP, exact: bool | None) -> _Arith:
    return _Arith(len(mdp) <= EXACT_STATE_LIMIT if exact is None else exact)


def _solve(rows: list[dict[int, Value]], rhs: list[Value]) -> list[Value]:
    """x with rows · x = rhs (row i: {column: coefficient}), by sparse Gaussian
    elimination without pivoting, in the rows' own order.  The systems here are
    (I − P_σ) for a policy that leaves the unknowns with probability 1: non-singular
    M-matrices, whose leading minors are all positive, so no pivot is ever zero (and
    elimination is stable in floats).  ``rows`` and ``rhs`` are consumed."""
    n = len(rows)
    cols: list[set[int]] = [set() for _ in range(n)]
    for i, row in enumerate(rows):
        for j in row:
            cols[j].add(i)
    for k in range(n):
        rk = rows[k]
        piv = rk.pop(k)
        for j in rk:
            rk[j] = rk[j] / piv
            cols[j].discard(k)
        rhs[k] = rhs[k] / piv
        cols[k].discard(k)
        for i in cols[k]:  # rows below k that still have column k (rows above lost it already)
            ri = rows[i]
            f = ri.pop(k)
            for j, a in rk.items():
                v = ri.get(j, 0) - f * a
                if v:
                    ri[j] = v
                    cols[j].add(i)
                else:
                    ri.pop(j, None)
                    cols[j].discard(i)
            rhs[i] = rhs[i] - f * rhs[k]
        cols[k].clear()
    x: list[Value] = [0] * n
    for k in range(n - 1, -1, -1):
        acc = rhs[k]
        for j, a in rows[k].items():
            acc = acc - a * x[j]
        x[k] = acc
    return x


# =====================================================================================
# Graph pre-computation (Baier & Katoen, Principles of Model Checking, 10.6)
# =====================================================================================


def _can_reach(mdp: ExplicitMDP, goal: Sequence[bool], allowed: Sequence[bool] | None = None) -> list[bool]:
    """States with a path (through ``allowed`` states) to ``goal``: Pmax > 0."""
    pre = mdp.predecessors()
    seen = list(goal)
    queue = deque(i for i, g in enumerate(goal) if g)
    while queue:
        t = queue.popleft()
        for s, _ in pre[t]:
            if not seen[s] and (allowed is None or allowed[s]):
                seen[s] = True
                queue.append(s)
    return seen


def _forced(mdp: ExplicitMDP, goal: Sequence[bool]) -> list[bool]:
    """States from which every scheduler reaches ``goal`` with positive probability
    (the complement of Prob0A): least fixpoint of goal ∪ {s : every choice of s has
    a successor in the set}."""
    pre = mdp.predecessors()
    inside = list(goal)
    hit = [[False] * len(cs) for cs in mdp.choices]
    count = [0] * len(mdp)
    queue = deque(i for i, g in enumerate(goal) if g)
    while queue:
        t = queue.popleft()
        for s, a in pre[t]:
            if inside[s] or hit[s][a]:
                continue
            hit[s][a] = True
            count[s] += 1
            if count[s] == len(mdp.choices[s]):
                inside[s] = True
                queue.append(s)
    return inside


def _prob1_max(mdp: ExplicitMDP, goal: Sequence[bool]) -> list[bool]:
    """Prob1E: states where some scheduler reaches ``goal`` with probability 1.
    Greatest fixpoint U of: the states that reach goal using only choices whose
    successors all lie in U (each round one backward search within U)."""
    pre = mdp.predecessors()
    u = [True] * len(mdp)
    while True:
        r = list(goal)
        queue = deque(i for i, g in enumerate(goal) if g)
        while queue:
            t = queue.popleft()
            for s, a in pre[t]:
                if r[s] or not u[s]:
                    continue
                if all(u[x] for x, _ in mdp.choices[s][a].successors):
                    r[s] = True
                    queue.append(s)
        if r == u:
            return u
        u = r


def _prob1_min(mdp: ExplicitMDP, goal: Sequence[bool], zero_min: Sequence[bool]) -> list[bool]:
    """Prob1A: states where every scheduler reaches ``goal`` with probability 1 —
    those that cannot reach a Pmin = 0 state while avoiding goal."""
    avoid = [not g for g in goal]
    below = _can_reach(mdp, zero_min, allowed=avoid)
    return [not b for b in below]


def _attractor(mdp: ExplicitMDP, base: Sequence[bool], region: Sequence[bool], stay: Sequence[bool]) -> dict[int, int]:
    """For every ``region`` state outside ``base``, a choice with a successor one
    BFS layer closer to ``base``, among the choices whose successors all lie in
    ``stay`` (all choices when ``stay`` is everything)."""
    pre = mdp.predecessors()
    policy: dict[int, int] = {}
    done = list(base)
    queue = deque(i for i, b in enumerate(base) if b)
    while queue:
        t = queue.popleft()
        for s, a in pre[t]:
            if done[s] or not region[s]:
                continue
            if all(stay[x] for x, _ in mdp.choices[s][a].successors):
                done[s] = True
                policy[s] = a
                queue.append(s)
    return policy


# =====================================================================================
# Policy iteration
# =====================================================================================


def _evaluate(
    mdp: ExplicitMDP,
    ar: _Arith,
    unknown: list[int],
    policy: Mapping[int, int],
    known: Sequence[Value],
    cost: Callable[[Choice], Value] | None,
) -> dict[int, Value]:
    """Values of the ``unknown`` states under ``policy``: x_s = cost(σ(s)) +
    Σ_t P(s, σ(s), t) · (x_t if t is unknown else known[t])."""
    pos = {s: k for k, s in enumerate(unknown)}
    rows: list[dict[int, Value]] = []
    rhs: list[Value] = []
    for s in unknown:
        ch = mdp.choices[s][policy[s]]
        row: dict[int, Value] = {pos[s]: ar.one}
        b = ar.zero if cost is None else cost(ch)
        for t, p in ch.successors:
            k = pos.get(t)
            if k is None:
                b = b + ar.num(p) * known[t]
            else:
                row[k] = row.get(k, ar.zero) - ar.num(p)
        rows.append(row)
        rhs.append(b)
    x = _solve(rows, rhs)
    return {s: x[k] for k, s in enumerate(unknown)}


def _policy_iteration(
    mdp: ExplicitMDP,
    ar: _Arith,
    unknown: list[int],
    policy: dict[int, int],
    known: list[Value],
    maximise: bool,
    cost: Callable[[Choice], Value] | None = None,
    allowed: Callable[[int, Choice], bool] | None = None,
) -> list[Value]:
    """Optimal values: ``known`` completed on the ``unknown`` states, starting from
    ``policy`` (which must leave the unknown states with probability 1) and switching
    a state's choice only when another is strictly better."""
    values = list(known)
    while True:
        x = _evaluate(mdp, ar, unknown, policy, values, cost)
        for s, v in x.items():
            values[s] = v
        switched = False
        for s in unknown:
            best, best_a = values[s], policy[s]
            for a, ch in enumerate(mdp.choices[s]):
                if a == policy[s] or (allowed is not None and not allowed(s, ch)):
                    continue
                q = ar.zero if cost is None else cost(ch)
                for t, p in ch.successors:
                    q = q + ar.num(p) * values[t]
                if ar.better(q, best, maximise):
                    best, best_a = q, a
            if best_a != policy[s]:
                policy[s] = best_a
                switched = True
        if not switched:
            return values


def policy_iteration(
    mdp: ExplicitMDP,
    unknown: Sequence[int],
    policy: Mapping[int, int],
    known: Sequence[Value],
    maximise: bool,
    *,
    exact: bool = True,
) -> list[Value]:
    """Pmax / Pmin of reaching the states ``known`` gives value 1 (0 elsewhere) by
    policy iteration from a given start: ``policy`` (state → choice number) must leave
    the ``unknown`` states with probability 1; the sparse engine starts it from a
    float solution's policy, so that it usually ends after one exact evaluation."""
    return _policy_iteration(mdp, _Arith(exact), list(unknown), dict(policy), list(known), maximise)


# =====================================================================================
# Queries on an explored MDP (values for every state)
# =====================================================================================


def bounded_reach_values(
    mdp: ExplicitMDP, target: Sequence[bool], bound: int, *, maximise: bool = True, exact: bool | None = None
) -> list[Value]:
    """Pmax / Pmin of F<=bound target in every state: ``bound`` steps of value
    iteration from the target's indicator."""
    if bound < 0:
        raise ValueError(f"step bound {bound} is negative")
    ar = _arith(mdp, exact)
    pick = max if maximise else min
    v: list[Value] = [ar.one if g else ar.zero for g in target]
    # Only states that can reach the target within the bound can change: skip the rest.
    live = [s for s, ok in enumerate(_can_reach(mdp, target)) if ok and not target[s]]
    for _ in range(bound):
        nxt = list(v)
        for s in live:
            best: Value | None = None
            for ch in mdp.choices[s]:
                q = ar.zero
                for t, p in ch.successors:
                    if v[t]:
                        q = q + ar.num(p) * v[t]
                best = q if best is None else pick(best, q)
            assert best is not None  # every state has a choice (deadlocks the self-loop)
            nxt[s] = best
        v = nxt
    return v


def reach_values(
    mdp: ExplicitMDP, target: Sequence[bool], *, maximise: bool = True, exact: bool | None = None
) -> list[Value]:
    """Pmax / Pmin of F target in every state (graph pre-computation, then policy
    iteration; see the module docstring)."""
    ar = _arith(mdp, exact)
    n = len(mdp)
    if maximise:
        positive = _can_reach(mdp, target)
        one = _prob1_max(mdp, target)
    else:
        positive = _forced(mdp, target)
        one = _prob1_min(mdp, target, [not p for p in positive])
    known: list[Value] = [ar.one if one[s] else ar.zero for s in range(n)]
    unknown = [s for s in range(n) if positive[s] and not one[s]]
    if not unknown:
        return known
    if maximise:
        region = [positive[s] and not one[s] for s in range(n)]
        policy = _attractor(mdp, one, region, [True] * n)
    else:
        # After Prob0A no policy can keep a state among the unknown ones forever.
        policy = dict.fromkeys(unknown, 0)
    return _policy_iteration(mdp, ar, unknown, policy, known, maximise)


def absorbing(mdp: ExplicitMDP, stop: Sequence[bool]) -> ExplicitMDP:
    """``mdp`` with every ``stop`` state made absorbing: its choices replaced by one
    unlabelled self-loop (the deadlock fix's choice).  The states and their indices
    are kept, so values computed on the result index the same states."""
    if len(stop) != len(mdp):
        raise ValueError(f"{len(stop)} stop flags for {len(mdp)} states")
    choices = tuple((Choice(None, ((s, Fraction(1)),)),) if stop[s] else cs for s, cs in enumerate(mdp.choices))
    return ExplicitMDP(mdp.states, mdp.index, choices)


def until_values(
    mdp: ExplicitMDP,
    hold: Sequence[bool],
    goal: Sequence[bool],
    bound: int | None = None,
    *,
    maximise: bool = True,
    exact: bool | None = None,
) -> list[Value]:
    """Pmax / Pmin of hold U goal (hold U<=bound goal) in every state: the states
    outside hold ∧ ¬goal made absorbing, then F goal (F<=bound goal) on that MDP
    (module docstring, "Until")."""
    if len(hold) != len(mdp) or len(goal) != len(mdp):
        raise ValueError("hold and goal need one flag per state")
    # A run's first state outside hold ∧ ¬goal decides the until; what follows it
    # must not count, hence the self-loop there.
    stopped = absorbing(mdp, [g or not h for h, g in zip(hold, goal, strict=True)])
    if bound is None:
        return reach_values(stopped, goal, maximise=maximise, exact=exact)
    return bounded_reach_values(stopped, goal, bound, maximise=maximise, exact=exact)


def executions_values(
    mdp: ExplicitMDP, target: Sequence[bool], *, maximise: bool = False, exact: bool | None = None
) -> list[Value]:
    """Rmin / Rmax of the number of capability executions until ``target`` in every
    state (``inf`` where the target is not reached with probability 1 under the
    best / every scheduler)."""
    ar = _arith(mdp, exact)
    n = len(mdp)
    if maximise:
        finite = _prob1_min(mdp, target, [not p for p in _forced(mdp, target)])
    else:
        finite = _prob1_max(mdp, target)
    known: list[Value] = [ar.zero if target[s] else INFINITY for s in range(n)]
    unknown = [s for s in range(n) if finite[s] and not target[s]]
    if not unknown:
        return known

    def cost(ch: Choice) -> Value:
        return ar.zero if ch.capability is None else ar.one

    def stays(s: int, ch: Choice) -> bool:
        return all(finite[t] for t, _ in ch.successors)

    if maximise:
        # Prob1A is closed under every choice, and every policy reaches the target.
        policy = dict.fromkeys(unknown, 0)
    else:
        region = [finite[s] and not target[s] for s in range(n)]
        policy = _attractor(mdp, target, region, finite)
    for s in unknown:
        known[s] = ar.zero  # placeholders: evaluation overwrites them
    return _policy_iteration(mdp, ar, unknown, policy, known, maximise, cost=cost, allowed=stays)


# =====================================================================================
# Queries on a model from an initial state
# =====================================================================================


def _explored(model: CompoundModel, init: State, target: Target, limit: int) -> tuple[ExplicitMDP, list[bool]]:
    mdp = explore(model, init, limit)
    return mdp, mdp.mask(target)


def pmax_reach(
    model: CompoundModel,
    init: State,
    target: Target,
    bound: int | None = None,
    maximise: bool = True,
    *,
    exact: bool | None = None,
    limit: int = DEFAULT_STATE_LIMIT,
) -> Value:
    """Pmax (Pmin when not ``maximise``) of F target (F<=bound target) from ``init``."""
    mdp, mask = _explored(model, init, target, limit)
    if bound is None:
        return reach_values(mdp, mask, maximise=maximise, exact=exact)[0]
    return bounded_reach_values(mdp, mask, bound, maximise=maximise, exact=exact)[0]


def pmin_reach(
    model: CompoundModel,
    init: State,
    target: Target,
    bound: int | None = None,
    *,
    exact: bool | None = None,
    limit: int = DEFAULT_STATE_LIMIT,
) -> Value:
    """Pmin of F target (F<=bound target) from ``init``."""
    return pmax_reach(model, init, target, bound, False, exact=exact, limit=limit)


def globally(
    model: CompoundModel,
    init: State,
    invariant: Target,
    bound: int | None = None,
    maximise: bool = True,
    *,
    exact: bool | None = None,
    limit: int = DEFAULT_STATE_LIMIT,
) -> Value:
    """Pmax (Pmin) of G invariant (G<=bound invariant) = 1 − Pmin (Pmax) of
    F ¬invariant (F<=bound ¬invariant)."""
    return 1 - pmax_reach(model, init, lambda s: not invariant(s), bound, not maximise, exact=exact, limit=limit)


def until(
    model: CompoundModel,
    init: State,
    hold: Target,
    goal: Target,
    bound: int | None = None,
    maximise: bool = True,
    *,
    exact: bool | None = None,
    limit: int = DEFAULT_STATE_LIMIT,
) -> Value:
    """Pmax (Pmin when not ``maximise``) of hold U goal (hold U<=bound goal) from
    ``init`` (:func:`until_values`)."""
    mdp, goal_mask = _explored(model, init, goal, limit)
    return until_values(mdp, mdp.mask(hold), goal_mask, bound, maximise=maximise, exact=exact)[0]


def expected_executions(
    model: CompoundModel,
    init: State,
    target: Target,
    maximise: bool = False,
    *,
    exact: bool | None = None,
    limit: int = DEFAULT_STATE_LIMIT,
) -> Value:
    """Rmin (Rmax) of the capability executions until ``target`` from ``init``."""
    mdp, mask = _explored(model, init, target, limit)
    return executions_values(mdp, mask, maximise=maximise, exact=exact)[0]


# =====================================================================================
# Interval MDPs: robust value iteration
# =====================================================================================


@dataclass(frozen=True, slots=True)
class _IntervalChoice:
    successors: tuple[tuple[int, Value, Value], ...]  # (t, lo, hi)


def _interval_mdp(
    model: CompoundModel, init: State, intervals: Intervals, limit: int
) -> tuple[list[State], list[list[_IntervalChoice]]]:
    """The states reachable through successors with a positive upper bound, each
    choice with its successors' intervals (point values where none is given)."""
    grouped: dict[tuple[State, str], dict[State, Interval]] = {}
    for (s, c, s2), iv in intervals.items():
        grouped.setdefault((s, c), {})[s2] = iv
    states: list[State] = [init]
    index = {init: 0}
    choices: list[list[_IntervalChoice]] = []
    caps = list(model.values())
    used: set[tuple[State, str]] = set()
    i = 0
    while i < len(states):
        s = states[i]
        mine: list[_IntervalChoice] = []
        for cm in caps:
            dist = cm.distribution(s)
            if not dist:
                continue
            given = grouped.get((s, cm.name), {})
            used.add((s, cm.name))
            succ = []
            for s2 in sorted(set(dist) | set(given)):
                p = dist.get(s2, Fraction(0))
                lo, hi = given.get(s2, (p, p))
                if not (0 <= lo <= hi <= 1):
                    raise IntervalError(f"interval [{lo}, {hi}] of ({s}, {cm.name!r}, {s2}) is not within [0, 1]")
                if hi == 0:
                    continue
                j = index.get(s2)
                if j is None:
                    if len(states) >= limit:
                        raise StateSpaceLimitError(f"more than {limit} states are reachable in the interval MDP")
                    j = index[s2] = len(states)
                    states.append(s2)
                succ.append((j, lo, hi))
            # Float intervals that sum to 1 up to rounding must be accepted.
            slack = 1e-9 if any(isinstance(x, float) for _, lo, hi in succ for x in (lo, hi)) else 0
            if sum(lo for _, lo, _ in succ) > 1 + slack or sum(hi for _, _, hi in succ) < 1 - slack:
                raise IntervalError(f"the intervals of ({s}, {cm.name!r}) admit no distribution")
            mine.append(_IntervalChoice(tuple(succ)))
        if not mine:
            mine.append(_IntervalChoice(((i, Fraction(1), Fraction(1)),)))
        choices.append(mine)
        i += 1
    index_states = set(index)
    stray = [k for k in grouped if k[0] in index_states and k not in used]
    if stray:
        s, c = stray[0]
        raise IntervalError(f"intervals given for capability {c!r} in state {s}, where it is not enabled")
    return states, choices


def _extreme(ch: _IntervalChoice, v: Sequence[Value], nature_max: bool, zero: Value) -> Value:
    """max (min) of Σ P(t)·v(t) over the distributions P within the intervals: all
    lower bounds, then the rest of the mass to the successors in order of decreasing
    (increasing) value, each up to its upper bound."""
    order = sorted(ch.successors, key=lambda x: v[x[0]], reverse=nature_max)
    rest = 1 - sum((lo for _, lo, _ in order), zero)
    total = zero
    for t, lo, hi in order:
        add = min(hi - lo, rest)
        rest = rest - add
        total = total + (lo + add) * v[t]
    return total


def robust_reach(
    model: CompoundModel,
    init: State,
    target: Target,
    bound: int | None,
    intervals: Intervals,
    *,
    maximise: bool = True,
    nature: Literal["max", "min"] = "max",
    limit: int = DEFAULT_STATE_LIMIT,
    tolerance: float = 1e-12,
    max_iterations: int = 1_000_000,
) -> Value:
    """Pmax (Pmin) of F<=bound target (F target when ``bound`` is None) in the
    interval MDP of ``model`` and ``intervals``, with nature choosing the
    distributions within the intervals to maximise (``"max"``) or minimise
    (``"min"``, the pessimistic, robust reading) the probability.  Bounded: exact
    when the intervals are Fractions; unbounded: a float (see the module docstring)."""
    if bound is not None and bound < 0:
        raise ValueError(f"step bound {bound} is negative")
    states, choices = _interval_mdp(model, init, intervals, limit)
    goal = [bool(target(s)) for s in states]
    floats = bound is None or any(isinstance(x, float) for iv in intervals.values() for x in iv)
    zero: Value = 0.0 if floats else Fraction(0)
    one: Value = 1.0 if floats else Fraction(1)
    if floats:
        choices = [
            [_IntervalChoice(tuple((t, float(lo), float(hi)) for t, lo, hi in ch.successors)) for ch in cs]
            for cs in choices
        ]
    pick = max if maximise else min
    v: list[Value] = [one if g else zero for g in goal]
    steps = bound if bound is not None else max_iterations
    for _ in range(steps):
        nxt = list(v)
        delta = 0.0
        for s, cs in enumerate(choices):
            if goal[s]:
                continue
            best = pick(_extreme(ch, v, nature == "max", zero) for ch in cs)
            delta = max(delta, abs(float(best - v[s])))
            nxt[s] = best
        v = nxt
        if bound is None and delta < tolerance:
            break
    return v[0]


def robust_pmax(
    model: CompoundModel,
    init: State,
    target: Target,
    bound: int | None,
    intervals: Intervals,
    *,
    nature: Literal["max", "min"] = "max",
    limit: int = DEFAULT_STATE_LIMIT,
) -> Value:
    """Pmax of F<=bound target over the interval MDP (:func:`robust_reach`); with
    the default ``nature="max"`` the largest value any choice of distributions within
    the intervals gives, so widening the intervals never lowers it."""
    return robust_reach(model, init, target, bound, intervals, maximise=True, nature=nature, limit=limit)


def point_intervals(model: CompoundModel, states: Iterable[State]) -> dict[tuple[State, str, State], Interval]:
    """The zero-width intervals [p, p] of the model's own probabilities at ``states``."""
    out: dict[tuple[State, str, State], Interval] = {}
    for s in states:
        for c, cm in model.items():
            for s2, p in cm.distribution(s).items():
                out[(s, c, s2)] = (p, p)
    return out


__all__ = [
    "DEFAULT_STATE_LIMIT",
    "EXACT_STATE_LIMIT",
    "Choice",
    "ExplicitMDP",
    "Interval",
    "IntervalError",
    "Intervals",
    "StateSpaceLimitError",
    "Target",
    "Value",
    "absorbing",
    "bounded_reach_values",
    "executions_values",
    "expected_executions",
    "explore",
    "globally",
    "pmax_reach",
    "pmin_reach",
    "point_intervals",
    "policy_iteration",
    "reach_values",
    "robust_pmax",
    "robust_reach",
    "until",
    "until_values",
]

"""The confidence bound of issue 11: per (s, c) Clopper–Pearson intervals on each
effect probability at confidence 1 − δ (union bound over the intervals), giving an
interval MDP whose robust Pmax is an upper bound on the agent's true Pmax with
probability ≥ 1 − δ — under the assumptions stated here.

**Intervals.**  For every observed pair (s, c) with N_e(s, c | D) = n executions and
every observed successor s′ with N_e(s, c, s′ | D) = k, :func:`confidence_intervals`
gives the two-sided Clopper–Pearson interval of Pr(s′ | s, c) at level
α = δ / m, m the number of such (s, c, s′) intervals (Bonferroni / union bound: all m
intervals hold simultaneously with probability ≥ 1 − δ).

**What is covered, and what is not.**

* Untried pairs.  The issue's interval MDP has only the *observed* pairs (s, c),
  exactly as the pessimistic model h∧ (pcond admits observed transitions only).  A
  capability the agent could execute in a state where it was never tried — or any
  state from which nothing was observed — is then absent, and the robust Pmax bounds
  only the agent's MDP **restricted to the observed pairs**, not its true Pmax
  (``untried="ignore"``).  With ``untried="top"`` (the default of
  :func:`pmax_upper_bound`) every reachable state gets, for each declared capability
  of ``data.capability_table`` never observed there, a choice that moves to ⊤ (below)
  with probability 1 — nothing is known about it, so it is assumed to reach the
  target, in the spirit of h∨'s ocond.  This is sound when the agent's capabilities
  are the declared ones, and makes the bound 1 as soon as an untried pair is
  reachable.
* Unobserved successors of an observed (s, c) (an effect of small probability never
  seen in n executions): with ``unseen="ignore"`` they are not covered (the interval
  MDP is the one of h∧ with intervals; its robust Pmax bounds the Pmax of the agent
  restricted to observed outcomes).  With ``unseen="top"`` (the default of
  :func:`pmax_upper_bound`) every observed (s, c) gets an extra successor ⊤ — a
  state *in the target* (value 1, absorbing) — with interval [0, 1 − Σ lo].  This is
  sound for an upper bound: when the m intervals hold, the true distribution puts
  p(s′) ∈ [lo, hi] on each observed s′ and the rest, 1 − Σ_obs p(s′) ≤ 1 − Σ lo, on
  unobserved successors, whose values are ≤ 1 = value(⊤); so the true distribution
  with the unobserved mass moved to ⊤ is admitted by the intervals and has at least
  the true expected value.  A sink *outside* the target would not be sound for an
  upper bound (the missing outcome might lead to the target), so it is not offered.
  (A missing-mass bound such as 1 − α^{1/n} could tighten ⊤'s upper bound, but the
  set of unobserved outcomes depends on the sample, so its validity needs a separate
  argument — not used.)

**Further caveats.**  Clopper–Pearson is exact for a fixed number of trials n; a
learner chooses n adaptively, and m is itself data dependent (the union bound should
strictly run over the true support, which has ≥ m triples; ``n_intervals`` lets the
caller fix a larger, data-independent m).  Unbounded reachability is float value
iteration from below, stopped when the largest change is below a tolerance, so its
result can be slightly *below* the robust value; bounded properties are computed
with exactly ``bound`` iterations (floats).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Literal

from capver.engines.verification.explicit import Interval, Intervals, Target, pmax_reach
from capver.model.capability_model import CompoundModel
from capver.model.dataset import TransitionDataset
from capver.model.state import State

Unseen = Literal["top", "ignore"]
"""What stands in for what the data did not show: ⊤ (sound for an upper bound) or
nothing (the issue's literal construction, sound only under its assumptions)."""


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        step = d * c
        h *= step
        if abs(step - 1.0) < 1e-15:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b) (a, b > 0), by its
    continued fraction (with the symmetry I_x(a, b) = 1 − I_{1−x}(b, a) where the
    fraction converges slowly)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _betacf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _betacf(b, a, 1.0 - x) / b


def beta_ppf(q: float, a: float, b: float) -> float:
    """The q-quantile of Beta(a, b): the x with I_x(a, b) = q, by bisection (I_x is
    increasing in x) to double precision."""
    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        if betainc(a, b, mid) < q:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def clopper_pearson(k: int, n: int, alpha: float) -> tuple[float, float]:
    """The two-sided Clopper–Pearson ("exact") interval of a binomial proportion
    with k successes in n trials at level α (coverage ≥ 1 − α):
    lo = Beta⁻¹(α/2; k, n − k + 1) (0 when k = 0), hi = Beta⁻¹(1 − α/2; k + 1, n − k)
    (1 when k = n).  Computed without scipy (:func:`betainc`, :func:`beta_ppf`)."""
    if n < 1 or not 0 <= k <= n:
        raise ValueError(f"need 0 ≤ k ≤ n and n ≥ 1, got k={k}, n={n}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    lo = 0.0 if k == 0 else beta_ppf(alpha / 2, k, n - k + 1)
    hi = 1.0 if k == n else beta_ppf(1 - alpha / 2, k + 1, n - k)
    return lo, hi


def confidence_intervals(
    data: TransitionDataset, delta: float, *, n_intervals: int | None = None
) -> dict[tuple[State, str, State], Interval]:
    """(s, c, s′) → Clopper–Pearson interval of Pr(s′ | s, c) for every observed pair
    (s, c) and observed successor s′, each at α = δ / m with m = ``n_intervals`` or
    the number of observed (s, c, s′) (union bound: all hold together with
    probability ≥ 1 − δ).  Unobserved pairs and successors get no interval; see the
    module docstring for what that leaves uncovered."""
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta}")
    triples = list(data.unique_transitions())
    m = n_intervals if n_intervals is not None else len(triples)
    if m < len(triples):
        raise ValueError(f"n_intervals={m} is smaller than the {len(triples)} observed (s, c, s′)")
    alpha = delta / max(m, 1)
    out: dict[tuple[State, str, State], Interval] = {}
    for t in triples:
        out[(t.s, t.c, t.s_next)] = clopper_pearson(data.count(t.s, t.c, t.s_next), data.count_sc(t.s, t.c), alpha)
    return out


_TOP = -1  # index of ⊤ in the interval MDP below


def robust_pmax_data(
    intervals: Intervals,
    init: State,
    target: Target,
    bound: int | None,
    *,
    unseen: Unseen = "top",
    untried: Unseen = "ignore",
    capabilities: Collection[str] = (),
    tolerance: float = 1e-12,
    max_iterations: int = 1_000_000,
) -> float:
    """Robust Pmax of F<=bound target (F target when ``bound`` is None) from ``init``
    in the interval MDP whose choices in s are the pairs (s, c) that have intervals,
    nature maximising within the intervals.  With ``unseen="top"`` each choice also
    has the successor ⊤ (in the target) with interval [0, 1 − Σ lo]; with
    ``untried="top"`` each capability of ``capabilities`` without intervals in a
    state is a choice to ⊤ with probability 1.  States without any choice are
    deadlocks (value 0 unless in the target)."""
    grouped: dict[State, dict[str, list[tuple[State, float, float]]]] = {}
    for (s, c, s2), (lo, hi) in intervals.items():
        grouped.setdefault(s, {}).setdefault(c, []).append((s2, float(lo), float(hi)))
    states: list[State] = [init]
    index: dict[State, int] = {init: 0}
    choices: list[list[list[tuple[int, float, float]]]] = []
    i = 0
    while i < len(states):
        mine: list[list[tuple[int, float, float]]] = []
        observed = grouped.get(states[i], {})
        if untried == "top" and any(c not in observed for c in capabilities):
            mine.append([(_TOP, 1.0, 1.0)])
        for _c, succ in sorted(observed.items()):
            row: list[tuple[int, float, float]] = []
            for s2, lo, hi in sorted(succ):
                if hi <= 0:
                    continue
                j = index.get(s2)
                if j is None:
                    j = index[s2] = len(states)
                    states.append(s2)
                row.append((j, lo, hi))
            if unseen == "top":
                rest = 1.0 - sum(lo for _, lo, _ in row)
                if rest > 0:
                    row.append((_TOP, 0.0, rest))
            mine.append(row)
        choices.append(mine)
        i += 1
    goal = [bool(target(s)) for s in states]
    v = [1.0 if g else 0.0 for g in goal] + [1.0]  # v[-1] = v[_TOP] = 1

    def extreme(row: list[tuple[int, float, float]], val: list[float]) -> float:
        order = sorted(row, key=lambda x: val[x[0]], reverse=True)
        rest = 1.0 - sum(lo for _, lo, _ in order)
        total = 0.0
        for t, lo, hi in order:
            add = min(hi - lo, max(rest, 0.0))
            rest -= add
            total += (lo + add) * val[t]
        return min(total, 1.0)

    steps = bound if bound is not None else max_iterations
    for _ in range(steps):
        nxt = list(v)
        change = 0.0
        for s, cs in enumerate(choices):
            if goal[s] or not cs:
                continue
            best = max(extreme(row, v) for row in cs)
            change = max(change, abs(best - v[s]))
            nxt[s] = best
        v = nxt
        if bound is None and change < tolerance:
            break
    return v[0]


@dataclass(frozen=True, slots=True)
class ConfidenceBound:
    """The point value Pmax on h∧ and the robust upper bound of issue 11."""

    point: float
    upper: float
    delta: float
    n_intervals: int
    unseen: Unseen
    untried: Unseen


def pmax_upper_bound(
    data: TransitionDataset,
    model: CompoundModel,
    init: State,
    target: Target,
    bound: int | None,
    delta: float,
    *,
    unseen: Unseen = "top",
    untried: Unseen = "top",
    n_intervals: int | None = None,
) -> ConfidenceBound:
    """``point``: Pmax of F<=bound target on ``model`` (h∧ of ``data``, i.e.
    ``LatticeBuilder(ctx, data).pessimistic``); ``upper``: the robust Pmax of the
    Clopper–Pearson interval MDP of ``data`` at confidence 1 − δ
    (:func:`confidence_intervals`, :func:`robust_pmax_data`; ``unseen`` and
    ``untried`` as there, the capabilities being ``data.capability_table``).  With
    both "top" and fixed-n Clopper–Pearson validity, ``upper`` ≥ the agent's true
    Pmax with probability ≥ 1 − δ; with "ignore" only under the module's extra
    assumptions.  ``upper`` is always
    ≥ the Pmax of the per-pair MLE model (each MLE k/n lies in its interval); h∧
    pools its MLE over blocks of states, so ``upper`` ≥ ``point`` is typical but not
    a theorem."""
    intervals: Mapping[tuple[State, str, State], Interval] = confidence_intervals(
        data, delta, n_intervals=n_intervals
    )
    point = float(pmax_reach(model, init, target, bound, exact=False))
    upper = robust_pmax_data(
        intervals, init, target, bound, unseen=unseen, untried=untried, capabilities=list(data.capability_table)
    )
    return ConfidenceBound(point, upper, delta, len(intervals), unseen, untried)


__all__ = [
    "ConfidenceBound",
    "Unseen",
    "beta_ppf",
    "betainc",
    "clopper_pearson",
    "confidence_intervals",
    "pmax_upper_bound",
    "robust_pmax_data",
]

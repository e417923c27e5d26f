"""Quantitative properties (``Pmax=?``, ``Pmin=?``, ``P<=p``, ``Rmin=?`` ...) of the
property language, on one capability model read as an MDP (section 2).  ``P<=p [ φ ]``
holds when every scheduler keeps the probability within the bound, i.e. Pmax ≤ p (and
``P>=p`` when Pmin ≥ p), as in PRISM and Storm.

:func:`check` reads the query and asks a :class:`QuantitativeChecker` for the numbers:
:class:`ExplicitChecker` here (capver's explicit-state engine, exact rationals), the
sparse engine (:class:`capver.engines.verification.sparse.SparseChecker`), or Storm
(:class:`capver.engines.verification.checkers.StormChecker`, which needs the PRISM
writer :mod:`capver.engines.verification.prism`);
:data:`capver.engines.verification.checkers.QUANTITATIVE_CHECKERS` names them all.  Every checker
states the precision of its last value (``guarantee``, carried into
:class:`QuantitativeResult`): :data:`EXACT`, :data:`VERIFIED` (a float result rounded
and verified in rationals), :func:`sound` (within ε) or :data:`FLOAT` (no bound).

Given the data D a model was learned from, :func:`check` also bounds the *agent*:
:func:`agent_bounds` gives, for every ``P`` and ``Rmin`` query, an interval
[lower, upper] that holds the agent's Pmax, Pmin or Rmin with probability ≥ 1 − δ
(anytime valid, all properties at once;
:mod:`capver.engines.verification.confidence`), and :func:`bound_verdict` decides a
``P<op>p`` bound for the agent from it: ``P>=p`` (the agent's Pmin ≥ p) is confirmed
when the lower bound on Pmin is ≥ p and refuted when its upper bound is < p, and
``P<=p`` (Pmax ≤ p) likewise on the bounds of Pmax; a wrong verdict has probability
≤ δ.  ``observed_only`` reads the data under completeness (scope "observed": no
unseen outcomes, no untried pairs)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from enum import StrEnum
from fractions import Fraction
from typing import Protocol

from capver.core.dataset import TransitionDataset
from capver.core.properties import (
    Comparison,
    Eventually,
    Globally,
    Not,
    Optimum,
    PathFormula,
    ProbabilityBound,
    ProbabilityQuery,
    Property,
    RewardQuery,
    StateFormula,
    Until,
    holds,
)
from capver.core.state import State
from capver.engines.verification import explicit
from capver.engines.verification.confidence import (
    AgentBounds,
    Scope,
    agent_globally_bounds,
    agent_reach_bounds,
    agent_rmin_bounds,
)
from capver.engines.verification.environment import World, hopeless
from capver.engines.verification.sampling import SamplingBounds
from capver.model.capability_model import CompoundModel

Value = Fraction | float

EXACT = "exact (rational)"
"""The guarantee of a value computed in rational arithmetic throughout."""

VERIFIED = "exact: floating result rounded and verified in rationals"
"""A float solution rounded to rationals that passed the exact Bellman and optimality
check (:func:`capver.engines.verification.sparse.verify_exact`)."""

FLOAT = "floating point, no error bound (policy iteration in doubles)"
"""The explicit engine above its exact limit: a policy's values solved in doubles."""


FLOAT_TIE = 1e-9
"""How close to a ``P<op>p`` bound a value in doubles must be for :func:`check` to decide
the bound on exact rationals instead: a thousand times the precision of Storm's sound
float engine (1e-12).  For the float engines without a stated error bound it is an
assumption, not a guarantee: their error is taken to be below it."""


def sound(precision: float) -> str:
    """The guarantee of a sound floating-point solver: the value is within
    ``precision`` of the true one."""
    return f"sound, |error| ≤ {precision:g}"


class BoundVerdict(StrEnum):
    """What the data says about a ``P<op>p`` bound for the agent, at confidence 1 − δ."""

    CONFIRMED = "confirmed"
    REFUTED = "refuted"
    UNDECIDED = "undecided"


@dataclass(frozen=True, slots=True)
class QuantitativeResult:
    """The value of a ``=?`` query, or the value behind a bound and whether it holds,
    on the model; with the data, also what it says about the agent.

    ``agent``: lower ≤ the agent's ``what`` ≤ upper with probability ≥ 1 − δ (None
    without data, and for Rmax); ``agent_verdict``: a ``P<op>p`` bound decided for
    the agent from ``agent``."""

    value: Value | None  # None: the model's value was not asked for, only the agent's bounds
    holds: bool | None  # None for a =? query
    what: str  # "Pmax", "Pmin", "Rmin", "Rmax"
    engine: str = "explicit"
    agent: AgentBounds | None = None
    guarantee: str = EXACT  # how precise ``value`` is (EXACT, VERIFIED, sound(ε), FLOAT)
    agent_verdict: BoundVerdict | None = None  # None for a =? query or without data


def restricted(model: CompoundModel, prop: Property) -> CompoundModel:
    if prop.capability_names is None:
        return model
    return CompoundModel(model.ctx, [model[c] for c in model if c in prop.capability_names])


class QuantitativeChecker(Protocol):
    """What :func:`check` needs of a model checker."""

    name: str
    guarantee: str  # the precision guarantee of the last value returned

    def probability(self, model: CompoundModel, init: State, path: PathFormula, maximise: bool) -> Value:
        """Pmax (Pmin unless ``maximise``) of the path formula from ``init``."""
        ...

    def executions(self, model: CompoundModel, init: State, target: StateFormula, maximise: bool) -> Value:
        """Rmax (Rmin) of the number of capability executions until ``target``."""
        ...


class ExplicitChecker:
    """capver's explicit-state engine (:mod:`capver.engines.verification.explicit`):
    exact rationals."""

    name = "explicit"

    def __init__(self) -> None:
        self.guarantee = EXACT

    def _graded(self, v: Value) -> Value:
        # Exact up to explicit.EXACT_STATE_LIMIT states, doubles above (∞ is exact).
        self.guarantee = EXACT if isinstance(v, Fraction) or math.isinf(v) else FLOAT
        return v

    def probability(self, model: CompoundModel, init: State, path: PathFormula, maximise: bool) -> Value:
        vocab = model.vocabulary
        if isinstance(path, Eventually):
            goal = path.goal
            return self._graded(explicit.pmax_reach(model, init, lambda s: holds(goal, s, vocab), path.bound, maximise))
        if isinstance(path, Globally):
            inv = path.invariant
            return self._graded(explicit.globally(model, init, lambda s: holds(inv, s, vocab), path.bound, maximise))
        hold, goal = path.hold, path.goal
        return self._graded(
            explicit.until(
                model, init, lambda s: holds(hold, s, vocab), lambda s: holds(goal, s, vocab), path.bound, maximise
            )
        )

    def executions(self, model: CompoundModel, init: State, target: StateFormula, maximise: bool) -> Value:
        vocab = model.vocabulary
        return self._graded(explicit.expected_executions(model, init, lambda s: holds(target, s, vocab), maximise))


def check(
    prop: Property,
    model: CompoundModel,
    init: State,
    checker: QuantitativeChecker | None = None,
    *,
    data: TransitionDataset | None = None,
    delta: float = 0.05,
    observed_only: bool = False,
    world: World | None = None,
) -> QuantitativeResult:
    """The value of ``prop`` from ``init`` on ``model`` (restricted to the property's
    capabilities), by ``checker`` (default: the explicit engine); with the ``data``
    ``model`` was learned from, also the :func:`agent_bounds` and, for a ``P<op>p``
    query, the :func:`bound_verdict` at confidence 1 − ``delta``.  ``observed_only``:
    the bounds read the data as complete.  ``world``: the states the environment
    reaches, where known (the bounds take its hopeless states as worth 0)."""
    result = _value(prop, model, init, checker if checker is not None else ExplicitChecker())
    if data is None:
        return result
    agent = agent_result(prop, data, init, delta, scope="observed" if observed_only else "sound", world=world)
    return replace(result, agent=agent.agent, agent_verdict=agent.agent_verdict)


def agent_result(
    prop: Property,
    data: TransitionDataset,
    init: State,
    delta: float,
    *,
    scope: Scope = "sound",
    sampling: SamplingBounds | None = None,
    world: World | None = None,
) -> QuantitativeResult:
    """What the data say of the agent's value of ``prop`` alone (no model's value:
    ``value`` is None): :func:`agent_bounds` and, for a ``P<op>p`` query, its
    :func:`bound_verdict`."""
    agent = agent_bounds(prop, data, init, delta, scope=scope, sampling=sampling, world=world)
    q = prop.query
    verdict = (
        bound_verdict(q.comparison, q.probability, agent)
        if isinstance(q, ProbabilityBound) and agent is not None
        else None
    )
    what = agent.quantity if agent is not None else _quantity(prop)
    return QuantitativeResult(None, None, what, "", agent=agent, guarantee="", agent_verdict=verdict)


def _quantity(prop: Property) -> str:
    """What a quantitative property asks for: Pmax or Pmin (``P<op>p`` is decided on
    Pmax for ``<``, ``<=`` and on Pmin for ``>``, ``>=``), Rmax or Rmin."""
    q = prop.query
    if isinstance(q, RewardQuery):
        return "Rmax" if q.optimum is Optimum.MAX else "Rmin"
    if isinstance(q, ProbabilityQuery):
        return "Pmax" if q.optimum is Optimum.MAX else "Pmin"
    if isinstance(q, ProbabilityBound):
        return "Pmax" if q.comparison in (Comparison.LT, Comparison.LE) else "Pmin"
    raise TypeError(f"not a quantitative query: {q!r}")


def agent_bounds(
    prop: Property,
    data: TransitionDataset,
    init: State,
    delta: float,
    *,
    scope: Scope = "sound",
    sampling: SamplingBounds | None = None,
    world: World | None = None,
) -> AgentBounds | None:
    """Bounds on the agent's value of ``prop`` from ``init`` at confidence 1 − ``delta``
    (:mod:`capver.engines.verification.confidence`): Pmax or Pmin of the path (``F``,
    ``U``, ``G``, bounded or not) for ``Pmax=?``, ``Pmin=?`` and ``P<op>p`` (Pmax for
    ``<``/``<=``, Pmin for ``>``/``>=``), and the lower bound on Rmin for ``Rmin=?``;
    None for ``Rmax=?``.  ``sampling``: the :class:`SamplingBounds` of ``data`` at
    ``delta`` to reuse (its per-pair intervals are cached).  ``world``: the states
    the environment reaches (:mod:`~capver.engines.verification.environment`), whose
    hopeless states — none of its runs reaches the goal from them — are worth 0 in
    the probability bounds and ∞ in the lower bound on Rmin."""
    q = prop.query
    if sampling is None:
        sampling = SamplingBounds(data, delta)
    elif sampling.data is not data or sampling.delta != delta:
        raise ValueError("sampling must be the SamplingBounds of data at delta")
    vocab, allowed = data.vocab, prop.capability_names
    if isinstance(q, RewardQuery):
        if q.optimum is Optimum.MAX:
            return None
        target = q.target
        dead = hopeless(world, init, vocab, target)
        b = agent_rmin_bounds(
            sampling, init, lambda s: holds(target, s, vocab), capabilities=allowed, scope=scope, hopeless=dead
        )
        return b if dead is None or world is None else replace(b, environment=world.source)
    if isinstance(q, ProbabilityQuery):
        maximise = q.optimum is Optimum.MAX
    elif isinstance(q, ProbabilityBound):
        maximise = q.comparison in (Comparison.LT, Comparison.LE)
    else:
        raise TypeError(f"not a quantitative query: {q!r}")
    path = q.path
    if isinstance(path, Globally):
        inv = path.invariant
        dead = hopeless(world, init, vocab, Not(inv))
        b = agent_globally_bounds(
            sampling,
            init,
            lambda s: holds(inv, s, vocab),
            path.bound,
            maximise=maximise,
            capabilities=allowed,
            scope=scope,
            hopeless=dead,
        )
    else:
        goal = path.goal
        hold = path.hold if isinstance(path, Until) else None
        dead = hopeless(world, init, vocab, goal, hold)
        b = agent_reach_bounds(
            sampling,
            init,
            lambda s: holds(goal, s, vocab),
            path.bound,
            maximise=maximise,
            hold=None if hold is None else (lambda s: holds(hold, s, vocab)),
            capabilities=allowed,
            scope=scope,
            hopeless=dead,
        )
    return b if dead is None or world is None else replace(b, environment=world.source)


def bound_verdict(comparison: Comparison, p: Fraction | float, bounds: AgentBounds) -> BoundVerdict:
    """``P<comparison>p`` for the agent from bounds on its Pmin (``>``, ``>=``: every
    scheduler reaches at least p) or Pmax (``<``, ``<=``): confirmed when the whole
    interval [lower, upper] satisfies the comparison, refuted when none of it does,
    else undecided.  Wrong with probability ≤ δ (that of ``bounds``)."""
    want = "Pmax" if comparison in (Comparison.LT, Comparison.LE) else "Pmin"
    if bounds.quantity != want:
        raise ValueError(f"P{comparison.value}p is decided on bounds of {want}, got {bounds.quantity}")
    return interval_verdict(comparison, p, bounds.lower, bounds.upper)


def interval_verdict(comparison: Comparison, p: Fraction | float, lower: float, upper: float) -> BoundVerdict:
    """``P<comparison>p`` of a probability known to lie in [lower, upper]: confirmed
    when the whole interval satisfies the comparison, refuted when none of it does,
    else undecided (the agent's bounds here, a scheduler's sampled interval in
    :mod:`.smc`)."""
    lo, hi, x = lower, upper, float(p)
    confirmed, refuted = {
        Comparison.GE: (lo >= x, hi < x),
        Comparison.GT: (lo > x, hi <= x),
        Comparison.LE: (hi <= x, lo > x),
        Comparison.LT: (hi < x, lo >= x),
    }[comparison]
    return BoundVerdict.CONFIRMED if confirmed else BoundVerdict.REFUTED if refuted else BoundVerdict.UNDECIDED


def _value(prop: Property, model: CompoundModel, init: State, engine: QuantitativeChecker) -> QuantitativeResult:
    m = restricted(model, prop)
    q = prop.query
    what = _quantity(prop)  # raises for a query that is not quantitative
    maximise = what in ("Pmax", "Rmax")
    if isinstance(q, RewardQuery):
        v = engine.executions(m, init, q.target, maximise)
        return QuantitativeResult(v, None, what, engine.name, guarantee=engine.guarantee)
    assert isinstance(q, ProbabilityQuery | ProbabilityBound)
    v = engine.probability(m, init, q.path, maximise)
    if not isinstance(q, ProbabilityBound):
        return QuantitativeResult(v, None, what, engine.name, guarantee=engine.guarantee)
    guarantee = engine.guarantee
    if (
        guarantee not in (EXACT, VERIFIED)
        and engine.name != ExplicitChecker.name
        and abs(float(v) - float(q.probability)) <= FLOAT_TIE
    ):
        # A value in doubles this close to the bound does not decide it (Storm's float
        # engine gave 0.4999999999998931 for an exact 1/2 against P>=1/2): the bound is
        # decided on the value of capver's explicit engine (exact rationals), and the
        # value and guarantee printed are that engine's.  A float value of the explicit
        # engine itself (a model above its exact limit) would only be computed again.
        exact = ExplicitChecker()
        v = exact.probability(m, init, q.path, maximise)
        guarantee = (
            f"{exact.guarantee}, by the explicit engine: {engine.name}'s value was within {FLOAT_TIE:g} of the bound"
        )
    ok = {
        Comparison.LT: v < q.probability,
        Comparison.LE: v <= q.probability,
        Comparison.GE: v >= q.probability,
        Comparison.GT: v > q.probability,
    }[q.comparison]
    return QuantitativeResult(v, ok, what, engine.name, guarantee=guarantee)

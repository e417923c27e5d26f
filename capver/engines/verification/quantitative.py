"""Quantitative properties (``Pmax=?``, ``Pmin=?``, ``P<=p``, ``Rmin=?`` ...) of the
property language, on one capability model read as an MDP (section 2).  ``P<=p [ φ ]``
holds when every scheduler keeps the probability within the bound, i.e. Pmax ≤ p (and
``P>=p`` when Pmin ≥ p), as in PRISM and Storm.

:func:`check` reads the query and asks a :class:`QuantitativeChecker` for the numbers:
:class:`ExplicitChecker` here (capver's explicit-state engine, exact rationals), or
Storm (:class:`capver.io.checkers.StormChecker`, which needs the PRISM writer of the io
layer); :data:`capver.io.checkers.QUANTITATIVE_CHECKERS` names them all."""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Protocol

from capver.engines.verification import explicit
from capver.engines.verification.confidence import (
    ConfidenceBound,
    Unseen,
    confidence_intervals,
    robust_pmax_data,
)
from capver.model.capability_model import CompoundModel
from capver.model.dataset import TransitionDataset
from capver.model.properties import (
    Comparison,
    Eventually,
    Globally,
    Optimum,
    PathFormula,
    ProbabilityBound,
    ProbabilityQuery,
    Property,
    RewardQuery,
    StateFormula,
    holds,
)
from capver.model.state import State

Value = Fraction | float


@dataclass(frozen=True, slots=True)
class QuantitativeResult:
    """The value of a ``=?`` query, or the value behind a bound and whether it holds."""

    value: Value
    holds: bool | None  # None for a =? query
    what: str  # "Pmax", "Pmin", "Rmin", "Rmax"
    engine: str = "explicit"
    bound: ConfidenceBound | None = None  # the agent's Pmax ≤ bound.upper with probability ≥ 1 − δ


def restricted(model: CompoundModel, prop: Property) -> CompoundModel:
    if prop.capability_names is None:
        return model
    return CompoundModel(model.ctx, [model[c] for c in model if c in prop.capability_names])


class QuantitativeChecker(Protocol):
    """What :func:`check` needs of a model checker."""

    name: str

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

    def probability(self, model: CompoundModel, init: State, path: PathFormula, maximise: bool) -> Value:
        vocab = model.vocabulary
        if isinstance(path, Eventually):
            goal = path.goal
            return explicit.pmax_reach(model, init, lambda s: holds(goal, s, vocab), path.bound, maximise)
        if isinstance(path, Globally):
            inv = path.invariant
            return explicit.globally(model, init, lambda s: holds(inv, s, vocab), path.bound, maximise)
        raise TypeError("U inside P is not supported yet; use E [ φ U ψ ] or rewrite with F")

    def executions(self, model: CompoundModel, init: State, target: StateFormula, maximise: bool) -> Value:
        vocab = model.vocabulary
        return explicit.expected_executions(model, init, lambda s: holds(target, s, vocab), maximise)


def check(prop: Property, model: CompoundModel, init: State, checker: QuantitativeChecker | None = None, *,
          data: TransitionDataset | None = None, delta: float = 0.05, observed_only: bool = False) -> QuantitativeResult:
    """The value of ``prop`` from ``init`` on ``model`` (restricted to the property's
    capabilities), by ``checker`` (default: the explicit engine); with the ``data``
    ``model`` was learned from, also its :func:`confidence_bound` at 1 − ``delta``."""
    result = _value(prop, model, init, checker if checker is not None else ExplicitChecker())
    if data is None:
        return result
    return replace(result, bound=confidence_bound(prop, result.value, data, init, delta, observed_only=observed_only))


def _value(prop: Property, model: CompoundModel, init: State, engine: QuantitativeChecker) -> QuantitativeResult:
    m = restricted(model, prop)
    q = prop.query
    if isinstance(q, ProbabilityQuery):
        maximise = q.optimum is Optimum.MAX
        return QuantitativeResult(engine.probability(m, init, q.path, maximise), None,
                                  "Pmax" if maximise else "Pmin", engine.name)
    if isinstance(q, ProbabilityBound):
        upper = q.comparison in (Comparison.LT, Comparison.LE)
        v = engine.probability(m, init, q.path, upper)
        ok = {Comparison.LT: v < q.probability, Comparison.LE: v <= q.probability,
              Comparison.GE: v >= q.probability, Comparison.GT: v > q.probability}[q.comparison]
        return QuantitativeResult(v, ok, "Pmax" if upper else "Pmin", engine.name)
    if isinstance(q, RewardQuery):
        maximise = q.optimum is Optimum.MAX
        v = engine.executions(m, init, q.target, maximise)
        return QuantitativeResult(v, None, "Rmax" if maximise else "Rmin", engine.name)
    raise TypeError(f"not a quantitative query: {q!r}")


def confidence_bound(prop: Property, value: Value, data: TransitionDataset, init: State,
                     delta: float, *, observed_only: bool = False) -> ConfidenceBound | None:
    """The upper confidence bound on the agent's true Pmax of the property's ``F``
    path (:mod:`capver.engines.verification.confidence`), beside the point ``value``;
    None for other queries, which have no bound yet (Pmin, G, R, lower probability
    bounds).  Unseen outcomes and untried pairs count as reaching the goal (⊤), which
    makes the bound sound and 1 as soon as an untried pair is reachable; with
    ``observed_only`` they are left out, and the bound is on the agent restricted to
    the observed pairs and outcomes."""
    q = prop.query
    wants_max = (isinstance(q, ProbabilityQuery) and q.optimum is Optimum.MAX) or (
        isinstance(q, ProbabilityBound) and q.comparison in (Comparison.LT, Comparison.LE))
    if not wants_max or not isinstance(q.path, Eventually):  # type: ignore[union-attr]  # both have .path
        return None
    path: Eventually = q.path  # type: ignore[union-attr]
    allowed = prop.capability_names
    # The union bound runs over every observed (s, c, s′); a capability restriction
    # only drops choices, which keeps the bound valid (and a little loose).
    every = confidence_intervals(data, delta)
    intervals = {k: v for k, v in every.items() if allowed is None or k[1] in allowed}
    caps = [c for c in data.capability_table if allowed is None or c in allowed]
    vocab, goal = data.vocab, path.goal
    scope: Unseen = "ignore" if observed_only else "top"
    upper = robust_pmax_data(intervals, init, lambda s: holds(goal, s, vocab), path.bound,
                             unseen=scope, untried=scope, capabilities=caps)
    return ConfidenceBound(float(value), upper, delta, len(every), scope, scope)

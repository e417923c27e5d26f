"""Quantitative properties (``Pmax=?``, ``Pmin=?``, ``P<=p``, ``Rmin=?`` ...) of the
property language, on one capability model read as an MDP (section 2), by capver's
explicit-state engine: exact rationals up to its state limit.  ``P<=p [ φ ]`` holds
when every scheduler keeps the probability within the bound, i.e. Pmax ≤ p (and
``P>=p`` when Pmin ≥ p), as in PRISM and Storm."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from capver.engines.verification import explicit
from capver.model.capability_model import CompoundModel
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


def restricted(model: CompoundModel, prop: Property) -> CompoundModel:
    if prop.capability_names is None:
        return model
    return CompoundModel(model.ctx, [model[c] for c in model if c in prop.capability_names])


def _probability(model: CompoundModel, init: State, path: PathFormula, maximise: bool) -> Value:
    vocab = model.vocabulary
    if isinstance(path, Eventually):
        goal = path.goal
        return explicit.pmax_reach(model, init, lambda s: holds(goal, s, vocab), path.bound, maximise)
    if isinstance(path, Globally):
        inv = path.invariant
        return explicit.globally(model, init, lambda s: holds(inv, s, vocab), path.bound, maximise)
    raise TypeError("U inside P is not supported by the explicit engine yet; use E [ φ U ψ ] or rewrite with F")


def check(prop: Property, model: CompoundModel, init: State) -> QuantitativeResult:
    m = restricted(model, prop)
    q = prop.query
    if isinstance(q, ProbabilityQuery):
        maximise = q.optimum is Optimum.MAX
        return QuantitativeResult(_probability(m, init, q.path, maximise), None, "Pmax" if maximise else "Pmin")
    if isinstance(q, ProbabilityBound):
        upper = q.comparison in (Comparison.LT, Comparison.LE)
        v = _probability(m, init, q.path, maximise=upper)
        ok = {Comparison.LT: v < q.probability, Comparison.LE: v <= q.probability,
              Comparison.GE: v >= q.probability, Comparison.GT: v > q.probability}[q.comparison]
        return QuantitativeResult(v, ok, "Pmax" if upper else "Pmin")
    if isinstance(q, RewardQuery):
        maximise = q.optimum is Optimum.MAX
        vocab, target = m.vocabulary, q.target
        v = explicit.expected_executions(m, init, lambda s: holds(target, s, vocab), maximise)
        return QuantitativeResult(v, None, "Rmax" if maximise else "Rmin")
    raise TypeError(f"not a quantitative query: {q!r}")

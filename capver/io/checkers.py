"""The quantitative model checkers by name — the registry ``capver verify --engine``
takes its choices from (section 2: the MDP of a capability model, with Pr_h(s′ | s, c)
as transition probabilities).

* ``explicit``: capver's explicit-state engine, exact rationals
  (:class:`capver.engines.verification.quantitative.ExplicitChecker`).
* ``storm``: Storm (stormpy) on the PRISM export, over GMP rationals: exact fractions.
* ``storm-float``: Storm on doubles with a sound solver at absolute precision 1e-12;
  builds about twice as fast as ``storm``, for large models.

The Storm checkers live here rather than beside the explicit one because they need the
PRISM writer of this layer (:mod:`capver.io.prism_export`).  A checker builds each model
once per initial state and then answers any number of properties on it.
"""

from __future__ import annotations

from collections.abc import Callable

from capver.engines.verification import storm
from capver.engines.verification.quantitative import ExplicitChecker, QuantitativeChecker, Value
from capver.engines.verification.symbolic import formula_bdd
from capver.io.prism_export import PrismExport, storm_model
from capver.model.capability_model import CompoundModel
from capver.model.properties import Eventually, Globally, PathFormula, StateFormula
from capver.model.state import State


class StormChecker:
    """Storm on the model's PRISM export (exact rationals unless ``exact`` is False).

    The built model is kept per (model, initial state): the PRISM export carries every
    atom as a label, so any property over the atoms is checked on one build."""

    def __init__(self, *, exact: bool = True) -> None:
        self.exact = exact
        self.name = "storm" if exact else "storm-float"
        self._built: dict[tuple[int, State], tuple[CompoundModel, PrismExport, storm.StormModel]] = {}

    def built(self, model: CompoundModel, init: State) -> tuple[PrismExport, storm.StormModel]:
        """The export and Storm's build of ``model`` from ``init`` (built on first use)."""
        key = (id(model), init)
        hit = self._built.get(key)
        if hit is None or hit[0] is not model:
            export, sm = storm_model(model, init, exact=self.exact)
            # The model itself is kept so that its id cannot be reused by another one.
            self._built[key] = hit = (model, export, sm)
        return hit[1], hit[2]

    def _expression(self, model: CompoundModel, export: PrismExport, formula: StateFormula) -> str:
        return export.formula(formula_bdd(model.ctx, formula))

    def probability(self, model: CompoundModel, init: State, path: PathFormula, maximise: bool) -> Value:
        export, sm = self.built(model, init)
        if isinstance(path, Eventually):
            return sm.reach(self._expression(model, export, path.goal), path.bound, maximise=maximise)
        if isinstance(path, Globally):
            return sm.globally(self._expression(model, export, path.invariant), path.bound, maximise=maximise)
        hold, goal = self._expression(model, export, path.hold), self._expression(model, export, path.goal)
        return sm.until(hold, goal, path.bound, maximise=maximise)

    def executions(self, model: CompoundModel, init: State, target: StateFormula, maximise: bool) -> Value:
        export, sm = self.built(model, init)
        return sm.expected_executions(self._expression(model, export, target), maximise=maximise)


QUANTITATIVE_CHECKERS: dict[str, Callable[[], QuantitativeChecker]] = {
    "explicit": ExplicitChecker,
    "storm": lambda: StormChecker(exact=True),
    "storm-float": lambda: StormChecker(exact=False),
}
"""Name → a fresh checker: the choices of ``capver verify --engine``."""


__all__ = ["QUANTITATIVE_CHECKERS", "StormChecker"]

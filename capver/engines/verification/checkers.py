"""The quantitative model checkers by name — the registry ``capver verify --engine``
takes its choices from (section 2: the MDP of a capability model, with Pr_h(s′ | s, c)
as transition probabilities).

* ``explicit``: capver's explicit-state engine, exact rationals
  (:class:`capver.engines.verification.quantitative.ExplicitChecker`).
* ``storm``: Storm (stormpy) on the PRISM export, over GMP rationals: exact fractions.
* ``storm-float``: Storm on doubles with a sound solver at absolute precision 1e-12;
  builds about twice as fast as ``storm``, for large models.
* ``sparse``: capver's vectorised explicit engine
  (:class:`capver.engines.verification.sparse.SparseChecker`): builds the MDP several
  times faster than Storm's PRISM builder, solves in doubles, then rounds the values to
  rationals and verifies them exactly (exact arithmetic where the check fails).

``auto`` (:class:`AutoChecker`) picks one per model by its size: the explicit engine
for models with at most :data:`AUTO_EXPLICIT_STATES` reachable states (it has no
start-up cost), the sparse engine above (docs/bench/quantitative/ has the times
behind this choice).  Every checker says how precise its last value is
(``guarantee``: exact, exact after verification, or sound within ε).

The Storm checkers live here rather than beside the explicit one in
:mod:`~capver.engines.verification.quantitative` because they need the PRISM writer
(:mod:`capver.engines.verification.prism`), and the sparse checker imports
``quantitative``: one module on top of all of them keeps the imports acyclic.  A checker
builds each model once per initial state and then answers any number of properties on it.
"""

from __future__ import annotations

from collections.abc import Callable

from capver.core.properties import Eventually, Globally, PathFormula, StateFormula
from capver.core.state import State
from capver.engines.verification import explicit, storm
from capver.engines.verification.prism import PrismExport, storm_model
from capver.engines.verification.quantitative import EXACT, ExplicitChecker, QuantitativeChecker, Value, sound
from capver.engines.verification.sparse import SparseChecker
from capver.engines.verification.symbolic import formula_bdd
from capver.model.capability_model import CompoundModel


class StormChecker:
    """Storm on the model's PRISM export (exact rationals unless ``exact`` is False).

    The built model is kept per (model, initial state): the PRISM export carries every
    atom as a label, so any property over the atoms is checked on one build."""

    def __init__(self, *, exact: bool = True) -> None:
        self.exact = exact
        self.name = "storm" if exact else "storm-float"
        self.guarantee = EXACT if exact else sound(float(storm.FLOAT_PRECISION))
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
        # Storm's sound solvers bound the error of iterating to a fixed point; bounded
        # properties are k matrix-vector products in doubles, whose rounding nobody bounds.
        self.guarantee = (
            EXACT if self.exact else FLOAT_STEPS if path.bound is not None else sound(float(storm.FLOAT_PRECISION))
        )
        if isinstance(path, Eventually):
            return sm.reach(self._expression(model, export, path.goal), path.bound, maximise=maximise)
        if isinstance(path, Globally):
            return sm.globally(self._expression(model, export, path.invariant), path.bound, maximise=maximise)
        hold, goal = self._expression(model, export, path.hold), self._expression(model, export, path.goal)
        return sm.until(hold, goal, path.bound, maximise=maximise)

    def executions(self, model: CompoundModel, init: State, target: StateFormula, maximise: bool) -> Value:
        export, sm = self.built(model, init)
        self.guarantee = EXACT if self.exact else sound(float(storm.FLOAT_PRECISION))
        return sm.expected_executions(self._expression(model, export, target), maximise=maximise)


FLOAT_STEPS = "floating point, step-bounded value iteration in doubles (rounding error not bounded)"

AUTO_EXPLICIT_STATES = 200
"""``auto`` answers with the explicit engine up to this many reachable states and with
the sparse engine above.  Measured (docs/bench/quantitative/, load ~3): on the learned
h∧ models (97–310 states) both take 0.3–0.8 s, the sparse engine mostly less; on First
Responders' h∨ (11,520 states, 1.03 M transitions) the explicit engine takes 11.6 s and
answers in doubles (above its exact limit), the sparse engine 1.6–2.0 s, exact.  Deciding
costs the explicit exploration of up to this many states, so it is kept small: only
models of a few states, where nothing costs time, stay with the explicit engine."""


class AutoChecker:
    """``--engine auto``: the explicit engine on small models, the sparse engine on
    large ones (:data:`AUTO_EXPLICIT_STATES`).  The explicit engine's exploration stops
    at the threshold, so a large model costs at most that many states' exploration
    before the sparse engine takes over.  ``name`` and ``guarantee`` are those of the
    engine that answered last, ``choices`` records each model's choice."""

    def __init__(self, threshold: int = AUTO_EXPLICIT_STATES) -> None:
        self.threshold = threshold
        self.explicit = ExplicitChecker()
        self.sparse = SparseChecker()
        self.name = "auto"
        self.guarantee = EXACT
        self.choices: dict[tuple[int, State], str] = {}
        self._models: list[CompoundModel] = []  # kept so that their ids stay theirs

    def choose(self, model: CompoundModel, init: State) -> QuantitativeChecker:
        """The engine for ``model`` from ``init`` (decided on first use)."""
        key = (id(model), init)
        name = self.choices.get(key)
        if name is None:
            try:
                explicit.explore(model, init, limit=self.threshold)
                name = "explicit"
            except explicit.StateSpaceLimitError:
                name = "sparse"
            self.choices[key] = name
            self._models.append(model)
        return self.explicit if name == "explicit" else self.sparse

    def probability(self, model: CompoundModel, init: State, path: PathFormula, maximise: bool) -> Value:
        engine = self.choose(model, init)
        v = engine.probability(model, init, path, maximise)
        self.name, self.guarantee = engine.name, engine.guarantee
        return v

    def executions(self, model: CompoundModel, init: State, target: StateFormula, maximise: bool) -> Value:
        engine = self.choose(model, init)
        v = engine.executions(model, init, target, maximise)
        self.name, self.guarantee = engine.name, engine.guarantee
        return v


QUANTITATIVE_CHECKERS: dict[str, Callable[[], QuantitativeChecker]] = {
    "explicit": ExplicitChecker,
    "sparse": SparseChecker,
    "storm": lambda: StormChecker(exact=True),
    "storm-float": lambda: StormChecker(exact=False),
}
"""Name → a fresh checker: the choices of ``capver verify --engine`` (besides ``auto``)."""


def make(name: str) -> QuantitativeChecker:
    """A fresh checker by name: ``auto`` (:class:`AutoChecker`) or one of
    :data:`QUANTITATIVE_CHECKERS`."""
    if name == "auto":
        return AutoChecker()
    try:
        return QUANTITATIVE_CHECKERS[name]()
    except KeyError:
        raise ValueError(
            f"unknown checker {name!r}; expected auto or one of {', '.join(QUANTITATIVE_CHECKERS)}"
        ) from None


__all__ = ["AUTO_EXPLICIT_STATES", "QUANTITATIVE_CHECKERS", "AutoChecker", "StormChecker", "make"]

"""Quantitative queries on a capability model's MDP (paper, section 2: the MDP with
transition probabilities Pr_h(s′ | s, c)) by the probabilistic model checker Storm,
through stormpy (an optional dependency: ``pip install stormpy``).

The engine takes the model as PRISM text —
:func:`capver.engines.verification.prism.export_prism` writes it.  :func:`build`
parses and builds it once (``build_seconds``); :class:`StormModel` then checks any
number of PRISM property strings on it (``check_seconds``).  :func:`reach_formula`,
:func:`until_formula` and :func:`executions_formula` write the usual ones from a target given as a PRISM
expression over the program's labels (the export has one label per atom); a
property over variables needs the model built for it (``build(..., properties=)``,
as the one-shot functions :func:`pmax_reach`, :func:`globally`, :func:`until` and
:func:`expected_executions` do), because Storm evaluates state formulas through
labels of the built model.

**Exact arithmetic.**  stormpy 2.0 builds a model over a chosen value type:
``stormpy.build_model[stormpy.Rational]`` builds it with GMP rationals (the
fractions of the PRISM text stay exact), and ``stormpy.model_checking`` then uses
``stormpy.environments.exact()`` (its default for rational models), which forces
exact solvers.  Values come back as ``Rational`` and are returned as
:class:`fractions.Fraction`; an infinite expected reward comes back as the float
``inf`` even then.  With ``exact=False`` the model is built over doubles (about twice
as fast to build) and checked in Storm's *sound* environment with an absolute
precision of :data:`FLOAT_PRECISION` (its default, relative 1e-6, is too coarse for the
1e-9 agreement with the exact engines that the tests demand), and values are floats.  Both use Storm's topological (SCC by SCC) min-max solver.

**Files.**  stormpy 2.0 parses PRISM from a file only; the text goes to a file in a
:class:`tempfile.TemporaryDirectory` that is removed right after parsing.

**Not in Storm's property language:** ``G<=k`` (its parser accepts ``G`` but not a
bounded one), so :meth:`StormModel.globally` checks 1 − P_opp [F<=k ¬φ] for both.
Until, bounded or not, is Storm's own (``P [ a U<=k b ]``, :meth:`StormModel.until`).

**Constants.**  A state formula reaches Storm as an expression over labels and the
constants ``true`` / ``false``; Storm refuses ``!(true)`` (it looks for a label of
that name), so a negation is written by :func:`negation`, which negates a constant
to the other one.
"""

from __future__ import annotations

import importlib
import math
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from capver.core.state import State
from capver.errors import CapverError

Value = Fraction | float
"""A probability or an expected number of executions: exact when Storm computed it
with rationals, a float otherwise (and ``inf`` for an infinite expectation)."""


FLOAT_PRECISION = Fraction(1, 10**12)
"""Absolute precision of Storm's sound min-max solver on models built over doubles."""


class StormUnavailableError(CapverError, ImportError):
    """stormpy is not installed."""


class StormError(CapverError, RuntimeError):
    """Storm rejected a program or a property, or its answer is not a number."""


def _stormpy() -> Any:
    # Imported on first use: stormpy is optional, and importing it costs ~0.5 s.
    # importlib keeps it Any for mypy (stormpy ships no type information).
    try:
        return importlib.import_module("stormpy")
    except ImportError as exc:
        raise StormUnavailableError(
            "the Storm engine needs stormpy (pip install 'stormpy>=2.0'): " + str(exc)
        ) from None


def available() -> bool:
    """stormpy can be imported."""
    try:
        _stormpy()
    except StormUnavailableError:
        return False
    return True


def _value(v: Any) -> Value:
    """A Storm number as a Fraction (exact) or float (double, or ``inf``)."""
    if isinstance(v, float):
        return v
    if isinstance(v, int):
        return Fraction(v)
    # stormpy's GMP Rational prints as "n/d" or "n"; Fraction parses both exactly.
    try:
        return Fraction(str(v))
    except ValueError:
        raise StormError(f"Storm returned {v!r}, which is not a number") from None


def reach_formula(target: str, bound: int | None = None, *, maximise: bool = True) -> str:
    """``Pmax=? [F<=k (target)]`` (``Pmin`` when not ``maximise``; unbounded ``F``
    when ``bound`` is None)."""
    if bound is not None and bound < 0:
        raise ValueError(f"step bound {bound} is negative")
    f = "F" if bound is None else f"F<={bound}"
    return f"P{'max' if maximise else 'min'}=? [{f} ({target})]"


def until_formula(hold: str, goal: str, bound: int | None = None, *, maximise: bool = True) -> str:
    """``Pmax=? [(hold) U<=k (goal)]`` (``Pmin`` when not ``maximise``; unbounded
    ``U`` when ``bound`` is None): Storm's (and PRISM's) until, step-bounded as in
    capver (k capability executions)."""
    if bound is not None and bound < 0:
        raise ValueError(f"step bound {bound} is negative")
    u = "U" if bound is None else f"U<={bound}"
    return f"P{'max' if maximise else 'min'}=? [({hold}) {u} ({goal})]"


def negation(expression: str) -> str:
    """``!(expression)``, except that the constants become each other.  Storm checks
    a property's state formulas through labels: it knows ``true`` and ``false`` as
    constants and ``!("a")`` as a negated label, but takes ``!(true)`` for one label
    of that name and refuses it as unknown."""
    constants = {"true": "false", "false": "true"}
    stripped = expression.strip()
    return constants.get(stripped, f"!({expression})")


def executions_formula(target: str, *, maximise: bool = False, reward: str = "executions") -> str:
    """``R{"executions"}min=? [F (target)]``: the expected number of capability
    executions until ``target`` (infinite where it is not reached with probability 1)."""
    return f'R{{"{reward}"}}{"max" if maximise else "min"}=? [F ({target})]'


@dataclass(slots=True)
class StormModel:
    """A PRISM program built by Storm, ready to check properties on.

    ``states[i]`` is the capver state (bitset) of Storm's state i when the program's
    variables for the atoms were given (``state_bits``), else empty.
    ``build_seconds`` covers parsing and building; ``check_seconds`` is the time of
    the last :meth:`check` or :meth:`values`."""

    program: Any
    model: Any
    exact: bool
    build_seconds: float
    states: tuple[State, ...] = ()
    check_seconds: float = field(default=0.0)

    @property
    def nr_states(self) -> int:
        return int(self.model.nr_states)

    @property
    def nr_choices(self) -> int:
        return int(self.model.nr_choices)

    @property
    def nr_transitions(self) -> int:
        return int(self.model.nr_transitions)

    @property
    def initial_state(self) -> int:
        """Storm's index of the (one) initial state."""
        inits = list(self.model.initial_states)
        if len(inits) != 1:
            raise StormError(f"expected one initial state, Storm has {len(inits)}")
        return int(inits[0])

    def deadlocks(self) -> list[int]:
        """Storm's indices of the states it gave a self-loop because nothing was enabled."""
        labeling = self.model.labeling
        return sorted(int(s) for s in labeling.get_states("deadlock")) if labeling.contains_label("deadlock") else []

    def _result(self, formula: str, only_initial: bool) -> Any:
        sp = _stormpy()
        try:
            props = sp.parse_properties(formula, self.program)
        except RuntimeError as exc:
            raise StormError(f"Storm cannot parse the property {formula!r}: {exc}") from None
        if len(props) != 1:
            raise StormError(f"expected one property, got {len(props)} from {formula!r}")
        t0 = time.perf_counter()
        try:
            result = sp.model_checking(
                self.model, props[0], only_initial_states=only_initial, environment=_environment(sp, self.exact)
            )
        except RuntimeError as exc:
            # e.g. a variable in a property of a model built without that property.
            raise StormError(f"Storm cannot check {formula!r}: {exc}") from None
        self.check_seconds = time.perf_counter() - t0
        return result

    def check(self, formula: str) -> Value:
        """The value of a quantitative property (``Pmax=? [...]``, ``R{..}min=? [...]``)
        in the initial state."""
        result = self._result(formula, only_initial=True)
        return _value(result.get_value(self.initial_state))

    def values(self, formula: str) -> dict[State, Value]:
        """The value of a quantitative property in every reachable state, keyed by
        capver state (needs ``state_bits`` at build time)."""
        if not self.states:
            raise StormError("values() needs the model built with state_bits (the atoms' variables)")
        result = self._result(formula, only_initial=False)
        vec = result.get_value_vector()
        return {s: _value(vec[i]) for i, s in enumerate(self.states)}

    def reach(self, target: str, bound: int | None = None, *, maximise: bool = True) -> Value:
        """Pmax / Pmin of F target (F<=bound target) in the initial state."""
        return self.check(reach_formula(target, bound, maximise=maximise))

    def globally(self, invariant: str, bound: int | None = None, *, maximise: bool = True) -> Value:
        """Pmax / Pmin of G invariant (G<=bound invariant), as
        1 − Pmin / Pmax of F !invariant: Storm's parser has no ``G``."""
        return 1 - self.reach(negation(invariant), bound, maximise=not maximise)

    def until(self, hold: str, goal: str, bound: int | None = None, *, maximise: bool = True) -> Value:
        """Pmax / Pmin of hold U goal (hold U<=bound goal) in the initial state."""
        return self.check(until_formula(hold, goal, bound, maximise=maximise))

    def expected_executions(self, target: str, *, maximise: bool = False, reward: str = "executions") -> Value:
        """Rmin / Rmax of the executions until target (``inf`` where the target is
        not reached with probability 1 under every / the best scheduler)."""
        return self.check(executions_formula(target, maximise=maximise, reward=reward))


def _environment(sp: Any, exact: bool) -> Any:
    if exact:
        return sp.environments.exact()
    env = sp.environments.sound()
    minmax = env.solver().min_max()
    minmax.precision = sp.Rational(f"{FLOAT_PRECISION.numerator}/{FLOAT_PRECISION.denominator}")
    minmax.relative_termination_criterion = False
    return env


def build(
    prism_text: str,
    *,
    exact: bool = True,
    state_bits: Sequence[str] = (),
    init: State = 0,
    properties: Sequence[str] = (),
) -> StormModel:
    """Parse and build a PRISM MDP in Storm, over rationals when ``exact`` (else
    doubles), with every label and reward structure.

    A property checked later may combine labels (``"a" & !"b"``) freely, but may
    name variables only if it was among ``properties`` here: Storm evaluates a
    property's state formulas through labels of the built model, so the expressions
    of these properties become labels while building.  ``state_bits[i]`` names the
    Boolean variable of atom i: given, the model keeps each state's valuation and
    :attr:`StormModel.states` maps Storm's states to capver bitsets.  Storm's parser
    turns a variable that no update writes into a constant and drops it from the
    valuations; its bit is then the one of ``init``, the program's initial state."""
    sp = _stormpy()
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="capver-storm-") as tmp:
        path = Path(tmp) / "model.prism"
        path.write_text(prism_text, encoding="utf-8")
        try:
            program = sp.parse_prism_program(str(path))
        except RuntimeError as exc:
            raise StormError(f"Storm cannot parse the PRISM program: {exc}") from None
    if properties:
        try:
            parsed = sp.parse_properties(";".join(properties), program)
        except RuntimeError as exc:
            raise StormError(f"Storm cannot parse the properties {list(properties)!r}: {exc}") from None
        options = sp.BuilderOptions(parsed)
    else:
        options = sp.BuilderOptions()
    options.set_build_all_labels()
    options.set_build_all_reward_models()
    if state_bits:
        options.set_build_state_valuations()
    value_type = sp.Rational if exact else float
    try:
        model = sp.build_model[value_type](program, options=options)
    except RuntimeError as exc:
        raise StormError(f"Storm cannot build the PRISM program: {exc}") from None
    states: tuple[State, ...] = ()
    if state_bits:
        states = _capver_states(model, state_bits, init)
    return StormModel(program, model, exact, time.perf_counter() - t0, states)


def _capver_states(model: Any, state_bits: Sequence[str], init: State) -> tuple[State, ...]:
    sv = model.state_valuations
    by_name = {v.name: v for v in sv.get_all_variables()}
    constant = 0
    bits = [0] * int(model.nr_states)
    for i, name in enumerate(state_bits):
        var = by_name.get(name)
        if var is None:  # never written: a constant, as in the initial state
            constant |= init & (1 << i)
            continue
        for s in sv.get_boolean_values(var):  # the indices of the states where it is true
            bits[int(s)] |= 1 << i
    return tuple(b | constant for b in bits)


# -- one-shot queries on PRISM text -----------------------------------------------------


def pmax_reach(
    prism_text: str, target: str, bound: int | None = None, maximise: bool = True, *, exact: bool = True
) -> Value:
    """Pmax (Pmin when not ``maximise``) of F target / F<=bound target from the
    program's initial state; ``target`` is a PRISM expression."""
    formula = reach_formula(target, bound, maximise=maximise)
    return build(prism_text, exact=exact, properties=[formula]).check(formula)


def globally(
    prism_text: str, invariant: str, bound: int | None = None, maximise: bool = True, *, exact: bool = True
) -> Value:
    """Pmax (Pmin) of G invariant / G<=bound invariant from the initial state."""
    formula = reach_formula(negation(invariant), bound, maximise=not maximise)
    return 1 - build(prism_text, exact=exact, properties=[formula]).check(formula)


def until(
    prism_text: str, hold: str, goal: str, bound: int | None = None, maximise: bool = True, *, exact: bool = True
) -> Value:
    """Pmax (Pmin) of hold U goal / hold U<=bound goal from the initial state."""
    formula = until_formula(hold, goal, bound, maximise=maximise)
    return build(prism_text, exact=exact, properties=[formula]).check(formula)


def expected_executions(
    prism_text: str, target: str, maximise: bool = False, *, exact: bool = True, reward: str = "executions"
) -> Value:
    """Rmin (Rmax) of the capability executions until ``target``."""
    formula = executions_formula(target, maximise=maximise, reward=reward)
    return build(prism_text, exact=exact, properties=[formula]).check(formula)


def is_infinite(v: Value) -> bool:
    return isinstance(v, float) and math.isinf(v)


__all__ = [
    "StormError",
    "StormModel",
    "StormUnavailableError",
    "Value",
    "available",
    "build",
    "executions_formula",
    "expected_executions",
    "globally",
    "is_infinite",
    "negation",
    "pmax_reach",
    "reach_formula",
    "until",
    "until_formula",
]

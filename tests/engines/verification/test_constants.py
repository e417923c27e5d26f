"""The constants ``true`` and ``false`` anywhere in a property, on every engine: the
qualitative ones (BDD, BMC) and the quantitative ones (explicit, storm, storm-float).

Storm used to refuse a negated constant: ``G φ`` is checked as 1 − P [F ¬φ], and
``!(true)`` reached Storm's property parser, which looks a non-label expression up
as a label and found none (:func:`capver.engines.verification.storm.negation` now
writes the other constant).  The properties below have values that follow from the
constants alone (``Pmax=? [ F !false ]`` is 1 on every model), or equal the value of
the same property without the constant (``Pmin=? [ true U p ]`` = ``Pmin=? [ F p ]``);
both are checked on the shipped toy model and on random ones with dead ends.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capver.core.state import State
from capver.engines.verification import quantitative, storm
from capver.engines.verification.bmc import BoundedModelChecker
from capver.engines.verification.checkers import QUANTITATIVE_CHECKERS
from capver.engines.verification.symbolic import SymbolicEngine
from capver.io import dsl
from capver.io.properties_text import parse_property
from capver.model.capability_model import CompoundModel
from tests.engines.verification.test_explicit_engine import KINDS, random_case, seeds
from tests.helpers.examples import scaled
from tests.helpers.paths import ROOT

TOY = ROOT / "models" / "toy_blocks.capm"

QUALITATIVE: dict[str, bool] = {
    "E [ F true ]": True,
    "E [ F !false ]": True,
    "E [ F false ]": False,
    "A [ G !false ]": True,
    "A [ G true ]": True,
    "A [ G false ]": False,
    "A [ G !true ]": False,
    "E [ G true ]": True,
    "E [ G !true ]": False,
    "A [ F true ]": True,
    "A [ F !true ]": False,
    "A [ true U !false ]": True,
    "A [ false U true ]": True,
    "E [ false U true ]": True,
    "E [ true U false ]": False,
    "E [ G<=2 !false ]": True,
    "A [ F<=2 false ]": False,
    "E [ !false U<=2 false ]": False,
    "A [ G<=3 true => true ]": True,
}
"""Qualitative properties over the constants alone, with their verdict on any model."""

QUANTITATIVE: dict[str, tuple[Fraction | float, bool | None]] = {
    "Pmax=? [ F !false ]": (Fraction(1), None),
    "Pmin=? [ F true ]": (Fraction(1), None),
    "Pmax=? [ F false ]": (Fraction(0), None),
    "Pmax=? [ G !true ]": (Fraction(0), None),
    "Pmin=? [ G !false ]": (Fraction(1), None),
    "Pmax=? [ G false ]": (Fraction(0), None),
    "P>=1 [ G true ]": (Fraction(1), True),
    "P<=0 [ F false ]": (Fraction(0), True),
    "P>0 [ G !true ]": (Fraction(0), False),
    "Pmin=? [ G<=2 true => true ]": (Fraction(1), None),
    "Pmax=? [ G<=2 !(false | false) ]": (Fraction(1), None),
    "Pmax=? [ F<=3 !(false | false) ]": (Fraction(1), None),
    "Pmin=? [ true U !false ]": (Fraction(1), None),
    "Pmax=? [ !true U false ]": (Fraction(0), None),
    "Pmin=? [ false U<=2 true ]": (Fraction(1), None),
    "Rmin=? [ F !false ]": (Fraction(0), None),
    "Rmax=? [ F false ]": (math.inf, None),
}
"""Quantitative properties over the constants alone: (value, verdict of a bound)."""


def _equivalent(atom: str) -> dict[str, str]:
    """Properties with a constant → the same property without it."""
    return {
        f"Pmin=? [ true U {atom} ]": f"Pmin=? [ F {atom} ]",
        f"Pmax=? [ !false U<=2 {atom} ]": f"Pmax=? [ F<=2 {atom} ]",
        f"Pmax=? [ G ({atom} | false) ]": f"Pmax=? [ G {atom} ]",
        f"Pmin=? [ G<=2 !({atom} & true) ]": f"Pmin=? [ G<=2 !{atom} ]",
        f"Pmax=? [ {atom} U false ]": "Pmax=? [ F false ]",
        f"Pmax=? [ false U {atom} ]": f"Pmax=? [ F<=0 {atom} ]",
        f"Rmin=? [ F {atom} & !false ]": f"Rmin=? [ F {atom} ]",
        f"E [ true U {atom} ]": f"E [ F {atom} ]",
        f"A [ !false U {atom} ]": f"A [ F {atom} ]",
        f"E [ G ({atom} | false) ]": f"E [ G {atom} ]",
        f"A [ G {atom} => true ]": "A [ G true ]",
        f"A [ F<=2 {atom} | false ]": f"A [ F<=2 {atom} ]",
    }


class Engines:
    """Every engine of one model, built once (Storm keeps its build per model)."""

    def __init__(self, model: CompoundModel, init: State) -> None:
        self.model, self.init = model, init
        self.bdd = SymbolicEngine(model)
        self.bmc = BoundedModelChecker(model)
        names = [n for n in QUANTITATIVE_CHECKERS if storm.available() or not n.startswith("storm")]
        self.checkers = [QUANTITATIVE_CHECKERS[n]() for n in names]

    def qualitative(self, text: str) -> list[bool]:
        """The verdict of the BDD engine (fast path and full fixpoint) and of BMC (with
        as many steps as states are reachable, where it is exact)."""
        prop = parse_property(text, self.model.vocabulary, tuple(self.model))
        k = self.bdd.count(self.bdd.reachable(self.init))
        return [
            self.bdd.check(prop, self.init).holds,
            self.bdd.check(prop, self.init, counts=True).holds,
            self.bmc.check(prop, self.init, bound=k).holds,
        ]

    def quantitative(self, text: str) -> list[quantitative.QuantitativeResult]:
        prop = parse_property(text, self.model.vocabulary, tuple(self.model))
        return [quantitative.check(prop, self.model, self.init, c) for c in self.checkers]


def _same(a: Fraction | float, b: Fraction | float) -> bool:
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(float(a) - float(b)) <= 1e-9 and (not isinstance(a, Fraction) or not isinstance(b, Fraction) or a == b)


def _check_model(model: CompoundModel, init: State, atom: str) -> None:
    e = Engines(model, init)
    for text, want in QUALITATIVE.items():
        assert e.qualitative(text) == [want] * 3, text
    for text, (value, verdict) in QUANTITATIVE.items():
        for r in e.quantitative(text):
            assert _same(r.value, value) and r.holds is verdict, (text, r)
    for text, plain in _equivalent(atom).items():
        if text.startswith(("E", "A")):
            assert e.qualitative(text) == e.qualitative(plain), text
        else:
            for r, r0 in zip(e.quantitative(text), e.quantitative(plain), strict=True):
                assert r.engine == r0.engine and _same(r.value, r0.value), (text, r, r0)


def test_constants_on_the_toy_model() -> None:
    parsed = dsl.read(TOY)
    assert parsed.init is not None
    _check_model(parsed.model, parsed.init, "holding(a)")


@settings(max_examples=scaled(12), deadline=None)
@given(seed=seeds, n_atoms=st.integers(3, 4), kind=st.sampled_from(KINDS))
def test_constants_on_random_models(seed: int, n_atoms: int, kind: str) -> None:
    model, init, _ = random_case(seed, n_atoms, kind)
    _check_model(model, init, "p0")


@pytest.mark.skipif(not storm.available(), reason="stormpy is not installed: pip install 'stormpy>=2.0'")
def test_storm_negation_of_a_constant() -> None:
    assert storm.negation("true") == "false" and storm.negation(" false ") == "true"
    assert storm.negation('"p0" & !"p1"') == '!("p0" & !"p1")'
    assert storm.until_formula("true", '"p0"', 3, maximise=False) == 'Pmin=? [(true) U<=3 ("p0")]'

"""FOL decision lists (section 5 of the introspection paper): first-match semantics,
the formula under which a value is output (what milestone computation mutates)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from capver.core.vocabulary import Atom, Predicate, Vocabulary
from capver.errors import IntrospectionError
from capver.introspection.decision_list import DecisionList, DecisionRule
from capver.introspection.fol import Var, evaluate, exists, forall, lit

X = Var("X", "block")
V = Vocabulary.build(
    [Predicate("ontable", ("block",)), Predicate("clear", ("block",)), Predicate("handempty", ())],
    objects={"a": "block", "b": "block"},
    types={"block": "object"},
)
ALL_TABLE = forall(X, lit("ontable", X))
SOME_CLEAR = exists(X, lit("clear", X))
DL = DecisionList(
    (DecisionRule(ALL_TABLE, 10.0), DecisionRule(SOME_CLEAR, -1.0), DecisionRule(lit("handempty"), 10.0)),
    default=0.0,
    name="test reward",
)


def test_first_matching_rule_wins() -> None:
    everything = frozenset(V.atoms)
    assert DL.value(everything, V) == 10.0  # rule 1, although rule 2 holds too
    only_clear = frozenset({Atom.parse("clear(a)"), Atom.parse("handempty")})
    assert DL.value(only_clear, V) == -1.0  # rule 2 shadows rule 3
    assert DL.value(frozenset({Atom.parse("handempty")}), V) == 10.0
    assert DL.value(frozenset(), V) == 0.0
    assert DL.values() == (10.0, -1.0, 0.0)
    assert DL.max_value == 10.0


@given(st.sets(st.sampled_from(list(V.atoms))).map(frozenset))
def test_condition_for_holds_exactly_when_the_list_outputs_the_value(state) -> None:
    out = DL.value(state, V)
    compiled = DL.compile(V)
    assert compiled.value(V.state(state)) == out
    for value in (10.0, -1.0, 0.0, 5.0):
        assert evaluate(DL.condition_for(value), state, V) is (out == value)


def test_termination_values_are_checked() -> None:
    bad = DecisionList((DecisionRule(ALL_TABLE, 2),), 0, "bad termination")
    with pytest.raises(IntrospectionError, match="termination value 2"):
        bad.check_termination()
    DecisionList((DecisionRule(ALL_TABLE, 1), DecisionRule(SOME_CLEAR, -1)), 0).check_termination()


def test_conditions_must_be_closed() -> None:
    with pytest.raises(IntrospectionError, match=r"rule 1.*not bound"):
        DecisionList((DecisionRule(lit("clear", X), 1.0),), 0.0, "open").check(V)

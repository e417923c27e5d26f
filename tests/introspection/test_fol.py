"""First-order formulas (section 5 of the introspection paper): direct evaluation on
set and bitset states, compilation to masks, checks."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from capver.core.vocabulary import Atom, Predicate, Vocabulary
from capver.errors import IntrospectionError
from capver.introspection.fol import (
    Equal,
    Forall,
    Not,
    Prev,
    Var,
    check_formula,
    compile_formula,
    conj,
    disj,
    evaluate,
    exists,
    forall,
    free_vars,
    lit,
    substitute,
)

X = Var("X", "block")
Y = Var("Y", "block")
C = Var("C", "color")


def vocab() -> Vocabulary:
    return Vocabulary.build(
        [
            Predicate("on", ("block", "block")),
            Predicate("ontable", ("block",)),
            Predicate("clear", ("block",)),
            Predicate("handempty", ()),
            Predicate("painted", ("block", "color")),
        ],
        objects={"a": "block", "b": "block", "c": "block", "red": "color"},
        types={"block": "object", "color": "object"},
    )


# a on b; b and c on the table; hand empty
STATE = frozenset(Atom.parse(t) for t in ["on(a,b)", "ontable(b)", "ontable(c)", "clear(a)", "clear(c)", "handempty"])


@pytest.mark.parametrize(
    ("formula", "expected"),
    [
        (lit("on", "a", "b"), True),
        (lit("on", "b", "a"), False),
        (Not(lit("on", "b", "a")), True),
        (forall(X, lit("ontable", X)), False),
        (exists(X, lit("on", X, "b")), True),
        (exists(X, lit("on", X, "c")), False),
        (forall(X, disj(lit("ontable", X), exists(Y, lit("on", X, Y)))), True),
        (exists([X, Y], conj(lit("on", X, Y), Not(Equal(X, Y)))), True),
        (forall(X, Not(lit("on", X, X))), True),
        (exists(C, lit("painted", "a", C)), False),
        (conj(), True),
        (disj(), False),
    ],
)
def test_evaluate_on_sets_and_bitsets(formula, expected) -> None:
    v = vocab()
    assert evaluate(formula, STATE, v) is expected
    assert evaluate(formula, v.state(STATE), v) is expected
    assert compile_formula(formula, v).holds(v.state(STATE)) is expected


def test_prev_reads_the_previous_state() -> None:
    v = vocab()
    after = STATE - {Atom.parse("on(a,b)"), Atom.parse("clear(a)"), Atom.parse("handempty")}
    became_unstacked = conj(Not(lit("on", "a", "b")), Prev(lit("on", "a", "b")))
    assert evaluate(became_unstacked, after, v, prev=STATE) is True
    assert evaluate(became_unstacked, after, v, prev=after) is False
    cf = compile_formula(became_unstacked, v)
    assert cf.holds(v.state(after), v.state(STATE)) is True
    assert cf.holds(v.state(after), v.state(after)) is False
    with pytest.raises(IntrospectionError, match="previous state"):
        evaluate(became_unstacked, after, v)


def test_free_vars_and_substitution_respect_shadowing() -> None:
    f = conj(lit("on", X, Y), Forall(X, lit("ontable", X)))
    assert free_vars(f) == {X, Y}
    g = substitute(f, {X: "a", Y: "b"})
    assert free_vars(g) == frozenset()
    assert g == conj(lit("on", "a", "b"), Forall(X, lit("ontable", X)))


@pytest.mark.parametrize(
    ("formula", "message"),
    [
        (lit("above", "a", "b"), "unknown predicate 'above'"),
        (lit("on", "a"), "takes 2 argument"),
        (lit("on", "a", "zz"), "unknown object 'zz'"),
        (lit("ontable", "red"), "has type 'color', expected 'block'"),
        (lit("ontable", X), "not bound"),
        (exists(C, lit("ontable", C)), "cannot fill a 'block' argument"),
        (exists(Var("Z", "animal"), lit("handempty")), "unknown type 'animal'"),
    ],
)
def test_check_formula_names_the_problem(formula, message) -> None:
    with pytest.raises(IntrospectionError, match=message):
        check_formula(formula, vocab(), where="test")


# -- compiled formulas agree with direct evaluation ---------------------------------
V = vocab()
ATOMS = list(V.atoms)


def formulas(depth: int = 3) -> st.SearchStrategy:
    terms = st.sampled_from(["a", "b", "c", X, Y])
    leaf = st.one_of(
        st.builds(lambda p, q: lit("on", p, q), terms, terms),
        st.builds(lambda p: lit("ontable", p), terms),
        st.builds(lambda p: lit("clear", p), terms),
        st.just(lit("handempty")),
        st.builds(Equal, terms, terms),
    )

    def extend(children: st.SearchStrategy) -> st.SearchStrategy:
        return st.one_of(
            st.builds(lambda cs: conj(*cs), st.lists(children, min_size=0, max_size=3)),
            st.builds(lambda cs: disj(*cs), st.lists(children, min_size=0, max_size=3)),
            st.builds(Not, children),
            st.builds(Prev, children),
            st.builds(exists, st.sampled_from([X, Y]), children),
            st.builds(forall, st.sampled_from([X, Y]), children),
        )

    # Close the formula: quantify X and Y on the outside so it has no free variables.
    return st.recursive(leaf, extend, max_leaves=8).map(lambda f: forall(X, exists(Y, f)))


states = st.sets(st.sampled_from(ATOMS)).map(frozenset)


@given(formulas(), states, states)
def test_compiled_formula_agrees_with_evaluation(formula, s, p) -> None:
    expected = evaluate(formula, s, V, prev=p)
    assert evaluate(formula, V.state(s), V, prev=V.state(p)) is expected
    assert compile_formula(formula, V).holds(V.state(s), V.state(p)) is expected

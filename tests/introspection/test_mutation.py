"""State mutation, section 5.1 of the introspection paper: every formula kind against
hand-worked examples, immutability, IMMUTABLY VALID, unsatisfiable formulas, and
(for all formulas) that the mutations describe exactly the reachable-compatible
states satisfying the formula."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from capver.core.vocabulary import Atom, Predicate, Vocabulary
from capver.errors import MutationLimitError
from capver.introspection.domains import bins, blocks, drawers
from capver.introspection.fol import (
    Equal,
    Not,
    Var,
    conj,
    disj,
    evaluate,
    exists,
    forall,
    lit,
)
from capver.introspection.mutation import (
    IMMUTABLY_VALID,
    UNSATISFIABLE,
    Mutability,
    Mutation,
    mutate,
)

X = Var("X", "block")
Y = Var("Y", "block")


def M(*lits: str) -> Mutation:
    """Mutation from '+p(a)' / '-p(a)' strings."""
    return Mutation(
        frozenset(Atom.parse(x[1:]) for x in lits if x[0] == "+"),
        frozenset(Atom.parse(x[1:]) for x in lits if x[0] == "-"),
    )


@pytest.fixture(scope="module")
def bw():
    """a on b, b and c on the table, hand empty; mutability from the four schemas."""
    p = blocks.problem_from_stacks([["b", "a"], ["c"]])
    return p.initial, p.mutability


def test_mutability_is_derived_from_the_schemas(bw) -> None:
    _s, mut = bw
    assert mut.can_add(Atom.parse("on(c,a)")) and mut.can_delete(Atom.parse("on(c,a)"))
    assert mut.can_add(Atom.parse("handempty")) and mut.can_delete(Atom.parse("handempty"))
    # stack(a, a) is never a ground action (¬(X = Y)), so on(a, a) is immutable.
    assert not mut.can_add(Atom.parse("on(a,a)")) and not mut.can_delete(Atom.parse("on(a,a)"))


@pytest.mark.parametrize(
    ("formula", "expected"),
    [
        # literal: mutable (false, addable) / mutable (true, deletable)
        (lit("ontable", "a"), {M("+ontable(a)")}),
        (lit("ontable", "b"), {M("+ontable(b)")}),
        (Not(lit("clear", "a")), {M("-clear(a)")}),
        # literal: immutable and false -> unsatisfiable; its negation is immutably valid
        (lit("on", "a", "a"), set()),
        (Not(lit("on", "a", "a")), {IMMUTABLY_VALID}),
        # and: Cartesian product
        (conj(lit("ontable", "a"), lit("clear", "b")), {M("+ontable(a)", "+clear(b)")}),
        (
            conj(disj(lit("ontable", "a"), lit("holding", "a")), lit("handempty")),
            {M("+ontable(a)", "+handempty"), M("+holding(a)", "+handempty")},
        ),
        # or: union
        (disj(lit("on", "a", "c"), lit("on", "c", "a")), {M("+on(a,c)"), M("+on(c,a)")}),
        # not: pushed inward (¬∧ becomes a union of negated children)
        (Not(conj(lit("on", "a", "b"), lit("clear", "c"))), {M("-on(a,b)"), M("-clear(c)")}),
        # exists: union over substitutions (X = b is immutable: on(b, b))
        (exists(X, lit("on", X, "b")), {M("+on(a,b)"), M("+on(c,b)")}),
        # forall: product over substitutions — the paper's Blocks-World milestone
        (forall(X, lit("ontable", X)), {M("+ontable(a)", "+ontable(b)", "+ontable(c)")}),
        (
            Not(exists([X, Y], lit("on", X, Y))),
            {M("-on(a,b)", "-on(a,c)", "-on(b,a)", "-on(b,c)", "-on(c,a)", "-on(c,b)")},
        ),
        # a product asking for +l and -l at once is contradictory
        (conj(lit("on", "a", "b"), Not(lit("on", "a", "b"))), set()),
        # equality is static
        (Equal("a", "a"), {IMMUTABLY_VALID}),
        (Equal("a", "b"), set()),
        (conj(), {IMMUTABLY_VALID}),
        (disj(), set()),
    ],
)
def test_each_formula_kind_by_hand(bw, formula, expected) -> None:
    s, mut = bw
    assert mutate(formula, s, mut) == frozenset(expected)


def test_blocks_reward_milestone_from_the_decision_list(bw) -> None:
    s, mut = bw
    f = blocks.REWARD.condition_for(blocks.REWARD.max_value)
    (m,) = mutate(f, s, mut)
    assert m == M("+ontable(a)", "+ontable(b)", "+ontable(c)")
    # The same milestone as a literal-counting goal: only ontable(a) is missing.
    p = blocks.problem_from_stacks([["b", "a"], ["c"]])
    (goal,) = p.milestones(s).goals
    assert goal.distance(s) == 1


def test_immutably_valid_is_the_product_identity_and_absorbs_unions() -> None:
    p = drawers.build([None, 0], [True, False])  # item0 on the shelf, item1 in drawer0
    s, mut = p.initial, p.mutability
    label = lit("label", "item0", "drawer0")  # true and static
    wrong = lit("label", "item0", "drawer1")  # false and static
    assert mutate(label, s, mut) == {IMMUTABLY_VALID}
    assert mutate(wrong, s, mut) == UNSATISFIABLE
    assert mutate(Not(wrong), s, mut) == {IMMUTABLY_VALID}
    assert mutate(conj(label, lit("in", "item0", "drawer0")), s, mut) == {M("+in(item0,drawer0)")}
    assert mutate(disj(label, lit("in", "item0", "drawer0")), s, mut) == {IMMUTABLY_VALID}
    assert mutate(conj(wrong, lit("in", "item0", "drawer1")), s, mut) == UNSATISFIABLE


def test_drawers_milestone_uses_immutability_to_pick_the_right_drawer() -> None:
    p = drawers.build([None, 0], [True, False])
    f = drawers.REWARD.condition_for(1.0)
    assert mutate(f, p.initial, p.mutability) == {
        M("+in(item0,drawer0)", "+in(item1,drawer1)", "-open(drawer0)", "-open(drawer1)")
    }


def test_bins_prev_condition_excludes_bins_already_done() -> None:
    p = bins.build([[0], [1]], 2)
    task = p.task
    s = task.successor(task.init, task.find("take_out(item0,bin0)"))
    s = task.successor(s, task.find("close_bin(bin0)"))
    f = bins.REWARD.condition_for(1.0)
    assert mutate(f, task.init, p.mutability) == {
        M("-open(bin0)", "-in(item0,bin0)"),
        M("-open(bin1)", "-in(item1,bin1)"),
    }
    # bin0 is done: prev[open(bin0) ∨ ∃i in(i, bin0)] is false now, so only bin1 is left.
    assert mutate(f, s, p.mutability) == {M("-open(bin1)", "-in(item1,bin1)")}


def test_quantifiers_over_an_empty_type() -> None:
    v = Vocabulary.build([Predicate("glows", ("ghost",))], objects={}, types={"ghost": "object"})
    mut = Mutability.from_atoms(v, [], [])
    g = Var("G", "ghost")
    assert mutate(exists(g, lit("glows", g)), 0, mut) == UNSATISFIABLE
    assert mutate(forall(g, lit("glows", g)), 0, mut) == {IMMUTABLY_VALID}


def test_minimize_drops_implied_mutations(bw) -> None:
    s, mut = bw
    f = disj(lit("on", "a", "c"), conj(lit("on", "a", "c"), lit("clear", "b")))
    assert mutate(f, s, mut) == {M("+on(a,c)"), M("+on(a,c)", "+clear(b)")}
    assert mutate(f, s, mut, minimize=True) == {M("+on(a,c)")}


def test_product_limit(bw) -> None:
    s, mut = bw
    f = forall(X, exists(Y, lit("on", X, Y)))  # 2 choices for each of 3 blocks: 8
    assert len(mutate(f, s, mut)) == 8
    with pytest.raises(MutationLimitError, match="limit 4"):
        mutate(f, s, mut, limit=4)


# -- for all formulas: mutations = exactly the compatible states satisfying f --------
SMALL = Vocabulary.build(
    [Predicate("on", ("block", "block")), Predicate("clear", ("block",)), Predicate("handempty", ())],
    objects={"a": "block", "b": "block"},
    types={"block": "object"},
)
N = len(SMALL.atoms)


def small_formulas() -> st.SearchStrategy:
    terms = st.sampled_from(["a", "b", X, Y])
    leaf = st.one_of(
        st.builds(lambda p, q: lit("on", p, q), terms, terms),
        st.builds(lambda p: lit("clear", p), terms),
        st.just(lit("handempty")),
        st.builds(Equal, terms, terms),
    )

    def extend(children: st.SearchStrategy) -> st.SearchStrategy:
        return st.one_of(
            st.builds(lambda cs: conj(*cs), st.lists(children, max_size=3)),
            st.builds(lambda cs: disj(*cs), st.lists(children, max_size=3)),
            st.builds(Not, children),
            st.builds(exists, st.sampled_from([X, Y]), children),
            st.builds(forall, st.sampled_from([X, Y]), children),
        )

    return st.recursive(leaf, extend, max_leaves=7).map(lambda f: forall(X, exists(Y, f)))


def _satisfies(m: Mutation, s: int) -> bool:
    pos, neg = m.masks(SMALL)
    return (s & pos) == pos and not s & neg


@given(
    small_formulas(),
    st.integers(0, 2**N - 1),
    st.integers(0, 2**N - 1),
    st.integers(0, 2**N - 1),
    st.booleans(),
)
def test_mutations_describe_exactly_the_compatible_states_satisfying_the_formula(
    formula, s, addable, deletable, minimize
) -> None:
    """A state s' is compatible with s if it keeps every atom no action can change
    (true and not deletable, or false and not addable).  Over all compatible s':
    f holds in s' iff s' satisfies some mutation; IMMUTABLY VALID means f holds in
    all of them, unsatisfiable in none."""
    mut = Mutability.from_atoms(SMALL, SMALL.atoms_of(addable), SMALL.atoms_of(deletable))
    result = mutate(formula, s, mut, minimize=minimize)
    frozen_true = s & ~deletable
    frozen_false = ~s & ~addable & SMALL.full_mask
    free = [i for i in range(N) if not (frozen_true | frozen_false) >> i & 1]
    for bits in itertools.product((0, 1), repeat=len(free)):
        s2 = frozen_true | sum(b << i for b, i in zip(bits, free))
        holds = evaluate(formula, s2, SMALL)
        if IMMUTABLY_VALID in result:
            assert result == {IMMUTABLY_VALID}
            assert holds
        else:
            assert holds == any(_satisfies(m, s2) for m in result)

"""Tests of rule conditions (section 3.1): pcond, ocond and formula conditions kept
both as a BDD and as an SMT formula.

On small vocabularies every state is enumerated and the BDD, the SMT formula (walked
by the test's own evaluator and, on a sample, by pysmt), the irredundant cover and
``holds`` are compared with the set / formula definition.  On 30–60 atoms z3 proves
the BDD and the formula equivalent.
"""

from __future__ import annotations

import gc
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pysmt.typing import INT

from capver import synthetic
from capver.logic.condition import Condition, LogicContext, agreement_counterexample
from tests.helpers.corpus import (
    BACKEND_NAMES,
    Tree,
    eval_formula,
    eval_tree,
    formula_trees,
    propositional_vocabularies,
    seeds,
    tree_to_smt,
)
from tests.helpers.examples import scaled

SMALL_MAX = 8


@st.composite
def small_conditions(draw: st.DrawFn, ctx: LogicContext) -> tuple[Condition, object]:
    """A condition of any kind and a reference predicate on states (the definition)."""
    n = len(ctx.vocab)
    state = st.integers(0, (1 << n) - 1)
    kind = draw(st.sampled_from(["pessimistic", "optimistic", "formula", "random_dnf"]))
    if kind == "pessimistic":
        block = draw(st.frozensets(state, max_size=12))
        return Condition.pessimistic(ctx, block), lambda s: s in block
    if kind == "optimistic":
        universe = draw(st.frozensets(state, max_size=12))
        block = (
            draw(st.frozensets(st.sampled_from(sorted(universe)), max_size=len(universe))) if universe else frozenset()
        )
        # ocond(S_φ) = ¬⋁_{s∈Φ_c∖S_φ} ℓ(s)
        return Condition.optimistic(ctx, block, universe), lambda s: s not in (universe - block)
    if kind == "formula":
        tree: Tree = draw(formula_trees(n))
        return Condition.formula(ctx, tree_to_smt(ctx, tree)), lambda s: eval_tree(tree, s)
    cond = synthetic.random_condition(ctx, np.random.default_rng(draw(seeds)))
    return cond, lambda s: eval_formula(ctx, cond.smt, s)


def check_everywhere(cond: Condition, expected: object, states: list[int]) -> None:
    ctx, b = cond.ctx, cond.ctx.bdd
    for s in states:
        want = expected(s)  # type: ignore[operator]
        assert cond.holds(s) == want, s
        assert b.evaluate(cond.bdd, s) == want, s
        assert eval_formula(ctx, cond.smt, s) == want, s
        assert any(c.holds(s) for c in cond.cover) == want, s


@pytest.mark.parametrize("bdd", BACKEND_NAMES)
class TestSmallVocabularies:
    @given(st.data())
    def test_all_representations_agree_on_every_state(self, bdd: str, data: st.DataObject) -> None:
        vocab = data.draw(propositional_vocabularies(1, SMALL_MAX))
        n = len(vocab)
        ctx = LogicContext(vocab, bdd)
        cond, expected = data.draw(small_conditions(ctx))
        check_everywhere(cond, expected, list(range(1 << n)))
        # pysmt's own evaluator on a sample of states (it is slow on big formulas)
        for s in data.draw(st.lists(st.integers(0, (1 << n) - 1), max_size=4)):
            assert ctx.smt.evaluate(cond.smt, s) == expected(s)
        assert agreement_counterexample(cond) is None
        assert cond.ctx.bdd.count(cond.bdd) == sum(expected(s) for s in range(1 << n))
        assert cond.is_satisfiable() == any(expected(s) for s in range(1 << n))


@pytest.mark.parametrize("bdd", BACKEND_NAMES)
class TestLargeVocabularies:
    # each z3 query costs ~0.1 s of pysmt conversion; a few examples per backend suffice
    @settings(max_examples=scaled(6))
    @given(st.integers(30, 60), st.data())
    def test_z3_proves_bdd_and_formula_equivalent(self, bdd: str, n: int, data: st.DataObject) -> None:
        ctx = LogicContext(synthetic.propositional_vocabulary(n), bdd)
        state = st.integers(0, (1 << n) - 1)
        universe = data.draw(st.lists(state, min_size=1, max_size=25, unique=True))
        block = universe[: data.draw(st.integers(0, len(universe)))]
        tree = data.draw(formula_trees(n, max_leaves=20))
        conds = [
            (Condition.pessimistic(ctx, block), lambda s: s in block),
            (Condition.optimistic(ctx, block, universe), lambda s: s in block or s not in universe),
            (Condition.formula(ctx, tree_to_smt(ctx, tree)), lambda s: eval_tree(tree, s)),
        ]
        rnd = synthetic.random_condition(ctx, np.random.default_rng(data.draw(seeds)))
        conds.append((rnd, lambda s: eval_formula(ctx, rnd.smt, s)))
        probes = universe + data.draw(st.lists(state, min_size=5, max_size=10))
        for cond, expected in conds:
            assert agreement_counterexample(cond) is None
            check_everywhere(cond, expected, probes)

    @settings(max_examples=scaled(5))
    @given(st.integers(30, 60), st.data())
    def test_disagreement_is_found(self, bdd: str, n: int, data: st.DataObject) -> None:
        """A condition whose BDD was handed in wrong: z3 must name a state where the
        formula and the BDD really differ."""
        ctx = LogicContext(synthetic.propositional_vocabulary(n), bdd)
        states = data.draw(st.lists(st.integers(0, (1 << n) - 1), min_size=2, max_size=6, unique=True))
        wrong = ctx.bdd.minterm(states[0])
        cond = Condition.pessimistic(ctx, states[1:], bdd=wrong)
        s = agreement_counterexample(cond)
        assert s in states
        assert eval_formula(ctx, cond.smt, s) != ctx.bdd.evaluate(cond.bdd, s)


class TestConditionValues:
    def setup_method(self) -> None:
        self.ctx = LogicContext(synthetic.propositional_vocabulary(3))

    def test_true(self) -> None:
        cond = Condition.true(self.ctx)
        assert cond.bdd == self.ctx.bdd.true
        assert all(cond.holds(s) for s in range(8))

    def test_pessimistic_equals_formula(self) -> None:
        ctx = self.ctx
        p0 = Condition.formula(ctx, ctx.smt.cur[0])
        block = Condition.pessimistic(ctx, [s for s in range(8) if s & 1])
        assert p0.equivalent(block) and block.equivalent(p0)
        assert not p0.equivalent(Condition.pessimistic(ctx, [1, 3, 5]))

    def test_optimistic_excluded(self) -> None:
        cond = Condition.optimistic(self.ctx, [1, 2], [1, 2, 4, 7])
        assert cond.excluded == frozenset({4, 7})
        assert [s for s in range(8) if cond.holds(s)] == [0, 1, 2, 3, 5, 6]
        # a block that is all of the observed states: ocond is true everywhere
        assert Condition.optimistic(self.ctx, [1, 2], [1, 2]).bdd == self.ctx.bdd.true

    def test_empty_pessimistic_is_unsatisfiable(self) -> None:
        cond = Condition.pessimistic(self.ctx, [])
        assert not cond.is_satisfiable() and cond.cover == ()
        assert not any(cond.holds(s) for s in range(8))

    def test_cover_of_formula(self) -> None:
        ctx = self.ctx
        x = ctx.smt.cur
        # (p0 ∧ p1) ∨ (p0 ∧ ¬p1) is p0: the irredundant cover is the single cube p0
        f = ctx.smt.mgr.Or(ctx.smt.mgr.And(x[0], x[1]), ctx.smt.mgr.And(x[0], ctx.smt.mgr.Not(x[1])))
        cond = Condition.formula(ctx, f)
        assert [(c.mask, c.value) for c in cond.cover] == [(0b001, 0b001)]

    def test_bad_kinds(self) -> None:
        with pytest.raises(ValueError, match="unknown condition kind 'maybe'"):
            Condition(self.ctx, "maybe")
        with pytest.raises(ValueError, match="needs its formula"):
            Condition(self.ctx, "formula")

    def test_unsupported_connective(self) -> None:
        mgr = self.ctx.smt.mgr
        f = mgr.Equals(mgr.Symbol("k", INT), mgr.Int(1))
        with pytest.raises(ValueError, match="unsupported connective"):
            _ = Condition.formula(self.ctx, f).bdd


@pytest.mark.parametrize("bdd", BACKEND_NAMES)
def test_dropped_context_releases_its_bdd_manager_cleanly(bdd: str) -> None:
    caught: list[object] = []
    previous = sys.unraisablehook
    gc.collect()
    sys.unraisablehook = caught.append
    try:
        ctx = LogicContext(synthetic.propositional_vocabulary(3), bdd)
        x = ctx.smt.cur
        cond = Condition.formula(ctx, ctx.smt.mgr.Or(x[0], ctx.smt.mgr.And(x[1], x[2])))
        assert len(cond.cover) == 2
        assert ctx.smt.from_bdd(ctx.bdd, cond.bdd).is_ite()
        del ctx, cond, x
        gc.collect()
    finally:
        sys.unraisablehook = previous
    assert caught == []


def test_a_formula_condition_given_as_a_bdd_builds_its_formula_when_asked() -> None:
    """h∨ under an abstraction (engines/verification/pooled.py) gives its conditions as
    BDDs only; the SMT formula, built on demand from the irredundant cover, is the
    same set of states (z3 agrees with the BDD)."""
    from capver import synthetic
    from capver.logic.bdd import Cube
    from capver.logic.condition import Condition, ConditionKind, LogicContext, agreement_counterexample

    ctx = LogicContext(synthetic.propositional_vocabulary(4))
    b = ctx.bdd
    u = b.disj(b.cube(Cube(0b0011, 0b0001)), b.cube(Cube(0b1100, 0b1000)))
    cond = Condition(ctx, ConditionKind.FORMULA, bdd=u)
    assert cond._smt is None  # not built yet
    assert [s for s in range(16) if cond.holds(s)] == [s for s in range(16) if b.evaluate(u, s)]
    assert agreement_counterexample(cond) is None and cond._smt is not None
    with pytest.raises(ValueError, match="needs its formula or its BDD"):
        Condition(ctx, ConditionKind.FORMULA)

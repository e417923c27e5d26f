"""Tests of the lattice bounds h∧ ⪯ h⋆ ⪯ h∨ (section 3.1; Theorems 1 and 3 and the
Theorem 2 construction of appendix A).

Random true models h⋆ come from :mod:`capver.synthetic`; datasets are either
sampled from them or built transition- and effect-complete.  Transition sets are
compared both by enumerating S × C × S on small vocabularies and by the z3 checks of
:mod:`capver.engines.verification.relations`.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capver import synthetic
from capver.core.dataset import TransitionDataset
from capver.core.state import Effect, Transition
from capver.engines.lattice import Bounds, LatticeBuilder, build_bounds
from capver.engines.verification import relations
from capver.logic.condition import LogicContext, agreement_counterexample
from capver.model.capability_model import CompoundModel
from tests.helpers.corpus import (
    BACKEND_NAMES,
    World,
    all_states,
    apply_effect,
    brute_transitions,
    complete_data,
    condition_holds,
    dataset_transitions,
    exhaustive_data,
    make_world,
    rng_for,
    sample_stream,
    sampled_worlds,
    seeds,
    worlds,
)
from tests.helpers.examples import scaled


def admitted(h: CompoundModel, n: int) -> set[Transition]:
    """T_h by asking ``admits`` about every ⟨s, c, s′⟩ of S × C × S."""
    return {
        Transition(s, c, s2) for c in h for s in all_states(n) for s2 in all_states(n) if h.admits(Transition(s, c, s2))
    }


def observed_effect_set(data: TransitionDataset, s: int, c: str) -> frozenset[Effect]:
    """η_c(s, D), from the raw successor counts."""
    return frozenset(Effect(s2 & ~s, s & ~s2) for s2, n in data.successors(s, c).items() if n > 0)


def pooled_mle(data: TransitionDataset, c: str, block: frozenset[int]) -> dict[Effect, Fraction]:
    """Pr(η) = N(η observed in S_φ) / N(S_φ)."""
    per_effect: dict[Effect, int] = {}
    for s in block:
        for s2, n in data.successors(s, c).items():
            e = Effect(s2 & ~s, s & ~s2)
            per_effect[e] = per_effect.get(e, 0) + n
    total = sum(per_effect.values())
    return {e: Fraction(k, total) for e, k in per_effect.items()}


def is_transition_complete(truth: CompoundModel, data: TransitionDataset) -> bool:
    return all(set(data.successors(s, c)) == set(truth.distribution(s, c)) for c in truth for s in data.states_of(c))


def is_effect_complete(truth: CompoundModel, data: TransitionDataset, n: int) -> bool:
    for c in truth:
        seen = {e for s in data.states_of(c) for e in observed_effect_set(data, s, c)}
        for s in all_states(n):
            if any(Effect(s2 & ~s, s & ~s2) not in seen for s2 in truth.distribution(s, c)):
                return False
    return True


def assert_proved(v: relations.RelationVerdict) -> None:
    assert v.holds, f"z3 found {v.counterexample}"
    assert v.counterexample is None


class TestTheorem3:
    """h∧ is sound and complete w.r.t. D; h∨ is complete (and admits nothing else
    than D plus observed effects at untried pairs)."""

    @given(sampled_worlds(max_atoms=4))
    def test_pessimistic_admits_exactly_D(self, wd: tuple[World, TransitionDataset]) -> None:
        world, data = wd
        h_and = build_bounds(world.ctx, data).pessimistic
        assert set(h_and) == set(data.capability_table)
        assert admitted(h_and, world.n) == dataset_transitions(data)
        for c in h_and:
            for s in all_states(world.n):
                assert set(h_and.distribution(s, c)) == set(data.successors(s, c))

    @given(sampled_worlds(max_atoms=4))
    def test_optimistic_is_complete_and_predicts_only_at_untried_pairs(
        self, wd: tuple[World, TransitionDataset]
    ) -> None:
        world, data = wd
        h_or = build_bounds(world.ctx, data).optimistic
        t_d = dataset_transitions(data)
        t_or = admitted(h_or, world.n)
        assert t_d <= t_or  # complete
        # beyond D, h∨ only predicts at untried pairs, and only observed effects of c
        expected_extra = set()
        for c in data.capability_table:
            effects_c = {e for s in data.states_of(c) for e in observed_effect_set(data, s, c)}
            for s in all_states(world.n):
                if data.count_sc(s, c) == 0:
                    expected_extra |= {Transition(s, c, apply_effect(s, e)) for e in effects_c}
        assert t_or == t_d | expected_extra
        for t in t_or - t_d:
            assert data.count_sc(t.s, t.c) == 0


class TestTheorem1:
    @settings(max_examples=scaled(15))
    @given(worlds(2, 5), st.integers(0, 6))
    def test_bounds_on_complete_data(self, world: World, extra: int) -> None:
        data = complete_data(world, extra_pairs=extra)
        # the premises, checked from their definitions
        assert is_transition_complete(world.truth, data)
        assert is_effect_complete(world.truth, data, world.n)
        b = build_bounds(world.ctx, data)
        assert_proved(relations.refines(b.pessimistic, world.truth))
        assert_proved(relations.refines(world.truth, b.optimistic))
        assert_proved(relations.refines(b.pessimistic, b.optimistic))
        t_and, t_star, t_or = (brute_transitions(h, world.n) for h in (b.pessimistic, world.truth, b.optimistic))
        assert t_and <= t_star <= t_or
        assert t_and == dataset_transitions(data)

    @settings(max_examples=scaled(15))
    @given(sampled_worlds(max_atoms=5))
    def test_pessimistic_refines_optimistic_always(self, wd: tuple[World, TransitionDataset]) -> None:
        world, data = wd
        b = build_bounds(world.ctx, data)
        assert_proved(relations.refines(b.pessimistic, b.optimistic))
        # h∧ ⪯ h⋆ needs no completeness: every observed transition is the truth's
        assert_proved(relations.refines(b.pessimistic, world.truth))
        assert brute_transitions(b.pessimistic, world.n) <= brute_transitions(b.optimistic, world.n)


class TestPartition:
    @given(sampled_worlds(max_atoms=5))
    def test_blocks_share_effect_sets_and_are_disjoint(self, wd: tuple[World, TransitionDataset]) -> None:
        world, data = wd
        builder = LatticeBuilder(world.ctx, data)
        for c in data.capability_table:
            blocks = builder.blocks(c)
            observed = set(data.states_of(c))
            union: set[int] = set()
            for key, block in blocks.items():
                assert block, "empty block"
                assert not (union & block), "blocks overlap"
                union |= block
                for s in block:
                    assert observed_effect_set(data, s, c) == key
            assert union == observed
            # one block per distinct effect set: s₁ ∼_c s₂ iff η_c(s₁) = η_c(s₂)
            assert len(blocks) == len({observed_effect_set(data, s, c) for s in observed})

    @given(sampled_worlds(max_atoms=4))
    def test_rules_are_pooled_mle_per_block(self, wd: tuple[World, TransitionDataset]) -> None:
        world, data = wd
        builder = LatticeBuilder(world.ctx, data)
        b = builder.bounds
        for c in data.capability_table:
            blocks = builder.blocks(c)
            observed = frozenset(data.states_of(c))
            for model, kind in ((b.pessimistic[c], "pessimistic"), (b.optimistic[c], "optimistic")):
                assert len(model.rules) == len(blocks)
                assert {r.condition.states for r in model.rules} == set(blocks.values())
                for r in model.rules:
                    assert r.condition.kind == kind
                    if kind == "optimistic":
                        assert r.condition.universe == observed
                    assert {e: p for p, e in r.effects} == pooled_mle(data, c, r.condition.states)
            # Pr at observed states: the block's distribution, for both bounds
            rule_of = {s: r for r in b.pessimistic[c].rules for s in r.condition.states}
            for s in observed:
                expected: dict[int, Fraction] = {}
                for p, e in rule_of[s].effects:
                    expected[apply_effect(s, e)] = expected.get(apply_effect(s, e), Fraction(0)) + p
                assert b.pessimistic.distribution(s, c) == expected
                assert b.optimistic.distribution(s, c) == expected
            # untried states: nothing under h∧, the average of all rules under h∨
            for s in all_states(world.n):
                if s in observed:
                    continue
                assert b.pessimistic.distribution(s, c) == {}
                avg: dict[int, Fraction] = {}
                for r in b.optimistic[c].rules:
                    for p, e in r.effects:
                        s2 = apply_effect(s, e)
                        avg[s2] = avg.get(s2, Fraction(0)) + p / len(blocks)
                assert b.optimistic.distribution(s, c) == avg

    @given(sampled_worlds(max_atoms=4))
    def test_rule_bdds_match_their_sets(self, wd: tuple[World, TransitionDataset]) -> None:
        """The builder hands each condition a BDD it maintained itself; it must be the
        set definition of pcond / ocond."""
        world, data = wd
        b = build_bounds(world.ctx, data)
        bdd = world.ctx.bdd
        for h in (b.pessimistic, b.optimistic):
            for m in h.values():
                for r in m.rules:
                    for s in all_states(world.n):
                        assert bdd.evaluate(r.condition.bdd, s) == condition_holds(r.condition, s)


def assert_same_pr(a: Bounds, b: Bounds, caps: list[str], n: int) -> None:
    for c in caps:
        for s in all_states(n):
            assert a.pessimistic.distribution(s, c) == b.pessimistic.distribution(s, c), (c, s)
            assert a.optimistic.distribution(s, c) == b.optimistic.distribution(s, c), (c, s)


class TestIncremental:
    @settings(max_examples=scaled(10))
    @given(worlds(2, 4), seeds, st.integers(5, 25), st.integers(1, 5))
    def test_one_at_a_time_equals_from_scratch(self, world: World, seed: int, length: int, pool: int) -> None:
        data = TransitionDataset(world.vocab, world.truth.capabilities)
        builder = LatticeBuilder(world.ctx, data)
        assert set(builder.pessimistic) == set(world.truth)
        caps = list(world.truth)
        stream = sample_stream(world, rng_for(seed), length, pool)
        for k, t in enumerate(stream):
            data.add(t)
            assert builder.update() == {t.c}
            scratch = build_bounds(world.ctx, data)
            assert_same_pr(builder.bounds, scratch, caps, world.n)
            if k % 8 == 7 or k == len(stream) - 1:
                for inc, ref in ((builder.pessimistic, scratch.pessimistic), (builder.optimistic, scratch.optimistic)):
                    assert_proved(relations.equivalent(inc, ref))
                    assert_proved(relations.same_distributions(inc, ref))
        before = builder.bounds
        assert builder.update() == set()
        assert builder.pessimistic is before.pessimistic and builder.optimistic is before.optimistic

    @settings(max_examples=scaled(10))
    @given(worlds(2, 4), seeds, st.lists(st.integers(1, 6), min_size=1, max_size=6), st.integers(1, 4))
    def test_batched_updates_equal_from_scratch(self, world: World, seed: int, batches: list[int], pool: int) -> None:
        data = TransitionDataset(world.vocab)
        builder = LatticeBuilder(world.ctx, data)
        assert len(builder.pessimistic) == 0
        stream = sample_stream(world, rng_for(seed), sum(batches), pool)
        pos = 0
        for size in batches:
            chunk = stream[pos : pos + size]
            pos += size
            for t in chunk:
                data.add(t)
            assert builder.update() == {t.c for t in chunk}
            scratch = build_bounds(world.ctx, data)
            assert_same_pr(builder.bounds, scratch, list(data.capability_table), world.n)
            # the incrementally maintained BDDs still agree with the set definitions
            for h in (builder.pessimistic, builder.optimistic):
                for m in h.values():
                    for r in m.rules:
                        assert agreement_counterexample(r.condition) is None
        for inc, ref in ((builder.pessimistic, scratch.pessimistic), (builder.optimistic, scratch.optimistic)):
            assert_proved(relations.equivalent(inc, ref))
            assert_proved(relations.same_distributions(inc, ref))

    @settings(max_examples=scaled(10))
    @given(worlds(2, 4), seeds, st.integers(1, 30), st.integers(1, 5))
    def test_every_backend_builds_the_same_bounds(self, world: World, seed: int, length: int, pool: int) -> None:
        stream = sample_stream(world, rng_for(seed), length, pool)
        data = TransitionDataset(world.vocab, world.truth.capabilities)
        reference = None
        for name in BACKEND_NAMES:
            ctx = LogicContext(world.vocab, name)
            builder = LatticeBuilder(ctx, data)
            for t in stream:
                data.add(t)
                builder.update()
            for h in (builder.pessimistic, builder.optimistic):
                for m in h.values():
                    for r in m.rules:
                        assert all(
                            ctx.bdd.evaluate(r.condition.bdd, s) == condition_holds(r.condition, s)
                            for s in all_states(world.n)
                        )
            pr = {
                (c, s): (builder.pessimistic.distribution(s, c), builder.optimistic.distribution(s, c))
                for c in world.truth
                for s in all_states(world.n)
            }
            assert reference is None or pr == reference
            reference = pr
            data = TransitionDataset(world.vocab, world.truth.capabilities)

    def test_state_moving_between_blocks(self) -> None:
        """s first shows effect η₁ (block {η₁}), then η₂ too (block {η₁, η₂}); the old
        block disappears and the pooled counts follow."""
        world = make_world(2, 0, n_capabilities=1)
        ctx = world.ctx
        data = TransitionDataset(ctx.vocab)
        builder = LatticeBuilder(ctx, data)
        data.add(Transition(0, "c", 1), count=3)  # η₁ = +p0
        data.add(Transition(2, "c", 3))  # also +p0, other state
        builder.update()
        assert builder.blocks("c") == {frozenset({Effect(1, 0)}): frozenset({0, 2})}
        data.add(Transition(0, "c", 2))  # η₂ = +p1 from s = ∅
        builder.update()
        assert builder.blocks("c") == {
            frozenset({Effect(1, 0)}): frozenset({2}),
            frozenset({Effect(1, 0), Effect(2, 0)}): frozenset({0}),
        }
        assert builder.pessimistic.distribution(0, "c") == {1: Fraction(3, 4), 2: Fraction(1, 4)}
        assert builder.pessimistic.distribution(2, "c") == {3: Fraction(1)}
        data.add(Transition(2, "c", 2), count=1)  # s = {p1} now shows +p0 and ∅
        builder.update()
        assert builder.blocks("c") == {
            frozenset({Effect(1, 0), Effect(0, 0)}): frozenset({2}),
            frozenset({Effect(1, 0), Effect(2, 0)}): frozenset({0}),
        }
        scratch = build_bounds(ctx, data)
        assert_same_pr(builder.bounds, scratch, ["c"], 2)


class TestTheorem2:
    @settings(max_examples=scaled(10))
    @given(worlds(2, 4, total=True))
    def test_fully_observed_total_truth_closes_the_lattice(self, world: World) -> None:
        data = exhaustive_data(world)
        b = build_bounds(world.ctx, data)
        assert_proved(relations.equivalent(b.pessimistic, b.optimistic))
        assert_proved(relations.equivalent(b.pessimistic, world.truth))
        t_star = brute_transitions(world.truth, world.n)
        assert brute_transitions(b.pessimistic, world.n) == t_star == brute_transitions(b.optimistic, world.n)

    @settings(max_examples=scaled(10))
    @given(worlds(2, 4, total=True), st.data())
    def test_one_untried_pair_keeps_it_open(self, world: World, pick: st.DataObject) -> None:
        full = exhaustive_data(world)
        c = pick.draw(st.sampled_from(list(world.truth)))
        s = pick.draw(st.integers(0, (1 << world.n) - 1))
        data = TransitionDataset(world.vocab, world.truth.capabilities)
        for t, n in full.items():
            if (t.s, t.c) != (s, c):
                data.add(t, n)
        b = build_bounds(world.ctx, data)
        v = relations.equivalent(b.pessimistic, b.optimistic)
        assert not v.holds
        cex = v.counterexample
        assert cex is not None and (cex.s, cex.c) == (s, c)
        assert b.optimistic.admits(cex) and not b.pessimistic.admits(cex)


def test_mismatched_vocabulary() -> None:
    ctx = LogicContext(synthetic.propositional_vocabulary(3))
    data = TransitionDataset(synthetic.propositional_vocabulary(4))
    with pytest.raises(ValueError, match="different vocabularies"):
        LatticeBuilder(ctx, data)

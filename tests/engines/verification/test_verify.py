"""Tests of the z3 checks over compound models (section 3.1's order
h₁ ⪯ h₂ ⟺ T_{h₁} ⊆ T_{h₂}): proofs on equal models, counterexamples that really
lie in T_{h₁} ∖ T_{h₂}, and the region-wise comparison of Pr_h."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capver import synthetic
from capver.core.state import Effect, Transition
from capver.engines.verification import relations
from capver.logic.condition import Condition, LogicContext
from capver.model.capability_model import CapabilityModel, CompoundModel, Rule
from tests.helpers.corpus import (
    World,
    all_states,
    apply_effect,
    brute_admits,
    brute_transitions,
    capability_model,
    condition_holds,
    formula_rule,
    make_world,
    rng_for,
    seeds,
    worlds,
)
from tests.helpers.examples import scaled

P0, P1 = 1, 2


def hand_models() -> dict[str, CompoundModel]:
    """Models over {p0, p1} with one capability c (d for the extra one):

    wide:   p0 → +p1                       T = {⟨{p0}, {p0,p1}⟩, ⟨{p0,p1}, {p0,p1}⟩}
    narrow: p0 ∧ ¬p1 → +p1                 T = {⟨{p0}, {p0,p1}⟩}
    split:  p0 ∧ p1 → ∅;  p0 ∧ ¬p1 → +p1    T = T(wide), written differently
    sets:   pcond({p0}, {p0,p1}) → +p1     T = T(wide), a pessimistic condition
    more:   wide plus d: true → −p0
    """
    ctx = LogicContext(synthetic.propositional_vocabulary(2))
    mgr, x = ctx.smt.mgr, ctx.smt.cur
    add_p1 = [(1, Effect(P1, 0))]

    def h(*models: CapabilityModel) -> CompoundModel:
        return CompoundModel(ctx, models)

    wide = capability_model("c", [formula_rule(ctx, x[0], add_p1)])
    narrow = capability_model("c", [formula_rule(ctx, mgr.And(x[0], mgr.Not(x[1])), add_p1)])
    split = capability_model(
        "c",
        [
            formula_rule(ctx, mgr.And(x[0], x[1]), [(1, Effect())]),
            formula_rule(ctx, mgr.And(x[0], mgr.Not(x[1])), add_p1),
        ],
    )
    sets = capability_model("c", [Rule.make(Condition.pessimistic(ctx, [P0, P0 | P1]), add_p1)])
    drop = capability_model("d", [Rule.make(Condition.true(ctx), [(1, Effect(0, P0))])])
    return {
        "wide": h(wide),
        "narrow": h(narrow),
        "split": h(split),
        "sets": h(sets),
        "more": h(wide, drop),
    }


class TestHandBuilt:
    def test_strict_refinement(self) -> None:
        hs = hand_models()
        v = relations.refines(hs["narrow"], hs["wide"])
        assert v.holds and bool(v) and v.counterexample is None and v.checked == ("c",)
        w = relations.refines(hs["wide"], hs["narrow"])
        assert not w.holds and not bool(w)
        # the only transition of wide that narrow lacks
        assert w.counterexample == Transition(P0 | P1, "c", P0 | P1)
        assert hs["wide"].admits(w.counterexample) and not hs["narrow"].admits(w.counterexample)
        e = relations.equivalent(hs["wide"], hs["narrow"])
        assert not e.holds and e.counterexample == Transition(P0 | P1, "c", P0 | P1)

    @pytest.mark.parametrize("other", ["split", "sets"])
    def test_equivalent_but_written_differently(self, other: str) -> None:
        hs = hand_models()
        v = relations.equivalent(hs["wide"], hs[other])
        assert v.holds and v.counterexample is None
        assert brute_transitions(hs["wide"], 2) == brute_transitions(hs[other], 2)

    def test_missing_capability(self) -> None:
        hs = hand_models()
        assert relations.refines(hs["wide"], hs["more"]).holds
        v = relations.refines(hs["more"], hs["wide"])
        assert not v.holds and v.counterexample is not None and v.counterexample.c == "d"
        t = v.counterexample
        assert t.s_next == t.s & ~P0  # d deletes p0 everywhere
        assert hs["more"].admits(t) and not hs["wide"].admits(t)

    def test_same_distributions(self) -> None:
        hs = hand_models()
        ctx = hs["wide"].ctx
        assert relations.same_distributions(hs["wide"], hs["sets"]).holds
        coin = CompoundModel(
            ctx,
            [
                capability_model(
                    "c",
                    [
                        Rule.make(
                            Condition.formula(ctx, ctx.smt.cur[0]), [("1/3", Effect(P1, 0)), ("2/3", Effect(0, P0))]
                        )
                    ],
                )
            ],
        )
        v = relations.same_distributions(hs["wide"], coin)
        assert not v.holds and v.counterexample is not None
        s = v.counterexample.s
        assert s & P0 and hs["wide"].distribution(s, "c") != coin.distribution(s, "c")
        # coverage differs: narrow matches nowhere with p1
        u = relations.same_distributions(hs["wide"], hs["narrow"])
        assert not u.holds and u.counterexample == Transition(P0 | P1, "c", P0 | P1)

    def test_same_distributions_when_only_effects_differ(self) -> None:
        hs = hand_models()
        for s in all_states(2):
            assert hs["wide"].distribution(s, "c") == hs["split"].distribution(s, "c")
        assert relations.same_distributions(hs["wide"], hs["split"]).holds

    def test_contexts_must_match(self) -> None:
        a, b = hand_models()["wide"], hand_models()["wide"]
        with pytest.raises(ValueError, match="share one LogicContext"):
            relations.refines(a, b)
        with pytest.raises(ValueError, match="share one LogicContext"):
            relations.same_distributions(a, b)

    def test_apply_formula_is_apply(self) -> None:
        hs = hand_models()
        ctx = hs["wide"].ctx
        smt = ctx.smt
        for eta in (Effect(), Effect(P1, 0), Effect(0, P0), Effect(P0, P1)):
            f = relations.apply_formula(ctx, eta)
            for s in all_states(2):
                for s2 in all_states(2):
                    env = {**smt.state_assignment(s), **smt.state_assignment(s2, smt.nxt)}
                    val = smt.env.simplifier.simplify(smt.env.substituter.substitute(f, env))
                    assert val.constant_value() == (s2 == apply_effect(s, eta))


def drop_last_rule(h: CompoundModel, c: str) -> CompoundModel:
    m = h[c]
    return h.replace([CapabilityModel(m.capability, m.rules[:-1])])


class TestRandom:
    @settings(max_examples=scaled(15))
    @given(worlds(2, 5), seeds)
    def test_refines_matches_enumeration(self, world: World, seed: int) -> None:
        other = synthetic.random_model(world.ctx, rng_for(seed), n_capabilities=len(world.truth))
        t1, t2 = brute_transitions(world.truth, world.n), brute_transitions(other, world.n)
        for a, b, ta, tb in ((world.truth, other, t1, t2), (other, world.truth, t2, t1)):
            v = relations.refines(a, b)
            assert v.holds == (ta <= tb)
            if not v.holds:
                t = v.counterexample
                assert t in ta - tb
                assert a.admits(t) and not b.admits(t)
        assert relations.equivalent(world.truth, other).holds == (t1 == t2)

    @settings(max_examples=scaled(15))
    @given(worlds(2, 5), st.data())
    def test_dropping_a_rule_refines(self, world: World, data: st.DataObject) -> None:
        c = data.draw(st.sampled_from(list(world.truth)))
        smaller = drop_last_rule(world.truth, c)
        v = relations.refines(smaller, world.truth)
        assert v.holds and v.counterexample is None
        assert relations.equivalent(world.truth, world.truth).holds
        w = relations.refines(world.truth, smaller)
        t_big, t_small = brute_transitions(world.truth, world.n), brute_transitions(smaller, world.n)
        assert w.holds == (t_big <= t_small)
        if not w.holds:
            assert w.counterexample in t_big - t_small and w.counterexample.c == c

    @settings(max_examples=scaled(8))
    @given(st.integers(30, 40), seeds, seeds)
    def test_large_vocabularies(self, n: int, seed: int, seed2: int) -> None:
        world = make_world(n, seed, n_capabilities=2)
        c = "c0"
        smaller = drop_last_rule(world.truth, c)
        assert relations.refines(smaller, world.truth).holds
        assert relations.equivalent(world.truth, world.truth).holds
        others = [smaller, synthetic.random_model(world.ctx, rng_for(seed2), n_capabilities=2)]
        for other in others:
            v = relations.refines(world.truth, other)
            if not v.holds:
                t = v.counterexample
                assert world.truth.admits(t) and not other.admits(t)
                assert brute_admits(world.truth[t.c], t.s, t.s_next)
                assert t.c not in other or not brute_admits(other[t.c], t.s, t.s_next)

    @settings(max_examples=scaled(15))
    @given(worlds(2, 5), st.data())
    def test_same_distributions(self, world: World, data: st.DataObject) -> None:
        ctx = world.ctx
        # the same model with every condition rewritten as its set of states
        as_sets = CompoundModel(
            ctx,
            [
                CapabilityModel(
                    m.capability,
                    tuple(
                        Rule(
                            Condition.pessimistic(
                                ctx, [s for s in all_states(world.n) if condition_holds(r.condition, s)]
                            ),
                            r.effects,
                        )
                        for r in m.rules
                    ),
                )
                for m in world.truth.values()
            ],
        )
        assert relations.same_distributions(world.truth, as_sets).holds
        assert relations.equivalent(world.truth, as_sets).holds
        # re-weight one rule: wherever it matches the averaged effect distribution moves
        c = data.draw(st.sampled_from(list(world.truth)))
        m = world.truth[c]
        k = data.draw(st.integers(0, len(m.rules) - 1))
        r = m.rules[k]
        extra = next(Effect(a, 0) for a in all_states(world.n) if Effect(a, 0) not in r.effect_set())
        reweighted = Rule.make(r.condition, [(p / 2, e) for p, e in r.effects] + [(Fraction(1, 2), extra)])
        changed = world.truth.replace([CapabilityModel(m.capability, (*m.rules[:k], reweighted, *m.rules[k + 1 :]))])
        v = relations.same_distributions(world.truth, changed)
        # The extra effect can coincide with an old one on every state the rule
        # covers (+a where a already holds): decide by brute force what is right.
        differs = [s for s in all_states(world.n) if world.truth.distribution(s, c) != changed.distribution(s, c)]
        assert v.holds == (not differs)
        if differs:
            s = v.counterexample.s
            assert condition_holds(r.condition, s) and s in differs
            assert v.counterexample.c == c

"""Tests of capability models (section 2, Definition "capability model"): rule
validation, Pr_h(s′ | s, c) averaged over R_s, h ⊨ t, soundness/completeness w.r.t. D.

Random models come from :func:`capver.synthetic.random_model` (formula
conditions, overlapping rules); the reference Pr_h is the brute-force
:func:`corpus.brute_distribution`, which evaluates conditions by walking their
formulas and applies effects on Python sets.
"""

from __future__ import annotations

import signal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from capver import synthetic
from capver.core.dataset import TransitionDataset
from capver.core.state import Capability, Effect, Transition
from capver.engines.lattice import LatticeBuilder
from capver.errors import ModelError
from capver.logic.condition import Condition, LogicContext
from capver.model.capability_model import CapabilityModel, CompoundModel, Rule
from tests.helpers.corpus import (
    World,
    all_states,
    brute_admits,
    brute_distribution,
    capability_model,
    condition_holds,
    formula_rule,
    make_world,
    sampled_worlds,
    seeds,
    worlds,
)

P0, P1, P2 = 1, 2, 4


class TestRules:
    def setup_method(self) -> None:
        self.ctx = LogicContext(synthetic.propositional_vocabulary(3))
        self.true = Condition.true(self.ctx)

    def test_make_sorts_and_parses(self) -> None:
        r = Rule.make(self.true, [("2/3", Effect(P1, 0)), (Fraction(1, 3), Effect(0, P2))])
        assert r.effects == ((Fraction(1, 3), Effect(0, P2)), (Fraction(2, 3), Effect(P1, 0)))
        assert r.effect_set() == frozenset({Effect(P1, 0), Effect(0, P2)})

    @pytest.mark.parametrize(
        ("effects", "message"),
        [
            ([], "at least one effect"),
            ([("1/2", Effect(P1, 0))], "sum to 1/2, expected 1"),
            ([("1/2", Effect(P1, 0)), ("1/2", Effect(P1, 0))], "appears twice"),
            ([(0, Effect(P1, 0)), (1, Effect(P2, 0))], "not in \\(0, 1\\]"),
            ([("3/2", Effect(P1, 0)), ("-1/2", Effect(P2, 0))], "not in \\(0, 1\\]"),
        ],
    )
    def test_invalid_rules(self, effects: list, message: str) -> None:
        with pytest.raises(ModelError, match=message):
            Rule.make(self.true, effects)

    def test_duplicate_capability(self) -> None:
        m = CapabilityModel(Capability("c"), (Rule.make(self.true, [(1, Effect())]),))
        with pytest.raises(ModelError, match="duplicate capability 'c'"):
            CompoundModel(self.ctx, [m, m])


def overlapping_example() -> tuple[LogicContext, CapabilityModel]:
    """Three rules over p0, p1, p2 whose conditions overlap:

    A: p0 → {1/2: +p1, 1/2: +p2};  B: p0 ∨ p1 → {1: +p1};  C: p2 → {1/3: ∅, 2/3: −p2}."""
    ctx = LogicContext(synthetic.propositional_vocabulary(3))
    mgr, x = ctx.smt.mgr, ctx.smt.cur
    a = formula_rule(ctx, x[0], [("1/2", Effect(P1, 0)), ("1/2", Effect(P2, 0))])
    b = formula_rule(ctx, mgr.Or(x[0], x[1]), [(1, Effect(P1, 0))])
    c = formula_rule(ctx, x[2], [("1/3", Effect()), ("2/3", Effect(0, P2))])
    return ctx, capability_model("clean", [a, b, c])


class TestHandComputed:
    """Values worked out by hand from the definition of Pr_h."""

    def test_distributions(self) -> None:
        _, m = overlapping_example()
        expected = {
            0: {},  # no rule matches
            P0: {P0 | P1: Fraction(3, 4), P0 | P2: Fraction(1, 4)},  # R_s = {A, B}
            P1: {P1: Fraction(1)},  # R_s = {B}: +p1 changes nothing
            P0 | P1: {P0 | P1: Fraction(3, 4), P0 | P1 | P2: Fraction(1, 4)},
            P2: {P2: Fraction(1, 3), 0: Fraction(2, 3)},  # R_s = {C}
            # R_s = {A, B, C}: (1/3)(1/2 + 1), (1/3)(1/2 + 1/3), (1/3)(2/3)
            P0 | P2: {P0 | P1 | P2: Fraction(1, 2), P0 | P2: Fraction(5, 18), P0: Fraction(2, 9)},
        }
        a, b, c = m.rules
        matching = {0: [], P0: [a, b], P1: [b], P0 | P1: [a, b], P2: [c], P0 | P2: [a, b, c]}
        for s, dist in expected.items():
            assert m.distribution(s) == dist
            assert m.matching(s) == matching[s]
        assert m.prob(P0 | P2, P0) == Fraction(2, 9)
        assert m.prob(P0 | P2, P2) == 0
        assert not m.covers(0) and m.covers(P1)
        assert m.admits(P0, P0 | P2) and not m.admits(P0, P0) and not m.admits(0, 0)

    def test_compound(self) -> None:
        ctx, m = overlapping_example()
        other = capability_model("idle", [Rule.make(Condition.true(ctx), [(1, Effect())])])
        h = CompoundModel(ctx, [m, other])
        assert list(h) == ["clean", "idle"] and len(h) == 2
        assert [c.name for c in h.capabilities] == ["clean", "idle"]
        assert h.vocabulary is ctx.vocab
        assert h.distribution(P0, "clean") == m.distribution(P0)
        assert h.distribution(P0, "missing") == {} and h.prob(P0, "missing", P0) == 0
        assert h.prob(P2, "idle", P2) == 1
        assert h.admits(Transition(P0, "clean", P0 | P1))
        assert not h.admits(Transition(P0, "missing", P0))
        smaller = capability_model("idle", [Rule.make(Condition.pessimistic(ctx, [0]), [(1, Effect())])])
        h2 = h.replace([smaller])
        assert h2["idle"] is smaller and h["idle"] is other and h2["clean"] is m
        assert not h2.admits(Transition(P2, "idle", P2)) and h.admits(Transition(P2, "idle", P2))

    def test_soundness_and_completeness(self) -> None:
        ctx, m = overlapping_example()
        h = CompoundModel(ctx, [m])
        data = TransitionDataset(ctx.vocab, h.capabilities)
        data.add(Transition(P0, "clean", P0 | P1))
        assert h.is_complete(data)
        # from s = {p0} h also predicts {p0, p2}, which D lacks
        assert h.unsound_witness(data) == Transition(P0, "clean", P0 | P2)
        data.add(Transition(P0, "clean", P0 | P2))
        assert h.unsound_witness(data) is None
        assert h.unsound_witness(data, candidates=[P2]) in {Transition(P2, "clean", 0), Transition(P2, "clean", P2)}
        data.add(Transition(0, "clean", P1))  # no rule matches s = ∅
        assert not h.is_complete(data)


class TestRandomModels:
    @given(worlds(1, 5, max_capabilities=2))
    def test_pr_is_the_averaged_definition(self, world: World) -> None:
        for m in world.truth.values():
            for s in all_states(world.n):
                d = m.distribution(s)
                assert d == brute_distribution(m, s)
                assert all(isinstance(p, Fraction) and p > 0 for p in d.values())
                covered = any(condition_holds(r.condition, s) for r in m.rules)
                assert m.covers(s) == covered
                # exactly 1 where some rule matches, the empty distribution elsewhere
                assert sum(d.values(), Fraction(0)) == (1 if covered else 0)
                assert len(m.matching(s)) == sum(condition_holds(r.condition, s) for r in m.rules)

    @given(worlds(1, 4, max_capabilities=2))
    def test_prob_and_admits_on_every_transition(self, world: World) -> None:
        for c, m in world.truth.items():
            for s in all_states(world.n):
                ref = brute_distribution(m, s)
                for s2 in all_states(world.n):
                    assert m.prob(s, s2) == ref.get(s2, 0)
                    assert world.truth.prob(s, c, s2) == ref.get(s2, 0)
                    assert m.admits(s, s2) == brute_admits(m, s, s2) == (s2 in ref)

    @given(worlds(2, 5, total=True))
    def test_total_models_cover_every_state(self, world: World) -> None:
        for m in world.truth.values():
            assert all(m.covers(s) for s in all_states(world.n))
            assert all(sum(m.distribution(s).values()) == 1 for s in all_states(world.n))

    @given(sampled_worlds())
    def test_truth_is_complete_for_its_samples(self, wd: tuple) -> None:
        world, data = wd
        assert world.truth.is_complete(data)
        witness = world.truth.unsound_witness(data)
        if witness is None:
            for t in data.unique_transitions():
                assert all(data.count(t.s, t.c, s2) for s2 in world.truth.distribution(t.s, t.c))
        else:
            assert world.truth.admits(witness) and witness not in data
            assert witness.s in set(data.states())

    @given(seeds)
    def test_distribution_cache_is_stable(self, seed: int) -> None:
        world = make_world(4, seed)
        first = {(c, s): dict(m.distribution(s)) for c, m in world.truth.items() for s in all_states(4)}
        again = {(c, s): m.distribution(s) for c, m in world.truth.items() for s in all_states(4)}
        assert first == again


def _fresh(h: CompoundModel) -> CompoundModel:
    """The same rules without any cached distribution."""
    return CompoundModel(h.ctx, [CapabilityModel(m.capability, m.rules) for m in h.values()])


@given(sampled_worlds())
def test_float_distribution_is_the_exact_one_in_floats(wd: tuple) -> None:
    """Query synthesis's float path (computed cold, or from a cached exact
    distribution) equals Pr_h, for formula models and for both lattice bounds."""
    world, data = wd
    lb = LatticeBuilder(world.truth.ctx, data)
    for h in (world.truth, lb.pessimistic, lb.optimistic):
        cold, warm = _fresh(h), _fresh(h)
        for c in h:
            for s in all_states(world.n):
                exact = warm[c].distribution(s)
                for m in (cold[c], warm[c]):
                    fd = m.float_distribution(s)
                    assert [s2 for s2, _ in fd] == sorted(exact)
                    assert all(p == pytest.approx(float(exact[s2]), rel=1e-12) for s2, p in fd)


def test_random_corpus_has_overlapping_rules() -> None:
    """The averaging over R_s is only exercised if random models do overlap."""
    overlaps = 0
    for seed in range(10):
        world = make_world(4, seed)
        for m in world.truth.values():
            overlaps += sum(len(m.matching(s)) >= 2 for s in all_states(4))
    assert overlaps > 0


@given(worlds(2, 5, total=True), st.integers(1, 60), st.integers(1, 10))
def test_generated_samples_are_admitted_by_the_truth(world: World, n: int, pool: int) -> None:
    # total truths cover every state, so synthetic.sample_dataset cannot get stuck
    data = synthetic.sample_dataset(world.truth, world.rng(3), n, n_states=pool)
    assert len(data) == n
    assert len(set(data.states())) <= pool
    assert world.truth.is_complete(data)
    assert all(world.truth.prob(t.s, t.c, t.s_next) > 0 for t, _ in data.items())


class _Timeout(Exception):
    pass


def _raise_timeout(signum: int, frame: object) -> None:
    raise _Timeout


def test_sample_dataset_terminates_when_nothing_is_covered() -> None:
    ctx = LogicContext(synthetic.propositional_vocabulary(2))
    never = capability_model("c", [Rule.make(Condition.pessimistic(ctx, []), [(1, Effect())])])
    model = CompoundModel(ctx, [never])
    previous = signal.signal(signal.SIGALRM, _raise_timeout)
    signal.setitimer(signal.ITIMER_REAL, 2.0)
    try:
        outcome: object = synthetic.sample_dataset(model, np.random.default_rng(0), 5)
    except _Timeout:
        outcome = "still sampling after 2 s"
    except ValueError as exc:  # refusing is an acceptable answer
        outcome = exc
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert outcome != "still sampling after 2 s"

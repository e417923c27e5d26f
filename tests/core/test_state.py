"""Tests of bitset states, effects and transitions (section 2): apply, the observed
effect η(⟨s, c, s′⟩) and the algebra of effects."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from capver.core.state import (
    NO_EFFECT,
    Capability,
    Effect,
    Transition,
    observed_effect,
)
from capver.core.vocabulary import Atom, Literal
from tests.helpers.corpus import apply_effect, vehicles_vocabulary

# Up to 70 bits so that states beyond one machine word are exercised too.
N_BITS = 70
states = st.integers(0, (1 << N_BITS) - 1)
masks = states


@st.composite
def effects(draw: st.DrawFn) -> Effect:
    """Arbitrary ⟨η⁺, η⁻⟩, overlapping masks included."""
    return Effect(draw(masks), draw(masks))


def bits(x: int) -> set[int]:
    return {i for i in range(x.bit_length()) if x >> i & 1}


class TestApply:
    @given(states, states)
    def test_apply_observed_effect_round_trip(self, s: int, s2: int) -> None:
        eta = observed_effect(s, s2)
        assert eta.apply(s) == s2
        assert Transition(s, "c", s2).effect == eta

    @given(states, states)
    def test_observed_effect_is_the_set_difference_pair(self, s: int, s2: int) -> None:
        eta = observed_effect(s, s2)
        assert bits(eta.add) == bits(s2) - bits(s)
        assert bits(eta.delete) == bits(s) - bits(s2)

    @given(states, effects())
    def test_apply_matches_set_definition(self, s: int, eta: Effect) -> None:
        assert apply_effect(s, eta) == eta.apply(s)
        assert bits(eta.apply(s)) == (bits(s) - bits(eta.delete)) | bits(eta.add)

    @given(states)
    def test_empty_effect_is_identity(self, s: int) -> None:
        assert NO_EFFECT.apply(s) == s
        assert observed_effect(s, s) == NO_EFFECT

    @given(states, effects())
    def test_apply_is_idempotent(self, s: int, eta: Effect) -> None:
        once = eta.apply(s)
        assert eta.apply(once) == once

    @given(states, effects(), effects())
    def test_sequential_application_composes(self, s: int, e1: Effect, e2: Effect) -> None:
        # e2 after e1 is one effect: added unless e2 deletes it, deleted unless e2 adds it
        composed = Effect((e1.add & ~e2.delete) | e2.add, (e1.delete & ~e2.add) | e2.delete)
        assert e2.apply(e1.apply(s)) == composed.apply(s)

    @given(states, effects())
    def test_observed_effect_of_an_applied_effect(self, s: int, eta: Effect) -> None:
        # what is observed is the part of η that changed something
        seen = observed_effect(s, eta.apply(s))
        assert bits(seen.add) == bits(eta.add) - bits(s)
        assert bits(seen.delete) == (bits(eta.delete) - bits(eta.add)) & bits(s)

    @given(states, states, states)
    def test_observed_effects_separate_successors(self, s: int, a: int, b: int) -> None:
        assert (observed_effect(s, a) == observed_effect(s, b)) == (a == b)

    @given(states, states)
    def test_observed_effect_is_normalised(self, s: int, s2: int) -> None:
        eta = observed_effect(s, s2)
        assert eta.add & eta.delete == 0
        assert eta.add & s == 0 and eta.delete & ~s == 0


class TestValues:
    def test_effect_equality_and_order(self) -> None:
        assert Effect(1, 2) == Effect(1, 2)
        assert Effect(1, 2) != Effect(2, 1)
        assert len({Effect(1, 2), Effect(1, 2), Effect(0, 0)}) == 2
        assert sorted([Effect(2, 0), Effect(1, 5), Effect(1, 3)]) == [Effect(1, 3), Effect(1, 5), Effect(2, 0)]

    def test_effect_format(self) -> None:
        vocab = vehicles_vocabulary()
        eta = Effect(vocab.state(["raining"]), vocab.state(["fast(c1)", "loaded(t1)"]))
        assert eta.format(vocab) == "{raining, not fast(c1), not loaded(t1)}"
        assert NO_EFFECT.format(vocab) == "{}"

    def test_transition_format(self) -> None:
        vocab = vehicles_vocabulary()
        s = vocab.state(["fast(c1)"])
        s2 = vocab.state(["raining"])
        t = Transition(s, "wait", s2)
        assert t.format(vocab) == "{fast(c1)} --wait--> {raining, not fast(c1)}"

    def test_capability_for_intent(self) -> None:
        intent = (Literal(Atom("at", ("c1", "home"))), Literal(Atom("fast", ("c1",)), False))
        cap = Capability.for_intent(intent)
        assert cap.name == "at(c1,home)&~fast(c1)"
        assert cap.intent == intent

    @given(st.data())
    def test_capability_achieved(self, data: st.DataObject) -> None:
        vocab = vehicles_vocabulary()
        s = data.draw(st.integers(0, vocab.full_mask))
        lits = data.draw(st.lists(st.tuples(st.sampled_from(vocab.atoms), st.booleans()), max_size=4))
        cap = Capability("k", tuple(Literal(a, pos) for a, pos in lits))
        true_atoms = set(vocab.atoms_of(s))
        assert cap.achieved(vocab, s) == all((a in true_atoms) == pos for a, pos in lits)

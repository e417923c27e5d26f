"""Capability discovery by random walks and incremental generalisation (section 3)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capver.core.state import Capability, Effect, Transition
from capver.core.vocabulary import Atom, Literal, Predicate, Vocabulary
from capver.engines.discovery import CapabilitySet, discover, random_walks
from capver.envs.ppddl import (
    AtomsRepresentation,
    GroundAction,
    PPDDLSimulator,
    load_task,
)
from capver.envs.ppddl.syntax import (
    EffAnd,
    EffForAll,
    EffLiteral,
    EffProbabilistic,
    EffWhen,
)
from tests.helpers.examples import scaled


def env(domain):
    task = load_task(domain, "problem1")
    return task, PPDDLSimulator(task, seed=0), AtomsRepresentation(task)


def effect_literals(e, out):
    """(predicate, polarity) pairs an effect AST can add or delete."""
    if isinstance(e, EffLiteral):
        out.add((e.atom.predicate, e.positive))
    elif isinstance(e, EffAnd):
        for p in e.parts:
            effect_literals(p, out)
    elif isinstance(e, (EffForAll, EffWhen)):
        effect_literals(e.body, out)
    elif isinstance(e, EffProbabilistic):
        for _, b in e.branches:
            effect_literals(b, out)
    return out


def test_blocksworld_discovery_finds_every_grounding_of_every_changing_predicate():
    task, sim, alpha = env("blocks")
    caps = discover(sim, alpha, np.random.default_rng(0), n_walks=10, length=40)
    vocab = task.vocabulary
    assert {p for p, _ in caps.predicates} == {"on", "ontable", "clear", "holding", "handempty", "handfull"}
    expected = {Capability.for_intent((Literal(a, positive),)).name for a in vocab.atoms for positive in (True, False)}
    assert {c.name for c in caps} == expected
    assert len(caps) == 2 * len(vocab) == 60
    assert "on(a,b)" in caps and "~handempty(robot)" in caps
    assert caps["~on(c,d)"].intent == (Literal(Atom("on", ("c", "d")), False),)


def test_one_transition_generalises_to_all_groundings():
    task, _, _ = env("blocks")
    vocab = task.vocabulary
    s = task.initial_state
    a = GroundAction("pick-up", ("b", "robot"))
    ((_, s2),) = task.outcomes(s, a)
    caps = CapabilitySet(vocab)
    new = caps.observe(Transition(s, str(a), s2))
    # pick-up(b) adds holding(b), handfull; deletes ontable(b), clear(b), handempty
    assert [c.name for c in new] == (
        [f"~ontable({x})" for x in "abcd"]
        + [f"~clear({x})" for x in "abcd"]
        + ["~handempty(robot)", "handfull(robot)"]
        + [f"holding({x})" for x in "abcd"]
    )
    assert tuple(new) == caps.capabilities
    # another grounding of the same predicates adds nothing
    a2 = GroundAction("pick-up", ("d", "robot"))
    ((_, s3),) = task.outcomes(s, a2)
    assert caps.observe(Transition(s, str(a2), s3)) == []
    # an effect with a new predicate/polarity adds exactly its groundings
    put_back = caps.observe_effect(Effect(add=vocab.state(["ontable(b)"])))
    assert [c.name for c in put_back] == [f"ontable({x})" for x in "abcd"]
    assert caps.observe_effect(Effect()) == []


def test_groundings_outside_the_vocabulary_are_skipped():
    vocab = Vocabulary.build(
        [Predicate("at", ("loc",))],
        objects={"x": "loc", "y": "loc", "z": "loc"},
        types={"loc": "object"},
        atoms=[Atom("at", ("x",)), Atom("at", ("z",))],
    )
    caps = CapabilitySet(vocab)
    new = caps.observe(Transition(0, "go", vocab.state(["at(z)"])))
    assert [c.name for c in new] == ["at(x)", "at(z)"]


@settings(max_examples=scaled(10), deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["first_responders", "explodingblocks", "tireworld"]))
def test_discovered_intents_are_effects_the_domain_can_have(seed, domain):
    task, sim, alpha = env(domain)
    caps = discover(sim, alpha, np.random.default_rng(seed), n_walks=3, length=20)
    possible = set()
    for schema in task.domain.actions:
        effect_literals(schema.effect, possible)
    assert caps.predicates <= possible
    for c in caps:
        (lit,) = c.intent
        assert (lit.atom.predicate, lit.positive) in caps.predicates
        assert lit.atom in task.vocabulary


def test_random_walks_follow_the_dynamics_and_are_reproducible():
    task, sim, alpha = env("explodingblocks")
    walks = random_walks(sim, alpha, np.random.default_rng(4), n_walks=4, length=15)
    again = random_walks(sim, alpha, np.random.default_rng(4), n_walks=4, length=15)
    assert walks == again
    assert 0 < len(walks) <= 60
    assert walks[0].s == task.initial_state
    for t in walks:
        a = GroundAction.parse(t.c)
        assert task.is_applicable(t.s, a)
        assert t.s_next in {x for _, x in task.outcomes(t.s, a)}
    with pytest.raises(ValueError):
        random_walks(sim, alpha, np.random.default_rng(0), n_walks=-1, length=3)


def test_order_is_canonical():
    task, sim, alpha = env("first_responders")
    ts = random_walks(sim, alpha, np.random.default_rng(9), n_walks=5, length=25)
    forward, backward = CapabilitySet(task.vocabulary), CapabilitySet(task.vocabulary)
    forward.observe_all(ts)
    backward.observe_all(reversed(ts))
    assert forward.capabilities == backward.capabilities
    assert len(forward) > 0

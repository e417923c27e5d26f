"""What the learned models reveal about an agent (section 4.2's E2): notable
capabilities and limitations found from h∧ and put into words by
:mod:`capver.io.explain` for ``report.txt``.

Every finding is read off the pessimistic model h∧, whose rules keep the tried states
they were learned from and the effects observed there, so each one is backed by
observations rather than by h∨'s guesses about untried states:

* **never achieved** - a capability tried in some states where its intent did not
  hold, whose observed outcomes never make the intent true;
* **reliable** - a capability that achieved its intent in every outcome observed
  from every tried state;
* **success drops** - the per-state success probability (the share of a state's
  rule's outcomes that make the intent true) spreads by at least :data:`DROP` over
  the tried states.  The states are split at the midpoint into a high and a low
  block, and the low block's short condition is found the way the Occam model h̃
  finds short conditions (:func:`capver.engines.occam.occam_capability` over the two
  blocks), so the report names the few literals that separate low from high success;
* **side effects the intent does not ask for** - an outcome η achieving the intent
  from s, such that a strictly smaller outcome η′ ⊊ η also achieved the intent from a
  tried state s′ that agrees with s on every atom η touches.  The extra changes
  η ∖ η′ were then not needed for the intent (the same change of everything else was
  seen without them).  Only changes to atoms about objects the intent does not
  mention count (and to 0-ary atoms other than the intent's): a block that must move
  may change its reach, a fetched key its room.  This is how the MiniGrid RL
  agent's "opens a door it does not need" habit shows: from states alike in the key,
  the agent's room and the door, it fetches the key both with and without opening the
  door.  The states where the side effect happens get a short condition like the
  success drop's.

:func:`capability_statuses` sorts every capability into what ``report.txt``'s labels
and headline count: observed to achieve its intent, tried where the intent did not
hold yet without achieving it (exactly the *never achieved* findings), tried only
where it already held, or never tried; and, for those never observed to achieve it,
whether the optimistic bound h∨ still lets it achieve the intent from some state
(where h∨ cannot, Theorem 1's h⋆ ⪯ h∨ says the agent cannot either, so far as the
agent's outcomes there are among those observed for the capability).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from enum import Enum
from fractions import Fraction

import numpy as np

from capver.core.state import Capability, Effect, State
from capver.engines.occam import occam_capability
from capver.logic.bdd import Cube
from capver.logic.condition import Condition, ConditionKind
from capver.model.capability_model import CapabilityModel, CompoundModel, Rule

DROP = Fraction(1, 2)
"""The smallest spread of per-state success probabilities reported as a drop."""

MAX_SIDE_EFFECTS = 3
"""Side effects reported per capability (the most frequent)."""


@dataclass(frozen=True, slots=True)
class NeverAchieved:
    capability: Capability
    tried: int  # tried states where the intent did not hold yet


@dataclass(frozen=True, slots=True)
class Reliable:
    capability: Capability
    tried: int


@dataclass(frozen=True, slots=True)
class SuccessDrop:
    """Success at least ``high`` in ``high_states`` tried states, at most ``low`` in
    ``low_states``; ``condition`` (short, h̃-style) covers the low ones and
    ``high_condition`` the high ones (the two rules of one h̃ construction, so they
    never overlap)."""

    capability: Capability
    high: Fraction
    high_states: int
    low: Fraction
    low_states: int
    condition: Condition
    high_condition: Condition


@dataclass(frozen=True, slots=True)
class SideEffect:
    """``extra`` happened in ``states`` of the ``achieving`` tried states where the
    capability achieved its intent, while not needed for it (module docstring);
    ``condition`` (short) covers the states where it happened."""

    capability: Capability
    extra: Effect
    states: int
    achieving: int
    condition: Condition


Finding = NeverAchieved | Reliable | SuccessDrop | SideEffect


@dataclass(frozen=True, slots=True)
class _Observed:
    """One capability's tried states, read off h∧: per state its outcomes and the
    probability that one execution achieves the intent."""

    outcomes: dict[State, tuple[tuple[Fraction, Effect], ...]]
    success: dict[State, Fraction]  # states where the intent did not hold yet
    achieving: dict[State, frozenset[Effect]]  # the outcomes that made the intent true


def _observe(m: CapabilityModel, cap: Capability) -> _Observed:
    vocab = m.rules[0].condition.ctx.vocab if m.rules else None
    outcomes: dict[State, tuple[tuple[Fraction, Effect], ...]] = {}
    for r in m.rules:
        if r.condition.kind is not ConditionKind.PESSIMISTIC:
            raise ValueError(f"capability {m.name}: findings are read off h∧, whose conditions are pessimistic")
        for s in r.condition.states:
            outcomes[s] = r.effects
    success: dict[State, Fraction] = {}
    achieving: dict[State, frozenset[Effect]] = {}
    if vocab is None or not cap.intent:
        return _Observed(outcomes, success, achieving)
    for s, effects in outcomes.items():
        if cap.achieved(vocab, s):
            continue
        good = frozenset(eta for _, eta in effects if cap.achieved(vocab, eta.apply(s)))
        success[s] = sum((p for p, eta in effects if eta in good), Fraction(0))
        if good:
            achieving[s] = good
    return _Observed(outcomes, success, achieving)


def short_conditions(
    m: CapabilityModel, block: frozenset[State], rest: frozenset[State], rng: np.random.Generator
) -> tuple[Condition, Condition | None]:
    """Short conditions of ``block`` and of ``rest`` (None when ``rest`` is empty):
    the first holds on every state of ``block`` and on no state of ``rest``, the
    second the other way round - the Occam model's conditions
    (:mod:`capver.engines.occam`) for a capability whose rules are these two blocks."""
    ctx = m.rules[0].condition.ctx
    # The effects only carry the blocks through h̃'s construction; two distinct ones
    # keep the two rules distinct.
    rules = [
        Rule(Condition.pessimistic(ctx, blk), ((Fraction(1), Effect(add=k)),))
        for k, blk in enumerate((block, rest))
        if blk
    ]
    tilde, _ = occam_capability(CapabilityModel(m.capability, tuple(rules)), rng)
    by_block = {r.effects[0][1].add: r.condition for r in tilde.rules}
    if 0 not in by_block:
        raise AssertionError("the block's rule is missing from h̃")  # occam keeps every rule
    return by_block[0], by_block.get(1)


def short_condition(
    m: CapabilityModel, block: frozenset[State], rest: frozenset[State], rng: np.random.Generator
) -> Condition:
    """A short condition that holds on every state of ``block`` and on no state of
    ``rest`` (:func:`short_conditions`)."""
    return short_conditions(m, block, rest, rng)[0]


def _drop(m: CapabilityModel, obs: _Observed, rng: np.random.Generator) -> SuccessDrop | None:
    if not obs.success:
        return None
    hi, lo = max(obs.success.values()), min(obs.success.values())
    if hi - lo < DROP:
        return None
    mid = (hi + lo) / 2
    high = frozenset(s for s, p in obs.success.items() if p >= mid)
    low = frozenset(s for s, p in obs.success.items() if p < mid)
    cond, high_cond = short_conditions(m, low, high, rng)
    assert high_cond is not None  # the high block holds the largest success, so it is never empty
    return SuccessDrop(
        m.capability,
        min(obs.success[s] for s in high),
        len(high),
        max(obs.success[s] for s in low),
        len(low),
        cond,
        high_cond,
    )


def _side_effects(m: CapabilityModel, obs: _Observed, rng: np.random.Generator) -> list[SideEffect]:
    vocab = m.rules[0].condition.ctx.vocab
    mentioned = {o for lit in m.capability.intent for o in lit.atom.args}
    # Atoms about an object the intent mentions may change as the intent needs (a
    # moved block's reach, a fetched key's room): side effects are changes elsewhere.
    related = sum(
        1 << i
        for i, a in enumerate(vocab.atoms)
        if set(a.args) & mentioned or any(a == lit.atom for lit in m.capability.intent)
    )
    by_effect: dict[Effect, set[State]] = defaultdict(set)
    for s, good in obs.achieving.items():
        for eta in good:
            by_effect[eta].add(s)
    extras: dict[Effect, set[State]] = defaultdict(set)
    for eta, states in by_effect.items():
        support = eta.add | eta.delete
        for eta2, states2 in by_effect.items():
            smaller = eta2 != eta and eta2.add & ~eta.add == 0 and eta2.delete & ~eta.delete == 0
            if not smaller:
                continue
            extra = Effect(eta.add & ~eta2.add & ~related, eta.delete & ~eta2.delete & ~related)
            if not extra.add | extra.delete:
                continue
            alike = {s2 & support for s2 in states2}
            for s in states:
                if s & support in alike:
                    extras[extra].add(s)
    # An extra that is part of a larger reported one (opening a door also un-closes it)
    # would repeat it; keep the largest ones, most frequent first.
    ranked = sorted(extras.items(), key=lambda kv: (-len(kv[1]), -(kv[0].add | kv[0].delete).bit_count(), kv[0]))
    found: list[SideEffect] = []
    for extra, states in ranked:
        if any(_within(extra, f.extra) for f in found):
            continue
        with_it = frozenset(states)
        without = frozenset(obs.achieving) - with_it
        found.append(
            SideEffect(m.capability, extra, len(with_it), len(obs.achieving), short_condition(m, with_it, without, rng))
        )
        if len(found) == MAX_SIDE_EFFECTS:
            break
    return found


def _within(a: Effect, b: Effect) -> bool:
    return a.add & ~b.add == 0 and a.delete & ~b.delete == 0


def find(h_and: CompoundModel, rng: np.random.Generator) -> list[Finding]:
    """The findings of every capability of h∧ (in name order; ``rng`` draws the
    folds of the short conditions' held-out choice, as for h̃)."""
    found: list[Finding] = []
    for name in sorted(h_and):
        m = h_and[name]
        cap = m.capability
        if not cap.intent or not m.rules:
            continue
        obs = _observe(m, cap)
        if not obs.success:
            continue
        if not obs.achieving:
            found.append(NeverAchieved(cap, len(obs.success)))
            continue
        if all(p == 1 for p in obs.success.values()):
            found.append(Reliable(cap, len(obs.success)))
        drop = _drop(m, obs, rng)
        if drop is not None:
            found.append(drop)
        found.extend(_side_effects(m, obs, rng))
    return found


FINDINGS_SALT = 14
"""Mixed into a run's seed for the findings' folds, like h̃'s own salt."""


def run_findings(h_and: CompoundModel, seed: int) -> list[Finding]:
    """The findings as ``capver learn`` writes them into ``report.txt``."""
    return find(h_and, np.random.default_rng([seed, FINDINGS_SALT]))


class Achievement(Enum):
    """What h∧'s observations say about one capability's intent."""

    ACHIEVED = "observed to achieve its intent"
    NOT_ACHIEVED = "tried where its intent did not hold, never observed to achieve it"
    ONLY_WHERE_HELD = "tried only where its intent already held"
    UNTRIED = "never tried"
    NO_INTENT = "no intent"


@dataclass(frozen=True, slots=True)
class CapabilityStatus:
    """One capability's :class:`Achievement`, ``tried`` (h∧'s tried states) and
    whether h∨ lets it achieve its intent from some state where the intent does not
    hold yet (True for every achieved capability, since h∧ ⪯ h∨)."""

    capability: Capability
    achievement: Achievement
    tried: int
    possible_on_h_or: bool


def achieves_somewhere(m: CapabilityModel) -> bool:
    """Some rule of ``m`` applies in a state where the capability's intent does not
    hold and has an outcome of positive probability that makes it hold there (on the
    BDDs, so a rule's untried states count too)."""
    cap = m.capability
    if not cap.intent or not m.rules:
        return False
    ctx = m.rules[0].condition.ctx
    b = ctx.bdd
    pos, neg = ctx.vocab.literals(cap.intent)
    if pos & neg:
        return False  # a contradictory intent never holds
    not_yet = b.neg(b.cube(Cube(pos | neg, pos)))
    for r in m.rules:
        start = b.conj(r.condition.bdd, not_yet)
        if start == b.false:
            continue
        for p, eta in r.effects:
            if p == 0 or pos & eta.delete or neg & eta.add:
                continue
            # apply(s, η) ⊨ intent exactly where the intent literals η does not set hold in s.
            need_pos, need_neg = pos & ~eta.add, neg & ~eta.delete
            if b.conj(start, b.cube(Cube(need_pos | need_neg, need_pos))) != b.false:
                return True
    return False


def capability_statuses(h_and: CompoundModel, h_or: CompoundModel) -> dict[str, CapabilityStatus]:
    """Every capability of h∧ (in name order) with its status (module docstring).
    NOT_ACHIEVED holds exactly for the capabilities :func:`find` reports as
    :class:`NeverAchieved`: both read h∧ through the same observations."""
    statuses: dict[str, CapabilityStatus] = {}
    for name in sorted(h_and):
        m = h_and[name]
        cap = m.capability
        tried = sum(len(r.condition.states) for r in m.rules)
        if not cap.intent:
            statuses[name] = CapabilityStatus(cap, Achievement.NO_INTENT, tried, False)
            continue
        if not m.rules:
            statuses[name] = CapabilityStatus(cap, Achievement.UNTRIED, 0, False)
            continue
        obs = _observe(m, cap)
        if obs.achieving:
            statuses[name] = CapabilityStatus(cap, Achievement.ACHIEVED, tried, True)
            continue
        kind = Achievement.NOT_ACHIEVED if obs.success else Achievement.ONLY_WHERE_HELD
        o = h_or.get(name)
        statuses[name] = CapabilityStatus(cap, kind, tried, o is not None and achieves_somewhere(o))
    return statuses

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
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from capver.engines.occam import occam_capability
from capver.logic.condition import Condition, ConditionKind
from capver.model.capability_model import CapabilityModel, CompoundModel, Rule
from capver.model.state import Capability, Effect, State

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
    ``low_states``; ``condition`` (short, h̃-style) covers the low ones."""

    capability: Capability
    high: Fraction
    high_states: int
    low: Fraction
    low_states: int
    condition: Condition


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


def short_condition(m: CapabilityModel, block: frozenset[State], rest: frozenset[State],
                    rng: np.random.Generator) -> Condition:
    """A short condition that holds on every state of ``block`` and on no state of
    ``rest`` - the Occam model's conditions (:mod:`capver.engines.occam`) for a
    capability whose rules are these two blocks."""
    ctx = m.rules[0].condition.ctx
    # The effects only carry the blocks through h̃'s construction; two distinct ones
    # keep the two rules distinct.
    rules = [Rule(Condition.pessimistic(ctx, blk), ((Fraction(1), Effect(add=k)),))
             for k, blk in enumerate((block, rest)) if blk]
    tilde, _ = occam_capability(CapabilityModel(m.capability, tuple(rules)), rng)
    for r in tilde.rules:
        if r.effects[0][1] == Effect(add=0):
            return r.condition
    raise AssertionError("the block's rule is missing from h̃")  # occam keeps every rule


def _drop(m: CapabilityModel, obs: _Observed, rng: np.random.Generator) -> SuccessDrop | None:
    if not obs.success:
        return None
    hi, lo = max(obs.success.values()), min(obs.success.values())
    if hi - lo < DROP:
        return None
    mid = (hi + lo) / 2
    high = frozenset(s for s, p in obs.success.items() if p >= mid)
    low = frozenset(s for s, p in obs.success.items() if p < mid)
    cond = short_condition(m, low, high, rng)
    return SuccessDrop(m.capability, min(obs.success[s] for s in high), len(high),
                       max(obs.success[s] for s in low), len(low), cond)


def _side_effects(m: CapabilityModel, obs: _Observed, rng: np.random.Generator) -> list[SideEffect]:
    vocab = m.rules[0].condition.ctx.vocab
    mentioned = {o for lit in m.capability.intent for o in lit.atom.args}
    # Atoms about an object the intent mentions may change as the intent needs (a
    # moved block's reach, a fetched key's room): side effects are changes elsewhere.
    related = sum(1 << i for i, a in enumerate(vocab.atoms)
                  if set(a.args) & mentioned or any(a == lit.atom for lit in m.capability.intent))
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
        found.append(SideEffect(m.capability, extra, len(with_it), len(obs.achieving),
                                short_condition(m, with_it, without, rng)))
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


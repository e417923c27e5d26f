"""Random vocabularies, true models h⋆ and datasets drawn from them.

Used by the property tests (Theorems 1 and 3 on random truths), the DSL round-trip
corpus and the benchmarks.  Every random choice goes through the passed-in
``numpy.random.Generator``.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from capver.core.dataset import TransitionDataset
from capver.core.state import Capability, Effect, State, Transition
from capver.core.vocabulary import Literal, Predicate, Vocabulary
from capver.logic.condition import Condition, LogicContext
from capver.model.capability_model import CapabilityModel, CompoundModel, Rule


def propositional_vocabulary(n_atoms: int) -> Vocabulary:
    """Atoms p0 … p{n-1} (nullary predicates)."""
    return Vocabulary.build([Predicate(f"p{i}") for i in range(n_atoms)])


def typed_vocabulary() -> Vocabulary:
    """A small typed vocabulary (a toy Blocksworld) for tests that need arguments."""
    preds = [
        Predicate("on", ("block", "block")),
        Predicate("ontable", ("block",)),
        Predicate("clear", ("block",)),
        Predicate("holding", ("block",)),
        Predicate("handempty", ()),
    ]
    return Vocabulary.build(preds, objects={"a": "block", "b": "block"}, types={"block": "object"})


def random_fraction_split(rng: np.random.Generator, k: int, denominator: int = 12) -> list[Fraction]:
    """k positive fractions with the given denominator summing to 1."""
    if k > denominator:
        raise ValueError("more parts than the denominator allows")
    cuts = sorted(rng.choice(np.arange(1, denominator), size=k - 1, replace=False).tolist())
    bounds = [0, *cuts, denominator]
    return [Fraction(bounds[i + 1] - bounds[i], denominator) for i in range(k)]


def random_effect(rng: np.random.Generator, n_atoms: int, p_touch: float = 0.25) -> Effect:
    add = delete = 0
    for i in range(n_atoms):
        r = rng.random()
        if r < p_touch / 2:
            add |= 1 << i
        elif r < p_touch:
            delete |= 1 << i
    return Effect(add, delete)


def random_condition(ctx: LogicContext, rng: np.random.Generator, max_cubes: int = 3, p_lit: float = 0.3) -> Condition:
    """A random DNF over the atoms, as a formula condition."""
    smt = ctx.smt
    n = len(ctx.vocab)
    cubes = []
    for _ in range(int(rng.integers(1, max_cubes + 1))):
        lits = []
        for i in range(n):
            r = rng.random()
            if r < p_lit / 2:
                lits.append(smt.cur[i])
            elif r < p_lit:
                lits.append(smt.mgr.Not(smt.cur[i]))
        cubes.append(smt.mgr.And(lits))
    return Condition.formula(ctx, smt.mgr.Or(cubes))


def random_model(
    ctx: LogicContext,
    rng: np.random.Generator,
    n_capabilities: int = 3,
    max_rules: int = 3,
    max_effects: int = 3,
    total: bool = False,
) -> CompoundModel:
    """A random compound model.  With ``total`` every capability has a rule that
    matches every state (the paper's "it is always valid to ask an agent to achieve
    an intent": a fallback rule whose only effect is the empty effect)."""
    n = len(ctx.vocab)
    models = []
    for k in range(n_capabilities):
        cap = Capability(f"c{k}", (Literal(ctx.vocab.atoms[k % n], True),) if n else ())
        rules = []
        for _ in range(int(rng.integers(1, max_rules + 1))):
            n_eff = int(rng.integers(1, max_effects + 1))
            effects: dict[Effect, Fraction] = {}
            for p in random_fraction_split(rng, n_eff):
                e = random_effect(rng, n)
                effects[e] = effects.get(e, Fraction(0)) + p
            rules.append(Rule.make(random_condition(ctx, rng), [(p, e) for e, p in effects.items()]))
        if total:
            rules.append(Rule.make(Condition.true(ctx), [(1, Effect(0, 0))]))
        models.append(CapabilityModel(cap, tuple(rules)))
    return CompoundModel(ctx, models)


def sample_successor(model: CapabilityModel, s: State, rng: np.random.Generator) -> int | None:
    """Draw s′ ~ Pr_h(· | s, c); None where no rule matches."""
    dist = model.distribution(s)
    if not dist:
        return None
    succ = sorted(dist)
    probs = np.array([float(dist[x]) for x in succ])
    return succ[int(rng.choice(len(succ), p=probs / probs.sum()))]


def sample_dataset(
    model: CompoundModel, rng: np.random.Generator, n_transitions: int, n_states: int | None = None
) -> TransitionDataset:
    """Executions of uniformly random capabilities from uniformly random states (from
    a pool of ``n_states`` states if given)."""
    vocab = model.vocabulary
    data = TransitionDataset(vocab, model.capabilities)
    caps = list(model)
    n = len(vocab)
    pool = [_random_state(rng, n) for _ in range(n_states)] if n_states else None
    misses = 0
    while len(data) < n_transitions:
        s = pool[int(rng.integers(len(pool)))] if pool else _random_state(rng, n)
        c = caps[int(rng.integers(len(caps)))]
        s2 = sample_successor(model[c], s, rng)
        if s2 is not None:
            data.add(Transition(s, c, s2))
            misses = 0
        else:
            misses += 1
            # Uncovered (s, c) pairs are skipped; a model that covers (almost) none
            # of the sampled states would otherwise never finish.
            if misses > 1000 + 100 * n_transitions:
                raise ValueError("the model covers none of the sampled states: no transitions to sample")
    return data


def complete_dataset(model: CompoundModel, rng: np.random.Generator, extra_pairs: int = 0) -> TransitionDataset:
    """A dataset that is transition complete and effect complete w.r.t. ``model``
    (section 3.1), for vocabularies small enough to enumerate S.

    Effect completeness: for every observed effect η(s, s′) any state can produce, one
    pair (s, c) exhibiting it is included; transition completeness: every included
    pair contributes all of its successors.  ``extra_pairs`` random pairs are added."""
    vocab = model.vocabulary
    n = len(vocab)
    if n > 14:
        raise ValueError("complete_dataset enumerates all 2^n states; n ≤ 14 required")
    data = TransitionDataset(vocab, model.capabilities)
    chosen: set[tuple[int, str]] = set()
    witnessed: set[tuple[str, Effect]] = set()
    order = rng.permutation(1 << n).tolist()
    for c, m in model.items():
        for s in order:
            for s2 in m.distribution(s):
                eta = Effect(s2 & ~s, s & ~s2)
                if (c, eta) not in witnessed:
                    chosen.add((s, c))
                    witnessed.update((c, Effect(x & ~s, s & ~x)) for x in m.distribution(s))
    caps = list(model)
    for _ in range(extra_pairs):
        s = int(rng.integers(1 << n))
        chosen.add((s, caps[int(rng.integers(len(caps)))]))
    for s, c in sorted(chosen):
        for s2 in model[c].distribution(s):
            data.add(Transition(s, c, s2))
    return data


def _random_state(rng: np.random.Generator, n: int) -> int:
    s = 0
    bits = rng.random(n) < 0.5
    for i in range(n):
        if bits[i]:
            s |= 1 << i
    return s


__all__ = [
    "complete_dataset",
    "propositional_vocabulary",
    "random_condition",
    "random_effect",
    "random_model",
    "sample_dataset",
    "sample_successor",
    "typed_vocabulary",
]

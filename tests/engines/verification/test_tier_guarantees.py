"""The guarantees of the agent-verdict tiers (capver.engines.verification.agent_verdict)
and of the anytime-valid missing-mass bound they rest on
(capver.engines.verification.sampling), as the obligations "Observed tier",
"Missing-mass bound (anytime, adaptive)", "Confident tier" and "Unconfirmed / unknown"
of proofs/check_theorems.py state them.

The truths are synthetic (capver.synthetic.random_model, or a hand-written table of
distributions for the Monte Carlo run), so every claim is checked against the exact
truth: verdicts with the truth's symbolic verdict, probability bounds with the
truth's exact maximal probabilities (rationals), missing-mass bounds with the truth's
exact unseen mass.  The last test checks that the registry's entries for the tiers are
complete, listed in obligations.md, and name collected tests (tests/test_proofs.py
does so for the appendix-A entries only)."""

from __future__ import annotations

import bisect
import copy
import json
import math
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from capver import synthetic
from capver.api import learn
from capver.core.dataset import PairSample, TransitionDataset
from capver.core.properties import Eventually, ExistsPath, ForallPath, Globally, Property, Until, holds
from capver.core.state import Capability, Effect, State, Transition
from capver.engines.evaluation import reachable_states
from capver.engines.lattice import build_bounds
from capver.engines.verification import sampling
from capver.engines.verification.agent_verdict import AgentVerdict, LatticeVerdict, Tier, decide
from capver.engines.verification.explicit import pmax_reach
from capver.engines.verification.sampling import (
    SamplingBounds,
    executions_for,
    missing_mass_bound,
    pair_delta,
    share,
)
from capver.engines.verification.symbolic import SymbolicEngine, qualitative_query
from capver.io.properties_text import parse_property
from capver.logic.condition import Condition, LogicContext
from capver.model.capability_model import CapabilityModel, CompoundModel, Rule
from capver.settings import model_assessment
from tests.helpers.examples import scaled
from tests.helpers.paths import ROOT

StateTest = Callable[[State], bool]


# -- shared helpers -------------------------------------------------------------------


def _truth(rng: np.random.Generator, n_atoms: int) -> tuple[LogicContext, CompoundModel, State]:
    """A random total truth (no dead ends, so "within k executions" is about every
    run of length k) and an initial state."""
    ctx = LogicContext(synthetic.propositional_vocabulary(n_atoms))
    truth = synthetic.random_model(ctx, rng, n_capabilities=3, max_rules=2, max_effects=3, total=True)
    return ctx, truth, int(rng.integers(2**n_atoms))


def _properties(ctx: LogicContext, caps: tuple[str, ...]) -> Iterator[Property]:
    """The operators the tiers decide (E F, E U, A G), bounded and not, on every atom."""
    n = len(ctx.vocab)
    for i in range(n):
        j = (i + 1) % n
        for text in (
            f"E [ F p{i} ]",
            f"E [ F<=2 p{i} ]",
            f"E [ !p{j} U p{i} ]",
            f"E [ !p{j} U<=3 p{i} ]",
            f"A [ G !p{i} ]",
            f"A [ G<=3 !p{i} ]",
            f"A [ G (p{i} | !p{j}) ]",
        ):
            yield parse_property(text, ctx.vocab, caps)


@dataclass(frozen=True)
class Reading:
    """A property as a reachability question: the run the verdict is about reaches a
    ``goal`` state through ``hold`` states within ``bound`` steps — the witness of
    E [F]/E [U], the counterexample of A [G]."""

    hold: StateTest
    goal: StateTest
    bound: int | None
    existential: bool


def _reading(prop: Property, ctx: LogicContext) -> Reading:
    query, _ = qualitative_query(prop)
    path = query.path
    vocab = ctx.vocab
    if isinstance(query, ForallPath) and isinstance(path, Globally):
        inv = path.invariant
        return Reading(lambda s: True, lambda s: not holds(inv, s, vocab), path.bound, False)
    assert isinstance(query, ExistsPath)
    if isinstance(path, Until):
        hold_f, goal_f = path.hold, path.goal
        return Reading(lambda s: holds(hold_f, s, vocab), lambda s: holds(goal_f, s, vocab), path.bound, True)
    assert isinstance(path, Eventually)
    goal_e = path.goal
    return Reading(lambda s: True, lambda s: holds(goal_e, s, vocab), path.bound, True)


def _sampled(
    truth: CompoundModel, init: State, rng: np.random.Generator, lo: int, hi: int, p_skip: float
) -> TransitionDataset:
    """Executions of the truth at its reachable pairs: each pair is tried lo…hi times
    (or, with probability ``p_skip``, never), the executions of all pairs shuffled so
    that first-trial ranks and epochs interleave as in a real run."""
    jobs: list[tuple[State, str]] = []
    for s in sorted(reachable_states(truth, [init])):
        for c in truth:
            if rng.random() >= p_skip:
                jobs += [(s, c)] * int(rng.integers(lo, hi + 1))
    data = TransitionDataset(truth.vocabulary, truth.capabilities)
    for k in rng.permutation(len(jobs)):
        s, c = jobs[int(k)]
        s2 = synthetic.sample_successor(truth[c], s, rng)
        assert s2 is not None  # the truth is total
        data.add(Transition(s, c, s2))
    return data


def _frontier(h_or: CompoundModel, caps: tuple[str, ...], init: State, r: Reading) -> set[State]:
    """The frontier recomputed by enumeration, from its definition: the hold ∧ ¬goal
    states h∨ reaches from ``init`` through hold ∧ ¬goal states within bound − 1
    steps — the states a violating run can still leave h∨'s transitions from."""
    depth = {init: 0}
    todo = [init]
    while todo:
        s = todo.pop(0)
        if not r.hold(s) or r.goal(s) or (r.bound is not None and depth[s] >= r.bound - 1):
            continue
        for c in caps:
            for s2 in h_or.distribution(s, c):
                if s2 not in depth:
                    depth[s2] = depth[s] + 1
                    todo.append(s2)
    return {s for s, d in depth.items() if r.hold(s) and not r.goal(s) and (r.bound is None or d <= r.bound - 1)}


def _unseen(truth: CompoundModel, data: TransitionDataset, s: State, c: str) -> Fraction:
    """The exact missing mass M(s, c): the truth's probability of an outcome D never
    showed at (s, c)."""
    seen = data.successors(s, c)
    return sum((p for s2, p in truth.distribution(s, c).items() if s2 not in seen), Fraction(0))


def _pmax_within(truth: CompoundModel, init: State, r: Reading, k: int) -> Fraction:
    """Exact Pmax over all schedulers of reaching a goal state through hold states
    within k executions (backward induction in rationals over the reachable states)."""
    states = sorted(reachable_states(truth, [init]))
    v = {s: Fraction(int(r.goal(s))) for s in states}
    for _ in range(k):
        v = {
            s: Fraction(1)
            if r.goal(s)
            else (
                max(sum((p * v[s2] for s2, p in truth.distribution(s, c).items()), Fraction(0)) for c in truth)
                if r.hold(s)
                else Fraction(0)
            )
            for s in states
        }
    return v[init]


def _caps(prop: Property, model: CompoundModel) -> tuple[str, ...]:
    return tuple(c for c in model if prop.capability_names is None or c in prop.capability_names)


# -- 1. observed tier -----------------------------------------------------------------


def _check_observed(
    v: LatticeVerdict, prop: Property, r: Reading, truth: CompoundModel, data: TransitionDataset, init: State
) -> None:
    """An observed verdict is the truth's exact verdict, and its witness is a run the
    truth can take: every step observed (so in T_h∧ = T_D ⊆ T_h⋆) and of positive
    probability under the truth, ending in a goal state after hold states, within the
    bound (and only with the property's capabilities)."""
    on_truth = SymbolicEngine(truth).check(prop, init).holds
    assert (v.verdict is AgentVerdict.HOLDS) == on_truth, (prop.text, v.reason)
    if v.witness is None:
        # Decided by the initial state alone: no run through hold states can start there
        # (or the bound allows no execution), so every agent gives this verdict.
        assert "initial state decides" in v.reason, (prop.text, v.reason)
        assert not r.goal(init) and (not r.hold(init) or r.bound == 0), prop.text
        assert v.verdict is (AgentVerdict.VIOLATED if r.existential else AgentVerdict.HOLDS), prop.text
        return
    assert v.verdict is (AgentVerdict.HOLDS if r.existential else AgentVerdict.VIOLATED), prop.text
    w = v.witness
    assert w is not None, prop.text
    assert w.initial == init
    assert w.replays(truth), (prop.text, w)
    s = init
    for c, s2 in w.steps:
        assert data.count(s, c, s2) > 0, "an observed witness step was never observed"
        assert c in _caps(prop, truth)
        s = s2
    *before, last = w.states
    assert r.goal(last) and all(r.hold(x) for x in before), (prop.text, w)
    assert r.bound is None or len(w) <= r.bound


@settings(max_examples=scaled(30), deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 200))
def test_observed_tier_is_the_truths_verdict_with_a_replayable_witness(seed: int, steps: int) -> None:
    rng = np.random.default_rng(seed)
    ctx, truth, init = _truth(rng, 4)
    result = learn(
        model_assessment(truth, init, "random truth"), method="mcqs-s", max_steps=steps, seed=int(rng.integers(2**31))
    )
    observed = 0
    for prop in _properties(ctx, tuple(truth)):
        v = decide(prop, result.h_and, result.h_or, result.data, init)
        if v.tier is Tier.OBSERVED:
            observed += 1
            assert v.assumption is None
            _check_observed(v, prop, _reading(prop, ctx), truth, result.data, init)
    event(f"observed verdicts: {min(observed, 5)}{'+' if observed >= 5 else ''}")


# -- 2. missing-mass bound ------------------------------------------------------------


def _epsilon(order: int, outcomes: int, run: int, delta: float) -> float:
    """ε of the ``order``-th pair in its epoch ``outcomes`` after ``run`` executions."""
    return missing_mass_bound(PairSample(order, outcomes + run, outcomes, run), delta)


def _first_failure(mu: Fraction, order: int, outcomes: int, delta: float) -> int:
    """m* = min{m : ε(e, m) < μ}: the epoch's bound first fails after m* repeats."""
    level = pair_delta(delta, order) / 2 * share(outcomes)
    m = max(1, math.floor(math.log(level) / math.log1p(-float(mu))) - 2) if mu < 1 else 1
    while _epsilon(order, outcomes, m, delta) >= mu:
        m += 1
    assert m == 1 or _epsilon(order, outcomes, m - 1, delta) >= mu
    return m


def _check_epoch(mu: Fraction, order: int, outcomes: int, delta: float) -> None:
    """The single-epoch argument, exactly: ε decreases with the run, so the bound fails
    during the epoch iff its first m* executions all repeat an old outcome, which has
    probability (1 − μ)^{m*} — strictly below the epoch's level δ_e (the float the
    code uses, compared as an exact rational)."""
    level = pair_delta(delta, order) / 2 * share(outcomes)
    assert _epsilon(order, outcomes, 0, delta) == 1.0
    m = _first_failure(mu, order, outcomes, delta)
    assert all(
        _epsilon(order, outcomes, k + 1, delta) <= _epsilon(order, outcomes, k, delta)
        for k in range(max(0, m - 3), m + 3)
    )
    assert (1 - mu) ** m < Fraction(level), (mu, order, outcomes, delta, m)


@pytest.mark.parametrize("delta", [0.9, 0.5, 0.05, 1e-3, 1e-9])
def test_single_epoch_failure_probability_on_a_grid(delta: float) -> None:
    # μ on a grid of (0, 1] (fine near 0, where m* is large) and epochs / ranks whose
    # levels δ_e span δ/8 down to about δ·10⁻⁶.
    grid = [Fraction(k, 200) for k in range(1, 201)] + [Fraction(1, d) for d in (300, 1000, 5000)]
    for mu in grid:
        for order, outcomes in ((1, 1), (2, 3), (40, 1), (7, 12)):
            _check_epoch(mu, order, outcomes, delta)


@settings(max_examples=scaled(300), deadline=None)
@given(
    st.integers(1, 2000).flatmap(lambda d: st.tuples(st.integers(1, d), st.just(d))),
    st.floats(1e-12, 0.999),
    st.integers(1, 200),
    st.integers(1, 30),
)
def test_single_epoch_failure_probability_is_below_its_level(
    mu_nd: tuple[int, int], delta: float, order: int, outcomes: int
) -> None:
    _check_epoch(Fraction(*mu_nd), order, outcomes, delta)


def test_allocation_sums_to_delta() -> None:
    # share(k) = 1/(k(k+1)) = 1/k − 1/(k+1): the partial sums telescope to K/(K+1) < 1.
    total = Fraction(0)
    for k in range(1, 2001):
        assert share(k) == float(Fraction(1, k * (k + 1)))
        total += Fraction(1, k * (k + 1))
        assert total == Fraction(k, k + 1) < 1
    assert 1 - total < Fraction(1, 2000)
    # Per pair: ½ over epochs e (share(e)) + ½ over outcomes i × later sizes n′
    # (share(i)·share(n′)), partial sums < δ_j → δ_j; over pairs Σ δ_j < δ → δ.
    delta = Fraction(1, 20)
    for j in (1, 2, 17):
        d_j = delta * Fraction(1, j * (j + 1))
        assert pair_delta(0.05, j) == pytest.approx(float(d_j), rel=1e-12)
        for K in (1, 10, 300):
            part = sum(Fraction(1, k * (k + 1)) for k in range(1, K + 1))
            split = d_j / 2 * part + d_j / 2 * part * part
            assert split < d_j
            assert d_j - split <= d_j * Fraction(3, K + 1)
    assert sum(delta * Fraction(1, j * (j + 1)) for j in range(1, 1001)) == delta * Fraction(1000, 1001)


@settings(max_examples=scaled(40), deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([0.05, 0.5]))
def test_every_level_a_dataset_uses_is_its_own_slot_of_the_allocation(seed: int, delta: float) -> None:
    # The union bound needs each bound to use its own term of the allocation: the
    # missing mass of pair j in epoch e at δ_j/2·share(e); the interval of its i-th
    # outcome after n′ later executions at δ_j/2·share(i)·share(n′), with i distinct for
    # distinct outcomes.  Read the levels back from the code on random datasets.
    rng = np.random.default_rng(seed)
    _, truth, init = _truth(rng, 3)
    data = _sampled(truth, init, rng, 1, 12, 0.2)
    orders: set[int] = set()
    bounds = SamplingBounds(data, delta)
    for c in data.capability_table:
        for s in data.states_of(c):
            sample = data.sample(s, c)
            assert sample is not None
            orders.add(sample.order)
            d_j = pair_delta(delta, sample.order)
            if sample.run:
                level = d_j / 2 * share(sample.outcomes)
                assert bounds.epsilon(s, c) == pytest.approx(1 - level ** (1 / sample.run), rel=1e-9, abs=1e-15)
            ranks = []
            for s2 in data.successors(s, c):
                first = data.first_seen(s, c, s2)
                rank = 1 + sum(1 for x in data.successors(s, c) if data.first_seen(s, c, x) < first)
                ranks.append(rank)
                later = sample.n - first
                # Intervals are memoised by (successes, trials, level): start from an empty
                # memo so that the spy sees the level this call uses.
                sampling._interval.cache_clear()
                with patch.object(sampling, "clopper_pearson", wraps=sampling.clopper_pearson) as spy:
                    sampling.outcome_interval(data, s, c, s2, delta)
                if later:
                    ((_, _, alpha),) = [call.args for call in spy.call_args_list]
                    assert alpha == pytest.approx(d_j / 2 * share(rank) * share(later), rel=1e-12)
                else:
                    assert not spy.called
            assert sorted(ranks) == list(range(1, sample.outcomes + 1))
    assert sorted(orders) == list(range(1, len(orders) + 1))


# A small truth with rare outcomes (states of 3 atoms).  The Monte Carlo run checks the
# bound where it is tightest: unseen masses 0.1, 0.02, 0.01 that a few dozen executions
# leave unseen.
RARE: dict[tuple[State, str], dict[State, float]] = {
    (0, "c0"): {1: 0.9, 2: 0.08, 3: 0.02},
    (0, "c1"): {0: 0.98, 5: 0.02},
    (1, "c0"): {2: 0.5, 3: 0.3, 4: 0.15, 7: 0.05},
    (1, "c1"): {1: 1.0},
    (2, "c0"): {3: 0.9, 4: 0.08, 5: 0.02},
    (2, "c1"): {6: 0.95, 7: 0.04, 0: 0.01},
    (3, "c0"): {0: 0.7, 1: 0.2, 2: 0.08, 3: 0.02},
}
RUNS = 500
EXECUTIONS = 300


def _adaptive_run(rng: np.random.Generator, delta: float, sampler: str, check_bounds: bool) -> bool:
    """One run of EXECUTIONS executions, each pair chosen from the data so far
    (``"max-epsilon"``: the pair with the largest current ε, which keeps hammering a
    pair right after it shows a new outcome; ``"least-tried"``), ties broken by the
    generator.  True if at some time some tried pair's true unseen mass exceeded its ε.

    ε(s, c) depends only on the pair's own sample, so after an execution only the
    executed pair's ε and unseen mass change: checking that pair after every execution
    is checking every tried pair at every time.  ``missing_mass_bound`` on the pair's
    sample is what ``SamplingBounds.epsilon`` returns (asserted at the end of the run
    when ``check_bounds``); it is called directly because SamplingBounds also computes
    the outcome intervals (pure-Python Beta quantiles), 100× slower."""
    pairs = list(RARE)
    table = {p: (list(d), np.cumsum(list(d.values())).tolist()) for p, d in RARE.items()}
    data = TransitionDataset(synthetic.propositional_vocabulary(3))
    eps = [1.0] * len(pairs)
    tried = [0] * len(pairs)
    u, ties = rng.random(EXECUTIONS), rng.random(EXECUTIONS)
    failed = False
    for t in range(EXECUTIONS):
        key = eps if sampler == "max-epsilon" else [-n for n in tried]
        top = max(key)
        best = [i for i, x in enumerate(key) if x == top]
        i = best[int(ties[t] * len(best))]
        s, c = pairs[i]
        succ, cum = table[(s, c)]
        s2 = succ[min(bisect.bisect_right(cum, u[t]), len(succ) - 1)]
        data.add(Transition(s, c, s2))
        tried[i] += 1
        eps[i] = missing_mass_bound(data.sample(s, c), delta)
        seen = data.successors(s, c)
        if sum(p for x, p in RARE[(s, c)].items() if x not in seen) > eps[i]:
            failed = True
    if check_bounds:
        bounds = SamplingBounds(data, delta)
        assert all(bounds.epsilon(s, c) == eps[i] for i, (s, c) in enumerate(pairs) if tried[i])
    return failed


@pytest.mark.parametrize("sampler", ["max-epsilon", "least-tried"])
@pytest.mark.parametrize("delta", [0.05, 0.5, 0.9])
def test_missing_mass_bound_holds_at_every_time_under_adaptive_sampling(delta: float, sampler: str) -> None:
    failures = sum(
        _adaptive_run(np.random.default_rng([seed, 7]), delta, sampler, seed % 25 == 0) for seed in range(RUNS)
    )
    share_failed = failures / RUNS
    print(f"δ={delta} {sampler}: {failures}/{RUNS} runs with a failure (share {share_failed:.3f})")
    assert share_failed <= delta


# -- 3. confident tier -----------------------------------------------------------------


def test_confident_tier_assumes_the_declared_capabilities_are_the_agents() -> None:
    # The frontier pairs are those of h∨'s capabilities, i.e. the capabilities declared
    # in D.  An agent capability D never declared escapes the count: here c1 sets p0 in
    # one step, and only declaring it keeps A [ G !p0 ] from a confident "holds".
    ctx = LogicContext(synthetic.propositional_vocabulary(2))
    stay = CapabilityModel(Capability("c0"), (Rule.make(Condition.true(ctx), [(1, Effect(0, 0))]),))
    set_p0 = CapabilityModel(Capability("c1"), (Rule.make(Condition.true(ctx), [(1, Effect(1, 0))]),))
    truth = CompoundModel(ctx, [stay, set_p0])
    prop = parse_property("A [ G !p0 ]", ctx.vocab, ("c0", "c1"))
    assert not SymbolicEngine(truth).check(prop, 0).holds
    tiers = []
    for declared in ((stay.capability,), truth.capabilities):
        data = TransitionDataset(ctx.vocab, declared)
        data.add(Transition(0, "c0", 0), count=200)
        b = build_bounds(ctx, data)
        tiers.append(
            decide(parse_property("A [ G !p0 ]", ctx.vocab, ("c0",)), b.pessimistic, b.optimistic, data, 0).tier
        )
    assert tiers == [Tier.CONFIDENT, Tier.UNCONFIRMED]


def _check_confident(
    v: LatticeVerdict,
    prop: Property,
    r: Reading,
    truth: CompoundModel,
    h_or: CompoundModel,
    data: TransitionDataset,
    init: State,
    delta: float,
) -> str:
    """The confident tier's implication on one instance: if every frontier pair's
    true unseen mass is ≤ its ε (the missing-mass event, checked exactly), then for
    every k the truth's exact Pmax of a violation within k executions is ≤ the printed
    1 − (1 − ε̄)^k.  Also the stronger step of the proof: with η the largest true
    probability of leaving h∨'s transitions at a frontier pair, Pmax ≤ 1 − (1 − η)^k.
    Returns how the instance fell (for the hypothesis statistics)."""
    conf = v.confidence
    assert conf is not None and conf.confirmed and conf.untried == 0 and conf.thin == 0
    caps = _caps(prop, truth)
    frontier = _frontier(h_or, caps, init, r)
    assert conf.states == len(frontier) and conf.pairs == len(frontier) * len(caps)
    bounds = SamplingBounds(data, delta)
    eps = {(s, c): bounds.epsilon(s, c) for s in frontier for c in caps}
    assert all(e <= conf.threshold for e in eps.values())
    assert conf.epsilon == max(eps.values(), default=0.0)
    if any(_unseen(truth, data, s, c) > e for (s, c), e in eps.items()):
        return "event failed (vacuous)"
    escape = max(
        (
            sum((p for s2, p in truth.distribution(s, c).items() if s2 not in h_or.distribution(s, c)), Fraction(0))
            for s in frontier
            for c in caps
        ),
        default=Fraction(0),
    )
    worst = Fraction(0)
    for k, printed in conf.violation:
        steps = k if r.bound is None else min(k, r.bound)
        p = _pmax_within(truth, init, r, steps)
        if r.hold(init) and all(r.hold(s) for s in reachable_states(truth, [init])):
            # Plain reachability: the explicit engine must agree (cross-check of _pmax_within).
            assert pmax_reach(truth, init, r.goal, steps, exact=True) == p
        assert p <= 1 - (1 - escape) ** k, (prop.text, k, p, escape)
        assert float(p) <= printed + 1e-12, (prop.text, k, float(p), printed)
        worst = max(worst, p)
    return "event held, violation possible" if worst > 0 else "event held, no violation possible"


def _confident_instances(seed: int, lo: int, delta: float, threshold: float) -> Iterator[str]:
    """Check every confident verdict on a random truth with each reachable pair tried
    lo…lo + 11 times; yield how each instance fell."""
    rng = np.random.default_rng(seed)
    ctx, truth, init = _truth(rng, 3)
    data = _sampled(truth, init, rng, lo, lo + 11, 0.0)
    b = build_bounds(ctx, data)
    for prop in _properties(ctx, tuple(truth)):
        v = decide(prop, b.pessimistic, b.optimistic, data, init, delta=delta, epsilon=threshold)
        if v.tier is Tier.CONFIDENT:
            assert v.assumption is not None and v.confidence is not None
            yield _check_confident(v, prop, _reading(prop, ctx), truth, b.optimistic, data, init, delta)


@settings(max_examples=scaled(40), deadline=None)
@given(
    st.integers(0, 2**32 - 1), st.integers(1, 15), st.sampled_from([0.05, 0.5, 0.9]), st.sampled_from([0.3, 0.5, 0.7])
)
def test_confident_verdicts_bound_every_scheduler_when_the_event_holds(
    seed: int, lo: int, delta: float, threshold: float
) -> None:
    for outcome in _confident_instances(seed, lo, delta, threshold):
        event(outcome)


def test_confident_checks_are_not_vacuous() -> None:
    # The hypothesis test above checks an implication; this seeded sweep shows the
    # antecedent is met with truths that *can* violate the verdict (an unseen outcome
    # leaves h∨), so the probability bound is exercised, not only 0 ≤ bound.
    tally: dict[str, int] = {}
    for seed in range(40):
        for outcome in _confident_instances(seed, 1, 0.9, 0.7):
            tally[outcome] = tally.get(outcome, 0) + 1
    print(tally)
    assert tally.get("event held, violation possible", 0) >= 3, tally


# -- 4. unconfirmed / unknown ----------------------------------------------------------


def _check_unconfirmed(
    v: LatticeVerdict,
    prop: Property,
    r: Reading,
    truth: CompoundModel,
    h_and: CompoundModel,
    h_or: CompoundModel,
    data: TransitionDataset,
    init: State,
    delta: float,
    threshold: float,
    max_queries: int,
) -> None:
    """An unconfirmed verdict claims nothing about the agent; what it lists must be
    right: its counts, its queries (frontier pairs that are untried or whose ε exceeds
    the threshold), and the executions each query needs — that many repeats of one
    outcome bring the pair's ε to the threshold or below."""
    conf = v.confidence
    assert conf is not None and not conf.confirmed and v.assumption is None
    caps = _caps(prop, truth)
    frontier = _frontier(h_or, caps, init, r)
    bounds = SamplingBounds(data, delta)
    untried = [(s, c) for s in frontier for c in caps if data.count_sc(s, c) == 0]
    thin = [(s, c) for s in frontier for c in caps if data.count_sc(s, c) and bounds.epsilon(s, c) > threshold]
    assert (conf.states, conf.untried, conf.thin) == (len(frontier), len(untried), len(thin))
    assert untried or thin
    assert len(conf.queries) == min(max_queries, len(untried) + len(thin))
    for q in conf.queries:
        assert (q.state, q.capability) in untried + thin
        assert q.tried == data.count_sc(q.state, q.capability)
        assert q.epsilon == bounds.epsilon(q.state, q.capability) > threshold
    for q in conf.queries:
        after = copy.deepcopy(data)
        _execute(after, truth, q.state, q.capability, q.executions)
        assert SamplingBounds(after, delta).epsilon(q.state, q.capability) <= threshold, (q, threshold)
    if not untried and len(thin) <= max_queries:
        # Only thin pairs, all listed: their executions (repeats of observed outcomes,
        # so T_D, h∨ and the frontier stay the same) confirm the verdict.
        after = copy.deepcopy(data)
        for q in conf.queries:
            _execute(after, truth, q.state, q.capability, q.executions)
        b = build_bounds(h_or.ctx, after)
        again = decide(
            prop, b.pessimistic, b.optimistic, after, init, delta=delta, epsilon=threshold, max_queries=max_queries
        )
        assert again.tier is Tier.CONFIDENT, (prop.text, again.reason)


def _execute(data: TransitionDataset, truth: CompoundModel, s: State, c: str, n: int) -> None:
    """n executions of c in s that all show the same outcome: the most frequent one
    observed, or the truth's likeliest for an untried pair (no new epoch starts)."""
    seen = data.successors(s, c)
    if seen:
        s2 = max(seen, key=lambda x: (seen[x], -x))
    else:
        dist = truth.distribution(s, c)
        s2 = max(dist, key=lambda x: (dist[x], -x))
    data.add(Transition(s, c, s2), count=n)


@settings(max_examples=scaled(40), deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.integers(1, 15),
    st.sampled_from([0.05, 0.5]),
    st.sampled_from([0.05, 0.3]),
    st.sampled_from([0.0, 0.3]),
    st.integers(1, 6),
)
def test_unconfirmed_queries_are_what_would_confirm(
    seed: int, lo: int, delta: float, threshold: float, p_skip: float, max_queries: int
) -> None:
    rng = np.random.default_rng(seed)
    ctx, truth, init = _truth(rng, 3)
    data = _sampled(truth, init, rng, lo, 2 * lo, p_skip)
    b = build_bounds(ctx, data)
    for prop in _properties(ctx, tuple(truth)):
        v = decide(
            prop, b.pessimistic, b.optimistic, data, init, delta=delta, epsilon=threshold, max_queries=max_queries
        )
        if v.tier is Tier.UNCONFIRMED:
            event("unconfirmed")
            _check_unconfirmed(
                v,
                prop,
                _reading(prop, ctx),
                truth,
                b.pessimistic,
                b.optimistic,
                data,
                init,
                delta,
                threshold,
                max_queries,
            )
        elif v.tier is Tier.UNKNOWN:
            # h∧ and h∨ disagree: no claim, no confidence; the decisive query, if any, is
            # an untried step of h∨'s witness.
            event("unknown")
            assert v.verdict is AgentVerdict.UNKNOWN and v.confidence is None and v.assumption is None
            if v.decisive_query is not None:
                s, c = v.decisive_query
                assert data.count_sc(s, c) == 0
                assert v.witness is not None and (s, c) in zip(v.witness.states, v.witness.capability_names)


@settings(max_examples=scaled(40), deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([(0.05, 0.05), (0.5, 0.3)]))
def test_unconfirmed_queries_executed_as_listed_all_reach_the_threshold(seed: int, levels: tuple[float, float]) -> None:
    # The docstring's reading: the verdict lists "the queries that would confirm it
    # with how many executions each still needs".  Executing all of them, in the listed
    # order, must bring each listed pair's ε to the threshold.
    delta, threshold = levels
    rng = np.random.default_rng(seed)
    ctx, truth, init = _truth(rng, 3)
    data = _sampled(truth, init, rng, 1, 6, 0.4)
    b = build_bounds(ctx, data)
    for prop in _properties(ctx, tuple(truth)):
        v = decide(prop, b.pessimistic, b.optimistic, data, init, delta=delta, epsilon=threshold)
        if v.tier is not Tier.UNCONFIRMED:
            continue
        assert v.confidence is not None
        after = copy.deepcopy(data)
        for q in v.confidence.queries:
            _execute(after, truth, q.state, q.capability, q.executions)
        bounds = SamplingBounds(after, delta)
        for q in v.confidence.queries:
            assert bounds.epsilon(q.state, q.capability) <= threshold, (prop.text, q)


@settings(max_examples=scaled(200), deadline=None)
@given(st.floats(1e-6, 0.999), st.floats(1e-9, 0.999), st.integers(1, 10_000), st.integers(1, 50))
def test_executions_for_is_the_least_run_that_reaches_epsilon(
    epsilon: float, delta: float, order: int, outcomes: int
) -> None:
    m = executions_for(epsilon, delta, order, outcomes)
    assert _epsilon(order, outcomes, m, delta) <= epsilon
    assert m == 1 or _epsilon(order, outcomes, m - 1, delta) > epsilon


# -- the registry's entries for the tiers ----------------------------------------------

TIERS = {
    "Observed tier",
    "Missing-mass bound (anytime, adaptive)",
    "Confident tier",
    "Unconfirmed / unknown",
    "Two-sided bounds on the agent's values",
    "Property-directed synthesis",
    "A fixed scheduler's interval (statistical model checking)",
    "The pooled missing-mass bound under an abstraction",
    "The homogeneity test of an abstraction",
}


def test_the_registry_has_one_complete_entry_per_tier() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "proofs" / "check_theorems.py"), "--list", "tiers"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    entries = json.loads(out.stdout)
    keys = [ob["key"] for ob in entries]
    assert sorted(keys) == sorted(TIERS)
    text = (ROOT / "proofs" / "obligations.md").read_text()
    here = Path(__file__).relative_to(ROOT).as_posix()
    names = {name for name, obj in globals().items() if name.startswith("test_") and callable(obj)}
    for ob in entries:
        assert ob["statement"] and ob["assumptions"] and ob["not_mechanical"] and ob["tests"], ob["key"]
        assert f"## {ob['key']} (" in text, ob["key"]
        for node in ob["tests"]:
            assert f"`{node}`" in text, node
            path, _, name = node.partition("::")
            if path == here:
                assert name in names, node
            else:
                # A test of another module: it exists there as a test function.
                assert f"\ndef {name.split('[')[0]}(" in (ROOT / path).read_text(encoding="utf-8"), node

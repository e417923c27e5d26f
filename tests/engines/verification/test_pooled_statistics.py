"""The two statistical statements of capver.engines.verification.pooled, as the
obligations "The pooled missing-mass bound under an abstraction" and "The homogeneity
test of an abstraction" of proofs/check_theorems.py state them.

Under assumption H (the observed effect of c has one distribution q_{κ,c} at every state
of a class κ) ``Pooled.refuted`` refutes some class with probability ≤ δ/3 whatever
rule chooses the states, and the pooled missing-mass bound ``Pooled.epsilon`` fails for
some class at some time with probability ≤ δ/3.  Both are checked by Monte Carlo
against adversarial state choices, together with variants that are deliberately wrong
and must fail the same check (so the check can fail); the power of the test is measured
on classes that break H; a hypothesis property checks the bookkeeping of ``pool``.

The world: 10 atoms; bit 0 is the class of capability c (the projection on p0), bits
1–3 carry the effects (effect i ≥ 1 adds bit i, effect 0 changes nothing), bits 4–9
tell the states of a class apart.  Every state used has bits 1–3 false, so effect i
has the same observed effect η at every state."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capver.core.dataset import TransitionDataset
from capver.core.state import State, Transition
from capver.engines.verification.pooled import ClassSample, Pooled, pool
from capver.engines.verification.sampling import epoch_bound, share
from capver.model.abstraction import Projection
from capver.synthetic import propositional_vocabulary
from tests.helpers.examples import scaled
from tests.helpers.untraced import untraced

VOCAB = propositional_vocabulary(10)
C = "c"
ABSTRACTION = Projection("p0", masks=((C, 1),), default=None, full=VOCAB.full_mask)
EFFECT_BITS = (0, 1 << 1, 1 << 2, 1 << 3)


def _states(cls: int, m: int) -> list[State]:
    """``m`` states of class ``cls`` (the value of p0), bits 1–3 false."""
    return [cls | (i << 4) for i in range(m)]


def _add(data: TransitionDataset, s: State, effect: int) -> None:
    data.add(Transition(s, C, s | EFFECT_BITS[effect]))


def _only_class(p: Pooled) -> ClassSample:
    (k,) = p.classes.values()
    return k


# -- the homogeneity test under H: validity against an adaptive adversary ----------------


class _Statistic:
    """The homogeneity statistic written again from pooled.py's docstring, with the
    true q_{κ,c} alongside: after every execution ``log_l`` is log L_t (what
    ``ClassSample.log_e`` is the running maximum of) and ``log_w`` is log W_t, the test
    martingale of the proof: L_t's numerator over the true likelihood Π q(η_i), the
    numerator's ρ_i at a new effect η read as the prediction ρ_i·q(η)/M_i (ρ_i spread
    over the effects unseen so far like q; M_i their mass), so a new effect contributes
    ρ_i/M_i and a repeat (1 − ρ_i)·(the change of mix_s)/q(η).
    Under H, E[W_t] = 1 for every rule choosing the states, so Ville's inequality gives
    P(sup_t W_t ≥ x) ≤ 1/x; and L_t ≤ W_t at every t (the sup over q of the repeats'
    likelihood is at least the true q's, and M_i ≤ 1).

    ``unpriced``: the deliberately wrong variant without the factors ρ_i and 1 − ρ_i
    (the numerator no longer pays for predicting whether an effect is new, so it is
    not a distribution over the next execution, and E[W_t] > 1)."""

    def __init__(self, q: tuple[float, ...], unpriced: bool = False) -> None:
        self.q, self.unpriced = q, unpriced
        self.counts: dict[int, int] = {}
        self.states: dict[State, list] = {}  # s → [prior, counts, n, log_a, log_b]
        self.n = 0
        self.numerator = 0.0  # log of Π ρ_i · Π (1 − ρ_i) · Π_s mix_s
        self.truth = 0.0  # Σ_repeats log q(η) + Σ_new log M_i
        self.repeats: dict[int, int] = {}
        self.log_l = self.log_w = 0.0
        self.max_l = self.max_w = 0.0

    @staticmethod
    def _mix(st: list) -> float:
        return math.log((1 - st[0]) * math.exp(st[3]) + st[0] * math.exp(st[4]))

    def add(self, s: State, e: int) -> None:
        st = self.states.setdefault(s, [1 / (len(self.states) + 2) ** 2, {}, 0, 0.0, 0.0])
        rho = 0.0 if self.unpriced else 1 / (self.n + 2) ** 2
        if e not in self.counts:
            unseen = 1 - sum(self.q[x] for x in self.counts)
            self.numerator += 0.0 if self.unpriced else math.log(rho)
            self.truth += math.log(unseen)
            self.counts[e] = 0
        else:
            size = len(self.counts)
            before = self._mix(st)
            st[3] += math.log((self.counts[e] + 0.5) / (self.n + size / 2))
            st[4] += math.log((st[1].get(e, 0) + 0.5) / (st[2] + size / 2))
            self.numerator += math.log1p(-rho) + self._mix(st) - before
            self.truth += math.log(self.q[e])
            self.repeats[e] = self.repeats.get(e, 0) + 1
        self.counts[e] += 1
        st[1][e] = st[1].get(e, 0) + 1
        st[2] += 1
        self.n += 1
        m = sum(self.repeats.values())
        fit = sum(r * math.log(r / m) for r in self.repeats.values())
        self.log_l, self.log_w = self.numerator - fit, self.numerator - self.truth
        self.max_l, self.max_w = max(self.max_l, self.log_l), max(self.max_w, self.log_w)


# (probabilities of the effects, states in the class); α = 0.1 for the first class.
H_CASES = [((0.7, 0.3), 5), ((0.7, 0.2, 0.1), 20), ((0.5, 0.3, 0.15, 0.05), 50)]
H_RUNS = 300
H_EXECUTIONS = 300
H_DELTA = 0.6  # α = (δ/3)·share(1) = 0.1


@dataclass
class _Run:
    data: TransitionDataset
    right: _Statistic
    unpriced: _Statistic
    g: float  # the plug-in G statistic at the end (_adversarial_run)


def _adversarial_run(rng: np.random.Generator, probs: tuple[float, ...], m: int) -> _Run:
    """One run under H: the next state is, 3 times in 4, the state of the class whose
    own effect frequencies deviate most from the pooled ones (Pearson's χ² of its
    counts against the pooled frequencies: the adversary tries to make one state look
    different), otherwise a uniform state of the class (so new states come in).

    After every execution L_t ≤ W_t is asserted.  ``g`` is the plug-in
    G statistic at the end: Σ_s the log-likelihood of the state's own fitted (maximum-
    likelihood) distribution minus that of the pooled fit, a likelihood ratio whose
    numerator is not predictable."""
    k = len(probs)
    states = _states(0, m)
    data = TransitionDataset(VOCAB)
    right, unpriced = _Statistic(probs), _Statistic(probs, unpriced=True)
    counts = np.zeros((m, k))
    # Under H the effect does not depend on the state, so drawing the effects first
    # gives the same law as drawing each at its state.
    effects = rng.choice(k, size=H_EXECUTIONS, p=probs)
    explore = rng.random(H_EXECUTIONS) < 0.25
    uniform = rng.integers(m, size=H_EXECUTIONS)
    for t in range(H_EXECUTIONS):
        if explore[t] or t == 0:
            i = int(uniform[t])
        else:
            pooled = (counts.sum(axis=0) + 0.5) / (t + k / 2)
            expected = counts.sum(axis=1)[:, None] * pooled[None, :]
            chi2 = ((counts - expected) ** 2 / np.maximum(expected, 1e-12)).sum(axis=1)
            i = int(np.argmax(chi2))
        e = int(effects[t])
        _add(data, states[i], e)
        right.add(states[i], e)
        unpriced.add(states[i], e)
        assert right.log_l <= right.log_w + 1e-9
        counts[i, e] += 1
    g = _fit(counts) - _fit(counts.sum(axis=0, keepdims=True))
    return _Run(data, right, unpriced, g)


def _fit(counts: np.ndarray) -> float:
    """Σ_rows Σ_η c log(c / n_row): the log-likelihood of each row's own fit."""
    n = np.maximum(counts.sum(axis=1, keepdims=True), 1)
    return float(np.where(counts > 0, counts * np.log(np.maximum(counts, 1) / n), 0.0).sum())


def _sigma(a: float, runs: int) -> float:
    return math.sqrt(a * (1 - a) / runs)


@pytest.mark.parametrize(("probs", "m"), H_CASES)
def test_homogeneity_test_is_valid_against_an_adaptive_adversary(probs: tuple[float, ...], m: int) -> None:
    # Measured (300 runs of 300 executions, α = 0.1): refuted 0 of 300 in each case —
    # log L_t never rose above log L_0 = 0 under H, so the rate of refutation is far
    # below α and no threshold above 0 would refute; P(sup W_t ≥ 2, 4, 10) = 0.107, 0.063,
    # 0.020 (2 effects, 5 states), 0.090, 0.053, 0.013 (3, 20), 0.053, 0.037, 0.013 (4, 50).
    # Broken variants on the same runs: the unpriced numerator's sup W ≥ 10 in 0.453,
    # 0.920, 0.983 of the runs; the plug-in G test "refutes" in 0.130, 1.000, 1.000.
    alpha = 0.1
    refuted, sup_w, sup_w_unpriced, g_refuted = [], [], [], []
    with untraced():
        for seed in range(H_RUNS):
            run = _adversarial_run(np.random.default_rng([seed, m, 11]), probs, m)
            p = pool(run.data, ABSTRACTION, H_DELTA)
            k = _only_class(p)
            assert p.test_level(k) == pytest.approx(alpha)
            assert k.log_e == pytest.approx(run.right.max_l, abs=1e-9)
            refuted.append(p.refuted(k))
            sup_w.append(run.right.max_w)
            sup_w_unpriced.append(run.unpriced.max_w)
            g_refuted.append(run.g >= -math.log(alpha))

    def rate(values: list[float], x: float) -> float:
        return sum(v >= math.log(x) for v in values) / H_RUNS

    print(
        f"{probs}, {m} states: refuted {sum(refuted)}/{H_RUNS}; P(sup W ≥ 2, 4, 10) = "
        f"{rate(sup_w, 2):.3f}, {rate(sup_w, 4):.3f}, {rate(sup_w, 10):.3f}; unpriced "
        f"{rate(sup_w_unpriced, 10):.3f}; plug-in G {sum(g_refuted) / H_RUNS:.3f}"
    )
    assert sum(refuted) / H_RUNS <= alpha + 3 * _sigma(alpha, H_RUNS)
    # Ville's inequality on the proof's test martingale, at several levels.
    for x in (2, 4, 10):
        assert rate(sup_w, x) <= 1 / x + 3 * _sigma(1 / x, H_RUNS), x
    # The same checks fail for broken statistics: a numerator that does not pay for
    # predicting new effects breaks Ville's inequality, and a likelihood ratio with
    # fitted per-state distributions refutes H though it holds (with ≥ 20 states).
    assert rate(sup_w_unpriced, 10) > 0.1 + 3 * _sigma(0.1, H_RUNS)
    if m >= 20:
        assert sum(g_refuted) / H_RUNS > alpha + 3 * _sigma(alpha, H_RUNS)


# -- the homogeneity test's power ------------------------------------------------------

POWER_RUNS = 100
POWER_DELTA = 0.05  # α = (δ/3)·share(1) = 1/120: refuted when log L_t reached log 120 ≈ 4.79


@pytest.mark.parametrize(
    ("m", "odd", "executions"),
    [
        # Measured (these 100 runs, δ = 0.05): refuted in 8, 48, 82, 94 of 100 within 200,
        # 300, 400, 500 executions (one odd state of 10: a tenth of the executions).
        (10, 1, 500),
        # A quarter of the states odd: 5, 38, 70, 87, 93, 97 of 100 within 300, 400, 500,
        # 550, 600, 650.
        (20, 5, 650),
    ],
)
def test_homogeneity_test_refutes_a_class_whose_states_differ(m: int, odd: int, executions: int) -> None:
    """The first ``odd`` of the ``m`` states (chosen uniformly) show effect 2 with
    probability 0.5 (effects 0, 1, 2 with 0.4, 0.1, 0.5), the others never (0.8, 0.2,
    0): H fails.  The class is refuted within ``executions`` in ≥ 90% of the runs, and
    ``refuting`` names an odd state first whenever it is."""
    states = _states(0, m)
    refuted = named = 0
    with untraced():
        for seed in range(POWER_RUNS):
            rng = np.random.default_rng([seed, m, 13])
            data = TransitionDataset(VOCAB)
            statistic = _Statistic((1 / 3, 1 / 3, 1 / 3))  # its W is meaningless here: H fails
            chosen = rng.integers(m, size=executions)
            u = rng.random(executions)
            first = None  # the execution at which the statistic first reached log 1/α
            for t, (i, x) in enumerate(zip(chosen.tolist(), u.tolist(), strict=True)):
                e = int(np.searchsorted(np.cumsum((0.4, 0.1, 0.5) if i < odd else (0.8, 0.2, 0.0)), x, "right"))
                _add(data, states[i], e)
                statistic.add(states[i], e)
                if first is None and statistic.max_l >= math.log(120):
                    first = t + 1
            p = pool(data, ABSTRACTION, POWER_DELTA)
            k = _only_class(p)
            assert p.test_level(k) == pytest.approx(1 / 120)
            # The statistic written from pooled.py's docstring is the one pool computes.
            assert k.log_e == pytest.approx(statistic.max_l, abs=1e-9)
            assert k.refuted_at == first
            if p.refuted(k):
                refuted += 1
                named += k.refuting[0].state in states[:odd]
    print(f"{m} states, {odd} odd: refuted {refuted}/{POWER_RUNS} within {executions}, odd state named first {named}")
    assert refuted >= 0.9 * POWER_RUNS
    assert named == refuted


# -- the pooled missing-mass bound under H ----------------------------------------------

# Per class (the value of p0): the effects' probabilities, with a rare one.
MASS_TRUTH = {0: (0.88, 0.1, 0.02), 1: (0.7, 0.27, 0.03)}
MASS_STATES = 10
MASS_RUNS = 500
MASS_MAX = 1500
MASS_DELTA = 0.9  # δ/3 = 0.3 for all the classes together
MASS_TARGET = 0.02  # stop when every class's ε is at most this (below the rare effects' mass)


def _coverage_run(rng: np.random.Generator) -> tuple[bool, bool]:
    """One run under H: the next execution is in the class with the larger current ε
    (the first tried on a tie), at a uniform state of it; the run stops when every
    class's ε ≤ MASS_TARGET (or after MASS_MAX executions).  Returns whether, at some
    time, some class's true unseen mass exceeded ``Pooled.epsilon`` — and the same for a
    wrong ε without the δ split (level δ/3 at every class and epoch).

    Within an epoch of a class its unseen mass is constant and ε decreases, so the bound
    fails at some time of the epoch iff it fails at the epoch's last time: ``pool`` is
    checked just before each new effect and at the stop, which is checking every time."""
    data = TransitionDataset(VOCAB)
    order: dict[int, int] = {}
    seen: dict[int, set[int]] = {0: set(), 1: set()}
    run = {0: 0, 1: 0}
    part = MASS_DELTA / 3

    def eps(cls: int) -> float:
        if cls not in order:
            return 1.0
        return epoch_bound(run[cls], part * share(order[cls]) * share(len(seen[cls])))

    failed = broken = False

    def check() -> None:
        nonlocal failed, broken
        p = pool(data, ABSTRACTION, MASS_DELTA)
        for k in p.classes.values():
            _, cls = k.key
            assert isinstance(cls, int)
            assert p.epsilon(k) == eps(cls)  # the rule chose by the bound under test
            unseen = sum(q for e, q in enumerate(MASS_TRUTH[cls]) if e not in seen[cls])
            failed |= unseen > p.epsilon(k)
            broken |= unseen > epoch_bound(k.run, part)

    u = rng.random(MASS_MAX)
    picks = rng.integers(MASS_STATES, size=MASS_MAX)
    cums = {cls: np.cumsum(q) for cls, q in MASS_TRUTH.items()}
    for t in range(MASS_MAX):
        if max(eps(0), eps(1)) <= MASS_TARGET:
            break
        cls = 0 if eps(0) >= eps(1) else 1
        e = int(np.searchsorted(cums[cls], u[t], "right"))
        if e not in seen[cls] and cls in order:
            check()
        order.setdefault(cls, len(order) + 1)
        if e in seen[cls]:
            run[cls] += 1
        else:
            seen[cls].add(e)
            run[cls] = 0
        _add(data, _states(cls, MASS_STATES)[int(picks[t])], e)
    check()
    return failed, broken


@pytest.mark.slow
def test_pooled_missing_mass_bound_holds_at_every_time_under_adaptive_sampling() -> None:
    with untraced():
        results = [_coverage_run(np.random.default_rng([seed, 17])) for seed in range(MASS_RUNS)]
    failed = sum(f for f, _ in results) / MASS_RUNS
    broken = sum(b for _, b in results) / MASS_RUNS
    bound = MASS_DELTA / 3
    # Measured: 49 of 500 runs (0.098) against δ/3 = 0.3; without the split 358 (0.716).
    print(f"pooled ε failed in {failed:.3f} of the runs (bound {bound}); without the δ split {broken:.3f}")
    assert failed <= bound + 3 * _sigma(bound, MASS_RUNS)
    assert failed > 0  # the bound is exercised: it is not vacuous
    assert broken > bound + 3 * _sigma(bound, MASS_RUNS)


# -- pool's bookkeeping ------------------------------------------------------------------


@st.composite
def _datasets(draw: st.DrawFn) -> tuple[TransitionDataset, Projection, float]:
    n_atoms = draw(st.integers(1, 4))
    vocab = propositional_vocabulary(n_atoms)
    caps = [f"c{i}" for i in range(draw(st.integers(1, 3)))]
    state = st.integers(0, vocab.full_mask)
    data = TransitionDataset(vocab)
    for _ in range(draw(st.integers(0, 40))):
        data.add(Transition(draw(state), draw(st.sampled_from(caps)), draw(state)), draw(st.integers(1, 3)))
    masks = tuple((c, draw(state)) for c in caps if draw(st.booleans()))
    default = draw(st.none() | state)
    return data, Projection("drawn", masks, default, vocab.full_mask), draw(st.floats(0.01, 0.99))


@settings(max_examples=scaled(20), deadline=None)
@given(_datasets())
def test_pool_depends_on_the_order_of_the_data_and_counts_every_execution(
    drawn: tuple[TransitionDataset, Projection, float],
) -> None:
    data, abstraction, delta = drawn
    p = pool(data, abstraction, delta)
    # Rebuilt from its additions (the order kept), or with every addition of count n
    # split into n single ones, the data pools to equal classes.
    rebuilt, single = TransitionDataset(data.vocab), TransitionDataset(data.vocab)
    for t, count, steps in data.additions():
        rebuilt.add(t, count, steps)
        for _ in range(count):
            single.add(t)
    assert pool(rebuilt, abstraction, delta).classes == p.classes
    assert pool(single, abstraction, delta).classes == p.classes
    assert sum(k.n for k in p.classes.values()) == len(data)
    assert sorted(k.order for k in p.classes.values()) == list(range(1, len(p.classes) + 1))
    for key, k in p.classes.items():
        c = k.capability
        assert k.key == key == abstraction.key(c, k.example)
        assert sum(n for _, n in k.effects) == k.n
        assert 0 <= k.run <= k.n - len(k.effects)
        assert (p.epsilon(k) == 1) == (k.run == 0)
        assert 0 <= p.epsilon(k) <= 1
        assert k.log_e >= 0  # the running maximum starts at L_0 = 1
        assert p.refuted(k) == (k.log_e >= -math.log(p.test_level(k)))
        # The class's tried states, and every execution of c there, are its own.
        tried = [s for s in data.states_of(c) if abstraction.key(c, s) == key]
        assert k.states == len(tried)
        assert k.n == sum(data.count_sc(s, c) for s in tried)
        assert k.example in tried

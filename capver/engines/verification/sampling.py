"""Anytime-valid bounds on what the data has not shown about the agent: the *missing
mass* of every tried (state, capability) pair, and confidence intervals on the
probabilities of its observed outcomes.

Theorem 1 of the MCQS paper (appendix A) puts the agent's model h⋆ below h∨ only
under *effect completeness*: every outcome the agent can produce was observed.  The
data never proves that, but it bounds how likely a violation of it is.  This module
gives the bounds; :mod:`capver.engines.verification.agent_verdict` turns them into
verdict tiers and ``proofs/`` states and checks the guarantees.

**Assumption (A1, the Markov assumption of the capability model, section 2).**
Each execution of capability c from a state whose abstraction is s ends in s′ with
probability P(s′ | s, c), independently of everything before it given (s, c).
Which pair is executed next may depend on everything seen so far (MCQS chooses its
queries from the data), and the user may stop at any moment.

**Missing mass (epochs).**  The unseen mass M(s, c) = Σ P(s′ | s, c) over the s′ not
yet seen at (s, c) changes only when a new outcome appears.  Between the e-th new
outcome and the next one (epoch e) it is a constant μ_e, and each execution is new
with probability μ_e.  With the bound ε(e, m) = 1 − δ_e^{1/m} after m executions of
the epoch, ε(e, m) < μ_e means (1 − μ_e)^m < δ_e; the first m for which that holds is
reached only if the first m executions of the epoch all repeated an old outcome,
which has probability (1 − μ_e)^m < δ_e.  So the bound fails *at some time* of epoch
e with probability < δ_e, whenever the user looks.

**Outcome intervals.**  The i-th outcome of a pair to appear is chosen by the data,
so the execution that showed it is not counted: the executions after it are
i.i.d. Bernoulli(P(s′ | s, c)), and the Clopper–Pearson interval of those n′
executions at level α_{i,n′} holds; a union over n′ makes it hold at every n′.

**Allocation of δ** (:func:`share` (k) = 1/(k(k+1)), whose sum over k ≥ 1 is 1).
The j-th distinct pair ever tried gets δ_j = δ·share(j) — j is fixed by the history
when the pair is first tried, so the union needs no fixed, data-independent set of
pairs.  Half of δ_j goes to the missing mass (epoch e: share(e)), half to the
outcome intervals (outcome i, n′ later executions: share(i)·share(n′)).  Every bound
of every pair, at every stopping time, holds together with probability ≥ 1 − δ.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from capver.core.dataset import PairSample, TransitionDataset
from capver.core.state import State
from capver.engines.verification.binomial import clopper_pearson

Interval = tuple[float, float]


@functools.lru_cache(maxsize=1 << 16)
def _interval(successes: int, trials: int, alpha: float) -> Interval:
    # The same (successes, trials, level) recur after every query at the pairs it did
    # not touch, and each interval costs two incomplete-beta inversions.
    return clopper_pearson(successes, trials, alpha)


def share(k: int) -> float:
    """1/(k(k+1)) for k ≥ 1: the weights of the unions over pairs, epochs, outcomes and
    sample sizes (Σ_{k≥1} share(k) = 1, a telescoping sum)."""
    if k < 1:
        raise ValueError(f"share(k) needs k ≥ 1, got {k}")
    return 1.0 / (k * (k + 1))


def _check_delta(delta: float) -> None:
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta}")


def pair_delta(delta: float, order: int) -> float:
    """δ_j: the part of δ spent on the ``order``-th distinct pair ever tried."""
    _check_delta(delta)
    return delta * share(order)


def missing_mass_bound(sample: PairSample | None, delta: float) -> float:
    """ε(s, c): an upper bound on the probability that the next execution of the pair
    shows an outcome never seen there (1 for an untried pair or one whose last
    execution was new).  Holds with the other bounds of the run at confidence 1 − δ
    (module docstring)."""
    _check_delta(delta)
    if sample is None:
        return 1.0
    return epoch_bound(sample.run, pair_delta(delta, sample.order) / 2 * share(sample.outcomes))


def epoch_bound(run: int, level: float) -> float:
    """1 − level^(1/run): the bound on an epoch's unseen mass after ``run`` executions
    without a new outcome, which fails at some time of the epoch with probability
    < ``level`` (module docstring); 1 when ``run`` is 0."""
    if run == 0:
        return 1.0
    return -math.expm1(math.log(level) / run)


def epoch_executions(epsilon: float, level: float) -> int:
    """The least ``run`` with :func:`epoch_bound` (run, level) ≤ ``epsilon``."""
    if not 0 < epsilon < 1:
        raise ValueError(f"epsilon must be in (0, 1), got {epsilon}")
    return max(1, math.ceil(math.log(level) / math.log1p(-epsilon)))


def executions_for(epsilon: float, delta: float, order: int, outcomes: int = 1) -> int:
    """How many executions in a row without a new outcome bring the missing-mass bound
    of the ``order``-th pair (with ``outcomes`` outcomes seen) to ``epsilon`` or below."""
    _check_delta(delta)
    return epoch_executions(epsilon, pair_delta(delta, order) / 2 * share(outcomes))


def outcome_interval(data: TransitionDataset, s: State, c: str, s_next: State, delta: float) -> Interval:
    """A confidence interval on P(s′ | s, c) for an outcome seen at the pair, valid at
    every stopping time together with the other bounds (module docstring); [0, 1]
    when no execution came after the one that first showed s′."""
    sample = data.sample(s, c)
    first = data.first_seen(s, c, s_next)
    if sample is None or first == 0:
        raise ValueError("outcome_interval needs an outcome observed at the pair")
    rank = 1 + sum(1 for s2 in data.successors(s, c) if data.first_seen(s, c, s2) < first)
    trials = sample.n - first
    if trials == 0:
        return 0.0, 1.0
    alpha = pair_delta(delta, sample.order) / 2 * share(rank) * share(trials)
    return _interval(data.count(s, c, s_next) - 1, trials, alpha)


@dataclass(frozen=True, slots=True)
class PairBounds:
    """What the data bounds about one tried pair at confidence 1 − δ (with every other
    pair's bounds): ``epsilon`` ≥ the unseen mass, ``intervals`` ∋ P(s′ | s, c) for
    each observed s′."""

    sample: PairSample
    epsilon: float
    intervals: tuple[tuple[State, float, float], ...]


class SamplingBounds:
    """The bounds of one dataset at confidence 1 − δ, computed per pair on demand."""

    def __init__(self, data: TransitionDataset, delta: float) -> None:
        _check_delta(delta)
        self.data = data
        self.delta = delta
        self._cache: dict[tuple[State, str], PairBounds | None] = {}

    def epsilon(self, s: State, c: str) -> float:
        """ε(s, c): 1 when the pair was never tried."""
        b = self._cache.get((s, c))
        if b is not None:
            return b.epsilon
        # The missing-mass bound alone: the pair's outcome intervals (Clopper–Pearson,
        # most of the cost) are not needed for it, and the property tracker asks for ε
        # at every frontier pair after every query.
        sample = self.data.sample(s, c)
        return 1.0 if sample is None else missing_mass_bound(sample, self.delta)

    def pair(self, s: State, c: str) -> PairBounds | None:
        key = (s, c)
        if key not in self._cache:
            sample = self.data.sample(s, c)
            if sample is None:
                self._cache[key] = None
            else:
                rows = tuple(
                    (s2, *outcome_interval(self.data, s, c, s2, self.delta))
                    for s2 in sorted(self.data.successors(s, c))
                )
                self._cache[key] = PairBounds(sample, missing_mass_bound(sample, self.delta), rows)
        return self._cache[key]


__all__ = [
    "Interval",
    "PairBounds",
    "SamplingBounds",
    "epoch_bound",
    "epoch_executions",
    "executions_for",
    "missing_mass_bound",
    "outcome_interval",
    "pair_delta",
    "share",
]

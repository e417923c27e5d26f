"""The fixed-n confidence bound of capver.engines.verification.confidence:
Clopper–Pearson intervals against known values, the robust upper bound against the
point value, and a coverage experiment — independent MCQS learn runs on a model-backed
agent with a known stochastic truth, counting how often the bound at δ = 0.05 is
≥ the truth's Pmax (explicit.pmax_reach on the truth), and how often the anytime-valid
two-sided bounds of the same module (tests/test_agent_bounds.py) hold it."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from capver.agents.model_backed import ModelBackedAgent
from capver.engines.execution import ExecutionBudget
from capver.engines.lattice import LatticeBuilder
from capver.engines.learning import LearnConfig, Learner, Setting
from capver.engines.verification.confidence import (
    ConfidenceBound,
    Unseen,
    agent_reach_bounds,
    beta_ppf,
    betainc,
    clopper_pearson,
    confidence_intervals,
    robust_pmax_data,
)
from capver.engines.verification.explicit import Target, pmax_reach, robust_pmax
from capver.engines.verification.sampling import SamplingBounds
from capver.logic.condition import LogicContext
from capver.model.capability_model import CompoundModel
from capver.model.dataset import TransitionDataset
from capver.model.state import State, Transition
from capver.synthetic import propositional_vocabulary, random_model, sample_dataset

# -- Clopper–Pearson --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("k", "n", "alpha", "lo", "hi"),
    [
        # Standard tabulated values (e.g. R's binom.test / scipy.stats.binomtest).
        (5, 10, 0.05, 0.1870860284474, 0.8129139715526),
        (1, 10, 0.05, 0.0025285785444, 0.4450161309074),
        (50, 100, 0.05, 0.3983211803262, 0.6016788196738),
        (0, 20, 0.05, 0.0, 0.1684335),
    ],
)
def test_clopper_pearson_known_values(k: int, n: int, alpha: float, lo: float, hi: float) -> None:
    got = clopper_pearson(k, n, alpha)
    assert got[0] == pytest.approx(lo, abs=2e-7)
    assert got[1] == pytest.approx(hi, abs=2e-7)


def test_clopper_pearson_closed_forms() -> None:
    """k = 0 and k = n have closed forms: hi = 1 − (α/2)^{1/n}, lo = (α/2)^{1/n}."""
    for n in (1, 2, 7, 30, 500):
        for alpha in (0.05, 1e-3, 1e-6):
            lo0, hi0 = clopper_pearson(0, n, alpha)
            lon, hin = clopper_pearson(n, n, alpha)
            assert lo0 == 0.0 and hin == 1.0
            assert hi0 == pytest.approx(1 - (alpha / 2) ** (1 / n), abs=1e-12)
            assert lon == pytest.approx((alpha / 2) ** (1 / n), abs=1e-12)


def test_betainc_and_ppf() -> None:
    # I_x(1, 1) = x; I_x(a, 1) = x^a; I_x(1, b) = 1 − (1 − x)^b; symmetry.
    for x in (0.01, 0.3, 0.5, 0.9):
        assert betainc(1, 1, x) == pytest.approx(x, abs=1e-14)
        assert betainc(3, 1, x) == pytest.approx(x**3, abs=1e-14)
        assert betainc(1, 4, x) == pytest.approx(1 - (1 - x) ** 4, abs=1e-14)
        assert betainc(2.5, 7, x) == pytest.approx(1 - betainc(7, 2.5, 1 - x), abs=1e-13)
    for a, b in ((2, 3), (10, 40), (0.5, 0.5)):
        for q in (0.001, 0.3, 0.975):
            assert betainc(a, b, beta_ppf(q, a, b)) == pytest.approx(q, abs=1e-12)


def test_clopper_pearson_against_scipy() -> None:
    stats = pytest.importorskip("scipy.stats")
    for n in (1, 3, 10, 57, 400):
        for k in sorted({0, 1, n // 3, n // 2, n - 1, n}):
            for alpha in (0.05, 1e-4):
                lo, hi = clopper_pearson(k, n, alpha)
                slo = 0.0 if k == 0 else stats.beta.ppf(alpha / 2, k, n - k + 1)
                shi = 1.0 if k == n else stats.beta.ppf(1 - alpha / 2, k + 1, n - k)
                assert lo == pytest.approx(slo, abs=1e-10) and hi == pytest.approx(shi, abs=1e-10)


def test_clopper_pearson_rejects_bad_input() -> None:
    for args in ((3, 2, 0.05), (0, 0, 0.05), (1, 2, 0.0), (1, 2, 1.0)):
        with pytest.raises(ValueError):
            clopper_pearson(*args)


# -- intervals and the bound -------------------------------------------------------------

CTX = LogicContext(propositional_vocabulary(3))


def _target(s: int) -> bool:
    return s & 0b110 == 0b110


def _truth() -> CompoundModel:
    """3 atoms, 3 capabilities, genuinely stochastic effects (up to 3 per rule);
    Pmax(F<=2 x1∧x2) from 0 is 0.351 — neither 0 nor 1."""
    return random_model(CTX, np.random.default_rng(0), n_capabilities=3, max_rules=2, max_effects=3, total=True)


def pmax_upper_bound(
    data: TransitionDataset,
    model: CompoundModel,
    init: State,
    target: Target,
    bound: int | None,
    delta: float,
    *,
    unseen: Unseen = "top",
    untried: Unseen = "top",
) -> ConfidenceBound:
    """The fixed-n bound as ``quantitative.confidence_bound`` builds it: the point
    value Pmax on ``model`` (h∧) beside the robust Pmax of the Clopper–Pearson
    interval MDP of ``data``, the capabilities being ``data.capability_table``."""
    intervals = confidence_intervals(data, delta)
    point = float(pmax_reach(model, init, target, bound, exact=False))
    upper = robust_pmax_data(intervals, init, target, bound, unseen=unseen, untried=untried,
                             capabilities=list(data.capability_table))
    return ConfidenceBound(point, upper, delta, len(intervals), unseen, untried)


def test_confidence_intervals_union_bound() -> None:
    data = TransitionDataset(CTX.vocab)
    data.add(Transition(0, "a", 1), count=6)
    data.add(Transition(0, "a", 2), count=4)
    data.add(Transition(1, "b", 3), count=5)
    ivs = confidence_intervals(data, 0.06)
    assert set(ivs) == {(0, "a", 1), (0, "a", 2), (1, "b", 3)}
    assert ivs[(0, "a", 1)] == pytest.approx(clopper_pearson(6, 10, 0.02))
    assert ivs[(1, "b", 3)] == pytest.approx(clopper_pearson(5, 5, 0.02))
    # a larger, data-independent number of intervals widens them
    wide = confidence_intervals(data, 0.06, n_intervals=30)
    assert wide[(0, "a", 1)][0] < ivs[(0, "a", 1)][0] and wide[(0, "a", 1)][1] > ivs[(0, "a", 1)][1]
    with pytest.raises(ValueError):
        confidence_intervals(data, 0.06, n_intervals=2)
    with pytest.raises(ValueError):
        confidence_intervals(data, 1.5)


def test_robust_value_of_a_tiny_dataset() -> None:
    """One pair (0, a) with successors 1 (target, 6 of 10) and 2 (4 of 10)."""
    data = TransitionDataset(CTX.vocab)
    data.add(Transition(0, "a", 1), count=6)
    data.add(Transition(0, "a", 2), count=4)
    ivs = confidence_intervals(data, 0.05)
    _lo1, hi1 = ivs[(0, "a", 1)]
    lo2, _ = ivs[(0, "a", 2)]
    in_target = {1}.__contains__
    # ignore: nature puts as much as it may on 1, the rest (≥ lo2) on 2
    assert robust_pmax_data(ivs, 0, in_target, 1, unseen="ignore") == pytest.approx(min(hi1, 1 - lo2))
    # top: ⊤ counts as target, so only lo2 is forced away from it
    assert robust_pmax_data(ivs, 0, in_target, 1, unseen="top") == pytest.approx(1 - lo2)
    assert robust_pmax_data(ivs, 0, in_target, None, unseen="top") == pytest.approx(1 - lo2)


@pytest.mark.parametrize("bound", [1, 2, 4, None])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_upper_bound_at_least_point_value(seed: int, bound: int | None) -> None:
    truth = _truth()
    data = sample_dataset(truth, np.random.default_rng(seed), 400)
    h_and = LatticeBuilder(CTX, data).pessimistic
    uppers = {}
    for unseen in ("ignore", "top"):
        for untried in ("ignore", "top"):
            b = pmax_upper_bound(data, h_and, 0, _target, bound, 0.05, unseen=unseen, untried=untried)
            assert isinstance(b, ConfidenceBound) and b.n_intervals == data.unique_count()
            assert 0.0 <= b.point <= b.upper + 1e-9 <= 1.0 + 1e-9
            uppers[unseen, untried] = b.upper
    # ⊤ only ever adds value
    assert uppers["ignore", "ignore"] <= min(uppers["top", "ignore"], uppers["ignore", "top"]) + 1e-9
    assert max(uppers["top", "ignore"], uppers["ignore", "top"]) <= uppers["top", "top"] + 1e-9
    if bound is not None:
        # ignore/ignore is the interval MDP of h∧: the same value as explicit.robust_pmax
        ivs = confidence_intervals(data, 0.05)
        exact_ivs = {k: (Fraction(lo), Fraction(hi)) for k, (lo, hi) in ivs.items()}
        assert float(robust_pmax(h_and, 0, _target, bound, exact_ivs)) == pytest.approx(
            uppers["ignore", "ignore"], abs=1e-9
        )


def test_untried_pairs_count_as_reaching_the_target() -> None:
    data = TransitionDataset(CTX.vocab)
    data.add(Transition(0, "a", 1), count=50)
    data.add(Transition(1, "a", 1), count=50)
    data.add(Transition(1, "b", 1), count=50)
    never = {6}.__contains__
    assert robust_pmax_data(confidence_intervals(data, 0.05), 0, never, 3, unseen="ignore") == 0.0
    # b was never tried in 0: the sound bound cannot exclude that it reaches the target
    b = pmax_upper_bound(data, LatticeBuilder(CTX, data).pessimistic, 0, never, 3, 0.05, unseen="ignore")
    assert (b.point, b.upper) == (0.0, 1.0)


def test_zero_width_data_gives_the_mle_value() -> None:
    """With huge counts the intervals shrink and the bound approaches the true Pmax
    (the per-pair frequencies are the truth's probabilities).  h∧'s point value need
    not equal it: h∧ pools its MLE over each block of states with the same observed
    effect set, and this truth's states in one block differ in their probabilities."""
    truth = _truth()
    data = TransitionDataset(CTX.vocab, truth.capabilities)
    for c, m in truth.items():
        for s in range(8):
            for s2, p in m.distribution(s).items():
                data.add(Transition(s, c, s2), count=int(p * 720_000))
    h_and = LatticeBuilder(CTX, data).pessimistic
    b = pmax_upper_bound(data, h_and, 0, _target, 2, 0.05)
    true = float(pmax_reach(truth, 0, _target, 2, exact=False))
    assert b.point == pytest.approx(0.359182, abs=1e-6)  # pooled, not 0.351080
    assert true <= b.upper < true + 0.02


# -- coverage ------------------------------------------------------------------------------


def _learn_run(truth: CompoundModel, seed: int, queries: int) -> TransitionDataset:
    """One independent MCQS-S run on the model-backed agent of ``truth``."""
    agent = ModelBackedAgent(truth)
    setting = Setting(
        agent, agent.simulator(0), agent.representation(), tuple(truth.capabilities), tuple(range(8)),
        ExecutionBudget(max_steps=2, theta=None), symbolic_states=True,
    )
    cfg = LearnConfig(method="mcqs-s", max_queries=queries, patience=0, executions_per_query=3)
    learner = Learner(CTX, setting, cfg, np.random.default_rng([20261203, seed]))
    learner.run()
    return learner.data


def _pairs_used(truth: CompoundModel, init: int, bound: int) -> set[tuple[int, str]]:
    """The (s, c) the truth can execute within the first ``bound`` steps from ``init``."""
    layer, seen = {init}, {init}
    pairs: set[tuple[int, str]] = set()
    for _ in range(bound):
        nxt: set[int] = set()
        for s in layer:
            for c, m in truth.items():
                dist = m.distribution(s)
                if dist:
                    pairs.add((s, c))
                    nxt.update(dist)
        layer = nxt - seen
        seen |= nxt
    return pairs


def coverage(runs: int, queries: int, delta: float = 0.05, bound: int = 2) -> dict[str, float]:
    """Over ``runs`` independent learn runs: the fraction whose sound bound
    (unseen = untried = "top") is ≥ the truth's Pmax; the same for the observed-only
    construction (both "ignore"), overall and among the runs that tried every pair the
    truth can use within ``bound`` steps (its assumption); the fraction whose
    anytime-valid interval [lower, upper] holds the truth's Pmax; mean point value and
    bounds."""
    truth = _truth()
    true = float(pmax_reach(truth, 0, _target, bound, exact=False))
    used = _pairs_used(truth, 0, bound)
    hits = {"sound": 0, "observed": 0, "observed_complete": 0, "agent": 0}
    complete = 0
    sums = {"point": 0.0, "sound": 0.0, "observed": 0.0, "agent_lower": 0.0, "agent_upper": 0.0}
    for r in range(runs):
        data = _learn_run(truth, r, queries)
        h_and = LatticeBuilder(CTX, data).pessimistic
        sound = pmax_upper_bound(data, h_and, 0, _target, bound, delta)
        observed = pmax_upper_bound(data, h_and, 0, _target, bound, delta, unseen="ignore", untried="ignore")
        agent = agent_reach_bounds(SamplingBounds(data, delta), 0, _target, bound, maximise=True)
        is_complete = all(data.count_sc(s, c) for s, c in used)
        complete += is_complete
        hits["sound"] += sound.upper >= true - 1e-12
        hits["observed"] += observed.upper >= true - 1e-12
        hits["observed_complete"] += is_complete and observed.upper >= true - 1e-12
        hits["agent"] += agent.lower - 1e-12 <= true <= agent.upper + 1e-12
        sums["point"] += sound.point
        sums["sound"] += sound.upper
        sums["observed"] += observed.upper
        sums["agent_lower"] += agent.lower
        sums["agent_upper"] += agent.upper
    return {
        "true": true,
        "coverage_sound": hits["sound"] / runs,
        "coverage_observed": hits["observed"] / runs,
        "complete_runs": complete,
        "coverage_observed_complete": hits["observed_complete"] / complete if complete else math.nan,
        "coverage_agent": hits["agent"] / runs,
        **{f"mean_{k}": v / runs for k, v in sums.items()},
    }


def test_truth_is_nontrivial() -> None:
    true = float(pmax_reach(_truth(), 0, _target, 2, exact=False))
    assert true == pytest.approx(0.351080, abs=1e-6)
    assert not math.isclose(true, 0) and not math.isclose(true, 1)


def test_coverage_small() -> None:
    res = coverage(runs=40, queries=8)
    assert res["coverage_sound"] >= 0.95 and res["coverage_agent"] >= 0.95
    assert res["complete_runs"] >= 20 and res["coverage_observed_complete"] >= 0.95
    # the bounds say something: on average below 1
    assert res["mean_observed"] < 1.0 and res["mean_sound"] < 1.0


@pytest.mark.slow
def test_coverage_200_runs() -> None:
    res = coverage(runs=200, queries=20)
    print(res)
    assert res["coverage_sound"] >= 0.95 and res["coverage_agent"] >= 0.95
    assert res["coverage_observed_complete"] >= 0.95


if __name__ == "__main__":  # python tests/test_confidence.py [runs] [queries]
    import sys
    import time

    start = time.perf_counter()
    args = [int(a) for a in sys.argv[1:3]]
    print(coverage(*(args or [200, 20])), f"{time.perf_counter() - start:.1f} s")

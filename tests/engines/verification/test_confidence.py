"""capver.engines.verification.confidence: Clopper–Pearson intervals against known
values, and a coverage experiment — independent MCQS learn runs on a model-backed
agent with a known stochastic truth, counting how often the anytime-valid two-sided
bounds at δ = 0.05 (tests/engines/verification/test_agent_bounds.py tests them further) hold the truth's
Pmax (explicit.pmax_reach on the truth), in the sound scope and, among the runs that
tried every pair the truth uses, in the observed-only scope."""

from __future__ import annotations

import math

import numpy as np
import pytest

from capver.agents.model_backed import ModelBackedAgent
from capver.core.dataset import TransitionDataset
from capver.engines.execution import ExecutionBudget
from capver.engines.lattice import LatticeBuilder
from capver.engines.learning import LearnConfig, Learner, Setting
from capver.engines.verification.confidence import (
    agent_reach_bounds,
    beta_ppf,
    betainc,
    clopper_pearson,
)
from capver.engines.verification.explicit import pmax_reach
from capver.engines.verification.sampling import SamplingBounds
from capver.logic.condition import LogicContext
from capver.model.capability_model import CompoundModel
from capver.synthetic import propositional_vocabulary, random_model
from tests.helpers.untraced import untraced_unless

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


# -- coverage ------------------------------------------------------------------------------


def _learn_run(truth: CompoundModel, seed: int, queries: int) -> TransitionDataset:
    """One independent MCQS-S run on the model-backed agent of ``truth``."""
    agent = ModelBackedAgent(truth)
    setting = Setting(
        agent,
        agent.simulator(0),
        agent.representation(),
        tuple(truth.capabilities),
        tuple(range(8)),
        ExecutionBudget(max_steps=2, theta=None),
        symbolic_states=True,
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


def coverage(runs: int, queries: int, delta: float = 0.05, bound: int = 2, traced_runs: int = 0) -> dict[str, float]:
    """Over ``runs`` independent learn runs: the fraction whose sound interval
    [lower, upper] on the agent's Pmax holds the truth's Pmax; the same for the
    observed-only scope among the runs that tried every pair the truth can use within
    ``bound`` steps (its completeness assumption); mean bounds.

    Only the first ``traced_runs`` runs are measured by coverage (tests/helpers/untraced.py):
    the others repeat the same code with other seeds, at several times the cost when traced."""
    truth = _truth()
    true = float(pmax_reach(truth, 0, _target, bound, exact=False))
    used = _pairs_used(truth, 0, bound)
    hits = {"sound": 0, "observed_complete": 0}
    complete = 0
    sums = {"point": 0.0, "sound_lower": 0.0, "sound_upper": 0.0}
    for r in range(runs):
        with untraced_unless(r < traced_runs):
            data = _learn_run(truth, r, queries)
            h_and = LatticeBuilder(CTX, data).pessimistic
            bounds = SamplingBounds(data, delta)
            sound = agent_reach_bounds(bounds, 0, _target, bound, maximise=True)
            observed = agent_reach_bounds(bounds, 0, _target, bound, maximise=True, scope="observed")
            point = float(pmax_reach(h_and, 0, _target, bound, exact=False))
        is_complete = all(data.count_sc(s, c) for s, c in used)
        complete += is_complete
        hits["sound"] += sound.lower - 1e-12 <= true <= sound.upper + 1e-12
        hits["observed_complete"] += is_complete and observed.lower - 1e-12 <= true <= observed.upper + 1e-12
        sums["point"] += point
        sums["sound_lower"] += sound.lower
        sums["sound_upper"] += sound.upper
    return {
        "true": true,
        "coverage_sound": hits["sound"] / runs,
        "complete_runs": complete,
        "coverage_observed_complete": hits["observed_complete"] / complete if complete else math.nan,
        **{f"mean_{k}": v / runs for k, v in sums.items()},
    }


def test_truth_is_nontrivial() -> None:
    true = float(pmax_reach(_truth(), 0, _target, 2, exact=False))
    assert true == pytest.approx(0.351080, abs=1e-6)
    assert not math.isclose(true, 0) and not math.isclose(true, 1)


def test_coverage_small() -> None:
    # Coverage traces the first 4 runs: they measured the same 1169 lines of capver as
    # all 40 traced (2026-12-06; the first 2 missed one), at a quarter of the time.
    res = coverage(runs=40, queries=8, traced_runs=4)
    assert res["coverage_sound"] >= 0.95
    assert res["complete_runs"] >= 20 and res["coverage_observed_complete"] >= 0.95
    assert 0.0 <= res["mean_sound_lower"] <= res["mean_sound_upper"] <= 1.0


# Not measured by coverage (.ci/run): a statistical experiment whose code the smaller tests cover,
# and which coverage's tracing made several times slower.
@pytest.mark.slow
@pytest.mark.no_cover
def test_coverage_60_runs() -> None:
    """60 runs of 20 queries (200 runs took 105 s).  It still fails on a broken bound:
    per-pair intervals at 10 % confidence with no union over pairs cover the truth in
    78 % of these runs (sound) and 40 % (observed); point estimates with no missing mass
    in 33 % and 25 % (the same runs' counts at 200 runs: 79 %, 42 %, 43 %, 34 %)."""
    # pytest-cov's no_cover marker does not stop the tracing under xdist (tests/helpers/untraced.py).
    res = coverage(runs=60, queries=20)
    print(res)
    assert res["coverage_sound"] >= 0.95
    assert res["coverage_observed_complete"] >= 0.95


if __name__ == "__main__":  # python tests/engines/verification/test_confidence.py [runs] [queries]
    import sys
    import time

    start = time.perf_counter()
    args = [int(a) for a in sys.argv[1:3]]
    print(coverage(*(args or [200, 20])), f"{time.perf_counter() - start:.1f} s")

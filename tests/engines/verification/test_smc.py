"""Statistical model checking of a fixed scheduler (capver.engines.verification.smc):
the interval keeps its level under a stopping rule that looks at every one of its
looks (and a plain δ-level interval read that way does not), the run semantics of F, G
and U agree with an exact propagation through the true model, and the command line and
the Python API check a plan with the agent itself."""

from __future__ import annotations

import functools
import itertools
import json
import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import capver
from capver import synthetic
from capver.bench.smc import plan_value
from capver.engines.verification.smc import (
    SchedulerResult,
    check_scheduler,
    interval_at,
    look_times,
    plan_scheduler,
    policy_scheduler,
)
from capver.errors import UnsupportedQueryError
from capver.io import run_dir
from capver.io.properties_text import parse_property
from capver.logic.condition import LogicContext
from capver.settings import model_assessment
from tests.helpers.cli import capver_in_process
from tests.helpers.examples import scaled
from tests.helpers.untraced import untraced


@settings(deadline=None)
@given(
    st.integers(0, 400).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
    st.sampled_from([0.01, 0.05, 0.5]),
    st.integers(1, 30),
)
def test_the_interval_holds_the_frequency_and_widens_with_more_looks(
    sn: tuple[int, int], delta: float, looks: int
) -> None:
    s, n = sn
    lo, hi = interval_at(s, n, delta, looks)
    assert 0.0 <= lo <= hi <= 1.0
    if n:
        assert lo <= s / n <= hi
        wider = interval_at(s, n, delta, looks + 5)
        assert wider[0] <= lo and hi <= wider[1]
    else:
        assert (lo, hi) == (0.0, 1.0)


@given(st.integers(1, 5000))
def test_the_looks_grow_to_the_last_run(max_runs: int) -> None:
    looks = look_times(max_runs)
    assert looks[-1] == max_runs and list(looks) == sorted(set(looks))
    assert looks[0] == min(16, max_runs)
    assert all(b <= 1.2 * a + 1 for a, b in itertools.pairwise(looks[:-1]))


def _looking_failure_rate(
    interval: Callable[[int, int], tuple[float, float]],
    p: float,
    sequences: int,
    max_runs: int,
    rng: np.random.Generator,
) -> float:
    """How often the interval excludes p at some look, read at every look."""
    looks = look_times(max_runs)
    failures = 0
    for _ in range(sequences):
        successes = np.cumsum(rng.random(max_runs) < p)
        for n in looks:
            lo, hi = interval(int(successes[n - 1]), n)
            if not lo <= p <= hi:
                failures += 1
                break
    return failures / sequences


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_looking_at_every_look_keeps_the_level(p: float) -> None:
    """The guarantee the stopping rule rests on: P(∃ look: p ∉ interval) ≤ δ.  With 400
    sequences of 1,000 runs (24 looks) the binomial 3σ slack above δ = 0.1 is 0.045; a
    plain Clopper–Pearson interval at level δ read at every look fails this check
    (its failure rate is several times δ), so the check can fail."""
    delta, rng = 0.1, np.random.default_rng(int(p * 100))
    looks = len(look_times(1000))
    slack = 3 * math.sqrt(delta * (1 - delta) / 400)
    # A sequence's counts repeat across sequences: each (successes, runs) is computed once.
    # Untraced by coverage (tests/helpers/untraced.py): the lines are interval_at's and
    # clopper_pearson's, which the tests above and tests/engines/verification/test_confidence.py
    # measure; traced, this experiment took about 95 s of CI's time.
    split = functools.lru_cache(maxsize=None)(lambda s, n: interval_at(s, n, delta, looks))
    plain = functools.lru_cache(maxsize=None)(lambda s, n: interval_at(s, n, delta, 1))
    with untraced():
        rate = _looking_failure_rate(split, p, 400, 1000, rng)
        naive = _looking_failure_rate(plain, p, 400, 1000, np.random.default_rng(7)) if p == 0.5 else None
    assert rate <= delta + slack, rate
    if naive is not None:
        assert naive > delta + slack, naive


def _truth(seed: int) -> tuple[capver.LearnResult, object, int]:
    rng = np.random.default_rng(seed)
    ctx = LogicContext(synthetic.propositional_vocabulary(3))
    truth = synthetic.random_model(ctx, rng, n_capabilities=2, max_rules=2, max_effects=2, total=True)
    init = int(rng.integers(8))
    return model_assessment(truth, init, f"truth {seed}"), truth, init


PATHS = ("F p0", "F<=2 p1 & p2", "G !p2", "G<=3 p0 | p1", "p0 U p1", "!p2 U<=2 p0")


@settings(max_examples=scaled(6), deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from(PATHS), st.lists(st.sampled_from(["c0", "c1"]), max_size=4))
def test_a_plan_s_interval_contains_its_exact_value(seed: int, path: str, plan: list[str]) -> None:
    """F, G and U on runs of a plan, sampled with the model-backed agent, against the
    exact propagation through its true model (capver.bench.smc.plan_value): δ = 0.001,
    so a miss here is a bug, not chance."""
    a, truth, init = _truth(seed)
    vocab = a.ctx.vocab
    prop = parse_property(f"Pmin=? [ {path} ]", vocab, tuple(truth))  # type: ignore[arg-type]
    caps = {c.name: c for c in a.setting.capabilities}
    r = check_scheduler(
        a.setting,
        caps,
        prop,
        init,
        plan_scheduler(plan),
        np.random.default_rng(seed),
        delta=0.001,
        width=0.2,
        max_runs=400,
    )
    exact = plan_value(truth.distribution, lambda s: s, init, plan, prop.query.path, vocab)  # type: ignore[attr-defined, union-attr]
    assert r.lower - 1e-9 <= exact <= r.upper + 1e-9, (r.lower, exact, r.upper)
    assert r.executions == len(r.data) + r.data.failure_count


def test_a_bound_stops_as_soon_as_it_is_decided() -> None:
    a, truth, init = _truth(3)
    vocab = a.ctx.vocab
    caps = {c.name: c for c in a.setting.capabilities}
    sure = parse_property("P>=0.5 [ F p0 | !p0 ]", vocab, tuple(truth))  # type: ignore[arg-type]
    r = check_scheduler(a.setting, caps, sure, init, plan_scheduler([]), np.random.default_rng(0))
    # Every run satisfies it at once: decided when the lower end passes 0.5.
    assert r.stopped == "decided" and r.successes == r.runs and r.lower >= 0.5
    # Decided at the first look whose interval clears 0.5, not later.
    looks = look_times(1000)
    assert r.runs in looks
    earlier = [n for n in looks if n < r.runs]
    assert not earlier or interval_at(earlier[-1], earlier[-1], 0.05, len(looks))[0] < 0.5
    with pytest.raises(UnsupportedQueryError, match="Pmax=\\? / Pmin=\\?"):
        check_scheduler(
            a.setting,
            caps,
            parse_property("E [ F p0 ]", vocab, ("c0",)),
            init,
            plan_scheduler([]),
            np.random.default_rng(0),
        )


def test_a_policy_is_a_scheduler() -> None:
    a, truth, init = _truth(5)
    vocab = a.ctx.vocab
    caps = {c.name: c for c in a.setting.capabilities}
    prop = parse_property("Pmin=? [ F<=3 p0 ]", vocab, tuple(truth))  # type: ignore[arg-type]
    always = policy_scheduler(lambda s: "c0")
    r = check_scheduler(a.setting, caps, prop, init, always, np.random.default_rng(1), width=0.3)
    exact = plan_value(truth.distribution, lambda s: s, init, ["c0"] * 3, prop.query.path, vocab)  # type: ignore[attr-defined, union-attr]
    assert isinstance(r, SchedulerResult) and r.lower <= exact <= r.upper


def test_the_command_line_and_the_api_check_a_plan_with_the_agent(small_run: Path) -> None:
    """``capver verify RUN --scheduler`` on a learned run (LAO* on Blocksworld): the
    verdict is worded as a sampled bound, its executions are kept beside D (appended,
    never replacing), and a capability the run does not have is refused in one line."""
    plan = "holding(a)"
    args = ("verify", str(small_run), "--scheduler", plan, "--property", "P>=0.2 [ F holding(a) ]", "--json")
    first = capver_in_process(*args)
    assert first.returncode in (0, 1, 3), first.stderr
    record = json.loads(first.stdout.splitlines()[0])
    assert record["verdict"] in ("within-the-bound", "outside-the-bound", "undecided")
    assert record["scheduler"] == f"the plan {plan}" and 0 <= record["lower"] <= record["upper"] <= 1
    kept = small_run / run_dir.SCHEDULED
    lines = len(kept.read_text(encoding="utf-8").splitlines())
    assert capver_in_process(*args).returncode == first.returncode
    assert len(kept.read_text(encoding="utf-8").splitlines()) > lines  # appended
    text = capver_in_process("verify", str(small_run), "--scheduler", plan, "--property", "P>=0.2 [ F holding(a) ]")
    assert "HOLDS" not in text.stdout and "for the agent under the plan holding(a)" in text.stdout
    refused = capver_in_process("verify", str(small_run), "--scheduler", "fly", "--property", "P>=0.2 [ F holding(a) ]")
    assert refused.returncode == 2 and "'fly' is not one" in refused.stderr
    # Saved, the sampled verdict reads back into capver report with its interval.
    assert capver_in_process(*args, "--save").returncode == first.returncode
    page = small_run / "page.html"
    assert capver_in_process("report", str(small_run), "--out", str(page)).returncode == 0
    assert "under the plan holding(a): P in [" in page.read_text(encoding="utf-8")


def test_the_python_api_checks_a_plan_and_a_policy() -> None:
    a, truth, init = _truth(11)
    result = capver.learn(a, max_steps=60, seed=0)
    vocab = a.ctx.vocab
    plan = result.verify("Pmin=? [ F<=2 p1 ]", scheduler=["c1", "c0"], width=0.25, seed=3)
    policy = result.verify("Pmin=? [ F<=2 p1 ]", scheduler=lambda s: "c1" if s & 1 else "c0", width=0.25, seed=3)
    path = plan.prop.query.path  # type: ignore[union-attr]
    exact_plan = plan_value(truth.distribution, lambda s: s, init, ["c1", "c0"], path, vocab)  # type: ignore[attr-defined]
    for checked in (plan, policy):
        r = checked.result
        assert isinstance(r, SchedulerResult) and r.upper - r.lower <= 0.25
        assert checked.outcome.value == "value" and "HOLDS" not in str(checked)
    assert plan.result.lower <= exact_plan <= plan.result.upper  # type: ignore[union-attr]
    assert "the policy <lambda>" in str(policy)

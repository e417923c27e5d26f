"""The MCQS learning loop on agents whose true model is known (model-backed agent):
exact VD goes to 0 and h∧ ≡ h∨ (Theorems 1–2 in practice), the stopping rule, the
baselines, and ``capver learn`` surviving a kill."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from capver.agents.model_backed import ModelBackedAgent
from capver.core.state import Capability
from capver.engines.evaluation import exact_vd, reachable_states
from capver.engines.execution import ExecutionBudget
from capver.engines.learning import LearnConfig, Learner, Setting, StopReason
from capver.engines.verification.relations import equivalent
from capver.logic.condition import Condition, LogicContext
from capver.model.capability_model import CapabilityModel, CompoundModel, Rule
from capver.synthetic import (
    propositional_vocabulary,
    random_condition,
    random_effect,
    random_model,
)
from tests.helpers.untraced import untraced, untraced_unless


def _deterministic(ctx: LogicContext, rng: np.random.Generator) -> CompoundModel:
    """Per capability two rules with complementary conditions φ / ¬φ and one effect
    each: every (s, c) has exactly one outcome."""
    models = []
    for k in range(3):
        phi = random_condition(ctx, rng)
        not_phi = Condition.formula(ctx, ctx.smt.mgr.Not(phi.smt))
        rules = tuple(Rule.make(cond, [(1, random_effect(rng, 4))]) for cond in (phi, not_phi))
        models.append(CapabilityModel(Capability(f"c{k}"), rules))
    return CompoundModel(ctx, models)


def _world(seed: int, stochastic: bool):
    rng = np.random.default_rng(seed)
    ctx = LogicContext(propositional_vocabulary(4))
    if stochastic:
        truth = random_model(ctx, rng, n_capabilities=3, max_rules=2, max_effects=2, total=True)
    else:
        truth = _deterministic(ctx, rng)
    agent = ModelBackedAgent(truth)
    states = tuple(range(16))
    setting = Setting(
        agent,
        agent.simulator(0),
        agent.representation(),
        tuple(truth.capabilities),
        states,
        ExecutionBudget(max_steps=2, theta=None),
        symbolic_states=True,
    )
    return ctx, agent.true_model, setting


@pytest.mark.parametrize("method", ["mcqs-e", "mcqs-s"])
@pytest.mark.parametrize("seed", [0, 1])
def test_deterministic_truth_is_learned_exactly(method: str, seed: int) -> None:
    ctx, truth, setting = _world(seed, stochastic=False)
    learner = Learner(
        ctx, setting, LearnConfig(method=method, max_queries=400, patience=25), np.random.default_rng(seed)
    )
    # Coverage measures seed 0's run of each method: seed 1's repeats the same code on
    # another world, at several times the cost when traced.  With the untraced runs below,
    # this module measured 2 of its 2945 lines of capver less, both covered by
    # tests/logic/test_bdd.py (2026-12-06).
    with untraced_unless(seed == 0):
        progress = learner.run()
    assert progress.stop is StopReason.CONVERGED and progress.stop_reason.startswith("converged")
    assert exact_vd(learner.h_and, truth, range(16)) == 0.0
    # Every (s, c) was tried, so the bounds have met: h∧ ≡ h∨ ≡ h⋆ (z3).
    assert equivalent(learner.h_and, learner.h_or).holds
    assert equivalent(learner.h_and, truth).holds


# Not measured by coverage (.ci/run): a statistical experiment whose code the smaller tests cover,
# and which coverage's tracing made several times slower.
@pytest.mark.slow
@pytest.mark.no_cover
@pytest.mark.parametrize("method", ["mcqs-e", "mcqs-s"])
def test_stochastic_truth_vd_goes_to_zero(method: str) -> None:
    ctx, truth, setting = _world(3, stochastic=True)
    cfg = LearnConfig(method=method, max_queries=300, patience=0, executions_per_query=3)
    learner = Learner(ctx, setting, cfg, np.random.default_rng(7))
    vds = []
    # pytest-cov's no_cover marker does not stop the tracing under xdist (tests/helpers/untraced.py).
    with untraced():
        learner.run(
            lambda lr: vds.append(exact_vd(lr.h_and, truth, range(16))) if lr.progress.queries % 50 == 0 else None
        )
    assert equivalent(learner.h_and, learner.h_or).holds
    assert vds[0] > vds[-1]
    assert vds[-1] < 0.08
    assert learner.progress.stop is StopReason.QUERY_BUDGET and learner.progress.stop_reason == "query budget 300"


def test_mcqs_tries_every_pair_sooner_than_random() -> None:
    """Structural convergence (h∧ ≡ h∨) is reached with fewer executions by MCQS-E
    than by random 30-capability queries on the same world (mean over 3 seeds)."""
    needed = {}
    for method in ("mcqs-e", "random"):
        counts = []
        for seed in range(3):
            ctx, _truth, setting = _world(10 + seed, stochastic=False)
            learner = Learner(
                ctx, setting, LearnConfig(method=method, max_queries=2000, patience=0), np.random.default_rng(seed)
            )
            done = []

            def check(lr: Learner, done: list[int] = done) -> None:
                if (
                    not done
                    and len(lr.data.states()) == 16
                    and all(lr.data.count_sc(s, c) for s in range(16) for c in lr.capability_table)
                ):
                    done.append(lr.progress.executions)
                    lr.request_stop()

            # Coverage measures each method's first seed: the other two repeat the same
            # code on other worlds (see test_deterministic_truth_is_learned_exactly).
            with untraced_unless(seed == 0):
                stop = learner.run(check).stop
            assert stop == (StopReason.REQUESTED if done else StopReason.QUERY_BUDGET)
            counts.append(done[0] if done else 10**9)
        needed[method] = float(np.mean(counts))
    assert needed["mcqs-e"] < needed["random"]


@pytest.mark.parametrize("seed", range(6))
def test_reachable_states_of_truth(seed: int) -> None:
    """Against a fixpoint over brute-force successors (corpus.brute_distribution walks
    the pysmt formulas, not the BDDs or caches the library uses)."""
    from tests.helpers.corpus import brute_distribution

    _ctx, truth, _setting = _world(seed, stochastic=seed % 2 == 1)
    start = seed % 16
    expected = {start}
    while True:
        grown = expected | {s2 for s in expected for m in truth.values() for s2 in brute_distribution(m, s)}
        if grown == expected:
            break
        expected = grown
    assert reachable_states(truth, [start]) == expected
    # a non-trivial instance: some capability moves the start state somewhere else
    assert len(expected) > 1 or all(set(brute_distribution(m, start)) <= {start} for m in truth.values())


@pytest.mark.slow
def test_learn_command_resumes_after_sigkill(tmp_path: Path) -> None:
    out = tmp_path / "run"
    cmd = [
        sys.executable,
        "-m",
        "capver.cli",
        "learn",
        "--agent",
        "lao",
        "--domain",
        "blocks",
        "--method",
        "mcqs-s",
        "--eval-sequences",
        "20",
        "--eval-every",
        "10",
        "--out",
        str(out),
        "--quiet",
        "--patience",
        "0",
    ]
    proc = subprocess.Popen([*cmd, "--max-steps", "100000"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    dataset = out / "dataset.jsonl"
    # Kill once records are written, however long that takes (a fixed wait may end
    # before a busy machine wrote any); the deadline only keeps a broken run from hanging.
    deadline = time.monotonic() + 600
    while proc.poll() is None and time.monotonic() < deadline:
        if dataset.exists() and dataset.stat().st_size > 20_000:
            break
        time.sleep(0.2)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    before = dataset.read_bytes()
    complete = before[: before.rfind(b"\n") + 1].count(b"\n")
    assert complete > 10
    steps_before = sum(
        json.loads(line).get("steps", 0) for line in before.splitlines()[1:] if line.endswith(b"}") and b'"c"' in line
    )
    res = subprocess.run(
        [*cmd, "--resume", "--max-steps", str(steps_before + 50)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert res.returncode == 0, res.stderr
    after = dataset.read_bytes()
    # Every complete record written before the kill is still there, in order.
    assert after.startswith(before[: before.rfind(b"\n") + 1])
    assert after.count(b"\n") > complete
    for name in ("h_and.capm", "h_or.capm", "curve.csv", "curve.png", "report.txt", "eval.jsonl"):
        assert (out / name).stat().st_size > 0
    # The curve continues where the killed run left it: steps and queries never go back.
    with open(out / "curve.csv") as f:
        rows = list(csv.DictReader(f))
    for key in ("steps", "queries"):
        values = [int(float(r[key])) for r in rows]
        assert values == sorted(values) and values[-1] > 0


def test_a_confirmation_query_ends_at_a_new_outcome_of_a_tried_pair() -> None:
    # The lights: switch-l1 with the power on turns l1 on 9 times in 10, else nothing.
    from capver.bench.abstraction import load_truth
    from capver.engines.mcqs.base import SequencePolicy
    from capver.settings import model_assessment

    model, init = load_truth("lights")
    a = model_assessment(model, init, "lights")
    learner = Learner(a.ctx, a.setting, LearnConfig(method="mcqs-e", max_steps=10_000), np.random.default_rng(3))
    x0 = learner.snapshots[init]
    policy = SequencePolicy(["switch-l1"])
    learner._execute_sequentially(policy, init, x0, 200, confirming=True)
    # The first execution is new to an untried pair and goes on; the batch ends at the
    # first outcome unlike the ones before, as soon as it was recorded.
    outcomes = [t.s_next for t, _, _ in learner.data.additions()]
    assert len(set(outcomes)) == 2 and len(outcomes) < 200
    assert outcomes[-1] != outcomes[0] and len(set(outcomes[:-1])) == 1
    # Not a confirmation query: every execution is made.
    learner._execute_sequentially(policy, init, x0, 50)
    assert learner.data.count_sc(init, "switch-l1") == len(outcomes) + 50

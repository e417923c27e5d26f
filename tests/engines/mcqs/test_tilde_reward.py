"""The h̃-uncertainty reward of MCQS (capver.engines.mcqs.tilde): u on a
hand-made dataset, λ = 0 is the default reward exactly, the closed forms of the
reward with λ > 0 (Lemma 2's structure at tried pairs, h̃'s share at untried ones),
and ``capver learn --reward tilde`` end to end."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capver.core.dataset import TransitionDataset
from capver.core.state import Transition
from capver.engines.lattice import LatticeBuilder
from capver.engines.learning import LearnConfig
from capver.engines.mcqs.distinguishing import DistinguishingMDP, MetaState, StepMemo
from capver.engines.mcqs.tilde import REWARDS, tilde_uncertainty
from capver.errors import CapverError
from capver.logic.condition import LogicContext
from capver.synthetic import propositional_vocabulary, random_model, sample_dataset
from tests.helpers.cli import capver_in_process
from tests.helpers.examples import scaled


def _hand_made() -> tuple[LatticeBuilder, TransitionDataset]:
    """Two atoms p0 (bit 0), p1 (bit 1).  ``a`` adds p0: tried at {} three times and at
    {p1} once — one block, one h̃ rule supported by 4 executions.  ``b`` deletes p0:
    tried at {} twice (no change) and at {p0} once — two blocks split on p0, h̃ rules
    supported by 2 and 1 executions.  ``c`` is never tried."""
    vocab = propositional_vocabulary(2)
    data = TransitionDataset(vocab)
    for s, c, s2 in [(0, "a", 1)] * 3 + [(2, "a", 3), (0, "b", 0), (0, "b", 0), (1, "b", 0)]:
        data.add(Transition(s, c, s2))
    return LatticeBuilder(LogicContext(vocab), data), data


def test_u_on_a_hand_made_dataset() -> None:
    b, data = _hand_made()
    unc = tilde_uncertainty(b.pessimistic, data, 0.5, seed=0)
    assert unc.support["a"] == (4,)
    assert sorted(unc.support["b"]) == [1, 2]
    # a: the one rule holds everywhere (no tried state of a has p0 … or varies it).
    assert [unc.u(s, "a") for s in range(4)] == [1 / 5] * 4
    # b: ¬p0 → the rule of {} (2 executions), p0 → the rule of {p0} (1 execution).
    assert [unc.u(s, "b") for s in range(4)] == [1 / 3, 1 / 2, 1 / 3, 1 / 2]
    assert [unc.u(s, "c") for s in range(4)] == [1.0] * 4
    assert unc.bonus(1, "b") == pytest.approx(0.25)


def test_reward_closed_forms_on_the_hand_made_dataset() -> None:
    b, data = _hand_made()
    lam, xi = 0.5, 0.1
    unc = tilde_uncertainty(b.pessimistic, data, lam, seed=0)
    mdp = DistinguishingMDP(b.pessimistic, b.optimistic, data, ["a", "b", "c"], xi, uncertainty=unc)
    # Tried pair (b at {p0}, h∧ = h∨ there): ξ/(1+1) + λ·u = 0.05 + 0.25.
    assert mdp.step_reward(MetaState.point(1), "b")[1] == pytest.approx(0.30)
    # Tried pair (a at {}, tried 3 times): 0.1/4 + 0.5/5.
    assert mdp.step_reward(MetaState.point(0), "a")[1] == pytest.approx(0.125)
    # Untried pair (a at {p0}): h∧ silent, h̃ and h∨ both predict {p0}, so only the
    # unknown share 1 − λ(1 − u) = 1 − 0.5·0.8 disagrees.
    assert mdp.step_reward(MetaState.point(1), "a")[1] == pytest.approx(0.6)
    # Never tried: no h̃ rule, full disagreement as by default.
    assert mdp.step_reward(MetaState.point(0), "c")[1] == pytest.approx(1.0)
    default = DistinguishingMDP(b.pessimistic, b.optimistic, data, ["a", "b", "c"], xi)
    assert default.step_reward(MetaState.point(1), "a")[1] == pytest.approx(1.0)
    assert default.step_reward(MetaState.point(1), "b")[1] == pytest.approx(0.05)


def _random_setup(seed: int):
    rng = np.random.default_rng(seed)
    vocab = propositional_vocabulary(4)
    ctx = LogicContext(vocab)
    truth = random_model(ctx, rng, n_capabilities=2, total=True)
    data = sample_dataset(truth, rng, 60, n_states=6)
    return rng, truth, data, LatticeBuilder(ctx, data)


@settings(max_examples=scaled(15), deadline=None)
@given(st.integers(0, 2**32 - 1), st.floats(0.0, 0.5))
def test_zero_weight_is_the_default_reward(seed: int, xi: float) -> None:
    """λ = 0: every step (successor meta-state, reward, settled) of random walks is
    that of the paper's reward, bit for bit, through a shared memo."""
    rng, truth, data, b = _random_setup(seed)
    unc = tilde_uncertainty(b.pessimistic, data, 0.0, seed=seed)
    caps = list(truth)
    memo = StepMemo()
    tilde = DistinguishingMDP(b.pessimistic, b.optimistic, data, caps, xi, memo, unc)
    plain = DistinguishingMDP(b.pessimistic, b.optimistic, data, caps, xi)
    for _ in range(5):
        m1 = m2 = MetaState.point(int(rng.integers(16)))
        for _ in range(4):
            c = caps[int(rng.integers(len(caps)))]
            s1, s2 = tilde.step_reward(m1, c), plain.step_reward(m2, c)
            assert s1 == s2
            m1, m2 = s1[0], s2[0]


@settings(max_examples=scaled(15), deadline=None)
@given(st.integers(0, 2**32 - 1), st.floats(0.0, 0.5), st.floats(0.05, 1.0))
def test_lemma2_form_with_the_uncertainty_bonus(seed: int, xi: float, lam: float) -> None:
    """ρ₁ = ρ₂ = ρ on tried states of c (where h∧ = h∨) ⇒
    R = Σ ρ(s)·min(1, ξ/(|D_SC(s,c)|+1) + λ·u(s,c))."""
    rng, truth, data, b = _random_setup(seed)
    unc = tilde_uncertainty(b.pessimistic, data, lam, seed=seed)
    mdp = DistinguishingMDP(b.pessimistic, b.optimistic, data, list(truth), xi, uncertainty=unc)
    c = "c0"
    tried = sorted(data.states_of(c))
    k = int(rng.integers(1, len(tried) + 1))
    support = sorted(rng.choice(tried, size=k, replace=False).tolist())
    w = rng.random(k) + 0.1
    rho = tuple(zip(support, (w / w.sum()).tolist(), strict=True))
    expected = sum(p * min(1.0, xi / (data.count_sc(s, c) + 1) + lam * unc.u(s, c)) for s, p in rho)
    assert mdp.step_reward(MetaState(rho, rho), c)[1] == pytest.approx(expected, abs=1e-9)


def test_config_checks_the_reward_options() -> None:
    assert set(REWARDS) == {"disagreement", "tilde"}
    with pytest.raises(CapverError, match="unknown reward 'x'"):
        LearnConfig(reward="x")
    with pytest.raises(CapverError, match="tilde_weight"):
        LearnConfig(reward="tilde", tilde_weight=1.5)
    with pytest.raises(CapverError, match="tilde_every"):
        LearnConfig(reward="tilde", tilde_every=0)


def _records(out: Path) -> list[tuple[object, ...]]:
    rows = [json.loads(line) for line in (out / "dataset.jsonl").read_text().splitlines()]
    return [(r["s"], r["c"], r["s2"], r.get("meta")) for r in rows if "s" in r]


@pytest.mark.slow
def test_learn_with_the_tilde_reward(tmp_path: Path) -> None:
    common = [
        "learn",
        "--agent",
        "lao",
        "--domain",
        "blocks",
        "--method",
        "mcqs-e",
        "--max-steps",
        "100",
        "--eval-sequences",
        "10",
        "--quiet",
    ]
    runs = {}
    for name, extra in [("default", []), ("tilde", ["--reward", "tilde", "--tilde-every", "3"])]:
        out = tmp_path / name
        res = capver_in_process(*common, *extra, "--out", str(out))
        assert res.returncode == 0, res.stderr
        assert (out / "h_tilde.capm").exists()
        runs[name] = _records(out)
        assert len(runs[name]) > 10
    assert runs["tilde"] != runs["default"]  # the h̃ term changed them
    bad = capver_in_process(*common, "--reward", "tilde", "--tilde-weight", "2", "--out", str(tmp_path / "bad"))
    assert bad.returncode == 2 and "--tilde-weight" in bad.stderr and "[0, 1]" in bad.stderr


def test_bench_learning_plans_each_reward_side_by_side() -> None:
    """``--rewards disagreement,tilde,tilde:0.1``: every MCQS method gets one run per
    reward and seed (labelled apart, λ passed to the learner); Random only its own."""
    from capver.bench.learning.cli import build_parser, plan_jobs

    args = build_parser().parse(
        [
            "--settings",
            "lao:blocks",
            "--methods",
            "mcqs-e,random",
            "--seeds",
            "2",
            "--rewards",
            "disagreement,tilde,tilde:0.1",
            "--no-ablation",
            "--no-qace",
        ]
    )
    jobs = plan_jobs(args, {"lao:blocks": 100}, {"lao:blocks": None})  # type: ignore[dict-item]
    labels = [j.spec.label for j in jobs]
    assert sorted(set(labels)) == ["mcqs-e", "mcqs-e+h̃u", "mcqs-e+h̃u λ=0.1", "random"]
    assert all(labels.count(x) == 2 for x in set(labels))
    cfg = next(j.spec for j in jobs if j.spec.label == "mcqs-e+h̃u λ=0.1").config()
    assert (cfg.reward, cfg.tilde_weight) == ("tilde", 0.1)
    assert next(j.spec for j in jobs if j.spec.label == "random").config().reward == "disagreement"

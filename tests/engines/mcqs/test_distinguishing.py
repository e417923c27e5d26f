"""Distinguishing MDP, δ_TV / δ_SD, the ξ bonus (Lemma 2 of appendix A.2) and the
MCTS engine on tiny problems whose optimal query is known by hand."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capver.core.dataset import TransitionDataset
from capver.core.state import Transition
from capver.engines.lattice import LatticeBuilder
from capver.engines.mcqs.base import SynthesisInput
from capver.engines.mcqs.distinguishing import (
    SINK1,
    DistinguishingMDP,
    MetaState,
    delta_sd,
    delta_tv,
)
from capver.engines.mcqs.mcqs_e import ExactPlan, ExactPolicy, plan_exact, plan_with_supports
from capver.engines.mcqs.mcqs_s import plan_sampled
from capver.engines.mcts import MCTS, MCTSConfig
from capver.logic.condition import LogicContext
from capver.synthetic import (
    propositional_vocabulary,
    random_model,
    sample_dataset,
)
from tests.helpers.examples import scaled

dists = st.dictionaries(st.integers(0, 7), st.floats(0.01, 1.0), min_size=1, max_size=6).map(
    lambda d: tuple(sorted((s, p / sum(d.values())) for s, p in d.items()))
)


@given(dists, dists)
def test_delta_tv_and_sd_are_bounded_symmetric_and_ordered(r1, r2) -> None:
    tv, sd = delta_tv(r1, r2), delta_sd(r1, r2)
    assert 0.0 <= sd <= tv + 1e-12 <= 1.0 + 1e-9
    assert tv == pytest.approx(delta_tv(r2, r1))
    assert sd == pytest.approx(delta_sd(r2, r1))
    assert delta_tv(r1, r1) == 0.0 and delta_sd(r1, r1) == 0.0


def test_delta_values_by_hand() -> None:
    assert delta_tv(((1, 0.5), (2, 0.5)), ((1, 1.0),)) == pytest.approx(0.5)
    assert delta_sd(((1, 0.5), (2, 0.5)), ((1, 1.0),)) == pytest.approx(0.25)
    assert delta_tv(((1, 1.0),), ((2, 1.0),)) == pytest.approx(1.0)
    assert delta_sd(((1, 1.0),), ((2, 1.0),)) == pytest.approx(1.0)
    # Same support, different masses: TV sees it, SD does not.
    assert delta_tv(((1, 0.25), (2, 0.75)), ((1, 0.75), (2, 0.25))) == pytest.approx(0.5)
    assert delta_sd(((1, 0.25), (2, 0.75)), ((1, 0.75), (2, 0.25))) == 0.0


def _setup(transitions: list[tuple[int, str, int]], n_atoms: int = 2):
    vocab = propositional_vocabulary(n_atoms)
    ctx = LogicContext(vocab)
    data = TransitionDataset(vocab)
    for s, c, s2 in transitions:
        data.add(Transition(s, c, s2))
    b = LatticeBuilder(ctx, data)
    return ctx, data, b


@given(st.integers(0, 2**32 - 1), st.floats(0.0, 0.5))
def test_lemma2_reward_is_the_revisitation_bonus(seed: int, xi: float) -> None:
    """ρ₀ = ρ₁ = ρ and c tried in every s ∈ supp(ρ) ⇒ R = Σ ρ(s)·ξ/(|D_SC(s,c)|+1)."""
    rng = np.random.default_rng(seed)
    vocab = propositional_vocabulary(4)
    ctx = LogicContext(vocab)
    truth = random_model(ctx, rng, n_capabilities=2, total=True)
    data = sample_dataset(truth, rng, 60, n_states=6)
    b = LatticeBuilder(ctx, data)
    mdp = DistinguishingMDP(b.pessimistic, b.optimistic, data, list(truth), xi)
    c = "c0"
    tried = sorted(data.states_of(c))
    k = int(rng.integers(1, len(tried) + 1))
    support = sorted(rng.choice(tried, size=k, replace=False).tolist())
    w = rng.random(k) + 0.1
    rho = tuple((s, float(p)) for s, p in zip(support, w / w.sum()))
    reward = mdp.reward(mdp.step(MetaState(rho, rho), c))
    expected = sum(p * xi / (data.count_sc(s, c) + 1) for s, p in rho)
    assert reward == pytest.approx(expected, abs=1e-12)


def test_untried_pair_is_full_disagreement_and_unseen_mass_goes_to_sink() -> None:
    _ctx, data, b = _setup([(0, "c0", 1), (1, "c1", 3), (2, "c1", 2)])
    mdp = DistinguishingMDP(b.pessimistic, b.optimistic, data, ["c0", "c1"], xi=0.0)
    nxt = mdp.step(MetaState.point(0), "c1")
    # h∧ knows nothing of c1 at s=0; h∨ averages its two rules (+p1, no-op).
    assert dict(nxt.rho1) == {SINK1: 1.0}
    assert dict(nxt.rho2) == pytest.approx({0: 0.5, 2: 0.5})
    assert mdp.reward(nxt) == pytest.approx(1.0)
    agree = mdp.step(MetaState.point(0), "c0")
    assert agree.rho1 == agree.rho2 == ((1, 1.0),)
    mdp_xi = DistinguishingMDP(b.pessimistic, b.optimistic, data, ["c0", "c1"], xi=0.2)
    assert mdp_xi.reward(mdp_xi.step(MetaState.point(0), "c0")) == pytest.approx(0.2 / 2)


def _depth2_instance():
    # Every capability was tried at s=0 with identical predictions; the only
    # disagreement is c2 at s=1, reachable only through c0.
    return _setup([(0, "c0", 1), (0, "c1", 0), (0, "c2", 0), (1, "c0", 1), (1, "c1", 1)])


@pytest.mark.parametrize("rollout", [True, False])
@pytest.mark.parametrize("seed", range(5))
def test_mcqs_e_finds_the_hand_solved_depth_two_query(seed: int, rollout: bool) -> None:
    _ctx, data, b = _depth2_instance()
    inp = SynthesisInput(b.pessimistic, b.optimistic, data, ("c0", "c1", "c2"), 0.0)
    cfg = MCTSConfig(iterations=60, horizon=3, discount=0.95, rollout=rollout)
    path, value, _ = plan_exact(0, inp, cfg, np.random.default_rng(seed), explore=False)
    assert value == pytest.approx(0.95)  # disagreement 1, one step deep
    assert path == ["c0", "c2"]
    # The query the paper executes keeps the exploration bonus: it may wander, but it
    # still ends where the disagreement is.
    explored, _, _ = plan_exact(0, inp, cfg, np.random.default_rng(seed), explore=True)
    assert explored[-1] == "c2" and explored[0] == "c0"


@pytest.mark.parametrize("seed", range(5))
def test_mcqs_s_prefers_the_informative_first_step(seed: int) -> None:
    _ctx, data, b = _depth2_instance()
    inp = SynthesisInput(b.pessimistic, b.optimistic, data, ("c0", "c1", "c2"), 0.0)
    cfg = MCTSConfig(iterations=150, horizon=3, backup="mean", discount=0.95)
    engine, root = plan_sampled(0, inp, cfg, np.random.default_rng(seed))
    assert engine.best_action(root, explore=False) == "c0"
    child = root.edges["c0"].children[1]
    assert engine.best_action(child, explore=False) == "c2"
    # c2 at s=1 always lands in Δ (h∧ has no rule there): reward exactly 1.
    assert child.edges["c2"].q("mean") == 1.0
    # Mean backups average in exploratory visits, so Q(0, c0) is below the optimum
    # 0.95 but well above the uninformative alternatives.
    q = {a: e.q("mean") for a, e in root.edges.items()}
    assert q["c0"] > 0.6 and q["c0"] > 2 * max(q["c1"], q["c2"])


class _Chain:
    """A 3-step chain: 'safe' earns 0.4 each step; 'risky' earns 1 with probability
    1/2 and ends the episode otherwise.  Optimal mean-return first action: 'safe'
    (1.2 over three steps) beats 'risky' (≤ 0.5 + ...)."""

    deterministic = False

    def actions(self, s):
        return ("safe", "risky") if s >= 0 else ()

    def transition(self, s, a, rng):
        if a == "safe":
            return s + 1, 0.4, s + 1 >= 3
        if rng.random() < 0.5:
            return s + 1, 1.0, s + 1 >= 3
        return -1, 0.0, True

    def key(self, s):
        return s


def test_mean_backup_estimates_expected_return() -> None:
    engine = MCTS(
        _Chain(), MCTSConfig(iterations=3000, horizon=3, backup="mean", exploration=1.0), np.random.default_rng(0)
    )
    root = engine.search(0)
    # V(risky-first) = 0.5·(1 + V*(1)); V*(2) = max(0.4, 0.5) = 0.5, V*(1) = max(0.4+0.5, 0.5·1.5) = 0.9
    # so Q(0, risky) = 0.5·1.9 = 0.95 and Q(0, safe) = 0.4 + 0.9 = 1.3.
    assert engine.best_action(root, explore=False) == "safe"
    assert root.edges["safe"].q("mean") == pytest.approx(1.3, abs=0.1)


class _Counting:
    """A deterministic problem (s ↦ (s·a + 1) mod 17, reward from a fixed table) that
    counts its transition calls; ``deterministic`` is set per instance."""

    def __init__(self, deterministic: bool, rewards: list[float]) -> None:
        self.deterministic = deterministic
        self.rewards = rewards
        self.calls = 0

    def actions(self, s):
        return (1, 2, 3)

    def transition(self, s, a, rng):
        self.calls += 1
        s2 = (s * a + 1) % 17
        return s2, self.rewards[s2], False

    def key(self, s):
        return s


def _tree(node):
    return (
        node.state,
        node.visits,
        node.value,
        sorted((a, e.visits, e.best, e.total, _tree(next(iter(e.children.values())))) for a, e in node.edges.items()),
    )


@given(
    st.lists(st.floats(0.0, 1.0), min_size=17, max_size=17), st.integers(0, 2**32 - 1), st.sampled_from(["max", "mean"])
)
def test_reusing_deterministic_children_changes_nothing_but_the_work(rewards, seed, backup) -> None:
    cfg = MCTSConfig(iterations=80, horizon=4, backup=backup, discount=0.95)
    trees, calls = [], []
    for det in (False, True):
        problem = _Counting(det, rewards)
        root = MCTS(problem, cfg, np.random.default_rng(seed)).search(0)
        trees.append(_tree(root))
        calls.append(problem.calls)
    assert trees[0] == trees[1]
    assert calls[1] < calls[0]


def test_mcqs_e_replans_only_when_a_surprise_leaves_the_predicted_supports() -> None:
    _ctx, data, b = _depth2_instance()
    inp = SynthesisInput(b.pessimistic, b.optimistic, data, ("c0", "c1", "c2"), 0.0)
    plan = ExactPlan(("c0", "c2"), 0.95, (frozenset({0}), frozenset({1})))
    policy = ExactPolicy(plan, MCTSConfig(iterations=60, horizon=3, discount=0.95), np.random.default_rng(0))
    assert policy.next(0, 0, False, inp) == "c0"
    # Surprised, but in a state the plan predicted for step 1: the plan goes on.
    assert policy.next(1, 1, True, inp) == "c2"
    assert policy.replans == 0
    # Surprised in a state the plan did not predict: a new plan from there (state 2
    # has no observations, so every capability there is full disagreement).
    c = policy.next(2, 1, True, inp)
    assert policy.replans == 1
    assert c in ("c0", "c1", "c2") and policy.plan.expected[0] == frozenset({2})
    # A new execution of the query starts over with the original plan.
    assert policy.next(0, 0, False, inp) == "c0" and policy.plan is plan


@settings(max_examples=scaled(30), deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 40))
def test_mcqs_e_plan_reaches_the_disagreement_it_reports(seed: int, iterations: int) -> None:
    """Executed on the models, the query's path passes a meta-state whose disagreement
    is at least the plan's (discounted) value: the query can surprise.  (With random
    rollouts this fails: the value may come from a rollout below the tree.)"""
    rollout = False
    rng = np.random.default_rng(seed)
    ctx = LogicContext(propositional_vocabulary(4))
    truth = random_model(ctx, rng, n_capabilities=3, total=True)
    data = sample_dataset(truth, rng, int(rng.integers(1, 40)), n_states=5)
    b = LatticeBuilder(ctx, data)
    inp = SynthesisInput(b.pessimistic, b.optimistic, data, tuple(truth), 0.0)
    s0 = int(rng.integers(16))
    cfg = MCTSConfig(iterations=iterations, horizon=4, discount=0.95, rollout=rollout)
    plan = plan_with_supports(s0, inp, cfg, rng)
    mdp = DistinguishingMDP(b.pessimistic, b.optimistic, data, tuple(truth), 0.0)
    meta, seen = MetaState.point(s0), 0.0
    for c in plan.path:
        meta = mdp.step(meta, c)
        seen = max(seen, mdp.reward(meta))
    assert seen >= plan.value - 1e-9

"""MCQS-Exact (section 3.2, Fig. 3(a)): UCT over the distinguishing MDP with exact
predicted distributions, δ_TV reward and the max backup
Q(n, c) = max(δ_TV, V(T†(s†, c))).

The query is the principal path of the search tree, cut at the first node where the
path's best disagreement is reached (executing beyond it cannot add information the
search found).  Execution adapts: when an execution surprises (adds a transition D
did not have) and leaves the agent in a state outside the supports of the meta-state
the plan predicted for that step, the plan no longer describes where the agent is,
and the rest of the path is re-planned from the observed state with the remaining
horizon.  A surprise inside the predicted supports is what the plan aimed for, so
the plan continues.

A new leaf is worth its own disagreement δ_TV, without a random rollout below it
(:attr:`SynthesisConfig.exact_rollouts` turns rollouts back on).  Under the max
backup a random rollout of the remaining horizon almost always passes some untried
(s, c) pair, where h∧ has no rule and δ_TV = 1, so every first capability looked
about equally valuable and the query drifted.  Without rollouts the search is a
best-first search for the nearest disagreement; measured on LAO* First Responders
(800 steps, 3 seeds) it tried twice the transitions (1,900–2,050 against
900–1,120), reached coverage agreement 0.21–0.26 against 0.13–0.14, and used a
quarter of the CPU time (18–20 s against 62–99 s); on Blocksworld (1,000 steps, one
seed) 0.84 against 0.35.

A search ends early once every capability has been tried at the root and the root is
worth 1 (:attr:`SynthesisConfig.stop_at_full_disagreement`): δ_TV ≤ 1 and
γ ≤ 1, so no path can be worth more, and the remaining iterations only shifted visit
counts among capabilities that all reach full disagreement.  On LAO* First Responders
every search of the first 800 steps reached this after 33 of its 100 iterations on
average.  At 1,500 steps (6 seeds) coverage agreement was 0.40 on average with the
early end against 0.39 without (per seed 0.48/0.37/0.37/0.41/0.38/0.40 against
0.36/0.39/0.42/0.43/0.40/0.31), at 2.0–3.4 ms of CPU per simulator step against
7.1–9.8 ms.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from capver.core.state import State
from capver.engines.mcqs.base import SynthesisConfig, SynthesisInput
from capver.engines.mcqs.distinguishing import DistinguishingMDP, MetaState, StepMemo
from capver.engines.mcts import MCTS, Backup, MCTSConfig, Node


class _MetaProblem:
    deterministic = True

    def __init__(self, mdp: DistinguishingMDP) -> None:
        self.mdp = mdp

    def actions(self, s: MetaState) -> Sequence[str]:
        return self.mdp.capability_names

    def transition(self, s: MetaState, a: str, rng: np.random.Generator) -> tuple[MetaState, float, bool]:
        return self.mdp.step_reward(s, a)

    def key(self, s: MetaState) -> Hashable:
        return s


@dataclass(frozen=True, slots=True)
class ExactPlan:
    """A principal path with the meta-states it predicts: ``expected[i]`` holds the
    states either model gives mass before the path's i-th capability."""

    path: tuple[str, ...]
    value: float
    expected: tuple[frozenset[int], ...]


def plan_exact(
    s0: State, inp: SynthesisInput, config: MCTSConfig, rng: np.random.Generator, explore: bool = True
) -> tuple[list[str], float, Node[MetaState, str]]:
    """Search P†(s₀, h∧, h∨); returns (capability path, its value, the root).

    With ``explore`` the path follows argmax UCT as the paper prescribes for policy
    extraction; without, argmax Q (the greedy optimum of the search)."""
    engine, mdp, root = _search(s0, inp, config, rng)
    path, best, _ = _principal(engine, mdp, root, explore)
    return path, best, root


def plan_with_supports(
    s0: State, inp: SynthesisInput, config: MCTSConfig, rng: np.random.Generator, memo: StepMemo | None = None
) -> ExactPlan:
    """The query's plan: the argmax-UCT principal path and its predicted supports
    (``memo``: distinguishing-MDP steps shared with earlier searches of the run)."""
    engine, mdp, root = _search(s0, inp, config, rng, memo)
    path, best, metas = _principal(engine, mdp, root, True)
    expected = tuple(frozenset(s for rho in (m.rho1, m.rho2) for s, _ in rho if s >= 0) for m in metas)
    return ExactPlan(tuple(path), best, expected)


def _search(
    s0: State, inp: SynthesisInput, config: MCTSConfig, rng: np.random.Generator, memo: StepMemo | None = None
) -> tuple[MCTS[MetaState, str], DistinguishingMDP, Node[MetaState, str]]:
    mdp = DistinguishingMDP(
        inp.h_and, inp.h_or, inp.data, inp.capability_names, inp.xi, memo, inp.uncertainty, inp.focus
    )
    engine: MCTS[MetaState, str] = MCTS(_MetaProblem(mdp), config, rng)
    return engine, mdp, engine.search(MetaState.point(s0))


def _principal(
    engine: MCTS[MetaState, str], mdp: DistinguishingMDP, root: Node[MetaState, str], explore: bool
) -> tuple[list[str], float, list[MetaState]]:
    path: list[str] = []
    metas: list[MetaState] = []
    node = root
    best = root.value
    reached = False
    # Follow argmax-UCT (the paper keeps the exploration bonus in the query) and stop
    # at the first edge whose disagreement reaches the path's best value.
    while node.edges:
        a = engine.best_action(node, explore=explore)
        if a is None:
            break
        edge = node.edges[a]
        path.append(a)
        metas.append(node.state)
        child = next(iter(edge.children.values()), None)
        if child is None:
            break
        if best > 0 and child_reward(mdp, child) >= best - 1e-12:
            reached = True
            break
        node = child
    if explore and best > 0 and not reached:
        # The bonus led into a branch the search never found disagreement in (it ends
        # at an unexpanded node): such a query cannot surprise, and MCQS-E stopped on
        # 25 of them in a row long before it had learned the agent.  Take the path
        # to the best disagreement instead.
        return _principal(engine, mdp, root, False)
    return path, best, metas


def child_reward(mdp: DistinguishingMDP, node: Node[MetaState, str]) -> float:
    return mdp.reward(node.state)


class ExactPolicy:
    def __init__(
        self, plan: ExactPlan, config: MCTSConfig, rng: np.random.Generator, memo: StepMemo | None = None
    ) -> None:
        self.original = plan
        self.memo = memo
        self.plan = plan
        self.offset = 0  # the step at which the current plan started
        self.config = config
        self.rng = rng
        self.replans = 0

    def next(self, s: State, step: int, surprised: bool, current: SynthesisInput) -> str | None:
        remaining = self.config.horizon - step
        if remaining <= 0:
            return None
        if step == 0:
            # A new execution of the query starts from x₀ again.
            self.plan, self.offset = self.original, 0
        i = step - self.offset
        if surprised and (i >= len(self.plan.expected) or s not in self.plan.expected[i]):
            cfg = dataclasses.replace(self.config, horizon=remaining)
            self.plan = plan_with_supports(s, current, cfg, self.rng, self.memo)
            self.replans += 1
            self.offset, i = step, 0
            if self.plan.value <= 0.0:
                return None
        return self.plan.path[i] if i < len(self.plan.path) else None


class MCQSExact:
    name = "mcqs-e"

    def __init__(self, config: SynthesisConfig = SynthesisConfig()) -> None:
        self.config = config
        # One memo for the synthesizer's life (one learning run): every search of the
        # run reuses the steps whose models have not changed since.
        self.memo = StepMemo()

    def synthesize(self, s0: State, inp: SynthesisInput, rng: np.random.Generator) -> ExactPolicy:
        mcts = dataclasses.replace(
            self.config.mcts,
            backup=Backup.MAX,
            rollout=self.config.exact_rollouts,
            value_bound=1.0 if self.config.stop_at_full_disagreement else None,
        )
        return ExactPolicy(plan_with_supports(s0, inp, mcts, rng, self.memo), mcts, rng, self.memo)

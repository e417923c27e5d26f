"""MCQS-Exact (section 3.2, Fig. 3(a)): UCT over the distinguishing MDP with exact
predicted distributions, δ_TV reward and the max backup
Q(n, c) = max(δ_TV, V(T†(s†, c))).

The query is the principal path of the search tree, cut at the first node where the
path's best disagreement is reached (executing beyond it cannot add information the
search found).  Execution adapts: when an execution surprises (adds a transition D
did not have), the models changed and the rest of the path is re-planned from the
observed state with the remaining horizon.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

from capver.engines.mcqs.base import SynthesisConfig, SynthesisInput
from capver.engines.mcqs.distinguishing import DistinguishingMDP, MetaState
from capver.engines.mcts import MCTS, MCTSConfig, Node


class _MetaProblem:
    def __init__(self, mdp: DistinguishingMDP) -> None:
        self.mdp = mdp

    def actions(self, s: MetaState) -> Sequence[str]:
        return self.mdp.capabilities

    def transition(self, s: MetaState, a: str, rng: np.random.Generator) -> tuple[MetaState, float, bool]:
        nxt = self.mdp.step(s, a)
        return nxt, self.mdp.reward(nxt), nxt.settled

    def key(self, s: MetaState) -> Hashable:
        return s


def plan_exact(
    s0: int, inp: SynthesisInput, config: MCTSConfig, rng: np.random.Generator, explore: bool = True
) -> tuple[list[str], float, Node[MetaState, str]]:
    """Search P†(s₀, h∧, h∨); returns (capability path, its value, the root).

    With ``explore`` the path follows argmax UCT as the paper prescribes for policy
    extraction; without, argmax Q (the greedy optimum of the search)."""
    mdp = DistinguishingMDP(inp.h_and, inp.h_or, inp.data, inp.capabilities, inp.xi)
    engine: MCTS[MetaState, str] = MCTS(_MetaProblem(mdp), config, rng)
    root = engine.search(MetaState.point(s0))
    path: list[str] = []
    node = root
    best = root.value
    # Follow argmax-UCT (the paper keeps the exploration bonus in the query) and stop
    # at the first edge whose disagreement reaches the path's best value.
    while node.edges:
        a = engine.best_action(node, explore=explore)
        if a is None:
            break
        edge = node.edges[a]
        path.append(a)
        child = next(iter(edge.children.values()), None)
        if child is None:
            break
        if best > 0 and child_reward(mdp, child) >= best - 1e-12:
            break
        node = child
    return path, best, root


def child_reward(mdp: DistinguishingMDP, node: Node[MetaState, str]) -> float:
    return mdp.reward(node.state)


class ExactPolicy:
    def __init__(self, plan: list[str], config: MCTSConfig, rng: np.random.Generator) -> None:
        self.original = plan
        self.plan = plan
        self.offset = 0  # the step at which the current plan started
        self.config = config
        self.rng = rng

    def next(self, s: int, step: int, surprised: bool, current: SynthesisInput) -> str | None:
        remaining = self.config.horizon - step
        if remaining <= 0:
            return None
        if step == 0:
            # A new execution of the query starts from x₀ again.
            self.plan, self.offset = self.original, 0
        if surprised:
            cfg = MCTSConfig(
                iterations=self.config.iterations,
                horizon=remaining,
                exploration=self.config.exploration,
                backup="max",
                rollout=self.config.rollout,
                discount=self.config.discount,
            )
            self.plan, value, _ = plan_exact(s, current, cfg, self.rng)
            self.offset = step
            if value <= 0.0:
                return None
        i = step - self.offset
        return self.plan[i] if i < len(self.plan) else None


class MCQSExact:
    name = "mcqs-e"

    def __init__(self, config: SynthesisConfig = SynthesisConfig()) -> None:
        self.config = config

    def synthesize(self, s0: int, inp: SynthesisInput, rng: np.random.Generator) -> ExactPolicy:
        plan, _, _ = plan_exact(s0, inp, self.config.mcts, rng)
        return ExactPolicy(plan, self.config.mcts, rng)

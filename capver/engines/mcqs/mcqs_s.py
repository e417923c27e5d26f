"""MCQS-S, sample-based MCQS with set-of-support factorisation (section 3.2,
Fig. 3(c)).

Tree nodes hold single symbolic states.  At state s only the valid capabilities C_s
are tried; a successor is sampled from ½Pr_{h∧}(·|s,c) + ½Pr_{h∨}(·|s,c) (with the
ξ mass and the sinks of :mod:`capver.engines.mcqs.distinguishing`); entering a
state in the symmetric difference Δ of the two predicted supports earns reward 1
and ends the branch (it falsifies one model, so it need not be propagated),
otherwise 0.  The expected reward is exactly δ_SD.  Q(s, c) = R + Σ Pr(s′) V(s′)
is estimated from the observed successors (mean backup).

The query policy is the tree itself: after each execution the child for the
observed state is looked up; when it is missing, or the execution surprised, the
remaining horizon is re-planned from the observed state.

When some capability distinguishes the models from the root with certainty (every
successor it can lead to earns reward 1: δ_SD = 1, e.g. a capability never tried
there, where h∧ has no rule), no query can be worth more, and the search ends once
every capability has been tried at the root
(:attr:`~capver.engines.mcqs.base.SynthesisConfig.stop_at_full_disagreement`).
Measured on LAO* First Responders at 1,500 steps (3 seeds): coverage
agreement 0.40/0.31/0.41 (mean 0.37) with the early end against 0.24/0.29/0.21
(mean 0.25) without, with 3,540–3,690 unique transitions against 2,000–2,510, at
about the same CPU per simulator step (4.8–6.0 ms against 5.5–6.4 ms) — the
iterations saved go into the agent's planning at the new states it reaches.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Hashable, Sequence

import numpy as np

from capver.core.state import State
from capver.engines.mcqs.base import SynthesisConfig, SynthesisInput
from capver.engines.mcqs.distinguishing import SINK1, SINK2, DistinguishingMDP, StepMemo
from capver.engines.mcts import MCTS, Backup, MCTSConfig, Node

Mixture = tuple[list[int], list[float], frozenset[int]]  # (support, CDF, Δ)


class SampleMemo:
    """What the searches of one learning run share (for learning speed): per capability c, the
    successor mixtures of c and whether c is valid in a state.  Both depend only on
    c's two models (and, for the mixture, ξ and |D_SC(·, c)|, which change only with
    c's models), so they stay valid while those are the same objects (see
    :class:`~capver.engines.mcqs.distinguishing.StepMemo`)."""

    def __init__(self) -> None:
        self.mixtures = StepMemo()
        self.valid = StepMemo()


class _SampleProblem:
    deterministic = False

    def __init__(self, mdp: DistinguishingMDP, memo: SampleMemo | None = None) -> None:
        self.mdp = mdp
        memo = memo if memo is not None else SampleMemo()
        self._valid_memo = memo.valid
        self._cache: dict[str, dict[int, Mixture]] = {}
        self._valid_of: dict[str, dict[int, bool]] = {}
        self._valid: dict[int, list[str]] = {}

    def actions(self, s: State) -> Sequence[str]:
        if s < 0:
            return ()
        valid = self._valid.get(s)
        if valid is None:
            valid = self._valid[s] = [c for c in self.mdp.capability_names if self._is_valid(s, c)]
        return valid

    def _is_valid(self, s: State, c: str) -> bool:
        table = self._valid_of.get(c)
        if table is None:
            mdp = self.mdp
            table = self._valid_of[c] = self._valid_memo.table(c, mdp.h1.get(c), mdp.h2.get(c), 0.0)
        hit = table.get(s)
        if hit is None:
            hit = table[s] = self.mdp.is_valid(s, c)
        return hit

    def _mixture(self, s: State, c: str) -> Mixture:
        table = self._cache.get(c)
        if table is None:
            table = self._cache[c] = self.mdp.memo_table(c)
        hit = table.get(s)
        if hit is not None:
            return hit
        point = ((s, 1.0),)
        r1 = dict(self.mdp.step_one(point, c, 1))
        r2 = dict(self.mdp.step_one(point, c, 2))
        support = sorted(set(r1) | set(r2))
        cdf = list(itertools.accumulate(0.5 * r1.get(x, 0.0) + 0.5 * r2.get(x, 0.0) for x in support))
        delta = frozenset(set(r1) ^ set(r2))
        out = (support, cdf, delta)
        table[s] = out
        return out

    def certain(self, s: State, c: str) -> bool:
        """Every successor of c from s earns reward 1 (δ_SD = 1): no query from s can
        be worth more."""
        support, _, delta = self._mixture(s, c)
        return all(x in delta or x < 0 for x in support)

    def transition(self, s: State, a: str, rng: np.random.Generator) -> tuple[int, float, bool]:
        support, cdf, delta = self._mixture(s, a)
        i = bisect.bisect_right(cdf, rng.random() * cdf[-1])
        s2 = support[min(i, len(support) - 1)]
        if s2 in delta or s2 in (SINK1, SINK2):
            return s2, 1.0, True
        return s2, 0.0, False

    def key(self, s: State) -> Hashable:
        return s


def plan_sampled(
    s0: State,
    inp: SynthesisInput,
    config: MCTSConfig,
    rng: np.random.Generator,
    memo: SampleMemo | None = None,
    stop_at_certain: bool = False,
) -> tuple[MCTS[int, str], Node[int, str]]:
    """Search from s₀.  ``stop_at_certain``: when some capability distinguishes the
    models from s₀ with certainty (δ_SD = 1, e.g. one never tried in s₀), the search
    ends once every capability has been tried at the root."""
    memo = memo if memo is not None else SampleMemo()
    mdp = DistinguishingMDP(
        inp.h_and, inp.h_or, inp.data, inp.capability_names, inp.xi, memo.mixtures, inp.uncertainty, inp.focus
    )
    problem = _SampleProblem(mdp, memo)
    engine: MCTS[int, str] = MCTS(problem, config, rng)
    certain = stop_at_certain and any(problem.certain(s0, c) for c in problem.actions(s0))
    return engine, engine.search(s0, until_expanded=certain)


class SampledPolicy:
    def __init__(
        self,
        engine: MCTS[int, str],
        root: Node[int, str],
        config: MCTSConfig,
        rng: np.random.Generator,
        memo: SampleMemo | None = None,
        stop_at_certain: bool = False,
    ) -> None:
        self.memo = memo
        self.stop_at_certain = stop_at_certain
        self.root = (engine, root)
        self.engine = engine
        self.node: Node[int, str] | None = root
        self.offset = 0
        self.config = config
        self.rng = rng
        self.last: str | None = None

    def next(self, s: State, step: int, surprised: bool, current: SynthesisInput) -> str | None:
        remaining = self.config.horizon - step
        if remaining <= 0:
            return None
        if step == 0:
            # A new execution of the query starts from the root again.
            self.engine, self.node, self.last = self.root[0], self.root[1], None
        node = self.node
        if step > 0 and node is not None and self.last is not None:
            edge = node.edges.get(self.last)
            node = edge.children.get(s) if edge is not None else None
        if surprised or node is None or not node.edges:
            cfg = MCTSConfig(
                iterations=self.config.iterations,
                horizon=remaining,
                exploration=self.config.exploration,
                backup=Backup.MEAN,
                rollout=self.config.rollout,
                discount=self.config.discount,
            )
            self.engine, node = plan_sampled(s, current, cfg, self.rng, self.memo, self.stop_at_certain)
            if not node.edges:
                return None
        self.node = node
        self.last = self.engine.best_action(node, explore=True)
        return self.last


class MCQSSampled:
    name = "mcqs-s"

    def __init__(self, config: SynthesisConfig = SynthesisConfig()) -> None:
        self.config = config
        self.memo = SampleMemo()  # shared by every search of this synthesizer's run

    def synthesize(self, s0: State, inp: SynthesisInput, rng: np.random.Generator) -> SampledPolicy:
        cfg = self.config.mcts
        cfg = MCTSConfig(cfg.iterations, cfg.horizon, cfg.exploration, Backup.MEAN, cfg.rollout, cfg.discount)
        stop = self.config.stop_at_full_disagreement
        engine, root = plan_sampled(s0, inp, cfg, rng, self.memo, stop)
        return SampledPolicy(engine, root, cfg, rng, self.memo, stop)

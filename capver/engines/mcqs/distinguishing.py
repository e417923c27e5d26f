"""The distinguishing MDP P†(s₀, h₁, h₂) of section 3.2 (Definition "distinguishing
MDP"), its rewards δ_TV and δ_SD, and the ξ revisitation bonus of section 3.3.

Meta-states ⟨ρ₁, ρ₂⟩ are pairs of predicted state distributions; a capability c
moves each by its own model, τ_c^{h}(ρ)(s′) = Σ_s Pr_h(s′|s,c) ρ(s).

Two readings are fixed here because the paper leaves them open:

* Mass that a model cannot move — no rule of c matches s, Pr_h(·|s,c) = 0 — goes to
  an absorbing sink ⊥_k of model k (:data:`SINK1`, :data:`SINK2`), so that "h₁
  says nothing, h₂ predicts an outcome" is full disagreement (δ_TV = 1) rather than
  lost mass.
* The ξ bonus: "MCQS assigns probability 1 − ξ·Pr_m(s,c) to the observed effect
  distribution and ξ·Pr_m(s,c) to unseen distinguishing effects", with
  Pr_m(s,c) = 1/(1 + |D_SC(s,c)|).  The unseen mass goes to ⊥₁ under h₁ only, so
  when ρ₁ = ρ₂ = ρ and c was tried in every s ∈ supp(ρ) the reward is exactly
  Σ_s ρ(s)·ξ/(|D_SC(s,c)| + 1) (Lemma 2 of appendix A.2).

Distributions are tuples of (state, mass) sorted by state, with float masses (the
hot path); masses below :data:`PRUNE` are dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from capver.core.dataset import TransitionDataset
from capver.core.state import State
from capver.engines.mcqs.focus import Focus
from capver.engines.mcqs.tilde import Uncertainty
from capver.model.capability_model import CompoundModel

SINK1 = -1
"""⊥₁: where h₁ sends mass it cannot move, and the ξ mass of unseen effects."""
SINK2 = -2
"""⊥₂: where h₂ sends mass it cannot move."""
SINK0 = -3
"""Where both players send mass that neither can move outside a property focus: the
same sink for both, so it carries no disagreement (:mod:`capver.engines.mcqs.focus`)."""
PRUNE = 1e-12

Dist = tuple[tuple[int, float], ...]


@dataclass(frozen=True, slots=True)
class MetaState:
    """⟨ρ₁, ρ₂⟩."""

    rho1: Dist
    rho2: Dist
    # Meta-states key the step memo and the search tree's children, so their hash
    # (over every (state, mass) pair) is computed once.
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.rho1, self.rho2)))

    def __hash__(self) -> int:
        return self._hash

    @staticmethod
    def point(s: State) -> MetaState:
        return MetaState(((s, 1.0),), ((s, 1.0),))

    @property
    def settled(self) -> bool:
        """All mass is in the sinks: nothing further can be distinguished."""
        return all(s < 0 for s, _ in self.rho1) and all(s < 0 for s, _ in self.rho2)


def delta_tv(rho1: Dist, rho2: Dist) -> float:
    """δ_TV(ρ₁, ρ₂) = ½ Σ_s |ρ₁(s) − ρ₂(s)|."""
    d2 = dict(rho2)
    total = 0.0
    for s, p in rho1:
        total += abs(p - d2.pop(s, 0.0))
    total += sum(d2.values())
    return 0.5 * total


def delta_sd(rho1: Dist, rho2: Dist) -> float:
    """δ_SD(ρ₁, ρ₂) = Σ_{s ∈ Δ(ρ₁,ρ₂)} ½ρ₁(s) + ½ρ₂(s), Δ the symmetric difference
    of the supports."""
    s1 = {s for s, p in rho1 if p > 0}
    s2 = {s for s, p in rho2 if p > 0}
    diff = s1 ^ s2
    return sum(0.5 * p for s, p in rho1 if s in diff) + sum(0.5 * p for s, p in rho2 if s in diff)


Step = tuple[MetaState, float, bool]
"""T†(s†, c) with its reward δ_TV and whether it is settled."""


class StepMemo:
    """Steps of the distinguishing MDP kept across the searches of one learning run
    (for learning speed: MCQS-E re-plans after most surprises, and each re-plan used to start
    from an empty memo).

    τ_c depends only on c's two models, ξ and |D_SC(·, c)|.  The lattice builder
    replaces c's model objects whenever a count of c changes, so a table of steps
    stays valid exactly as long as c's two model objects and ξ are the same; a
    change of any of them starts a fresh table for c.  With the h̃-uncertainty
    reward (``--reward tilde``) the steps also depend on u, and with a property focus on the
    focus, so the table is keyed by their versions too (``variant``: 0 for
    neither).  Results are therefore identical to computing every step anew."""

    def __init__(self, limit: int = 500_000) -> None:
        self.limit = limit  # entries per capability before its table is dropped (memory bound)
        self._tables: dict[str, tuple[object, object, float, dict[Any, Any], object]] = {}

    def table(self, c: str, m1: object, m2: object, xi: float, variant: object = 0) -> dict[Any, Any]:
        entry = self._tables.get(c)
        if (
            entry is None
            or entry[0] is not m1
            or entry[1] is not m2
            or entry[2] != xi
            or entry[4] != variant
            or len(entry[3]) > self.limit
        ):
            entry = self._tables[c] = (m1, m2, xi, {}, variant)
        return entry[3]


class DistinguishingMDP:
    """P†(·, h₁, h₂) for fixed models and dataset (h₁ = h∧, h₂ = h∨ in MCQS)."""

    def __init__(
        self,
        h1: CompoundModel,
        h2: CompoundModel,
        data: TransitionDataset,
        capabilities: Sequence[str],
        xi: float = 0.0,
        memo: StepMemo | None = None,
        uncertainty: Uncertainty | None = None,
        focus: Focus | None = None,
    ) -> None:
        self.h1 = h1
        self.h2 = h2
        self.data = data
        self.capability_names = tuple(capabilities)
        self.xi = xi
        # λ = 0 is the default reward exactly: drop the term rather than add zeros.
        self.uncertainty = uncertainty if uncertainty is not None and uncertainty.weight > 0 else None
        self.focus = focus
        # Searches revisit the same meta-states many times, and the models are fixed
        # for the life of this object, so steps are memoised per capability — in
        # ``memo`` when given, which outlives this object (see StepMemo).
        self._memo = memo if memo is not None else StepMemo()
        self._tables: dict[str, dict[Any, Any]] = {}

    def memo_table(self, c: str) -> dict[Any, Any]:
        """The memo of c's steps under these models (see :class:`StepMemo`)."""
        t = self._tables.get(c)
        if t is None:
            version = self.uncertainty.version if self.uncertainty is not None else 0
            variant: object = version if self.focus is None else (version, self.focus.version)
            t = self._tables[c] = self._memo.table(c, self.h1.get(c), self.h2.get(c), self.xi, variant)
        return t

    def missing_mass(self, s: State, c: str) -> float:
        """ξ·Pr_m(s, c) with Pr_m(s, c) = 1/(1 + |D_SC(s, c)|), plus λ·u(s, c) with the
        h̃-uncertainty reward (capped at 1; :mod:`capver.engines.mcqs.tilde`)."""
        m = 0.0 if self.xi == 0.0 else self.xi / (1 + self.data.count_sc(s, c))
        if self.uncertainty is not None:
            m = min(1.0, m + self.uncertainty.bonus(s, c))
        return m

    def step_one(self, rho: Dist, c: str, which: int) -> Dist:
        """τ_c^{h_which}(ρ) with sinks (and the ξ mass for h₁)."""
        model = (self.h1 if which == 1 else self.h2).get(c)
        sink = SINK1 if which == 1 else SINK2
        focus = self.focus
        out: dict[int, float] = {}
        for s, p in rho:
            if s < 0:
                out[s] = out.get(s, 0.0) + p
                continue
            if focus is not None and not focus.relevant(s):
                # Outside the focus both players make the same move (capver.engines.mcqs.focus).
                for s2, q in self._common_move(s, c):
                    out[s2] = out.get(s2, 0.0) + p * q
                continue
            dist = model.float_distribution(s) if model is not None else ()
            if not dist:
                guess = self.uncertainty.guess(s, c) if which == 1 and self.uncertainty is not None else None
                if guess is None:
                    out[sink] = out.get(sink, 0.0) + p
                    continue
                # h∧ is silent, h̃ predicts: h₁ follows h̃ with the share its
                # certainty earns (capver.engines.mcqs.tilde), the rest stays unknown.
                share, g = guess
                out[SINK1] = out.get(SINK1, 0.0) + p * (1.0 - share)
                for s2, q in g:
                    out[s2] = out.get(s2, 0.0) + p * share * q
                continue
            keep = p
            if which == 1:
                m = self.missing_mass(s, c)
                if focus is not None:
                    m = min(1.0, m + focus.bonus(s, c))
                if m:
                    out[SINK1] = out.get(SINK1, 0.0) + p * m
                    keep = p * (1.0 - m)
            for s2, q in dist:
                out[s2] = out.get(s2, 0.0) + keep * q
        return tuple(sorted((s, p) for s, p in out.items() if p > PRUNE))

    def _common_move(self, s: State, c: str) -> Dist:
        """Both players' move outside the focus: h∧'s prediction, else h∨'s, else the
        common sink (:data:`SINK0`, so that no disagreement arises)."""
        for model in (self.h1.get(c), self.h2.get(c)):
            dist = model.float_distribution(s) if model is not None else ()
            if dist:
                return dist
        return ((SINK0, 1.0),)

    def step(self, meta: MetaState, c: str) -> MetaState:
        """T†(⟨ρ₁, ρ₂⟩, c)."""
        return self.step_reward(meta, c)[0]

    def step_reward(self, meta: MetaState, c: str) -> Step:
        """(T†(⟨ρ₁, ρ₂⟩, c), its δ_TV, whether it is settled), memoised."""
        table = self._tables.get(c)
        if table is None:
            table = self.memo_table(c)
        hit = table.get(meta)
        if hit is None:
            nxt = MetaState(self.step_one(meta.rho1, c, 1), self.step_one(meta.rho2, c, 2))
            hit = table[meta] = (nxt, self.reward(nxt), nxt.settled)
        return hit

    def reward(self, meta: MetaState) -> float:
        """R†(⟨ρ₁, ρ₂⟩) = δ_TV(ρ₁, ρ₂)."""
        return delta_tv(meta.rho1, meta.rho2)

    def valid_capabilities(self, s: State) -> list[str]:
        """C_s: capabilities with a rule that matches s in h₁ or h₂.  A capability
        never observed at all has no rules yet; its optimistic model is vacuous, so
        it is treated as valid everywhere (otherwise it could never be tried)."""
        return [c for c in self.capability_names if self.is_valid(s, c)]

    def is_valid(self, s: State, c: str) -> bool:
        """c ∈ C_s (see :meth:`valid_capabilities`)."""
        m1, m2 = self.h1.get(c), self.h2.get(c)
        return (m2 is None or not m2.rules) or m2.covers(s) or (m1 is not None and m1.covers(s))

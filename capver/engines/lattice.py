"""The lattice bounds h∧ ⪯ h⋆ ⪯ h∨ built from a dataset (section 3.1, Theorem 1,
Theorem 3 of appendix A).

For each capability c the observed states are partitioned by equality of their
observed effect sets, s₁ ∼_c s₂ iff η_c(s₁, D) = η_c(s₂, D), giving blocks
S_φ ∈ Φ_c with common effect set E_φ.  Each block yields one rule whose effect
probabilities are the maximum-likelihood estimates pooled over the block's
transitions, Pr(η) = N(η in S_φ) / N(S_φ) — the reading of "estimated from D_c by
MLE" under which every rule is a proper distribution over E_φ.

* h∧ uses pcond(S_φ) = ⋁_{s∈S_φ} ℓ(s) (only observed transitions are admitted);
* h∨ uses ocond(S_φ) = ¬⋁_{s∈Φ_c∖S_φ} ℓ(s), which, since the blocks are disjoint,
  equals pcond(S_φ) ∨ ¬⋁_{s∈Φ_c} ℓ(s): the block plus every untried state.

:class:`LatticeBuilder` keeps the partition, the block BDDs and the pooled counts
between calls and, on :meth:`LatticeBuilder.update`, touches only the (c, s) pairs
the dataset's change log reports — MCQS rebuilds after every query.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from capver.core.dataset import TransitionDataset
from capver.core.state import Capability, Effect, State
from capver.logic.bdd import Node
from capver.logic.condition import Condition, LogicContext
from capver.model.capability_model import CapabilityModel, CompoundModel, Rule

EffectSet = frozenset[Effect]


@dataclass(slots=True)
class _Partition:
    """Φ_c for one capability, maintained incrementally."""

    key_of: dict[State, EffectSet] = field(default_factory=dict)
    counts_of: dict[State, dict[Effect, int]] = field(default_factory=dict)
    blocks: dict[EffectSet, set[State]] = field(default_factory=dict)
    block_bdd: dict[EffectSet, Node] = field(default_factory=dict)
    block_counts: dict[EffectSet, dict[Effect, int]] = field(default_factory=dict)
    observed_bdd: Node = None


@dataclass(frozen=True, slots=True)
class Bounds:
    """The pessimistic and optimistic compound models of one dataset."""

    pessimistic: CompoundModel
    optimistic: CompoundModel


class LatticeBuilder:
    """Builds and incrementally maintains h∧ and h∨ for a dataset."""

    def __init__(self, ctx: LogicContext, data: TransitionDataset) -> None:
        if ctx.vocab is not data.vocab and ctx.vocab != data.vocab:
            raise ValueError("the logic context and the dataset have different vocabularies")
        self.ctx = ctx
        self.data = data
        self._parts: dict[str, _Partition] = {}
        self._cursor = 0
        self._pess = CompoundModel(ctx, [])
        self._opt = CompoundModel(ctx, [])
        self.update()

    @property
    def pessimistic(self) -> CompoundModel:
        """h∧."""
        return self._pess

    @property
    def optimistic(self) -> CompoundModel:
        """h∨."""
        return self._opt

    @property
    def bounds(self) -> Bounds:
        return Bounds(self._pess, self._opt)

    def blocks(self, c: str) -> dict[EffectSet, frozenset[State]]:
        """Φ_c: the partition of c's observed states, keyed by effect set."""
        part = self._parts.get(c)
        return {} if part is None else {k: frozenset(v) for k, v in part.blocks.items()}

    def update(self) -> set[str]:
        """Fold the dataset's changes since the last call into h∧ and h∨.

        Returns the names of the capabilities whose models were rebuilt."""
        changes = self.data.changes_since(self._cursor)
        self._cursor = self.data.log_position
        touched: dict[str, set[State]] = {}
        for c, s in changes:
            touched.setdefault(c, set()).add(s)
        new_caps = [c for c in self.data.capability_table if c not in self._pess]
        for c in new_caps:
            touched.setdefault(c, set())
        if not touched:
            return set()
        pess, opt = [], []
        for c, states in touched.items():
            part = self._parts.get(c)
            if part is None:
                part = self._parts[c] = _Partition(observed_bdd=self.ctx.bdd.false)
            for s in states:
                self._move(part, c, s)
            p_model, o_model = self._rules(self.data.capability_table[c], part)
            pess.append(p_model)
            opt.append(o_model)
        self._pess = self._pess.replace(pess)
        self._opt = self._opt.replace(opt)
        return set(touched)

    # -- internals --------------------------------------------------------------------
    def _move(self, part: _Partition, c: str, s: State) -> None:
        b = self.ctx.bdd
        succ = self.data.successors(s, c)
        new_counts: dict[Effect, int] = {}
        for s2, n in succ.items():
            e = Effect(s2 & ~s, s & ~s2)
            new_counts[e] = new_counts.get(e, 0) + n
        new_key = frozenset(new_counts)
        old_key = part.key_of.get(s)
        old_counts = part.counts_of.get(s, {})
        m = self.ctx.minterm_bdd(s)
        if old_key is not None:
            bc = part.block_counts[old_key]
            for e, n in old_counts.items():
                bc[e] -= n
                if not bc[e]:
                    del bc[e]
            if old_key != new_key:
                part.blocks[old_key].discard(s)
                if part.blocks[old_key]:
                    part.block_bdd[old_key] = b.conj(part.block_bdd[old_key], b.neg(m))
                else:
                    del part.blocks[old_key], part.block_bdd[old_key], part.block_counts[old_key]
        else:
            part.observed_bdd = b.disj(part.observed_bdd, m)
        if old_key != new_key:
            part.blocks.setdefault(new_key, set()).add(s)
            part.block_bdd[new_key] = b.disj(part.block_bdd.get(new_key, b.false), m)
        bc = part.block_counts.setdefault(new_key, {})
        for e, n in new_counts.items():
            bc[e] = bc.get(e, 0) + n
        part.key_of[s] = new_key
        part.counts_of[s] = new_counts

    def _rules(self, cap: Capability, part: _Partition) -> tuple[CapabilityModel, CapabilityModel]:
        b = self.ctx.bdd
        observed = frozenset(part.key_of)
        unobserved = b.neg(part.observed_bdd)
        p_rules, o_rules = [], []
        for key in sorted(part.blocks, key=sorted):
            block = frozenset(part.blocks[key])
            counts = part.block_counts[key]
            total = sum(counts.values())
            effects = [(Fraction(counts[e], total), e) for e in sorted(key)]
            bdd = part.block_bdd[key]
            p_rules.append(Rule.make(Condition.pessimistic(self.ctx, block, bdd=bdd), effects))
            o_rules.append(
                Rule.make(Condition.optimistic(self.ctx, block, observed, bdd=b.disj(bdd, unobserved)), effects)
            )
        return CapabilityModel(cap, tuple(p_rules)), CapabilityModel(cap, tuple(o_rules))


def build_bounds(ctx: LogicContext, data: TransitionDataset) -> Bounds:
    """h∧ and h∨ of a dataset, built from scratch."""
    return LatticeBuilder(ctx, data).bounds

"""Capability models (section 2, Definition "capability model").

A rule r = ⟨cond(r), {(p_j, η_j)}⟩ with p_j ∈ (0, 1] and Σ p_j = 1; a capability
model h_c is a set of rules; a compound model h† has one capability model per
capability.  Probabilities are exact :class:`fractions.Fraction` s so that a model
written to the DSL and read back predicts exactly the same Pr_h.

Pr_h(s′ | s, c) = (1/|R_s|) Σ_{r∈R_s} Σ_j p_j·1[s′ = apply(s, η_j)] with
R_s = {r ∈ h_c : s ⊨ cond(r)}, and 0 when R_s is empty.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from fractions import Fraction
from types import MappingProxyType
from typing import Any

from capver.core.dataset import TransitionDataset
from capver.core.state import Capability, Effect, State, Transition
from capver.core.vocabulary import Vocabulary
from capver.errors import ModelError
from capver.logic.bdd import Cube, Node
from capver.logic.condition import Condition, ConditionKind, LogicContext

Distribution = dict[State, Fraction]

_LatticeIndex = tuple[dict[State, tuple[int, ...]], tuple[int, ...], frozenset[State]]
"""State → indices of the rules matching it, the rules matching every state outside
Φ_c, and Φ_c (see :meth:`CapabilityModel._lattice_index`)."""

_Mixture = tuple[int, tuple[tuple[Effect, int], ...]]
"""(D, ((η, n), …)): the all-rules effect mixture over a common denominator D."""


@dataclass(slots=True)
class _LazyParts:
    """What a :class:`CapabilityModel` computes at most once, on first use."""

    index_known: bool = False  # the index may be None, so None cannot mean "not yet"
    index: _LatticeIndex | None = None
    mixture: _Mixture | None = None


@dataclass(frozen=True, slots=True)
class Rule:
    """⟨cond(r), effects(r)⟩; ``effects`` is sorted by effect and has no duplicates."""

    condition: Condition
    effects: tuple[tuple[Fraction, Effect], ...]
    # The effects with float probabilities, for query synthesis's float arithmetic.
    float_effects: tuple[tuple[float, Effect], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.effects:
            raise ModelError("a rule needs at least one effect")
        seen = set()
        for p, eta in self.effects:
            if not (0 < p <= 1):
                raise ModelError(f"effect probability {p} is not in (0, 1]")
            if eta in seen:
                raise ModelError(f"effect {eta} appears twice in one rule")
            seen.add(eta)
        total = sum((p for p, _ in self.effects), Fraction(0))
        if total != 1:
            raise ModelError(f"effect probabilities sum to {total}, expected 1")
        object.__setattr__(self, "float_effects", tuple((float(p), eta) for p, eta in self.effects))

    @staticmethod
    def make(condition: Condition, effects: Iterable[tuple[Fraction | int | str, Effect]]) -> Rule:
        items = sorted(((Fraction(p), e) for p, e in effects), key=lambda pe: pe[1])
        return Rule(condition, tuple(items))

    def effect_set(self) -> frozenset[Effect]:
        return frozenset(e for _, e in self.effects)


def rule_mixture(rules: Sequence[Rule], s: State | None = None) -> dict[Any, Fraction]:
    """(1/|R|) Σ_{r∈R} effects(r): the one place where rules are averaged.  Keyed by
    s′ = apply(s, η) when a state ``s`` is given (Pr_h(·|s,c) for R = R_s), else by
    the effect η (the distribution over effects shared by a BDD region)."""
    acc: dict[Any, Fraction] = {}
    for r in rules:
        for p, eta in r.effects:
            key = eta if s is None else eta.apply(s)
            acc[key] = acc.get(key, Fraction(0)) + p
    n = len(rules)
    return {k: q / n for k, q in acc.items()}


def float_rule_mixture(rules: Sequence[Rule], s: State) -> tuple[tuple[State, float], ...]:
    """:func:`rule_mixture` at ``s`` in floats, as sorted (s′, p) pairs: the sums of
    the exact view, in the same order, without building Fractions (they cost more
    than a whole step of query synthesis)."""
    acc: dict[State, float] = {}
    for r in rules:
        for p, eta in r.float_effects:
            s2 = eta.apply(s)
            acc[s2] = acc.get(s2, 0.0) + p
    n = len(rules)
    return tuple(sorted((s2, q / n) for s2, q in acc.items()))


@dataclass(frozen=True, slots=True)
class CapabilityModel:
    """h_c: the rules of one capability."""

    capability: Capability
    rules: tuple[Rule, ...]
    _cache: dict[State, Distribution] = field(default_factory=dict, repr=False, compare=False, hash=False)
    _fcache: dict[State, tuple[tuple[State, float], ...]] = field(
        default_factory=dict, repr=False, compare=False, hash=False
    )

    _lazy: _LazyParts = field(default_factory=_LazyParts, repr=False, compare=False, hash=False)

    @property
    def name(self) -> str:
        return self.capability.name

    def _lattice_index(self) -> _LatticeIndex | None:
        """For models built by the lattice (every condition a pessimistic block, or
        every condition an optimistic block over one universe Φ_c): state → indices
        of the rules matching it, the rules matching every state outside Φ_c, and
        Φ_c.  Makes R_s a dictionary lookup instead of a scan of all rules."""
        if self._lazy.index_known:
            return self._lazy.index
        kinds = {r.condition.kind for r in self.rules}
        index: _LatticeIndex | None = None
        if self.rules and kinds in ({ConditionKind.PESSIMISTIC}, {ConditionKind.OPTIMISTIC}):
            universe = self.rules[0].condition.universe
            if kinds == {ConditionKind.PESSIMISTIC} or all(r.condition.universe == universe for r in self.rules):
                by_state: dict[State, list[int]] = {}
                for i, r in enumerate(self.rules):
                    for s in r.condition.states:
                        by_state.setdefault(s, []).append(i)
                outside = tuple(range(len(self.rules))) if kinds == {ConditionKind.OPTIMISTIC} else ()
                index = ({s: tuple(v) for s, v in by_state.items()}, outside, universe)
        self._lazy.index = index
        self._lazy.index_known = True
        return index

    def matching(self, s: State) -> list[Rule]:
        """R_s."""
        index = self._lattice_index()
        if index is None:
            return [r for r in self.rules if r.condition.holds(s)]
        by_state, outside, universe = index
        hit = by_state.get(s)
        if hit is not None:
            return [self.rules[i] for i in hit]
        # An optimistic rule matches s iff s is in its block or outside Φ_c.
        return [self.rules[i] for i in outside] if s not in universe else []

    def _all_rules_mixture(self) -> _Mixture:
        """(1/|h_c|) Σ_r effects(r) over a common denominator D, as (D, ((η, n), …)):
        the distribution h∨ predicts at every untried state, computed once."""
        mix = self._lazy.mixture
        if mix is None:
            acc = rule_mixture(self.rules)
            denom = math.lcm(*(q.denominator for q in acc.values()))
            mix = (denom, tuple((eta, int(q * denom)) for eta, q in sorted(acc.items(), key=lambda x: x[0])))
            self._lazy.mixture = mix
        return mix

    def _mixture_counts(self, s: State, rs: list[Rule]) -> tuple[int, dict[State, int]] | None:
        """When every rule matches (and there are more than two), Pr_h(·|s,c) as
        (D, {s′: numerator}) from the precomputed all-rules mixture; else None."""
        if not (rs and len(rs) == len(self.rules) and len(rs) > 2):
            return None
        denom, mix = self._all_rules_mixture()
        counts: dict[State, int] = {}
        for eta, n in mix:
            s2 = eta.apply(s)
            counts[s2] = counts.get(s2, 0) + n
        return denom, counts

    def distribution(self, s: State) -> Distribution:
        """Pr_h(· | s, c) as {s′: p}; empty when no rule matches.  The returned dict is
        shared by later calls with the same s: do not modify it."""
        d = self._cache.get(s)
        if d is not None:
            return d
        rs = self.matching(s)
        mixed = self._mixture_counts(s, rs)
        d = {}
        if mixed is not None:
            denom, counts = mixed
            d = {s2: Fraction(n, denom) for s2, n in counts.items()}
        elif rs:
            d = rule_mixture(rs, s)
        self._cache[s] = d
        return d

    def prob(self, s: State, s_next: State) -> Fraction:
        return self.distribution(s).get(s_next, Fraction(0))

    def float_distribution(self, s: State) -> tuple[tuple[State, float], ...]:
        """Pr_h(· | s, c) as sorted (s′, float) pairs, cached: the hot path of query
        synthesis, where exact rationals would dominate the run time."""
        d = self._fcache.get(s)
        if d is not None:
            return d
        exact = self._cache.get(s)
        if exact is not None:
            d = tuple(sorted((s2, float(p)) for s2, p in exact.items()))
        else:
            # The sums of :meth:`distribution` in floats: building the Fractions first
            # cost more than the whole search step.
            rs = self.matching(s)
            mixed = self._mixture_counts(s, rs)
            if mixed is not None:
                denom, counts = mixed
                d = tuple(sorted((s2, n / denom) for s2, n in counts.items()))
            else:
                d = float_rule_mixture(rs, s) if rs else ()
        self._fcache[s] = d
        return d

    def regions(self) -> list[tuple[Node, tuple[Rule, ...]]]:
        """The state space split into BDD regions by the set of rules that match
        there.  The states of one region share R_s, hence share Pr_h(·|s,c) as a
        distribution over effects (:func:`rule_mixture` of the region's rules);
        regions where no rule matches are omitted."""
        if not self.rules:
            return []
        b = self.rules[0].condition.ctx.bdd
        parts: list[tuple[Node, tuple[Rule, ...]]] = [(b.true, ())]
        for r in self.rules:
            cond = r.condition.bdd
            nxt = []
            for u, rs in parts:
                inside = b.conj(u, cond)
                outside = b.conj(u, b.neg(cond))
                if inside != b.false:
                    nxt.append((inside, (*rs, r)))
                if outside != b.false:
                    nxt.append((outside, rs))
            parts = nxt
        return [(u, rs) for u, rs in parts if rs]

    def covers(self, s: State) -> bool:
        """Some rule applies in s (s ∈ C_s's domain for this capability)."""
        return bool(self.distribution(s))

    def admits(self, s: State, s_next: State) -> bool:
        """h_c ⊨ ⟨s, c, s′⟩: some matching rule has an effect leading to s′."""
        for r in self.rules:
            if r.condition.holds(s):
                for _, eta in r.effects:
                    if eta.apply(s) == s_next:
                        return True
        return False


class CompoundModel(Mapping[str, CapabilityModel]):
    """h†: one :class:`CapabilityModel` per capability, keyed by capability name."""

    __slots__ = ("_models", "ctx")

    def __init__(self, ctx: LogicContext, models: Iterable[CapabilityModel] | Mapping[str, CapabilityModel]) -> None:
        self.ctx = ctx
        items = models.values() if isinstance(models, Mapping) else models
        table: dict[str, CapabilityModel] = {}
        for m in items:
            if m.name in table:
                raise ModelError(f"duplicate capability {m.name!r}")
            table[m.name] = m
        self._models = MappingProxyType(table)

    @property
    def vocabulary(self) -> Vocabulary:
        return self.ctx.vocab

    def __getitem__(self, c: str) -> CapabilityModel:
        return self._models[c]

    def __iter__(self) -> Iterator[str]:
        return iter(self._models)

    def __len__(self) -> int:
        return len(self._models)

    def replace(self, changed: Iterable[CapabilityModel]) -> CompoundModel:
        """A new compound model with some capability models swapped in."""
        table = dict(self._models)
        for m in changed:
            table[m.name] = m
        return CompoundModel(self.ctx, table)

    @property
    def capabilities(self) -> tuple[Capability, ...]:
        return tuple(m.capability for m in self._models.values())

    def distribution(self, s: State, c: str) -> Distribution:
        m = self._models.get(c)
        return {} if m is None else m.distribution(s)

    def prob(self, s: State, c: str, s_next: State) -> Fraction:
        return self.distribution(s, c).get(s_next, Fraction(0))

    def admits(self, t: Transition) -> bool:
        """h† ⊨ t."""
        m = self._models.get(t.c)
        return m is not None and m.admits(t.s, t.s_next)

    # -- section 2, soundness and completeness w.r.t. a dataset ------------------------
    def is_complete(self, data: TransitionDataset) -> bool:
        """⟨s,c,s′⟩ ∈ D ⇒ h ⊨ ⟨s,c,s′⟩."""
        return all(self.admits(t) for t in data.unique_transitions())

    def unsound_witness(self, data: TransitionDataset, candidates: Iterable[State] | None = None) -> Transition | None:
        """A transition h admits that D lacks, searched from the given states (default:
        every state of D).  Exhaustive soundness over all of S is the z3 check
        :func:`capver.engines.verification.relations.refines` against the pessimistic model."""
        states = set(data.states()) if candidates is None else set(candidates)
        for c, m in self._models.items():
            for s in states:
                for s2 in m.distribution(s):
                    if data.count(s, c, s2) == 0:
                        return Transition(s, c, s2)
        return None


class SuccessCase(Enum):
    """Why a rule has no success range (or a degenerate one)."""

    RANGE = "range"
    NO_INTENT = "no intent"
    CONTRADICTORY = "contradictory intent"
    ALREADY_HOLDS = "intent already holds where it applies"
    NOWHERE = "applies in no state"
    TOO_MANY_CASES = "too many cases to compute"


@dataclass(frozen=True, slots=True)
class IntentSuccess:
    """The probability that one execution under a rule ends with the capability's
    intent achieved, over the states where the rule applies and the intent does not
    hold yet: between ``low`` and ``high`` (equal when it does not depend on the
    state); ``None`` unless ``case`` is RANGE or CONTRADICTORY."""

    low: Fraction | None
    high: Fraction | None
    case: SuccessCase = SuccessCase.RANGE


def intent_success(cap: Capability, rule: Rule, max_cases: int = 256) -> IntentSuccess:
    """The success range of ``rule`` for ``cap``'s intent, exactly, by a BDD case
    split: apply(s, η) ⊨ intent holds exactly on a cube of s (each intent literal η
    does not set must already hold in s), so splitting cond(r) ∧ ¬intent on those
    cubes gives every achievable sum of the outcome probabilities.  The one
    computation behind the DSL's rule comments, report.txt and the HTML report."""
    if not cap.intent:
        return IntentSuccess(None, None, SuccessCase.NO_INTENT)
    ctx = rule.condition.ctx
    b = ctx.bdd
    pos, neg = ctx.vocab.literals(cap.intent)
    if pos & neg:
        return IntentSuccess(Fraction(0), Fraction(0), SuccessCase.CONTRADICTORY)
    start = b.conj(rule.condition.bdd, b.neg(b.cube(Cube(pos | neg, pos))))
    if start == b.false:
        empty = rule.condition.bdd == b.false
        return IntentSuccess(None, None, SuccessCase.NOWHERE if empty else SuccessCase.ALREADY_HOLDS)
    cases: list[tuple[Node, Fraction]] = [(start, Fraction(0))]
    for p, eta in rule.effects:
        if pos & eta.delete or neg & eta.add:
            continue  # this outcome undoes the intent in every state
        need_pos, need_neg = pos & ~eta.add, neg & ~eta.delete
        q = b.cube(Cube(need_pos | need_neg, need_pos))
        split: list[tuple[Node, Fraction]] = []
        for u, acc in cases:
            yes, no = b.conj(u, q), b.conj(u, b.neg(q))
            if yes != b.false:
                split.append((yes, acc + p))
            if no != b.false:
                split.append((no, acc))
        if len(split) > max_cases:
            return IntentSuccess(None, None, SuccessCase.TOO_MANY_CASES)
        cases = split
    return IntentSuccess(min(acc for _, acc in cases), max(acc for _, acc in cases))

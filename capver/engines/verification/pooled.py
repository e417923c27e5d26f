"""Verdicts under a stated abstraction: executions pooled per (class, capability),
the widened h∨ they license, and an anytime-valid test of the assumption.

The confident tier of :mod:`capver.engines.verification.agent_verdict` bounds the
unseen mass of every (state, capability) pair of h∨'s frontier from that pair's own
executions, which costs a few hundred executions per pair.  An abstraction
(:mod:`capver.model.abstraction`) states that some states behave alike.

**Assumption (H).**  For each capability c and each class κ of c's abstraction, the
*observed effect* η(⟨s, c, s′⟩) = ⟨s′ ∖ s, s ∖ s′⟩ of an execution of c from any state
s of κ has one distribution q_{κ,c}, whatever s and whatever came before (A1 of
:mod:`capver.engines.verification.sampling`, with the class in place of the state).
A class may hold pairs of several capabilities (the symmetry of the objects,
:class:`~capver.model.abstraction.Symmetry`): then the effect is compared as the
abstraction lifts it (renamed to the class's own objects) and H says the lifted
effect has one distribution over every pair (s, c) of the class; everything below
reads "the class's effect sequence" as the lifted one, and
:meth:`~capver.model.abstraction.Abstraction.ground` renames it back to a pair.

**Pooled missing mass.**  Under H the executions of c in κ, in the order they came,
are i.i.d. draws of q_{κ,c} (the state of each is chosen from the past, which H makes
irrelevant), so the epoch argument of the sampling module holds for the class's
effect sequence: the mass M_{κ,c} of the effects not yet seen in the class is
≤ ε_{κ,c} = 1 − ℓ^{1/r} after r executions without a new effect, at every stopping
time, except with probability ℓ = (δ/3)·share(j)·share(e) for the class first tried
j-th and its e-th epoch (:func:`~capver.engines.verification.sampling.epoch_bound`).

**h∨ under the abstraction** (:func:`pooled_h_or`).  For a projection (classes are
cubes of atoms), h∨_κ gives capability c at every state of a tried, unrefuted class κ
the effects seen anywhere in κ, and at every other state every effect c ever showed
(as h∨ does at an untried state).  At a tried state that *widens* h∨ (the class's
effects not seen there), at an untried state of a tried class it *narrows* it (to the
class's effects) — the narrowing is what makes the cost grow with the classes, not the
states.  Under H an execution of c from a state s of κ leaves h∨_κ's transitions only
with an effect never seen in κ: probability ≤ M_{κ,c} ≤ ε_{κ,c}.  That is the premise
of the confident tier's argument (:mod:`.agent_verdict`), which then holds on h∨_κ
with ε_{κ,c} in place of ε(s, c) (:class:`ClassUnits`); every state of a tried class
counts as covered, and the frontier counts classes, not pairs.  For an abstraction
whose classes are not cubes, h∨_κ is h∨(D′), D′ being D plus, at every tried pair
of κ, the outcomes of κ's effects (:func:`widened_data`); when the abstraction lists
its classes (the symmetry's orbits) D′ also gives every untried pair of a tried,
unrefuted class the outcomes of the class's effects, which is h∨_κ exactly (h∨ at a
tried pair admits only its outcomes); for a Python callable, whose classes cannot be
listed, it only widens, and untried pairs stay untried.  A refuted class keeps h∨'s
transitions (every effect of c), and its tried pairs their own bounds.

**The homogeneity test** (universal inference with a running likelihood ratio; Ville's
inequality).  Per class, the statistic after t executions is

    L_t = Π_{new} ρ_i · Π_{repeats} (1 − ρ_i) · Π_s mix_s  /  sup_q Π_{repeats} q(η_i)

where "new" are the executions whose effect is new to the class, ρ_i = 1/(n_i + 2)²
(n_i executions of the class before), and mix_s = (1 − π_s)·A_s + π_s·B_s for each
state s of the class, A_s the product over s's repeats of the class's
Krichevsky–Trofimov prediction (n_η + ½)/(n + K/2) over the K effects seen in the
class, B_s that of s's own KT prediction, π_s = 1/(k + 1)² for the k-th state of the
class.  Each factor is a predictable distribution over "new" and the seen effects, so
under H the numerator over Π_{repeats} q(η_i) — with q the true q_{κ,c} — is a
non-negative supermartingale with mean ≤ 1 (a new effect contributes ρ_i·q(η)/q(η)),
and L_t is at most that (the supremum is at least the true q's likelihood).  By
Ville's inequality sup_t L_t ≥ 1/α has probability ≤ α: the class is *refuted* when
its L_t ever reached 1/α_j, α_j = (δ/3)·share(j).  A state s whose own predictions
beat the class's (B_s ≫ A_s) is what refutes; the largest log(mix_s/A_s) name the
refuting states.

**δ split three ways.**  With an abstraction, the per-pair bounds (which still cover
the refuted classes' pairs and every verdict that does not need the abstraction) are
at δ/3, the pooled bounds at δ/3 and the tests at δ/3: every statement — the tier of
a verdict, and "refuted" — holds together with probability ≥ 1 − δ when H holds.
When H fails the pooled claims are conditional on it and say so; the test's job is to
catch that, and what it does not catch is counted by ``capver bench verdicts``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction

from capver.core.dataset import TransitionDataset
from capver.core.properties import Property
from capver.core.state import Effect, State, Transition, observed_effect
from capver.engines.lattice import build_bounds
from capver.engines.verification.agent_verdict import (
    AbstractionNote,
    AgentVerdict,
    LatticeVerdict,
    PairUnits,
    Tier,
    Unit,
    Within,
    decide,
)
from capver.engines.verification.sampling import epoch_bound, epoch_executions, share
from capver.engines.verification.symbolic import SymbolicEngine, states_of
from capver.errors import UsageError
from capver.logic.bdd import BDDBackend, Cube, Node, disjoin
from capver.logic.condition import Condition, ConditionKind, LogicContext
from capver.model.abstraction import Abstraction
from capver.model.capability_model import CapabilityModel, CompoundModel, Rule

FAMILIES = 3
"""δ is split among the per-pair bounds, the pooled bounds and the tests (module docstring)."""
ENUMERATION_LIMIT = 50_000
"""Frontier states a non-cube abstraction (:class:`~capver.model.abstraction.Partition`)
may classify one by one."""
REFUTING_SHOWN = 3


@dataclass(frozen=True, slots=True)
class Refuting:
    """A pair of a class whose own outcomes the class's predictions fit worst:
    ``gain`` is log(mix_s / A_s) of the homogeneity statistic (module docstring)."""

    capability: str
    state: State
    executions: int
    effects: tuple[tuple[Effect, int], ...]
    gain: float


@dataclass(frozen=True, slots=True)
class ClassSample:
    """The pooled executions of one class, first tried with ``capability`` at
    ``example``: first tried ``order``-th among all classes, ``n`` executions from
    ``states`` distinct pairs, the ``effects`` seen (as the abstraction lifts them,
    with counts, in the order they first came), ``run`` executions since the last new
    one; ``log_e``, the largest log-value the homogeneity statistic reached, and the
    pairs that raised it most."""

    capability: str
    key: Hashable
    cube: Cube | None
    order: int
    n: int
    states: int
    effects: tuple[tuple[Effect, int], ...]
    run: int
    log_e: float
    refuting: tuple[Refuting, ...]
    example: State
    refuted_at: int | None = None  # the pooled execution (from 1) at which the test first refuted it


@dataclass(slots=True)
class _StateStats:
    prior: float
    counts: dict[Effect, int] = field(default_factory=dict)
    n: int = 0
    log_a: float = 0.0
    log_b: float = 0.0

    def log_mix(self) -> float:
        x, y = math.log1p(-self.prior) + self.log_a, math.log(self.prior) + self.log_b
        hi = max(x, y)
        return hi + math.log(math.exp(x - hi) + math.exp(y - hi))


@dataclass(slots=True)
class _ClassStats:
    """The running homogeneity statistic of one class (module docstring)."""

    order: int
    cube: Cube | None
    capability: str
    example: State
    threshold: float  # log 1/α of the class's test
    counts: dict[Effect, int] = field(default_factory=dict)
    # Per pair (c, s): a class of an abstraction across capabilities holds several c.
    by_state: dict[tuple[str, State], _StateStats] = field(default_factory=dict)
    n: int = 0
    run: int = 0
    common: float = 0.0  # Σ log ρ over new effects + Σ log(1 − ρ) over repeats
    mixes: float = 0.0  # Σ_s log mix_s
    m_log_m: float = 0.0  # Σ_η m_η log m_η, m_η = repeats of η
    m: int = 0
    log_max: float = 0.0  # L_0 = 1
    refuted_at: int | None = None

    def add(self, s: tuple[str, State], e: Effect, index: int) -> None:
        st = self.by_state.get(s)
        if st is None:
            k = len(self.by_state) + 1
            st = self.by_state[s] = _StateStats(1.0 / (k + 1) ** 2)
        # A new effect costs log 1/ρ, every repeat log 1/(1 − ρ): with ρ falling as 1/n²
        # the repeats cost a bounded total (Σ ρ < 0.4), and new effects, which under H
        # come early, little.
        rho = 1.0 / (self.n + 2) ** 2
        if e not in self.counts:
            self.common += math.log(rho)
            self.counts[e] = 0
            self.run = 0
        else:
            self.common += math.log1p(-rho)
            size = len(self.counts)
            old = st.log_mix()
            st.log_a += math.log((self.counts[e] + 0.5) / (self.n + size / 2))
            st.log_b += math.log((st.counts.get(e, 0) + 0.5) / (st.n + size / 2))
            self.mixes += st.log_mix() - old
            repeats = self.counts[e] - 1  # m_η before this one
            self.m_log_m += _x_log_x(repeats + 1) - _x_log_x(repeats)
            self.m += 1
            self.run += 1
        self.counts[e] += 1
        st.counts[e] = st.counts.get(e, 0) + 1
        st.n += 1
        self.n += 1
        self.log_max = max(self.log_max, self.log_e())
        if self.refuted_at is None and self.log_max >= self.threshold:
            self.refuted_at = index

    def log_e(self) -> float:
        """log L_t: the numerator's log minus the log of the repeats' best i.i.d. fit."""
        return self.common + self.mixes - (self.m_log_m - _x_log_x(self.m))

    def sample(self, key: Hashable) -> ClassSample:
        worst = sorted(self.by_state.items(), key=lambda kv: kv[1].log_a - kv[1].log_mix())
        refuting = tuple(
            Refuting(c, s, st.n, tuple(sorted(st.counts.items())), st.log_mix() - st.log_a)
            for (c, s), st in worst[:REFUTING_SHOWN]
            if st.log_mix() - st.log_a > 0
        )
        return ClassSample(
            self.capability,
            key,
            self.cube,
            self.order,
            self.n,
            len(self.by_state),
            tuple(self.counts.items()),
            self.run,
            self.log_max,
            refuting,
            self.example,
            self.refuted_at,
        )


def class_test_level(delta: float, order: int) -> float:
    """α_j = (δ/3)·share(j): the level of the test of the class first tried j-th."""
    return delta / FAMILIES * share(order)


def _x_log_x(x: int) -> float:
    return x * math.log(x) if x > 0 else 0.0


@dataclass(frozen=True, slots=True)
class Pooled:
    """The data pooled by an abstraction at confidence 1 − ``delta`` (of which the
    pooled bounds and the tests get a third each)."""

    abstraction: Abstraction
    delta: float
    classes: Mapping[Hashable, ClassSample]  # by the abstraction's key

    @property
    def part(self) -> float:
        """δ/3: each of the three families of statements gets this much."""
        return self.delta / FAMILIES

    def class_of(self, c: str, s: State) -> ClassSample | None:
        return self.classes.get(self.abstraction.key(c, s))

    @property
    def cubes(self) -> bool:
        """Whether the classes are cubes of atoms of one capability each (a projection)."""
        return all(k.cube is not None for k in self.classes.values())

    def _epoch_level(self, k: ClassSample) -> float:
        # The class's δ share, split over its epochs as the sampling module splits a pair's.
        return self.part * share(k.order) * share(len(k.effects))

    def epsilon(self, k: ClassSample) -> float:
        """ε_{κ,c}: the bound on the class's unseen-effect mass under H."""
        return epoch_bound(k.run, self._epoch_level(k))

    def executions(self, k: ClassSample, epsilon: float) -> int:
        """More executions of the class without a new effect that bring ε_{κ,c} to
        ``epsilon`` (0 when it is there)."""
        if self.epsilon(k) <= epsilon:
            return 0
        return max(epoch_executions(epsilon, self._epoch_level(k)) - k.run, 1)

    def test_level(self, k: ClassSample) -> float:
        return class_test_level(self.delta, k.order)

    def refuted(self, k: ClassSample) -> bool:
        return k.refuted_at is not None

    def refuted_classes(self) -> list[ClassSample]:
        return [k for k in self.classes.values() if self.refuted(k)]

    def by_capability(self) -> dict[str, list[ClassSample]]:
        """The classes first tried with each capability, in the order they were first
        tried (all of a capability's classes, unless the abstraction pools across
        capabilities)."""
        out: dict[str, list[ClassSample]] = {}
        for k in self.classes.values():
            out.setdefault(k.capability, []).append(k)
        return out


class Pooler:
    """The pooled classes of a growing dataset, kept across calls: each
    :meth:`pool` consumes only the additions made since the last (the property
    tracker re-decides after every query)."""

    def __init__(self, abstraction: Abstraction, delta: float, since: int = 0) -> None:
        self.abstraction = abstraction
        self.delta = delta
        self.since = since
        self._stats: dict[Hashable, _ClassStats] = {}
        self._samples: dict[Hashable, ClassSample] = {}
        self._cursor = 0  # additions consumed
        self._seen = 0  # executions consumed, the ``since`` first among them skipped

    def pool(self, data: TransitionDataset) -> Pooled:
        stats = self._stats
        touched: set[Hashable] = set()
        ab = self.abstraction
        for t, count, _ in data.additions(self._cursor):
            self._cursor += 1
            if self._seen < self.since:
                self._seen += count
                continue
            key = ab.key(t.c, t.s)
            k = stats.get(key)
            if k is None:
                order = len(stats) + 1
                threshold = -math.log(class_test_level(self.delta, order))
                k = stats[key] = _ClassStats(order, ab.cube(t.c, t.s), t.c, t.s, threshold)
            e = ab.lift(t.c, t.s, observed_effect(t.s, t.s_next))
            for _ in range(count):
                self._seen += 1
                k.add((t.c, t.s), e, self._seen - self.since)
            touched.add(key)
        # Only the classes this call's executions reached changed: a query touches a few
        # of the thousands a large abstraction has, and a sample sorts the class's states.
        for key in sorted(touched, key=lambda key: stats[key].order):  # new classes in the order they came
            self._samples[key] = stats[key].sample(key)
        return Pooled(self.abstraction, self.delta, dict(self._samples))


def pool(data: TransitionDataset, abstraction: Abstraction, delta: float, since: int = 0) -> Pooled:
    """The classes of the executions of ``data`` after its first ``since``, in the order
    they came.  An abstraction chosen from data (h̃'s atoms) must not be tested or
    pooled on the executions it was chosen from: ``since`` leaves those out."""
    return Pooler(abstraction, delta, since).pool(data)


def widened_data(data: TransitionDataset, pooled: Pooled) -> TransitionDataset:
    """D′: D plus, at each tried pair, the outcomes of the effects its class showed
    elsewhere, and, when the abstraction lists its classes (:class:`Symmetry`), at
    every pair of each tried, unrefuted class the outcomes of the class's effects
    (module docstring); h∨(D′) is h∨ under the abstraction."""
    # Only the supports matter to h∨: the distinct transitions with their counts, not
    # a replay of every addition (a directed run re-builds D′ after each query).
    out = TransitionDataset(data.vocab, data.capabilities)
    for c in data.capability_table:
        for s in data.states_of(c):
            for s2, n in data.successors(s, c).items():
                out.add(Transition(s, c, s2), n)
    ab = pooled.abstraction

    def admit(c: str, s: State, k: ClassSample) -> None:
        seen = data.successors(s, c)
        for lifted, _ in k.effects:
            for e in ab.ground(c, s, lifted):
                s2 = e.apply(s)
                if s2 not in seen and out.count(s, c, s2) == 0:
                    out.add(Transition(s, c, s2))

    for c in data.capability_table:
        for s in list(data.states_of(c)):
            k = pooled.class_of(c, s)
            if k is not None:  # None: tried only before the abstraction was fixed
                admit(c, s, k)
    for key, k in pooled.classes.items():
        if pooled.refuted(k):
            continue
        for c, s in ab.members(key) or ():
            if data.count_sc(s, c) == 0:
                admit(c, s, k)
    return out


def pooled_h_or(h_or: CompoundModel, data: TransitionDataset, pooled: Pooled) -> CompoundModel:
    """h∨ under the abstraction: for a projection, h∨_κ of the module docstring (each
    tried, unrefuted class admits its effects at every one of its states, the other
    states every effect c ever showed); for other abstractions h∨(D′)
    (:func:`widened_data`)."""
    ctx = h_or.ctx
    if not pooled.cubes:
        return build_bounds(ctx, widened_data(data, pooled)).optimistic
    b = ctx.bdd
    models = []
    by_capability = pooled.by_capability()
    for c, cm in h_or.items():
        if c not in by_capability:
            models.append(cm)  # never executed: h∨'s own model of it
            continue
        rules = []
        covered = b.false
        # Every effect c showed anywhere in D, pooled or not: at a tried state of a
        # refuted class (or one tried before the abstraction was fixed) the pair's own
        # bound covers only the effects h∨_κ admits there, which must include its own.
        every = {e for s in data.states_of(c) for e in data.effects(s, c)}
        for k in by_capability[c]:
            if pooled.refuted(k):
                continue
            assert k.cube is not None
            cube = b.cube(k.cube)
            covered = b.disj(covered, cube)
            rules.append(Rule.make(_bdd_condition(ctx, cube), _uniform(e for e, _ in k.effects)))
        rest = b.neg(covered)
        if rest != b.false:
            rules.append(Rule.make(_bdd_condition(ctx, rest), _uniform(every)))
        models.append(CapabilityModel(cm.capability, tuple(rules)))
    return CompoundModel(ctx, models)


def _bdd_condition(ctx: LogicContext, u: Node) -> Condition:
    # h∨_κ is rebuilt after every query of a directed run and only model-checked on
    # BDDs: its conditions' SMT formulas (an irredundant cover each) are built only if
    # something asks for them.
    return Condition(ctx, ConditionKind.FORMULA, bdd=u)


def _uniform(effects: Iterable[Effect]) -> list[tuple[Fraction, Effect]]:
    # Qualitative checking reads only which effects have positive probability.
    es = sorted(set(effects))
    return [(Fraction(1, len(es)), e) for e in es]


class ClassUnits:
    """The frontier's units under an abstraction: each tried, unrefuted class with
    ε_{κ,c}; the tried pairs of a refuted class with their own bounds at δ/3."""

    def __init__(self, pooled: Pooled, data: TransitionDataset) -> None:
        self.pooled = pooled
        self.data = data
        self.pairs = PairUnits(data, pooled.part)
        self._by_cap = pooled.by_capability()

    def _refuted_at(self, c: str, s: State) -> bool:
        k = self.pooled.class_of(c, s)
        return k is not None and self.pooled.refuted(k)

    def tried(self, engine: SymbolicEngine, c: str, region: Node, epsilon: float) -> Iterable[Unit]:
        bdd = engine.bdd
        pooled = self.pooled
        if pooled.refuted_classes():
            for u in self.pairs.tried(engine, c, region, epsilon):
                if self._refuted_at(c, u.state):
                    yield u
        covers: list[tuple[ClassSample, Node, State | None]] = []
        if pooled.cubes:
            for k in self._by_cap.get(c, []):
                assert k.cube is not None
                covers.append((k, bdd.cube(k.cube), None))
        else:
            # Classes that are not cubes: the region's states, classified one by one.
            members: dict[Hashable, list[State]] = {}
            for s in _enumerate(bdd, region):
                members.setdefault(pooled.abstraction.key(c, s), []).append(s)
            for key, states in members.items():
                if (sample := pooled.classes.get(key)) is not None:
                    # Where to execute c for the class: a state the data have been in,
                    # if any (a learner can put its simulator back there).
                    start = next((s for s in states if self.data.count_s(s)), states[0])
                    covers.append((sample, disjoin(bdd, (bdd.minterm(s) for s in states)), start))
        for k, cover, at in covers:
            if pooled.refuted(k):
                continue
            inside = bdd.conj(cover, region)
            if inside == bdd.false:
                continue
            picked = at if at is not None else bdd.pick(inside)
            assert picked is not None  # inside is not empty
            yield Unit(cover, picked, c, k.n, pooled.epsilon(k), pooled.executions(k, epsilon))

    def untried_executions(self, epsilon: float, untried: int) -> int:
        level = self.pooled.part * share(len(self.pooled.classes) + max(untried, 1))
        return 1 + epoch_executions(epsilon, level)

    def untried_count(self, engine: SymbolicEngine, missing: Mapping[str, Node]) -> int:
        """Classes among the ``missing`` states of each capability, each counted once
        (at most :data:`ENUMERATION_LIMIT` per capability); a refuted class's states
        count one pair each."""
        bdd = engine.bdd
        ab = self.pooled.abstraction
        # Whether classes are cubes is the abstraction's: any missing state tells.
        if any((y := bdd.pick(u)) is not None and ab.cube(c, y) is None for c, u in missing.items()):
            keys: set[Hashable] = set()
            pairs = 0
            for c, untried in missing.items():
                for x in _enumerate(bdd, untried):
                    if self._refuted_at(c, x):
                        pairs += 1
                    else:
                        keys.add(ab.key(c, x))
            return pairs + len(keys)
        count = 0
        for c, untried in missing.items():
            rest = untried
            seen = 0
            # Counting stops at ENUMERATION_LIMIT classes: the verdict is unconfirmed either
            # way, and the number is then a lower bound.
            while seen < ENUMERATION_LIMIT and (y := bdd.pick(rest)) is not None:
                cube = ab.cube(c, y)
                assert cube is not None  # a projection's classes are all cubes
                cover = bdd.conj(rest, bdd.cube(cube))
                seen += engine.count(cover) if self._refuted_at(c, y) else 1
                rest = bdd.conj(rest, bdd.neg(cover))
            count += seen
        return count


def _enumerate(bdd: BDDBackend, region: Node) -> list[State]:
    n = bdd.count(region)
    if n > ENUMERATION_LIMIT:
        raise UsageError(
            f"the frontier has {n:,} states, more than the {ENUMERATION_LIMIT:,} an abstraction that is not a "
            "projection may classify one by one; give one by atoms (a file, or h̃'s)"
        )
    return list(states_of(bdd, region, n))


def note(pooled: Pooled, used: bool, why: str = "") -> AbstractionNote:
    # A class across capabilities names the capabilities of the pairs that refute it.
    refuted = tuple(
        ("/".join(dict.fromkeys(r.capability for r in k.refuting)) or k.capability, tuple(r.state for r in k.refuting))
        for k in pooled.refuted_classes()
    )
    return AbstractionNote(pooled.abstraction.name, len(pooled.classes), refuted, pooled.part, used, why)


def decide_pooled(
    prop: Property,
    plain: LatticeVerdict,
    engines: tuple[SymbolicEngine, SymbolicEngine],
    data: TransitionDataset,
    pooled: Pooled,
    init: State,
    epsilon: float,
    within: Within | None = None,
) -> LatticeVerdict:
    """The verdict under the abstraction, given the per-pair one (``plain``, at δ/3) and
    BDD engines of h∧ and of h∨ under the abstraction (:func:`pooled_h_or`): an
    unconfirmed or unknown verdict is decided again there, with the classes' bounds."""
    if plain.tier not in (Tier.UNCONFIRMED, Tier.UNKNOWN):
        return dataclasses.replace(
            plain, abstraction=note(pooled, False, "the verdict does not rest on unseen effects")
        )
    eng_and, eng_wide = engines
    v = decide(
        prop,
        eng_and.model,
        eng_wide.model,
        data,
        init,
        engines=engines,
        delta=pooled.delta,
        epsilon=epsilon,
        within=within,
        units=ClassUnits(pooled, data),
    )
    if v.confidence is not None and v.verdict in (AgentVerdict.HOLDS, AgentVerdict.VIOLATED, AgentVerdict.UNCONFIRMED):
        conf = dataclasses.replace(v.confidence, classes=True)
        return dataclasses.replace(v, confidence=conf, abstraction=note(pooled, True))
    why = "h∨ widened by the classes' effects admits a run that breaks the verdict"
    return dataclasses.replace(plain, abstraction=note(pooled, False, why))


__all__ = [
    "ClassSample",
    "ClassUnits",
    "Pooled",
    "Pooler",
    "Refuting",
    "decide_pooled",
    "note",
    "pool",
    "pooled_h_or",
    "widened_data",
]

"""Property-directed learning: the verdict tiers of the user's properties, tracked while
MCQS learns, and the focus that directs query synthesis to what can still change them
(:mod:`capver.engines.mcqs.focus`).

After every query the tracker re-decides each property that is not yet decided
(the verification entry point, :class:`capver.engines.verification.Verifier`, in this
process with BDD engines kept across updates) and records each change of
tier with the simulator steps it took.  A property is *decided* when its tier is
observed (exact) or confident at the user's δ and ε.  For the others it contributes
relevant states to the focus:

* **unconfirmed** (holds on h∨, or impossible there, but the data do not bound the
  unseen effects): the frontier of h∨ (:meth:`SymbolicEngine.frontier`), with the
  missing-mass bound ε(s, c) of every thinly sampled tried pair there as bonus — so
  the search re-samples the pairs whose bound is weakest, and executes the untried
  ones (worth δ_TV = 1 already);
* **unknown** (h∧ and h∨ disagree): the states of h∨'s witness or counterexample, so
  the search tries to realise on the agent a run that exists on h∨ but not yet on h∧.

``E [ G φ ]``, ``A [ F φ ]`` and ``A [ φ U ψ ]`` are decided on runs that never stop
(the agent verdict module), with the frontier of their lasting run.

**Cheapest first.**  Each undecided property has an estimated *cost*, the executions
that would decide it at the least: for an unknown one the length of h∨'s run (one
realisation or refutation of its untried pairs), for an unconfirmed one the
executions its frontier still needs (:attr:`Confidence.executions`), for a bound the
executions its untried pairs need.  The focus is the cheapest property's region alone,
so that a budget is spent on the property it can decide soonest rather than spread
over one that needs thousands of executions: a union of all regions is what the
first measurements used, and it decided fewer properties than plain MCQS-E on First
Responders.  Should the lowest cost not fall for :data:`STALL` updates in a row (a
run h∨ keeps offering anew, say), the focus is the union of every undecided
property's region until some tier changes or a lower cost appears.  Costs are whole
numbers, so between two tier changes the lowest can fall only finitely often: once
the tiers stop changing, the union is the focus from some update on, and no property
is starved.

**Confirmation queries** (under an abstraction).  An unconfirmed verdict names the
executions that would confirm it (:attr:`Confidence.queries`: a class, and how many
more executions in a row without a new outcome bring its bound to ε); an unknown one,
the first untried pair on h∨'s run.  Where such a query starts at a state the learner
can restore, the learner executes it (:meth:`PropertyTracker.confirmation`) instead of
synthesising one: the search would go to the same weakest bound, one execution per
query, and pay for the way there and for re-deciding after each.  An untried class
is executed once — its first outcome may change the verdict's tier, as an unknown
verdict's pair may — and a tried one as many times as named, at most
:data:`CONFIRMATION_BATCH`, so that a property that has become cheaper redirects the
budget soon; a query ends at the first new outcome of a pair tried before it (the
count starts again, and the outcome may be the violation that decides the property).  The executions are the
agent's, as any query's.  Without an abstraction the search keeps every query: per
pair a confident verdict needs more executions than a budget usually has, and the
search's wider moves find the observed witnesses that decide properties exactly
(``capver bench decide`` on the MiniGrid RL agent: with confirmation queries per pair
3 of 7 properties were decided in 2,000 steps, with the search alone 5.33).

Quantitative properties are decided on the agent's two-sided bounds at 1 − δ
(:func:`capver.engines.verification.quantitative.agent_bounds`, through the same entry
point): a ``P<op>p`` bound
once it is confirmed or refuted, a ``Pmax=?`` / ``Pmin=?`` once the bounds are at
most :attr:`Targets.width` apart.  Their focus is where the bounds are widest: the
untried pairs that widen them and the tried pair with the largest ε (as bonus).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from capver.core.dataset import TransitionDataset
from capver.core.properties import ExistsPath, ForallPath, ProbabilityBound, Property, Query
from capver.core.state import State
from capver.engines.mcqs.focus import Focus
from capver.engines.verification.agent_verdict import (
    DEFAULT_DELTA,
    DEFAULT_EPSILON,
    AgentVerdict,
    LatticeVerdict,
    Tier,
    frontier_sets,
)
from capver.engines.verification.agent_verdict import Query as Confirmation
from capver.engines.verification.environment import World, restriction
from capver.engines.verification.evidence import Evidence, Verifier
from capver.engines.verification.pooled import Pooler
from capver.engines.verification.quantitative import BoundVerdict
from capver.engines.verification.sampling import SamplingBounds, executions_for
from capver.engines.verification.symbolic import QualitativeResult, SymbolicEngine, qualitative_query
from capver.engines.verification.verdict import Verdict
from capver.logic.bdd import Node
from capver.model.abstraction import Abstraction
from capver.model.capability_model import CompoundModel

DEFAULT_WIDTH = 0.1
"""How far apart the bounds on a ``Pmax=?`` / ``Pmin=?`` value may be for it to count as decided."""

STALL = 25
"""Updates without a fall of the cheapest property's cost before the focus widens to
every undecided property (module docstring)."""

CONFIRMATION_BATCH = 100
"""The most executions of one confirmation query: the verdict is re-decided at least
this often (module docstring)."""

Region = tuple[Node, dict[tuple[State, str], float]]


@dataclass(frozen=True, slots=True)
class Targets:
    """When a property counts as decided: the confident tier's δ and ε, and for a
    ``Pmax=?`` / ``Pmin=?`` query the width of the agent's bounds at 1 − δ."""

    delta: float = DEFAULT_DELTA
    epsilon: float = DEFAULT_EPSILON
    width: float = DEFAULT_WIDTH


@dataclass(frozen=True, slots=True)
class TierChange:
    """A property reached ``tier`` (with ``verdict``) after ``steps`` simulator steps
    and ``queries`` queries."""

    name: str
    verdict: str
    tier: str
    steps: int
    queries: int


@dataclass(frozen=True, slots=True)
class PropertyStatus:
    """Where one property stands: its last verdict, whether it is decided, and what is
    still missing for those that are not."""

    prop: Property
    verdict: str
    tier: str
    decided: bool
    missing: str
    checked: Verdict | None = None  # what the verification entry point answered

    @property
    def lattice(self) -> LatticeVerdict | None:
        return None if self.checked is None else self.checked.lattice


def _cost(v: LatticeVerdict) -> float:
    """The executions that would decide an undecided verdict at the least (module
    docstring: cheapest first)."""
    if v.confidence is not None:
        return float(v.confidence.executions)
    run = v.witness if v.witness is not None else v.on_or.witness
    return float(len(run.steps)) if run is not None else math.inf


def is_decided(v: LatticeVerdict) -> bool:
    return v.tier in (Tier.OBSERVED, Tier.CONFIDENT)


def missing_text(v: LatticeVerdict) -> str:
    """What an undecided verdict still needs, in words."""
    if is_decided(v):
        return ""
    c = v.confidence
    if c is not None:
        parts = []
        if c.untried:
            at_least = "" if c.complete else "at least "
            parts.append(f"{at_least}{c.untried} untried {c.unit} on {c.frontier_name}")
        if c.thin:
            parts.append(f"{c.thin} {c.unit} with ε > {c.threshold:g} (largest ε {c.epsilon:.3g})")
        if c.executions:
            parts.append(f"at least {c.executions:,} more executions of them")
        if v.abstraction is not None and v.abstraction.refuted:
            parts.append(f"the data refute {v.abstraction.name} in {len(v.abstraction.refuted)} classes")
        return "; ".join(parts) or "nothing"
    if v.decisive_query is not None:
        return "a run of h∨'s witness on the agent (its first untried pair)"
    if v.verdict is AgentVerdict.UNKNOWN and v.on_or.witness is None:
        return "not decided on the lattice for this operator"
    return "a run that h∨ has and h∧ lacks, observed on the agent"


class _MemoEngine(SymbolicEngine):
    """A BDD engine that answers a repeated check or frontier from memory (for one
    support of its model: :meth:`PropertyTracker._engines`)."""

    def __init__(self, model: CompoundModel) -> None:
        super().__init__(model)
        self._checks: dict[tuple[object, State, bool], QualitativeResult] = {}
        self._frontiers: dict[tuple[State, Node, Node, int | None, bool], tuple[list[Node], bool]] = {}

    def check(self, item: Property | Query, init: State, *, counts: bool = False) -> QualitativeResult:
        key = (item, init, counts)
        hit = self._checks.get(key)
        if hit is None:
            hit = self._checks[key] = super().check(item, init, counts=counts)
        return hit

    def frontier_prefix(
        self, init: State, goal: Node, hold: Node, bound: int | None, *, limited: bool = True
    ) -> tuple[list[Node], bool]:
        key = (init, goal, hold, bound, limited)
        hit = self._frontiers.get(key)
        if hit is None:
            hit = self._frontiers[key] = super().frontier_prefix(init, goal, hold, bound, limited=limited)
        return hit


class PropertyTracker:
    """The tiers of ``properties`` from ``init`` as the data grow (module docstring)."""

    def __init__(
        self,
        properties: Sequence[Property],
        init: State,
        targets: Targets = Targets(),
        history: Iterable[TierChange] = (),
        world: World | None = None,
        abstraction: Abstraction | None = None,
        abstraction_since: int = 0,
    ) -> None:
        self.properties = tuple(properties)
        # Verdicts may rest on an abstraction (capver.engines.verification.pooled); then
        # the focus of an unconfirmed property is the frontier of h∨ under it, and its
        # bonus the classes' bounds.
        self.abstraction = abstraction
        self.abstraction_since = abstraction_since
        self._pooler = Pooler(abstraction, targets.delta, abstraction_since) if abstraction is not None else None
        self.init = init
        self.targets = targets
        self.world = world  # the environment's reachable states, where they are known
        self.history: list[TierChange] = list(history)
        self.status: dict[str, PropertyStatus] = {}
        self._regions: list[tuple[float, str, Region]] = []  # (cost, property, region)
        self._confirmations: dict[str, tuple[Confirmation, ...]] = {}  # per unconfirmed or unknown property
        self._h_or: CompoundModel | None = None
        self._cheapest: tuple[str, float] | None = None  # the focused property and its best cost
        self._stall = 0
        self._memo: tuple[int, SymbolicEngine, SymbolicEngine] | None = None  # (|T_D|, engines)

    @property
    def all_decided(self) -> bool:
        return bool(self.status) and all(st.decided for st in self.status.values())

    def qualitative(self, prop: Property) -> bool:
        return isinstance(prop.query, ExistsPath | ForallPath)

    def update(
        self, h_and: CompoundModel, h_or: CompoundModel, data: TransitionDataset, steps: int, queries: int
    ) -> list[TierChange]:
        """Re-decide the undecided properties on the current lattice; the tier changes."""
        changes: list[TierChange] = []
        self._regions = []
        self._confirmations = {}
        self._h_or = h_or
        eng_and, eng_or = self._engines(h_and, h_or, data)
        evidence = Evidence(
            h_and,
            h_or,
            data,
            self.world,
            delta=self.targets.delta,
            epsilon=self.targets.epsilon,
            abstraction=self.abstraction,
            abstraction_since=self.abstraction_since,
        )
        bounds = SamplingBounds(data, evidence.pair_delta)
        verifier = Verifier(
            evidence,
            self.properties,
            self.init,
            engines=(eng_and, eng_or),
            values=False,
            sampling=bounds,
            pooled=self._pooler.pool(data) if self._pooler is not None else None,
        )
        for prop in self.properties:
            old = self.status.get(prop.name)
            if old is not None and old.decided and old.tier == Tier.OBSERVED.value:
                # Observed verdicts are final (T_h∧ = T_D only grows); a confident one is
                # re-checked, since a new outcome at a frontier pair can overturn it.
                continue
            # The verification entry point, in this process, with the engines kept above.
            verdict = verifier.check(prop)
            v = verdict.lattice
            if v is not None:
                st = PropertyStatus(prop, v.verdict.value, v.tier.value, is_decided(v), missing_text(v), verdict)
            else:
                st, quantitative_region, quantitative_cost = self._quantitative(verdict, data)
            self.status[prop.name] = st
            if old is None:
                # A resumed run: a change only if it differs from where the property stood.
                last = next((h for h in reversed(self.history) if h.name == prop.name), None)
                changed = last is None or (last.verdict, last.tier) != (st.verdict, st.tier)
            else:
                changed = (old.verdict, old.tier) != (st.verdict, st.tier)
            if changed:
                changes.append(TierChange(prop.name, st.verdict, st.tier, steps, queries))
            if not st.decided:
                region = self._region(prop, v, eng_or, data, bounds, verifier) if v is not None else quantitative_region
                if region is not None:
                    cost = _cost(v) if v is not None else quantitative_cost
                    self._regions.append((cost, prop.name, region))
                if v is not None and v.tier is Tier.UNCONFIRMED and v.confidence is not None:
                    self._confirmations[prop.name] = v.confidence.queries
                elif v is not None and v.tier is Tier.UNKNOWN and v.decisive_query is not None:
                    # The first untried pair on h∨'s run: one execution tells whether
                    # the agent realises that step.
                    s, c = v.decisive_query
                    self._confirmations[prop.name] = (Confirmation(s, c, 0, 1.0, 1),)
        self.history += changes
        self._track_stall(bool(changes))
        return changes

    def _engines(
        self, h_and: CompoundModel, h_or: CompoundModel, data: TransitionDataset
    ) -> tuple[SymbolicEngine, SymbolicEngine]:
        """BDD engines of h∧ and h∨ that remember their checks and frontiers while the
        data's distinct transitions stay the same: the qualitative verdicts depend only
        on the supports, T_h∧ = T_D and h∨'s (built from T_D), and a repeat of an
        observed transition changes neither — only the missing-mass bounds, which
        :func:`decide` recomputes from ``data`` every time."""
        unique = data.unique_count()
        if self._memo is None or self._memo[0] != unique:
            self._memo = (unique, _MemoEngine(h_and), _MemoEngine(h_or))
        return self._memo[1], self._memo[2]

    def _track_stall(self, changed: bool) -> None:
        """Count the updates in which the cheapest property's cost did not fall."""
        if not self._regions:
            self._cheapest, self._stall = None, 0
            return
        cost, name, _ = min(self._regions, key=lambda r: (r[0], r[1]))
        # Only a tier change or a new lowest cost counts as progress: a focus that moves
        # between properties whose costs rise in turn is a stall too, so no third
        # property waits for ever.
        if changed or self._cheapest is None or cost < self._cheapest[1]:
            self._cheapest, self._stall = (name, cost), 0
        else:
            self._stall += 1

    def _quantitative(self, verdict: Verdict, data: TransitionDataset) -> tuple[PropertyStatus, Region | None, float]:
        """A quantitative property's status from the agent's bounds at 1 − δ: a
        ``P<op>p`` bound is decided once confirmed or refuted, a ``=?`` query once the
        bounds are at most ``width`` apart; the focus is where the bounds are widest
        (the untried pairs they name, and the tried pair with the largest ε)."""
        prop, b = verdict.prop, verdict.agent
        q = prop.query
        if b is None:
            return (
                PropertyStatus(prop, "not bounded", "unknown", False, "no bound for this query (Rmax)", verdict),
                None,
                math.inf,
            )
        interval = f"{b.quantity} in [{b.lower:.4g}, {b.upper:.4g}]"
        answer = verdict.quantity.agent_verdict if verdict.quantity is not None else None
        if isinstance(q, ProbabilityBound) and answer is not None:
            decided = answer is not BoundVerdict.UNDECIDED
            name = {
                BoundVerdict.CONFIRMED: "holds",
                BoundVerdict.REFUTED: "violated",
                BoundVerdict.UNDECIDED: "undecided",
            }[answer]
        else:
            decided = b.width <= self.targets.width
            name = interval
        missing = "" if decided else f"{interval}; {b.untried} untried pairs, largest ε {b.max_epsilon:.3g}"
        st = PropertyStatus(prop, name, "confident" if decided else "bounded", decided, missing, verdict)
        # Each untried pair the bound names needs its first execution and then enough
        # repeats for the threshold ε; the widest tried pair as much again.
        cost = float(
            (b.untried + 1) * (1 + executions_for(self.targets.epsilon, self.targets.delta, data.pairs_tried + 1))
        )
        if decided or self._h_or is None:
            return st, None, cost
        bdd = self._h_or.ctx.bdd
        region = bdd.false
        pairs = list(b.untried_pairs) + ([b.widest_pair] if b.widest_pair is not None else [])
        for s, _ in pairs:
            region = bdd.disj(region, bdd.minterm(s))
        bonus = {b.widest_pair: b.max_epsilon} if b.widest_pair is not None else {}
        return st, (region, bonus), cost

    def _region(
        self,
        prop: Property,
        v: LatticeVerdict,
        eng_or: SymbolicEngine,
        data: TransitionDataset,
        bounds: SamplingBounds,
        verifier: Verifier,
    ) -> Region | None:
        query, caps = qualitative_query(prop)
        pooled = verifier.pooled() if v.abstraction is not None and v.abstraction.used else None
        engine = (verifier.pooled_engines()[1] if pooled is not None else eng_or).restricted(caps)
        bdd = engine.bdd
        if v.tier is Tier.UNCONFIRMED:
            # The query, not only its path: E [ G φ ] and A [ G φ ] have different frontiers.
            # The frontier decide enumerated.
            hold, goal = frontier_sets(engine, query, restriction(self.world, self.init, engine.ctx.vocab))
            region = bdd.false
            # The nearest rings of a large frontier: where the verdict's untried pairs were found.
            for ring in engine.frontier_prefix(self.init, goal, hold, query.path.bound)[0]:
                region = bdd.disj(region, ring)
            bonus: dict[tuple[State, str], float] = {}
            for c in engine.capability_names:
                for s in data.states_of(c):
                    if bdd.evaluate(region, s):
                        k = pooled.class_of(c, s) if pooled is not None else None
                        if pooled is not None and k is not None and not pooled.refuted(k):
                            e = pooled.epsilon(k)  # a class's executions at any of its states count
                        else:
                            e = bounds.epsilon(s, c)
                        if e > self.targets.epsilon:
                            bonus[(s, c)] = e
            return region, bonus
        run = v.witness if v.witness is not None else v.on_or.witness
        if run is None:
            return None
        region = bdd.false
        for s in run.states[:-1] or run.states:
            region = bdd.disj(region, bdd.minterm(s))
        return region, {}

    def _focused(self) -> list[str]:
        """The properties the focus serves: the cheapest, or every undecided one
        while the cheapest stalls (module docstring)."""
        if self._stall >= STALL:
            return [name for _, name, _ in self._regions]
        return [min(self._regions, key=lambda r: (r[0], r[1]))[1]] if self._regions else []

    def confirmation(self, restorable: Callable[[State], bool]) -> Confirmation | None:
        """The first query a focused property's unconfirmed verdict names that starts
        at a ``restorable`` state, to execute as named (module docstring); None
        when there is none, and always without an abstraction."""
        if self.abstraction is None:
            return None
        for name in self._focused():
            for q in self._confirmations.get(name, ()):
                if restorable(q.state):
                    n = 1 if q.tried == 0 else min(q.executions, CONFIRMATION_BATCH)
                    return dataclasses.replace(q, executions=n)
        return None

    def focus(self) -> Focus | None:
        """The focus of the cheapest undecided property, or of every undecided one
        while the cheapest stalls (module docstring); None when none adds one."""
        if not self._regions or self._h_or is None:
            return None
        bdd = self._h_or.ctx.bdd
        focused = set(self._focused())
        chosen = [r for _, name, r in self._regions if name in focused]
        union = bdd.false
        bonus: dict[tuple[State, str], float] = {}
        for region, b in chosen:
            union = bdd.disj(union, region)
            for key, e in b.items():
                bonus[key] = max(bonus.get(key, 0.0), e)
        return Focus(lambda s: bool(bdd.evaluate(union, s)), bonus)

    def reached(self, name: str) -> TierChange | None:
        """When the property reached its current tier (the last change recorded)."""
        return next((h for h in reversed(self.history) if h.name == name), None)

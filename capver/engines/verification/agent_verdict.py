"""What a qualitative property checked on the lattice bounds says about the *agent*
(section 3.1; Theorems 1 and 3 of appendix A), in tiers that say what each verdict
licenses.

**Observed (exact).**  T_h∧ = T_D (Theorem 3): every transition of h∧ was observed,
so an existential reachability property (``E [ F φ ]``, ``E [ φ U ψ ]``, bounded or
not) that holds on h∧ holds for the agent, with an observed witness; an invariant
(``A [ G φ ]``) that fails on h∧ is violated by the agent, with an observed
counterexample.  Nothing is assumed.

**Confident (error probability δ).**  An invariant that holds on h∨, or an
existential property that fails on h∨, would hold for the agent by Theorem 1 if the
data were *effect complete*.  The data never shows that, but it bounds how likely a
violation of it is (:mod:`capver.engines.verification.sampling`): with probability
≥ 1 − δ — whichever queries were chosen from the data and whenever the user stops —
every tried pair (s, c) shows an outcome not yet observed there with probability
≤ ε(s, c).  A run of the agent that breaks the verdict must leave h∨'s transitions
from a state of the *frontier* (the states h∨ reaches on the way, where one more
execution could still matter: :meth:`SymbolicEngine.frontier`), because the
observed transitions are h∨'s.  So when every frontier pair is tried and
ε̄ = max ε over them is ≤ the user's threshold, the verdict is stated with its
guarantee: for every scheduler, a violation within k executions has probability
≤ 1 − (1 − ε̄)^k.  Assumption: the agent is Markov in α's states (A1 of the
sampling module).

**Unconfirmed.**  It holds on h∨ (or fails there) but some frontier pair is untried
or too thinly sampled; the verdict lists how many, and the queries that would
confirm it with how many executions each still needs.

**Unknown.**  h∧ and h∨ disagree; the first untried pair on h∨'s witness decides.

Other path operators (``E [ G φ ]``, ``A [ F φ ]``, ``A [ U ]``) are not monotone in
the transition set once runs stop in dead ends, so for them only the per-model results
are reported.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

from capver.engines.verification.sampling import SamplingBounds, executions_for
from capver.engines.verification.symbolic import (
    QualitativeResult,
    SymbolicEngine,
    Witness,
    formula_bdd,
    qualitative_query,
    states_of,
)
from capver.logic.bdd import Node
from capver.model.capability_model import CompoundModel
from capver.model.dataset import TransitionDataset
from capver.model.properties import Eventually, ExistsPath, ForallPath, Globally, PathFormula, Property, Until
from capver.model.state import State

MARKOV = ("the agent is Markov in α's states: each execution of c from a state s ends in s′ with a fixed "
          "probability P(s′ | s, c), whatever came before (queries may be chosen from the data)")
DEFAULT_EPSILON = 0.05
"""The largest per-execution probability of an unseen effect a confident verdict allows."""
DEFAULT_DELTA = 0.05
HORIZONS = (1, 10, 100)
"""The numbers of executions a confident verdict states its violation bound for."""


class AgentVerdict(StrEnum):
    HOLDS = "holds"
    VIOLATED = "violated"
    UNCONFIRMED = "unconfirmed"
    UNKNOWN = "unknown"


class Tier(StrEnum):
    """How much a verdict is backed: observed (exact), confident (error probability
    δ under A1), or neither."""

    OBSERVED = "observed"
    CONFIDENT = "confident"
    UNCONFIRMED = "unconfirmed"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class Query:
    """An execution that would confirm a verdict: ``executions`` more runs of
    ``capability`` from ``state`` (never tried when ``tried`` is 0)."""

    state: State
    capability: str
    tried: int
    epsilon: float
    executions: int


@dataclass(frozen=True, slots=True)
class Confidence:
    """What the data bound about unseen effects at the frontier of an h∨ verdict.

    With probability ≥ 1 − ``delta``, each of the ``pairs`` frontier pairs that was
    tried shows an unseen effect with probability ≤ its ε; ``epsilon`` is the largest
    (1 when some pair is untried).  ``violation`` lists (k, bound) with
    1 − (1 − ε̄)^k, the probability bound on the verdict failing within k executions
    under any scheduler, for the ``HORIZONS`` and the property's own bound."""

    delta: float
    threshold: float
    epsilon: float
    states: int
    pairs: int
    untried: int
    thin: int
    violation: tuple[tuple[int, float], ...]
    queries: tuple[Query, ...]

    @property
    def confirmed(self) -> bool:
        return self.untried == 0 and self.epsilon <= self.threshold


@dataclass(frozen=True, slots=True)
class LatticeVerdict:
    """The verdict for the agent, from the results on h∧ and on h∨."""

    verdict: AgentVerdict
    tier: Tier
    reason: str
    on_and: QualitativeResult
    on_or: QualitativeResult
    witness: Witness | None = None  # the observed witness / counterexample, or h∨'s run for unknown
    confidence: Confidence | None = None  # for verdicts that rest on h∨
    decisive_query: tuple[State, str] | None = None  # for unknown: the untried pair to execute next

    @property
    def assumption(self) -> str | None:
        """What the verdict rests on beyond the data (None for the observed tier)."""
        return MARKOV if self.tier is Tier.CONFIDENT else None


def decide(prop: Property, h_and: CompoundModel, h_or: CompoundModel, data: TransitionDataset | None,
           init: State, *, engines: tuple[SymbolicEngine, SymbolicEngine] | None = None,
           delta: float = DEFAULT_DELTA, epsilon: float = DEFAULT_EPSILON, max_queries: int = 5) -> LatticeVerdict:
    """The verdict for the agent; ``engines`` are BDD engines of h∧ and h∨ to reuse
    (their reachable sets are kept) when several properties are checked.  ``delta``
    and ``epsilon`` set the confident tier (module docstring)."""
    query, caps = qualitative_query(prop)
    eng_and, eng_or = engines if engines is not None else (SymbolicEngine(h_and), SymbolicEngine(h_or))
    on_and = eng_and.check(prop, init)
    on_or = eng_or.check(prop, init)
    path = query.path
    existential = isinstance(query, ExistsPath) and isinstance(path, Eventually | Until)
    invariant = isinstance(query, ForallPath) and isinstance(path, Globally)
    if existential and on_and.holds:
        return LatticeVerdict(AgentVerdict.HOLDS, Tier.OBSERVED, "witnessed on h∧: every step was observed",
                              on_and, on_or, on_and.witness)
    if invariant and not on_and.holds:
        return LatticeVerdict(AgentVerdict.VIOLATED, Tier.OBSERVED, "violated on h∧: the counterexample was observed",
                              on_and, on_or, on_and.witness)
    if not (existential or invariant):
        why = "not decided on the lattice for this operator (runs stop in dead ends): see the results on h∧ and h∨"
        return LatticeVerdict(AgentVerdict.UNKNOWN, Tier.UNKNOWN, why, on_and, on_or)
    if (existential and not on_or.holds) or (invariant and on_or.holds):
        engine = eng_or.restricted(caps)
        hold, goal = path_sets(engine, path)
        conf = confidence(engine, init, goal, hold, path.bound, data, delta, epsilon, max_queries)
        verdict = AgentVerdict.HOLDS if invariant else AgentVerdict.VIOLATED
        on = "holds on h∨" if invariant else "impossible on h∨"
        if conf.confirmed:
            return LatticeVerdict(verdict, Tier.CONFIDENT, f"{on}, and the data bound its unseen effects",
                                  on_and, on_or, confidence=conf)
        return LatticeVerdict(AgentVerdict.UNCONFIRMED, Tier.UNCONFIRMED,
                              f"{on}, but the data do not bound its unseen effects", on_and, on_or, confidence=conf)
    pair = first_untried(on_or.witness, data) if data is not None else None
    why = "holds on h∨ but not on h∧" if existential else "fails on h∨ but not on h∧"
    return LatticeVerdict(AgentVerdict.UNKNOWN, Tier.UNKNOWN, why, on_and, on_or, on_or.witness,
                          decisive_query=pair)


def path_sets(engine: SymbolicEngine, path: PathFormula) -> tuple[Node, Node]:
    """(hold, goal) of the run a verdict on h∨ rules out: ``E [ hold U goal ]`` for an
    existential property, ``E [ F ¬φ ]`` for ``A [ G φ ]``."""
    bdd = engine.bdd
    if isinstance(path, Globally):
        return bdd.true, bdd.neg(formula_bdd(engine.ctx, path.invariant))
    if isinstance(path, Until):
        return formula_bdd(engine.ctx, path.hold), formula_bdd(engine.ctx, path.goal)
    if isinstance(path, Eventually):
        return bdd.true, formula_bdd(engine.ctx, path.goal)
    raise TypeError(f"no run to rule out for {path!r}")


def confidence(engine: SymbolicEngine, init: State, goal: Node, hold: Node, bound: int | None,
               data: TransitionDataset | None, delta: float, epsilon: float, max_queries: int = 5) -> Confidence:
    """The missing-mass bounds at the frontier of a run from ``init`` to ``goal``
    through ``hold`` on ``engine``'s model, where there is none (module docstring)."""
    bdd = engine.bdd
    region = engine.frontier(init, goal, hold, bound)
    caps = engine.capability_names
    states = engine.count(region)
    pairs = states * len(caps)
    bounds = SamplingBounds(data, delta) if data is not None else None
    # An untried pair would be the next distinct pair tried: its δ share is that rank's.
    next_order = 1 + (sum(len(list(data.states_of(c))) for c in data.capability_table) if data is not None else 0)
    untried = 0
    fresh: list[Query] = []
    tried: list[Query] = []
    eps_max = 0.0
    for c in caps:
        seen = bdd.false
        if data is not None and bounds is not None:
            for s in data.states_of(c):
                if not bdd.evaluate(region, s):
                    continue
                seen = bdd.disj(seen, bdd.minterm(s))
                e = bounds.epsilon(s, c)
                eps_max = max(eps_max, e)
                if e > epsilon:
                    pb = bounds.pair(s, c)
                    assert pb is not None
                    need = executions_for(epsilon, delta, pb.sample.order, pb.sample.outcomes) - pb.sample.run
                    tried.append(Query(s, c, pb.sample.n, e, max(need, 1)))
        missing = bdd.conj(region, bdd.neg(seen))
        n_missing = engine.count(missing)
        untried += n_missing
        if n_missing and len(fresh) < max_queries:
            need = 1 + executions_for(epsilon, delta, next_order)
            fresh += [Query(s, c, 0, 1.0, need) for s in states_of(bdd, missing, max_queries - len(fresh))]
    if untried:
        eps_max = 1.0
    tried.sort(key=lambda q: -q.epsilon)
    horizons = sorted({*HORIZONS, *(() if bound is None else (bound,))})
    violation = tuple((k, -_expm1(k, eps_max)) for k in horizons)
    return Confidence(delta, epsilon, eps_max, states, pairs, untried, len(tried), violation,
                      tuple((fresh + tried)[:max_queries]))


def _expm1(k: int, eps: float) -> float:
    """(1 − ε)^k − 1, accurate for small ε."""
    return -1.0 if eps >= 1.0 else math.expm1(k * math.log1p(-eps))


def first_untried(witness: Witness | None, data: TransitionDataset) -> tuple[State, str] | None:
    """The first step of ``witness`` whose (state, capability) the data never tried."""
    if witness is None:
        return None
    s = witness.initial
    for c, s_next in witness.steps:
        if data.count_sc(s, c) == 0:
            return s, c
        s = s_next
    return None

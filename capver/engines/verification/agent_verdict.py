"""What a qualitative property checked on the lattice bounds says about the *agent*
(section 3.1; Theorems 1 and 3 of appendix A), in tiers that say what each verdict
licenses.

**Observed (exact).**  T_h∧ = T_D (Theorem 3): every transition of h∧ was observed,
so an existential reachability property (``E [ F φ ]``, ``E [ φ U ψ ]``, bounded or
not) that holds on h∧ holds for the agent, with an observed witness; an invariant
(``A [ G φ ]``) that fails on h∧ is violated by the agent, with an observed
counterexample.  Nothing is assumed beyond the data being observations of the agent
(D ⊆ T_h⋆, Theorem 3's premise).

**Confident (a bound, not a verdict).**  An invariant that holds on h∨, or an
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
≤ 1 − (1 − ε̄)^k, with confidence 1 − δ.  That is a bound on the violation, not
its absence: a truth whose only violation has probability below ε̄ is confident
and false, so a confident verdict is worded as what was seen ("NO VIOLATION SEEN",
"NOT SEEN TO HOLD") with its bound, never as HOLDS or VIOLATED
(:mod:`capver.engines.verification.verdict`).  Assumptions: the agent is Markov in α's states (A1 of the
sampling module), and its capabilities are the run's: one never declared has no pair
on the frontier (:data:`MARKOV` states both with the verdict).

**Unconfirmed.**  It holds on h∨ (or fails there) but some frontier pair is untried
or too thinly sampled; the verdict lists how many, and the queries that would
confirm it with how many executions each still needs.

**Unknown.**  h∧ and h∨ disagree; the first untried pair on h∨'s witness decides.

**The environment's states.**  Where the states W the environment reaches are known
(:mod:`capver.engines.verification.environment`; ``within`` of :func:`decide`), every
state of every run of the agent is in W, so the prefix s_0 … s_j of a violating run
up to its first unseen outcome runs through hold ∧ W: the frontier is computed
through hold ∧ W (through stay ∧ W for the lasting runs below), which keeps every
argument of this docstring and leaves out the states no agent can be in.  For a run
that must reach a goal (``A [ G φ ]``: ¬φ; ``E [ F φ ]``, ``E [ ψ U φ ]``: φ) every
s_i also reaches the goal in the environment — the rest of the run, executed — so
W narrows to the states of W from which the environment reaches a goal state (by its
own transitions, whatever the states in between: an execution's intermediate
states are not α's run).

**Runs that never stop: E [ G φ ], A [ F φ ], A [ φ U ψ ]** (bounded or not).  The
model-checking semantics lets a run stop in a dead end (read as stuttering there),
which makes these operators non-monotone in the transition set; but the agent never
stops — every capability can be executed in every state ("it is always valid to ask
an agent to achieve an intent", appendix A.3) — and h∧ has dead ends wherever nothing
was observed yet, which say nothing about the agent.  So these three are decided on
the agent's runs, which are infinite, through one kind of run, a *lasting run*: from
the initial state through ``stay`` states, either reaching an ``escape`` state within
k executions or staying in ``stay`` for k executions (unbounded: forever):

    E [ G φ ]     holds     ⟺  the agent has a lasting run, stay = φ,      escape = ∅
    A [ F φ ]     violated  ⟺  ...                          stay = ¬φ,     escape = ∅
    A [ φ U ψ ]   violated  ⟺  ...                          stay = φ ∧ ¬ψ, escape = ¬φ ∧ ¬ψ

(a run fails ``φ U<=k ψ`` exactly when its first state outside φ ∧ ¬ψ among
s_0 … s_k lacks ψ, or there is none; :func:`lasting_sets`).

* *Observed.*  A lasting run of h∧ that needs no dead end
  (:meth:`SymbolicEngine.lasting_run`: a shortest run to escape, else k observed
  executions inside stay, else a lasso of observed transitions inside stay) is a run
  of the agent, every step observed: E G holds, A F and A U are violated, exactly, and
  the run is the witness.  A run of h∧ that stops in a dead end is not used: the agent
  goes on from there, anywhere.
* *Confident.*  Suppose h∨ has no lasting run even when its dead ends may continue
  anywhere — which is the model-checking semantics on h∨: ``E [ G φ ]`` =
  νZ. φ ∧ (dead ∨ EX Z) fails there, and ``A [ F φ ]``, ``A [ φ U ψ ]`` hold, a dead
  end outside the goal failing them.  Take a lasting run of the agent and its first
  step outside h∨'s transitions, from s_j.  Every s_0 … s_j is a stay state and no
  escape (else h∨ would have a lasting run, to that escape or to the dead end), so
  s_0 … s_j is a run of h∨ inside stay, j < k, and s_j is on the *frontier*
  (``frontier(init, escape, stay, k)``: the stay states h∨ reaches through stay within
  k − 1 executions).  At a tried pair h∨'s successors are the observed ones, so that
  step is an unseen outcome there, of probability ≤ ε(s_j, c) — the argument of the
  confident tier above, with its tiers: confident when every frontier pair is tried
  with ε ≤ the threshold, else unconfirmed with the queries.  Moreover h∨ has no
  cycle inside stay reachable through stay (it would be a lasting lasso), so
  s_0 … s_j are distinct frontier states and j < d, the frontier's size: the stated
  horizons include d, at which 1 − (1 − ε̄)^d bounds the probability of a violation
  ever (``confidence(..., finite_runs=True)``).  With d = 0 (the initial state is
  outside stay, or k = 0) no agent has a lasting run at all: the verdict is exact,
  in the observed tier.
* *No confident tier the other way* (E G holds, A F or A U violated without an
  observed lasting run): the missing mass bounds outcomes the data have not shown
  from above; it never shows that an unobserved run exists.
* *Unknown.*  h∨ has a lasting run (its dead ends continuing anywhere) and h∧ none:
  the first untried pair on h∨'s run decides (at a dead end of h∨ — only where no
  allowed capability was ever tried — any capability there).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from capver.core.dataset import TransitionDataset
from capver.core.properties import (
    Eventually,
    ExistsPath,
    ForallPath,
    Globally,
    Not,
    PathFormula,
    Property,
    StateFormula,
    Until,
)
from capver.core.state import State
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

Within = Callable[[SymbolicEngine, StateFormula | None], Node]
"""The states the environment reaches, as a BDD of an engine's model; given a goal,
only those from which the environment reaches a goal state (module docstring)."""

MARKOV = (
    "the agent is Markov in α's states: each execution of c from a state s ends in s′ with a fixed "
    "probability P(s′ | s, c), whatever came before (queries may be chosen from the data); and its "
    "capabilities are the run's (a capability never declared is not on the frontier)"
)
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
    """How much a verdict is backed: observed (exact), confident (with confidence
    1 − δ under A1, a violation has probability ≤ ε̄ per execution), or neither."""

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
    under any scheduler, for the ``HORIZONS`` and the property's own bound (and, for
    E G, A F and A U, the frontier's size d, past which no violation can start).
    ``executions`` is how many more executions of frontier pairs confirm the verdict
    at the least (each untried pair at the δ share of the last rank any of them can
    have, each thin pair its own count), should no new outcome appear.

    ``complete`` is false when only the frontier's first rings were enumerated (a
    large h∨, :meth:`SymbolicEngine.frontier_prefix`) and some pair among them is
    untried: the verdict is unconfirmed all the same, and ``states``, ``pairs``,
    ``untried``, ``thin`` and ``executions`` count that prefix — lower bounds.
    ``environment``: the frontier runs through the states the environment reaches
    only (``within`` of :func:`decide`)."""

    delta: float
    threshold: float
    epsilon: float
    states: int
    pairs: int
    untried: int
    thin: int
    violation: tuple[tuple[int, float], ...]
    queries: tuple[Query, ...]
    executions: int = 0
    complete: bool = True
    environment: bool = False
    classes: bool = False  # untried and thin count an abstraction's classes (pooled verdicts)

    @property
    def confirmed(self) -> bool:
        return self.untried == 0 and self.epsilon <= self.threshold

    @property
    def frontier_name(self) -> str:
        """The model whose frontier this is, in words."""
        return "the frontier of h∨ under the abstraction" if self.classes else "h∨'s frontier"

    @property
    def unit(self) -> str:
        """What ``untried`` and ``thin`` count, in words."""
        return "classes" if self.classes else "(state, capability) pairs"


@dataclass(frozen=True, slots=True)
class AbstractionNote:
    """What an abstraction contributed to a verdict (:mod:`.pooled`): its ``name``, the
    ``classes`` its data fill, each refuted class as (capability, the states that
    refute it), the tests' share ``level`` of δ, and whether the verdict rests on it
    (``used``; else it is the per-pair verdict at δ/3, and ``why`` says why)."""

    name: str
    classes: int
    refuted: tuple[tuple[str, tuple[State, ...]], ...]
    level: float
    used: bool
    why: str = ""

    @property
    def assumption(self) -> str:
        return (
            f"each capability's observed effects have one distribution at every state of a class of {self.name} "
            f"(tested on the data in each of its {self.classes:,} classes at level {self.level:.3g}: "
            + (
                f"refuted in {len(self.refuted)}, whose pairs are bounded on their own"
                if self.refuted
                else "not refuted"
            )
            + ")"
        )


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
    # For an exact verdict the environment settled (capver.engines.verification.environment): which one.
    environment: str | None = None
    abstraction: AbstractionNote | None = None  # a verdict asked under an abstraction (pooled)

    @property
    def assumption(self) -> str | None:
        """What the verdict rests on beyond the data (None for the observed tier)."""
        if self.tier is not Tier.CONFIDENT:
            return None
        if self.abstraction is not None and self.abstraction.used:
            return f"{MARKOV}; and {self.abstraction.assumption}"
        return MARKOV


def decide(
    prop: Property,
    h_and: CompoundModel,
    h_or: CompoundModel,
    data: TransitionDataset | None,
    init: State,
    *,
    engines: tuple[SymbolicEngine, SymbolicEngine] | None = None,
    results: tuple[QualitativeResult, QualitativeResult] | None = None,
    delta: float = DEFAULT_DELTA,
    epsilon: float = DEFAULT_EPSILON,
    max_queries: int = 5,
    within: Within | None = None,
    units: FrontierUnits | None = None,
) -> LatticeVerdict:
    """The verdict for the agent; ``engines`` are BDD engines of h∧ and h∨ to reuse
    (their reachable sets are kept) when several properties are checked.
    ``results``: the property's verdicts on h∧ and h∨ when another engine already
    decided them (IC3, BMC: capver.engines.verification.qualitative); the BDD engines
    are then built only for the tiers that need them.  ``delta`` and ``epsilon`` set
    the confident tier, ``within`` gives the states the environment reaches as a BDD
    of an engine's model, through which frontiers are computed (module docstring);
    ``units`` what bounds the unseen mass at the frontier (:func:`confidence`)."""
    query, caps = qualitative_query(prop)
    if results is None:
        engines = engines if engines is not None else (SymbolicEngine(h_and), SymbolicEngine(h_or))
        on_and, on_or = engines[0].check(prop, init), engines[1].check(prop, init)
    else:
        on_and, on_or = results
    path = query.path
    existential = isinstance(query, ExistsPath) and isinstance(path, Eventually | Until)
    invariant = isinstance(query, ForallPath) and isinstance(path, Globally)
    if existential and on_and.holds:
        return LatticeVerdict(
            AgentVerdict.HOLDS, Tier.OBSERVED, "witnessed on h∧: every step was observed", on_and, on_or, on_and.witness
        )
    if invariant and not on_and.holds:
        return LatticeVerdict(
            AgentVerdict.VIOLATED,
            Tier.OBSERVED,
            "violated on h∧: the counterexample was observed",
            on_and,
            on_or,
            on_and.witness,
        )
    eng_and, eng_or = engines if engines is not None else (SymbolicEngine(h_and), SymbolicEngine(h_or))
    if not (existential or invariant):
        # E [ G φ ], A [ F φ ], A [ φ U ψ ]: on runs that never stop.
        return _decide_lasting(
            query,
            eng_and.restricted(caps),
            eng_or.restricted(caps),
            on_and,
            on_or,
            data,
            init,
            delta,
            epsilon,
            max_queries,
            within,
            units,
        )
    if (existential and not on_or.holds) or (invariant and on_or.holds):
        engine = eng_or.restricted(caps)
        hold, goal = frontier_sets(engine, query, within)
        verdict = AgentVerdict.HOLDS if invariant else AgentVerdict.VIOLATED
        on = "holds on h∨" if invariant else "impossible on h∨"
        if goal == engine.bdd.false:
            # No goal state at all (A [ G true ], say): no effect, seen or not, opens
            # a run to one, and the frontier would be the whole reachable set.
            why = "no state breaks it" if invariant else "no state is its goal"
            return LatticeVerdict(verdict, Tier.OBSERVED, f"{on}: {why}, whatever the agent does", on_and, on_or)
        conf = confidence(
            engine,
            init,
            goal,
            hold,
            path.bound,
            data,
            delta,
            epsilon,
            max_queries,
            environment=within is not None,
            units=units,
        )
        if conf.pairs == 0:
            # No state from which an execution could matter (e.g. the initial state
            # already ends every run through hold states): no agent can change it.
            return LatticeVerdict(
                verdict, Tier.OBSERVED, f"{on}: the initial state decides it, whatever the agent does", on_and, on_or
            )
        if conf.confirmed:
            return LatticeVerdict(
                verdict, Tier.CONFIDENT, f"{on}, and the data bound its unseen effects", on_and, on_or, confidence=conf
            )
        return LatticeVerdict(
            AgentVerdict.UNCONFIRMED,
            Tier.UNCONFIRMED,
            f"{on}, but the data do not bound its unseen effects",
            on_and,
            on_or,
            confidence=conf,
        )
    pair = first_untried(on_or.witness, data) if data is not None else None
    why = "holds on h∨ but not on h∧" if existential else "fails on h∨ but not on h∧"
    return LatticeVerdict(AgentVerdict.UNKNOWN, Tier.UNKNOWN, why, on_and, on_or, on_or.witness, decisive_query=pair)


def _decide_lasting(
    query: ExistsPath | ForallPath,
    eng_and: SymbolicEngine,
    eng_or: SymbolicEngine,
    on_and: QualitativeResult,
    on_or: QualitativeResult,
    data: TransitionDataset | None,
    init: State,
    delta: float,
    epsilon: float,
    max_queries: int,
    within: Within | None = None,
    units: FrontierUnits | None = None,
) -> LatticeVerdict:
    """``E [ G φ ]``, ``A [ F φ ]`` and ``A [ φ U ψ ]`` for an agent whose runs never
    stop ("Runs that never stop" in the module docstring); the engines are already
    restricted to the property's capabilities."""
    path = query.path
    exists = isinstance(query, ExistsPath)
    # A lasting run of the agent makes E G hold and A F, A U fail.
    found, absent = (
        (AgentVerdict.HOLDS, AgentVerdict.VIOLATED) if exists else (AgentVerdict.VIOLATED, AgentVerdict.HOLDS)
    )
    stay, escape = lasting_sets(eng_and, query)
    run = eng_and.lasting_run(init, stay, escape, path.bound)
    if run is not None:
        if run.loop is not None:
            how = "a lasso of observed transitions"
        elif eng_and.bdd.evaluate(escape, run.states[-1]):
            how = "an observed run to a state where neither side of U holds"
        else:
            how = f"an observed run of {len(run)} execution{'s' if len(run) != 1 else ''}"
        what = "witnessed" if exists else "violated"
        return LatticeVerdict(
            found,
            Tier.OBSERVED,
            f"{what} on h∧ by {how}, without a dead end: every step was observed",
            on_and,
            on_or,
            run,
        )
    # On h∨ the model-checking semantics lets dead ends continue anywhere, as needed.
    lasting_on_or = on_or.holds if exists else not on_or.holds
    if not lasting_on_or:
        stay_or, escape_or = frontier_sets(eng_or, query, within)
        conf = confidence(
            eng_or,
            init,
            escape_or,
            stay_or,
            path.bound,
            data,
            delta,
            epsilon,
            max_queries,
            finite_runs=True,
            environment=within is not None,
            units=units,
        )
        on = "impossible on h∨" if exists else "holds on h∨"
        if conf.states == 0:
            # No frontier state: the initial state is outside stay (or the bound is 0),
            # so no run of any agent is a lasting one.
            return LatticeVerdict(
                absent, Tier.OBSERVED, f"{on}: the initial state decides it, whatever the agent does", on_and, on_or
            )
        if conf.confirmed:
            return LatticeVerdict(
                absent,
                Tier.CONFIDENT,
                f"{on} (dead ends continuing anywhere), and the data bound its unseen effects",
                on_and,
                on_or,
                confidence=conf,
            )
        return LatticeVerdict(
            AgentVerdict.UNCONFIRMED,
            Tier.UNCONFIRMED,
            f"{on} (dead ends continuing anywhere), but the data do not bound its unseen effects",
            on_and,
            on_or,
            confidence=conf,
        )
    pair = first_untried(on_or.witness, data) if data is not None else None
    if pair is None and on_or.witness is not None and eng_or.bdd.evaluate(eng_or.dead, on_or.witness.states[-1]):
        # h∨'s run stops in a dead end: no allowed capability was tried anywhere.
        pair = (on_or.witness.states[-1], eng_or.capability_names[0]) if eng_or.capability_names else None
    why = (
        "holds on h∨ but h∧ has no run of the agent for it"
        if exists
        else "fails on h∨ but h∧ has no observed counterexample"
    )
    if on_and.holds == exists:
        why += " (h∧'s own verdict rests on a dead end, where the agent goes on)"
    return LatticeVerdict(AgentVerdict.UNKNOWN, Tier.UNKNOWN, why, on_and, on_or, on_or.witness, decisive_query=pair)


def violation_goal(query: ExistsPath | ForallPath) -> StateFormula | None:
    """The states a run that breaks an h∨ verdict on ``query`` must reach: ¬φ for
    ``A [ G φ ]``, the goal for ``E [ F φ ]`` / ``E [ ψ U φ ]``; None for the lasting
    runs of ``E [ G φ ]``, ``A [ F φ ]``, ``A [ φ U ψ ]``, which need not reach one."""
    path = query.path
    if isinstance(query, ForallPath) and isinstance(path, Globally):
        return Not(path.invariant)
    if isinstance(query, ExistsPath) and isinstance(path, Eventually | Until):
        return path.goal
    return None


def frontier_sets(engine: SymbolicEngine, query: ExistsPath | ForallPath, within: Within | None) -> tuple[Node, Node]:
    """(hold, goal) of the frontier of an h∨ verdict on ``query``: :func:`path_sets`
    of the query, hold cut to the environment's states ``within`` gives, those that
    reach :func:`violation_goal` where there is one (module docstring)."""
    hold, goal = path_sets(engine, query)
    if within is not None:
        hold = engine.bdd.conj(hold, within(engine, violation_goal(query)))
    return hold, goal


def lasting_sets(engine: SymbolicEngine, query: ExistsPath | ForallPath) -> tuple[Node, Node]:
    """(stay, escape) of the lasting run that makes ``E [ G φ ]`` hold (φ, ∅), or
    ``A [ F φ ]`` (¬φ, ∅) or ``A [ φ U ψ ]`` (φ ∧ ¬ψ, ¬φ ∧ ¬ψ) fail, on runs that never
    stop (module docstring); :class:`TypeError` for the other operators."""
    bdd = engine.bdd
    path = query.path
    if isinstance(query, ExistsPath) and isinstance(path, Globally):
        return formula_bdd(engine.ctx, path.invariant), bdd.false
    if isinstance(query, ForallPath) and isinstance(path, Eventually):
        return bdd.neg(formula_bdd(engine.ctx, path.goal)), bdd.false
    if isinstance(query, ForallPath) and isinstance(path, Until):
        hold, goal = formula_bdd(engine.ctx, path.hold), formula_bdd(engine.ctx, path.goal)
        not_goal = bdd.neg(goal)
        return bdd.conj(hold, not_goal), bdd.conj(bdd.neg(hold), not_goal)
    raise TypeError(f"no lasting run decides {query!r}")


def path_sets(engine: SymbolicEngine, path: PathFormula | ExistsPath | ForallPath) -> tuple[Node, Node]:
    """(hold, goal) of the run a verdict on h∨ rules out: ``E [ hold U goal ]`` for an
    existential property, ``E [ F ¬φ ]`` for ``A [ G φ ]``.  Given the query, also
    the lasting run's (stay, escape) for ``E [ G φ ]``, ``A [ F φ ]`` and
    ``A [ φ U ψ ]`` (:func:`lasting_sets`), whose frontier is the same walk."""
    if isinstance(path, ExistsPath | ForallPath):
        query = path
        path = query.path
        if isinstance(query, ExistsPath) == isinstance(path, Globally):
            return lasting_sets(engine, query)
    bdd = engine.bdd
    if isinstance(path, Globally):
        return bdd.true, bdd.neg(formula_bdd(engine.ctx, path.invariant))
    if isinstance(path, Until):
        return formula_bdd(engine.ctx, path.hold), formula_bdd(engine.ctx, path.goal)
    if isinstance(path, Eventually):
        return bdd.true, formula_bdd(engine.ctx, path.goal)
    raise TypeError(f"no run to rule out for {path!r}")


def confidence(
    engine: SymbolicEngine,
    init: State,
    goal: Node,
    hold: Node,
    bound: int | None,
    data: TransitionDataset | None,
    delta: float,
    epsilon: float,
    max_queries: int = 5,
    *,
    finite_runs: bool = False,
    environment: bool = False,
    units: FrontierUnits | None = None,
) -> Confidence:
    """The missing-mass bounds at the frontier of a run from ``init`` to ``goal``
    through ``hold`` on ``engine``'s model, where there is none (module docstring).

    ``finite_runs``: the model's runs from ``init`` through ``hold`` also form no
    cycle and meet no dead end (no lasting run, for E G, A F and A U), so they leave
    the frontier within d executions, d its number of states; d joins the horizons,
    where the violation bound holds for a violation ever.  ``environment``: ``hold``
    was cut to the environment's states (:func:`frontier_sets`), which the result
    records.  ``units``: what bounds the unseen mass at a frontier pair (default: the
    pair's own executions, :class:`PairUnits`; pooled classes under an abstraction,
    :mod:`capver.engines.verification.pooled`)."""
    units = units if units is not None else PairUnits(data, delta)
    rings, complete = engine.frontier_prefix(init, goal, hold, bound)
    conf = _confidence_on(engine, rings, complete, bound, units, delta, epsilon, max_queries, finite_runs)
    if not complete and conf.untried == 0:
        # Every pair of the prefix was tried: only the whole frontier can tell.
        conf = _confidence_on(
            engine,
            engine.frontier(init, goal, hold, bound),
            True,
            bound,
            units,
            delta,
            epsilon,
            max_queries,
            finite_runs,
        )
    return dataclasses.replace(conf, environment=True) if environment else conf


@dataclass(frozen=True, slots=True)
class Unit:
    """Frontier states of one capability whose unseen mass one bound covers: a tried
    pair (``cover`` its minterm) or, under an abstraction, a tried class (its states).
    ``tried`` counts its executions, ``epsilon`` bounds the unseen mass at each state,
    ``executions`` is how many more in a row without a new outcome bring it to the
    threshold (0 when it is there); ``state`` is where to execute ``capability`` for it."""

    cover: Node
    state: State
    capability: str
    tried: int
    epsilon: float
    executions: int


class FrontierUnits(Protocol):
    """What bounds the unseen mass at the frontier's pairs."""

    def tried(self, engine: SymbolicEngine, c: str, region: Node, epsilon: float) -> Iterable[Unit]:
        """The units of ``c`` that meet ``region``, each with the executions it still
        needs to reach ``epsilon`` (0 when it has)."""
        ...

    def untried_executions(self, epsilon: float, untried: int) -> int:
        """Executions that bring an untried pair (class) to ``epsilon``, when ``untried``
        of them are yet to be tried in any order."""
        ...

    def untried_count(self, engine: SymbolicEngine, missing: Mapping[str, Node]) -> int:
        """How many pairs (classes) the untried states make up, ``missing[c]`` those
        of capability c."""
        ...


class PairUnits:
    """Each tried pair (s, c) with its own missing-mass bound ε(s, c)
    (:mod:`capver.engines.verification.sampling`)."""

    def __init__(self, data: TransitionDataset | None, delta: float) -> None:
        self.data = data
        self.delta = delta
        self.bounds = SamplingBounds(data, delta) if data is not None else None

    def tried(self, engine: SymbolicEngine, c: str, region: Node, epsilon: float) -> Iterable[Unit]:
        if self.data is None or self.bounds is None:
            return
        bdd = engine.bdd
        for s in self.data.states_of(c):
            if not bdd.evaluate(region, s):
                continue
            e = self.bounds.epsilon(s, c)
            need = 0
            pb = self.bounds.pair(s, c) if e > epsilon else None
            if pb is not None:
                need = max(executions_for(epsilon, self.delta, pb.sample.order, pb.sample.outcomes) - pb.sample.run, 1)
            yield Unit(bdd.minterm(s), s, c, self.data.count_sc(s, c), e, need)

    def untried_executions(self, epsilon: float, untried: int) -> int:
        # An untried pair would be the next distinct pair tried; each gets the δ share
        # of the last rank any of them can have, so the count holds in any order.
        tried = self.data.pairs_tried if self.data is not None else 0
        return 1 + executions_for(epsilon, self.delta, tried + max(untried, 1))

    def untried_count(self, engine: SymbolicEngine, missing: Mapping[str, Node]) -> int:
        return sum(engine.count(u) for u in missing.values())


def _confidence_on(
    engine: SymbolicEngine,
    rings: list[Node],
    complete: bool,
    bound: int | None,
    units: FrontierUnits,
    delta: float,
    epsilon: float,
    max_queries: int,
    finite_runs: bool,
) -> Confidence:
    bdd = engine.bdd
    region = bdd.false
    for ring in rings:
        region = bdd.disj(region, ring)
    caps = engine.capability_names
    states = engine.count(region)
    pairs = states * len(caps)
    fresh: list[Query] = []
    tried: list[Query] = []
    eps_max = 0.0
    unseen: dict[str, Node] = {}
    missing: dict[str, Node] = {}
    for c in caps:
        seen = bdd.false
        for u in units.tried(engine, c, region, epsilon):
            seen = bdd.disj(seen, u.cover)
            eps_max = max(eps_max, u.epsilon)
            if u.executions:
                tried.append(Query(u.state, c, u.tried, u.epsilon, u.executions))
        missing[c] = bdd.conj(region, bdd.neg(seen))
        unseen[c] = bdd.neg(seen)
    # At once: a class of an abstraction across capabilities is counted once.
    untried = units.untried_count(engine, missing)
    # The untried pairs nearest the initial state first: those a user can reach soonest.
    need = units.untried_executions(epsilon, untried)
    for ring in rings:
        for c in caps:
            if len(fresh) >= max_queries:
                break
            fresh += [
                Query(s, c, 0, 1.0, need) for s in states_of(bdd, bdd.conj(ring, unseen[c]), max_queries - len(fresh))
            ]
    if untried:
        eps_max = 1.0
    tried.sort(key=lambda q: -q.epsilon)
    horizons = sorted(
        {
            *HORIZONS,
            *(() if bound is None else (bound,)),
            # A violating run departs from the frontier within its first d steps.
            *((states if bound is None else min(states, bound),) if finite_runs and states else ()),
        }
    )
    violation = tuple((k, -_expm1(k, eps_max)) for k in horizons)
    executions = untried * need + sum(q.executions for q in tried)
    return Confidence(
        delta,
        epsilon,
        eps_max,
        states,
        pairs,
        untried,
        len(tried),
        violation,
        tuple((fresh + tried)[:max_queries]),
        executions,
        complete,
    )


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

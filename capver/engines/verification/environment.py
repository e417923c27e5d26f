"""What the environment alone settles, whatever the agent does.

An agent acts only through its environment: every execution of a capability is a run
of the simulator's own transitions, so every state an agent is in when an execution
ends is a state the *environment* reaches from the same initial state.  Where a
setting knows its environment as a finite transition system (the PPDDL settings,
whose simulator is a PPDDL task and whose α is the identity on its states), the
states it reaches — enumerated breadth first, every outcome of every applicable
action — contain every state of every agent's runs.  That settles, exactly and
for every agent (nothing is sampled and nothing is assumed of the agent):

* ``A [ G φ ]`` and ``A [ G<=k φ ]`` **hold** when no reachable state breaks φ;
* ``E [ F φ ]`` and ``E [ ψ U φ ]`` (bounded or not) **fail** when no reachable
  state satisfies φ;
* on the agent's runs, which never stop (every capability can be executed in every
  state, appendix A.3 of the paper; :mod:`~capver.engines.verification.agent_verdict`):
  ``A [ F φ ]`` and ``A [ ψ U φ ]`` **fail** when no reachable state satisfies φ, and
  ``E [ G φ ]`` **holds** when every reachable state satisfies φ.

Where the environment allows both answers, its states still narrow what the data must
show: the frontier of an h∨ verdict (the states where one more execution could still
matter) is computed through them only — through those from which the environment
reaches the states a violating run must reach, where there are such — since no agent
is ever in another state (:func:`restriction`, the ``within`` of
:func:`~capver.engines.verification.agent_verdict.decide`).

The verdict is in the observed tier (exact), with its reason naming the environment:
it is what a learned model cannot give for a property that holds, since h∨ covers the
agent only under effect completeness, which no amount of data shows.  What it cannot
do: a property the environment allows to fail (the agent might avoid the bad states,
or not) is left to the lattice and its tiers.  Premise: the simulator behaves as its
task says (for the bundled PPDDL domains it *is* the task).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from capver.core.properties import (
    Eventually,
    ExistsPath,
    ForallPath,
    Globally,
    Property,
    StateFormula,
    Until,
    holds,
)
from capver.core.state import State
from capver.core.vocabulary import Vocabulary
from capver.engines.verification.agent_verdict import AgentVerdict, LatticeVerdict, Tier, Within
from capver.engines.verification.symbolic import SymbolicEngine
from capver.errors import VocabularyError
from capver.logic.bdd import Node

WORLD_LIMIT = 200_000
"""The most states an environment is enumerated to; a larger one settles nothing."""


@dataclass(frozen=True, slots=True)
class World:
    """The states an environment reaches from ``initial`` (bitsets of ``vocabulary``),
    and what it is (``source``, for the verdict's reason)."""

    vocabulary: Vocabulary
    initial: State
    states: frozenset[State]
    source: str
    # Each reachable state's successors (by the environment's own transitions).
    successors: Mapping[State, frozenset[State]] = field(default_factory=dict, compare=False, hash=False, repr=False)
    # Whether every state of an environment run is one an execution ends in (Θ = 1
    # over an identity α): only then does an agent's run pass through every state
    # the environment passes through, so that an Until's hold condition may be
    # required of them (hopeless's ``through``).  With Θ > 1 an execution crosses
    # states its run never shows.
    stepwise: bool = True
    # reaching() and region() answers: the property tracker asks for the same ones
    # after every query, and a region is one BDD disjunction per state.
    _reaching: dict[tuple[StateFormula, StateFormula | None], frozenset[State]] = field(
        default_factory=dict, init=False, compare=False, hash=False, repr=False
    )
    _regions: dict[tuple[object, StateFormula | None], Node] = field(
        default_factory=dict, init=False, compare=False, hash=False, repr=False
    )
    # The successors inverted, once for every reaching() question.
    _predecessors: dict[State, list[State]] = field(
        default_factory=dict, init=False, compare=False, hash=False, repr=False
    )

    @staticmethod
    def of(
        vocabulary: Vocabulary,
        initial: State,
        successors: Mapping[State, frozenset[State]],
        source: str,
        *,
        stepwise: bool = True,
    ) -> World:
        """The world of an :func:`explore` result."""
        return World(vocabulary, initial, frozenset(successors), source, successors, stepwise)

    def starts_at(self, init: State, vocab: Vocabulary) -> bool:
        """Whether ``init`` (a state of ``vocab``) is this world's initial state: the
        same true atoms, named alike."""
        return {str(a) for a in vocab.atoms_of(init)} == {str(a) for a in self.vocabulary.atoms_of(self.initial)}

    def reaching(self, goal: StateFormula, through: StateFormula | None = None) -> frozenset[State]:
        """The reachable states from which the environment reaches a ``goal`` state
        through states of ``through`` (any state when None) before it (goal states
        included); all of them when the successors are not known."""
        if not self.successors:
            return self.states
        key = (goal, through)
        hit = self._reaching.get(key)
        if hit is not None:
            return hit
        before = self._predecessors
        if not before:
            for s, ts in self.successors.items():
                for t in ts:
                    before.setdefault(t, []).append(s)
        vocab = self.vocabulary
        found = {s for s in self.states if holds(goal, s, vocab)}
        todo = list(found)
        while todo:
            for s in before.get(todo.pop(), ()):
                if s not in found and (through is None or holds(through, s, vocab)):
                    found.add(s)
                    todo.append(s)
        self._reaching[key] = answer = frozenset(found)
        return answer

    def region(self, engine: SymbolicEngine, goal: StateFormula | None = None) -> Node:
        """The reachable states — given ``goal``, those that reach a goal state — as a
        BDD of ``engine``'s model (whose vocabulary may order the atoms otherwise);
        true, no restriction, when the model or the world lacks an atom."""
        bdd, vocab = engine.bdd, engine.ctx.vocab
        key = (bdd, goal)
        if key in self._regions:
            return self._regions[key]
        try:
            chosen = self.states if goal is None else self.reaching(goal)
            states: Iterable[State] = (
                chosen
                if list(vocab.atoms) == list(self.vocabulary.atoms)
                else [vocab.state(self.vocabulary.atoms_of(s)) for s in chosen]
            )
        except VocabularyError:
            return bdd.true
        region = bdd.false
        for s in states:
            region = bdd.disj(region, bdd.minterm(s))
        self._regions[key] = region
        return region

    def count(self, formula: StateFormula) -> int:
        """How many reachable states satisfy ``formula``."""
        return sum(1 for s in self.states if holds(formula, s, self.vocabulary))


def explore(
    successors: Callable[[State], Iterable[State]], initial: State, limit: int = WORLD_LIMIT
) -> dict[State, frozenset[State]] | None:
    """The states reachable from ``initial`` by ``successors``, each with its
    successors, or None when there are more than ``limit``."""
    edges: dict[State, frozenset[State]] = {}
    seen = {initial}
    todo = [initial]
    while todo:
        s = todo.pop()
        edges[s] = frozenset(successors(s))
        for t in edges[s]:
            if t not in seen:
                if len(seen) >= limit:
                    return None
                seen.add(t)
                todo.append(t)
    return edges


def restriction(world: World | None, init: State, vocab: Vocabulary) -> Within | None:
    """``within`` of :func:`~capver.engines.verification.agent_verdict.decide` for
    runs from ``init`` (a state of ``vocab``): the world's states, when it starts
    there (else None: no restriction)."""
    if world is None or not world.starts_at(init, vocab):
        return None
    return world.region


def hopeless(
    world: World | None, init: State, vocab: Vocabulary, goal: StateFormula, through: StateFormula | None = None
) -> Callable[[State], bool] | None:
    """The states (of ``vocab``) from which no run of the environment reaches ``goal``
    through ``through`` states (any when None, or when the world is not
    :attr:`World.stepwise`): there every agent's probability of
    ``through U goal`` (``F goal``), bounded or not, is 0, which the bounds of
    :mod:`~capver.engines.verification.confidence` take as known instead of
    reading it from the data.  A state the environment does not reach is not
    hopeless (nothing is known of it).  None when the world does not apply: none, a
    world of another initial state or other atoms, or one whose successors are not
    known."""
    if world is None or not world.successors or not world.starts_at(init, vocab):
        return None
    if not world.stepwise:
        # An execution may cross states that break ``through`` without ending in
        # one: only the states from which the goal is out of reach altogether are
        # worth 0 to every agent.
        through = None
    try:
        if list(vocab.atoms) == list(world.vocabulary.atoms):
            known, alive = world.states, world.reaching(goal, through)
        else:
            known = frozenset(vocab.state(world.vocabulary.atoms_of(s)) for s in world.states)
            alive = frozenset(vocab.state(world.vocabulary.atoms_of(s)) for s in world.reaching(goal, through))
    except VocabularyError:
        return None
    return lambda s: s in known and s not in alive


def settle(
    verdict: LatticeVerdict, prop: Property, world: World | None, init: State, vocab: Vocabulary
) -> LatticeVerdict:
    """``verdict`` made exact where the environment settles ``prop`` from ``init``
    (module docstring); unchanged when it rests on an observed run, when there is no
    world, when the world starts elsewhere or lacks one of the property's atoms, or
    when the environment allows both answers.  (An exact verdict without a run — "the
    initial state decides it", which a frontier cut to the environment's states can
    give — takes the environment's reason, the one that explains it.)"""
    observed_run = verdict.tier is Tier.OBSERVED and verdict.witness is not None
    if world is None or observed_run or not world.starts_at(init, vocab):
        return verdict
    query, path = prop.query, getattr(prop.query, "path", None)
    try:
        if isinstance(query, ExistsPath | ForallPath) and isinstance(path, Globally):
            # Every run of every agent stays in φ: A G holds, and so does E G, the
            # agent having runs that never stop.
            if world.count(path.invariant) < len(world.states):
                return verdict
            return _exact(verdict, AgentVerdict.HOLDS, world, "breaks it")
        if isinstance(query, ExistsPath | ForallPath) and isinstance(path, Eventually | Until):
            if world.count(path.goal):
                return verdict
            # No run of any agent reaches the goal: an existential one fails, and a
            # universal one fails on every run, since the agent's runs never stop.
            return _exact(verdict, AgentVerdict.VIOLATED, world, "is its goal")
    except VocabularyError:
        return verdict  # an atom the environment does not have: it settles nothing
    return verdict


def _exact(verdict: LatticeVerdict, outcome: AgentVerdict, world: World, what: str) -> LatticeVerdict:
    reason = (
        f"no state the environment reaches {what} ({len(world.states):,} states of {world.source}), "
        "whatever the agent does"
    )
    return LatticeVerdict(outcome, Tier.OBSERVED, reason, verdict.on_and, verdict.on_or, environment=world.source)

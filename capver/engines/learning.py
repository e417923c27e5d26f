"""The MCQS learning loop (section 3, sections 3.2–3.3; appendix E of the paper
describes it, the earlier version spells out initial-state sampling).

Each iteration:

1. samples an initial state x₀ among the environment states seen so far, with
   weight n_max + 1 − N(s; D) for its symbolic state s (rarely tried states first);
2. asks the query-synthesis method for a policy π from s₀ = α(x₀), given h∧, h∨,
   D and the current ξ;
3. executes the query ⟨x₀, π, n⟩: n times, revert to x₀ and follow π, one
   capability execution at a time; every execution's transition is added to D
   (and to the append-only file), h∧/h∨ are rebuilt incrementally, and π is told
   whether the execution surprised (added a transition D lacked);
4. stops on a budget (simulator steps, queries, wall-clock) or after ``patience``
   consecutive queries with no new transition and no effect probability of h∧
   moving by more than ``prob_tolerance`` (section 4.2: 25 queries, 5%).

With properties (:attr:`LearnConfig.properties`) the learner also tracks their verdict
tiers after every query (:mod:`capver.engines.directed`), directs query synthesis to
the states that can still change them (the property focus, unless ``directed`` is
off), starts queries from observed states inside that focus when there are any, and
stops once every property is decided; patience does not apply then, since
re-sampling a thin pair — what a confident verdict needs — adds no new transition.
Under an abstraction, where the focused property's verdict names a query that starts
at an observed state (a class and the executions it still needs;
:meth:`PropertyTracker.confirmation`), the learner executes that instead of
synthesising one: ⟨x₀, (c), n⟩, ended at the first new outcome of a pair tried before.

A failed execution (the agent, the simulator or α raised, an invalid action, a
budget or a time limit ran out) is counted, kept in the file and never added to D: it
says nothing about the capability's outcomes, so no pair is tried by it and no tier
rests on it.  Learning warns once more than :data:`FAILURE_SHARE` of the executions
failed, and stops with :class:`~capver.errors.AgentFailureError` once a capability's
first :data:`FAILURE_LIMIT` executions all crashed (raised or chose an invalid
action) and D has no transition of it.

ξ is set from the number of queries since the last discovery of a new transition,
ξ = min(ξ_cap, ξ_step · k) (section 4.2: "up to 10⁻⁵").

The n executions of a query run one after another in this process by default: each
sees the transitions the ones before it added, and all of them draw from the
learner's one stream of random choices.  With :class:`ParallelExecutions` (``--executor``
and ``--concurrency`` of ``capver learn``) they advance in *rounds* instead: in each
round every execution still going asks its own copy of π for its next capability
(all asking with D as it stood after the previous round, in execution order), the
capability executions of the round run on an executor's workers, and their results
are recorded in execution order.  Each capability execution gets its own streams,
derived from an entropy word the learner draws per query and the execution's
(index, step), and a simulator reseeded from them, so the run is the same on any
executor with any number of workers; it differs from the default's run, whose
executions share one stream.
"""

from __future__ import annotations

import copy
import dataclasses
import time
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Protocol

import numpy as np

from capver.agents.base import Agent
from capver.core.dataset import TransitionDataset
from capver.core.properties import Property
from capver.core.state import Capability, State, Transition
from capver.engines.directed import PropertyTracker, Targets, TierChange
from capver.engines.execution import Execution, ExecutionBudget, derived_streams, execute
from capver.engines.executors import Executor, Setup
from capver.engines.lattice import LatticeBuilder
from capver.engines.mcqs import QUERY_METHODS
from capver.engines.mcqs.base import QueryPolicy, SequencePolicy, SynthesisConfig, SynthesisInput
from capver.engines.mcqs.focus import Focus
from capver.engines.mcqs.tilde import REWARDS, Uncertainty
from capver.engines.mcts import MCTSConfig
from capver.engines.verification.environment import World
from capver.envs.base import Representation, Simulator
from capver.errors import AgentFailureError, CapverError, FailureWarning
from capver.logic.condition import LogicContext
from capver.model.abstraction import Abstraction
from capver.model.capability_model import CompoundModel


class RecordSink(Protocol):
    """Where every observation is persisted as it happens (the dataset file)."""

    def write_capability(self, c: Capability) -> object: ...  # the result is ignored
    def write(self, t: Transition, steps: int = 0, meta: dict[str, Any] | None = None) -> None: ...


@dataclass(frozen=True, slots=True)
class Setting:
    """What is assessed: an agent acting in a simulator, seen through α."""

    agent: Agent
    sim: Simulator[Any]
    alpha: Representation[Any]
    capabilities: tuple[Capability, ...]
    initial_states: tuple[Any, ...]
    budget: ExecutionBudget = ExecutionBudget()
    # True when environment states are the symbolic states themselves (PPDDL and
    # model-backed simulators): then every state of a reloaded dataset can be
    # reverted to, so a resumed run loses no starting points.
    symbolic_states: bool = False


@dataclass(frozen=True, slots=True)
class ParallelExecutions:
    """Run the executions of each query in rounds on ``executor``; every worker
    builds its own setting once with ``setting`` (picklable, e.g. a
    :class:`capver.settings.SettingSpec`) and receives per capability execution
    only the capability, the start state and the entropy of its streams."""

    executor: Executor
    setting: Setup


@dataclass(frozen=True, slots=True)
class SeededExecution:
    """One capability execution of a round, as shipped to a worker."""

    capability: Capability
    x0: Any
    entropy: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class SeededResult:
    """What a worker sends back: the execution, the environment state it ended in
    (the next execution of its chain starts there), and what it added to the
    worker's agent's usage counters (the LLM agent's calls and tokens), if any."""

    execution: Execution
    state: Any
    usage: tuple[tuple[str, int], ...] = ()


def usage_counts(agent: object) -> dict[str, int]:
    """The integer counters of an agent's ``usage`` snapshot (a dataclass, e.g. the
    LLM agent's calls, cache hits and tokens); empty for agents without one."""
    usage = getattr(agent, "usage", None)
    if usage is None or not dataclasses.is_dataclass(usage):
        return {}
    values = ((f.name, getattr(usage, f.name)) for f in dataclasses.fields(usage))
    return {name: v for name, v in values if isinstance(v, int)}


def execute_seeded(setting: Setting, task: SeededExecution) -> SeededResult:
    """Module-level so that every executor can ship it by name."""
    rng, sim_seed = derived_streams(task.entropy)
    before = usage_counts(setting.agent)
    setting.sim.reset(sim_seed)
    ex = execute(setting.agent, setting.sim, setting.alpha, task.capability, task.x0, rng, setting.budget)
    after = usage_counts(setting.agent)
    return SeededResult(ex, setting.sim.get_state(), tuple((k, v - before.get(k, 0)) for k, v in after.items()))


@dataclass(slots=True)
class _Chain:
    """One execution of a query in progress (rounds mode)."""

    policy: QueryPolicy
    x: Any
    s: State
    step: int = 0
    surprised: bool = False


@dataclass(frozen=True, slots=True)
class LearnDefaults:
    """The defaults of a learning run, defined once: :class:`LearnConfig`, ``capver
    learn`` and :func:`capver.api.learn` read them.  ``max_steps`` is the step budget
    ``capver learn`` uses when no budget is given at all, and the default of the API's
    ``max_steps`` (which, unlike the command line, keeps it when only another budget is
    given: documented API calls would otherwise learn longer); LearnConfig itself has
    no step budget unless one is given."""

    method: str = "mcqs-s"
    executions: int = 2
    iterations: int = 100
    horizon: int = 10
    xi_cap: float = 1e-5
    patience: int = 25
    max_steps: int = 2000


LEARN_DEFAULTS = LearnDefaults()


@dataclass(frozen=True, slots=True)
class LearnConfig:
    method: str = LEARN_DEFAULTS.method
    executions_per_query: int = LEARN_DEFAULTS.executions
    max_steps: int | None = None
    max_queries: int | None = None
    max_seconds: float | None = None
    patience: int = LEARN_DEFAULTS.patience
    prob_tolerance: float = 0.05
    xi_cap: float = LEARN_DEFAULTS.xi_cap
    xi_step: float = 1e-6
    synthesis: SynthesisConfig = SynthesisConfig()
    # The reward of query synthesis (capver.engines.mcqs.tilde.REWARDS): the paper's
    # h∧/h∨ disagreement, or with the h̃-uncertainty term λ·u, u rebuilt with h̃
    # every ``tilde_every`` queries, λ = ``tilde_weight`` (``--reward tilde``).
    reward: str = "disagreement"
    tilde_every: int = 10
    tilde_weight: float = 0.5
    # Properties whose verdicts the run should decide (capver.engines.directed), from
    # ``property_init`` (default: the setting's first initial state); ``directed``
    # turns the property focus of query synthesis on.
    properties: tuple[Property, ...] = ()
    property_init: State | None = None
    targets: Targets = Targets()
    directed: bool = True
    # The environment's reachable states, where the setting knows them
    # (capver.engines.verification.environment): properties they settle are exact at once.
    world: World | None = None
    # The properties' verdicts may rest on an abstraction (capver.engines.verification.pooled),
    # fixed after the first ``abstraction_since`` executions, which it does not pool.
    abstraction: Abstraction | None = None
    abstraction_since: int = 0

    def __post_init__(self) -> None:
        if self.method not in QUERY_METHODS:
            raise CapverError(f"unknown method {self.method!r}; expected one of {sorted(QUERY_METHODS)}")
        if self.executions_per_query < 1:
            raise CapverError("executions_per_query must be ≥ 1")
        if self.reward not in REWARDS:
            raise CapverError(f"unknown reward {self.reward!r}; expected one of {sorted(REWARDS)}")
        if self.tilde_every < 1:
            raise CapverError(f"tilde_every must be ≥ 1, got {self.tilde_every}")
        if not 0.0 <= self.tilde_weight <= 1.0:
            raise CapverError(f"tilde_weight must be in [0, 1], got {self.tilde_weight}")

    @staticmethod
    def from_options(
        method: str,
        *,
        executions: int,
        iterations: int,
        horizon: int,
        xi_cap: float,
        patience: int,
        max_steps: int | None = None,
        max_queries: int | None = None,
        max_seconds: float | None = None,
        reward: str = "disagreement",
        tilde_every: int = 10,
        tilde_weight: float = 0.5,
        properties: tuple[Property, ...] = (),
        targets: Targets = Targets(),
        directed: bool = True,
        world: World | None = None,
        abstraction: Abstraction | None = None,
        abstraction_since: int = 0,
    ) -> LearnConfig:
        """The configuration the command line and the benchmark share: ξ grows by a
        tenth of its cap per query without discovery, and the search discounts by
        γ = 0.95 per step (among equally informative queries, the shorter)."""
        return LearnConfig(
            method=method,
            executions_per_query=executions,
            max_steps=max_steps,
            max_queries=max_queries,
            max_seconds=max_seconds,
            patience=patience,
            xi_cap=xi_cap,
            xi_step=xi_cap / 10,
            synthesis=SynthesisConfig(MCTSConfig(iterations=iterations, horizon=horizon, discount=0.95)),
            reward=reward,
            tilde_every=tilde_every,
            tilde_weight=tilde_weight,
            properties=properties,
            targets=targets,
            directed=directed,
            world=world,
            abstraction=abstraction,
            abstraction_since=abstraction_since,
        )


FAILURE_LIMIT = 10
"""Crashed executions of one capability, with nothing else from it, after which
learning stops."""

FAILURE_SHARE = 0.05
"""The share of failed executions above which learning warns (once)."""


class StopReason(Enum):
    """Why :meth:`Learner.run` returned."""

    STEP_BUDGET = "step budget"
    QUERY_BUDGET = "query budget"
    TIME_BUDGET = "time budget"
    CONVERGED = "converged"
    DECIDED = "every property decided"
    REQUESTED = "stopped on request"


@dataclass(slots=True)
class Progress:
    queries: int = 0
    executions: int = 0
    failures: int = 0
    steps: int = 0
    unique_transitions: int = 0
    since_change: int = 0
    since_discovery: int = 0
    stop: StopReason | None = None
    stop_reason: str = ""  # the reason in words, with the budget that was hit
    seconds: float = 0.0
    curve: list[dict[str, float]] = field(default_factory=list)


def resumed_queries(meta: Iterable[tuple[int, Mapping[str, Any]]]) -> int:
    """Queries a stored run had started: one more than the highest query index in
    its records' metadata (0 for a run without records)."""
    return max((int(m["query"]) + 1 for _, m in meta if isinstance(m.get("query"), int)), default=0)


class Learner:
    """Runs MCQS (or a baseline) on a :class:`Setting`."""

    def __init__(
        self,
        ctx: LogicContext,
        setting: Setting,
        config: LearnConfig,
        rng: np.random.Generator,
        data: TransitionDataset | None = None,
        sink: RecordSink | None = None,
        grow: Callable[[Transition], Iterable[Capability]] | None = None,
        parallel: ParallelExecutions | None = None,
        history: Iterable[TierChange] = (),
    ) -> None:
        """``history``: the tier changes of the properties in earlier invocations of a
        resumed run."""
        self.ctx = ctx
        self.parallel = parallel
        # The usage counters the workers' agents added (rounds mode): the learner's
        # own agent makes none of those calls.
        self.worker_usage: dict[str, int] = {}
        self.setting = setting
        self.config = config
        self.rng = rng
        self.data = data if data is not None else TransitionDataset(ctx.vocab)
        self.sink = sink
        self.grow = grow
        self.capability_table: dict[str, Capability] = {}
        for c in setting.capabilities:
            self._declare(c)
        for name, c in list(self.data.capability_table.items()):
            if name not in self.capability_table:
                self.capability_table[name] = c
        self.builder = LatticeBuilder(ctx, self.data)
        self.synth = QUERY_METHODS[config.method](config.synthesis)
        self.snapshots: dict[int, Any] = {}
        for x in setting.initial_states:
            self.snapshots.setdefault(setting.alpha(x), x)
        if setting.symbolic_states:
            for t in self.data.unique_transitions():
                self.snapshots.setdefault(t.s, t.s)
                self.snapshots.setdefault(t.s_next, t.s_next)
        self.progress = Progress(
            unique_transitions=self.data.unique_count(),
            steps=self.data.simulator_steps,
            executions=len(self.data) + self.data.failure_count,
            failures=self.data.failure_count,
        )
        self._failure_warned = False
        self._crashes: dict[str, int] = {}  # c → crashed executions in this invocation
        self._failed_before = dict(self.data.failures)  # c → failed executions of earlier invocations
        self._start = time.monotonic()
        self._query_tag: dict[str, Any] | None = None
        self._stop_requested = False
        self.uncertainty: Uncertainty | None = None  # the reward's h̃ term, rebuilt every tilde_every queries
        self.tracker: PropertyTracker | None = None
        self._focus: Focus | None = None  # the focus of the current query
        self.property_changes: list[TierChange] = []  # the tier changes of the last query
        if config.properties:
            init = config.property_init
            if init is None:
                init = setting.alpha(setting.initial_states[0])
            self.tracker = PropertyTracker(
                config.properties,
                init,
                config.targets,
                history,
                config.world,
                config.abstraction,
                config.abstraction_since,
            )
            self.tracker.update(self.h_and, self.h_or, self.data, self.progress.steps, 0)

    # -- the loop -------------------------------------------------------------------
    @property
    def capabilities(self) -> tuple[Capability, ...]:
        """The capabilities assessed so far (the setting's and those discovered since)."""
        return tuple(self.capability_table.values())

    @property
    def h_and(self) -> CompoundModel:
        return self.builder.pessimistic

    @property
    def h_or(self) -> CompoundModel:
        return self.builder.optimistic

    def xi(self) -> float:
        return min(self.config.xi_cap, self.config.xi_step * self.progress.since_discovery)

    def request_stop(self) -> None:
        """End :meth:`run` after the current query (e.g. from its ``on_query``
        callback, once the caller has seen what it wanted)."""
        self._stop_requested = True

    def run(self, on_query: Callable[[Learner], None] | None = None) -> Progress:
        while not self._should_stop():
            self.query()
            if on_query is not None:
                on_query(self)
        self.progress.seconds = time.monotonic() - self._start
        return self.progress

    def _should_stop(self) -> bool:
        cfg, p = self.config, self.progress
        if self._stop_requested:
            p.stop, p.stop_reason = StopReason.REQUESTED, StopReason.REQUESTED.value
        elif cfg.max_steps is not None and p.steps >= cfg.max_steps:
            p.stop, p.stop_reason = StopReason.STEP_BUDGET, f"step budget {cfg.max_steps}"
        elif cfg.max_queries is not None and p.queries >= cfg.max_queries:
            p.stop, p.stop_reason = StopReason.QUERY_BUDGET, f"query budget {cfg.max_queries}"
        elif cfg.max_seconds is not None and time.monotonic() - self._start >= cfg.max_seconds:
            p.stop, p.stop_reason = StopReason.TIME_BUDGET, f"time budget {cfg.max_seconds}s"
        elif self.tracker is not None and self.tracker.all_decided:
            p.stop, p.stop_reason = StopReason.DECIDED, StopReason.DECIDED.value
        elif cfg.patience and p.since_change >= cfg.patience and self.tracker is None:
            p.stop = StopReason.CONVERGED
            p.stop_reason = (
                f"converged: {cfg.patience} queries without a new transition or a "
                f">{cfg.prob_tolerance:.0%} probability change"
            )
        else:
            return False
        return True

    def focus(self) -> Focus | None:
        """The property focus query synthesis uses (None without properties, or when
        ``directed`` is off)."""
        if self.tracker is None or not self.config.directed:
            return None
        return self.tracker.focus()

    def sample_initial_state(self) -> tuple[int, Any]:
        """x₀ with weight n_max + 1 − N(s; D) over the symbolic states seen so far
        (those inside the property focus, when it has any)."""
        states = sorted(self.snapshots)
        focus = self._focus
        if focus is not None:
            inside = [s for s in states if focus.relevant(s)]
            states = inside or states
        counts = np.array([self.data.count_s(s) for s in states], dtype=float)
        w = counts.max() + 1.0 - counts
        i = int(self.rng.choice(len(states), p=w / w.sum()))
        return states[i], self.snapshots[states[i]]

    def synthesis_input(self) -> SynthesisInput:
        return SynthesisInput(
            self.h_and, self.h_or, self.data, tuple(self.capability_table), self.xi(), self.uncertainty, self._focus
        )

    def query(self) -> None:
        """Synthesize and execute one query ⟨x₀, π, n⟩."""
        p = self.progress
        before = self.h_and
        log_start = self.data.log_position
        unique_before = p.unique_transitions
        self._focus = self.focus()
        cfg = self.config
        confirm = None
        if self._focus is not None and self.tracker is not None:
            confirm = self.tracker.confirmation(self.snapshots.__contains__)
        policy: QueryPolicy
        if confirm is not None:
            # A confirmation query of property-directed learning: the executions an
            # unconfirmed verdict names, from a state the simulator can be put back in.
            s0, x0 = confirm.state, self.snapshots[confirm.state]
            policy, executions = SequencePolicy([confirm.capability]), confirm.executions
        else:
            s0, x0 = self.sample_initial_state()
            if cfg.reward != "disagreement" and (self.uncertainty is None or p.queries % cfg.tilde_every == 0):
                # h̃'s folds are seeded by the query index, so the learner's own stream
                # is untouched.
                self.uncertainty = REWARDS[cfg.reward](self.h_and, self.data, cfg.tilde_weight, p.queries)
            policy, executions = self.synth.synthesize(s0, self.synthesis_input(), self.rng), cfg.executions_per_query
        self._query_tag = {"query": p.queries}
        if self.parallel is None:
            self._execute_sequentially(policy, s0, x0, executions, confirming=confirm is not None)
        else:
            self._execute_rounds(policy, s0, x0, self.parallel, executions)
        p.queries += 1
        new_transitions = p.unique_transitions > unique_before
        moved = self._max_probability_change(before, log_start)
        if new_transitions:
            p.since_discovery = 0
        else:
            p.since_discovery += 1
        if new_transitions or moved > self.config.prob_tolerance:
            p.since_change = 0
        else:
            p.since_change += 1
        if self.tracker is not None:
            self.property_changes = self.tracker.update(self.h_and, self.h_or, self.data, p.steps, p.queries)

    def _execute_sequentially(
        self, policy: QueryPolicy, s0: State, x0: Any, executions: int, confirming: bool = False
    ) -> None:
        """``confirming``: a confirmation query, which ends at the first new outcome of
        a pair tried before it (the verdict's count starts again, and a violation may
        just have been observed: the verdict is decided anew)."""
        for _ in range(executions):
            x, s, surprised = x0, s0, False
            step = 0
            news = False
            while True:
                c = policy.next(s, step, surprised, self.synthesis_input())
                if c is None:
                    break
                # Only a confirmation query asks: the common path stays as it was.
                tried = confirming and self.data.count_sc(s, c) > 0
                ex = self._execute(c, x)
                surprised = self._observe(ex)
                news |= surprised and tried
                x = self.setting.sim.get_state()
                s = ex.transition.s_next
                self.snapshots.setdefault(s, x)
                step += 1
                if self._budget_hit():
                    break
            if self._budget_hit() or (confirming and news):
                break

    def _execute_rounds(
        self, policy: QueryPolicy, s0: State, x0: Any, parallel: ParallelExecutions, executions: int
    ) -> None:
        """The query's executions in rounds on the executor (see the module's
        docstring); stops recording at the first execution that hits a budget."""
        entropy = int(self.rng.integers(2**63))
        # π keeps per-execution state (where in its tree it is); the copies share
        # the plan it was synthesized with and the learner's stream for re-plans.
        chains = [_Chain(policy if j == 0 else copy.copy(policy), x0, s0) for j in range(executions)]
        active = list(range(len(chains)))
        while active:
            batch: list[tuple[int, SeededExecution]] = []
            for j in active:
                ch = chains[j]
                c = ch.policy.next(ch.s, ch.step, ch.surprised, self.synthesis_input())
                if c is not None:
                    batch.append((j, SeededExecution(self.capability_table[c], ch.x, (entropy, j, ch.step))))
            results = parallel.executor.map(execute_seeded, [task for _, task in batch], setup=parallel.setting)
            for (j, _), r in zip(batch, results, strict=True):
                ch, ex, x = chains[j], r.execution, r.state
                for k, v in r.usage:
                    self.worker_usage[k] = self.worker_usage.get(k, 0) + v
                ch.surprised = self._observe(ex)
                ch.x, ch.s = x, ex.transition.s_next
                self.snapshots.setdefault(ch.s, x)
                ch.step += 1
                if self._budget_hit():
                    return
            active = [j for j, _ in batch]

    def _budget_hit(self) -> bool:
        cfg = self.config
        return (cfg.max_steps is not None and self.progress.steps >= cfg.max_steps) or (
            cfg.max_seconds is not None and time.monotonic() - self._start >= cfg.max_seconds
        )

    def _execute(self, c: str, x: Any) -> Execution:
        st = self.setting
        return execute(st.agent, st.sim, st.alpha, self.capability_table[c], x, self.rng, st.budget)

    def _observe(self, ex: Execution) -> bool:
        """Add an execution to D (and the file); True if its transition is new."""
        p = self.progress
        t = ex.transition
        p.executions += 1
        p.steps += ex.steps
        new = not ex.failed and self.data.count(t.s, t.c, t.s_next) == 0
        if ex.failed:
            p.failures += 1
            self.data.add_failure(t, steps=ex.steps, reason=ex.failure or "failed")
        else:
            self.data.add(t, steps=ex.steps)
        if self.sink is not None:
            # The first record of each query carries the query's index, so that a
            # resumed run continues the query count exactly (see resumed_queries).
            meta = dict(self._query_tag or {})
            self._query_tag = None
            if ex.failed:
                meta["failure"] = ex.failure
            self.sink.write(t, steps=ex.steps, meta=meta or None)
        if ex.failed:
            self._check_failures(t.c, ex)
            return False
        if new:
            p.unique_transitions += 1
            if self.grow is not None:
                for c in self.grow(t):
                    self._declare(c)
        self.builder.update()
        return new

    def _check_failures(self, c: str, ex: Execution) -> None:
        """Stop when every execution of ``c`` in this invocation crashed (after
        :data:`FAILURE_LIMIT` of them, and ``c`` has no transition in D); warn once
        when more than :data:`FAILURE_SHARE` of all executions failed.  An execution
        cut by a budget is a failure too, but not a crash: an agent that never
        finishes a capability in time is behaviour worth reporting, not a broken
        plug-in."""
        crashes = self._crashes.get(c, 0) + ex.crashed
        self._crashes[c] = crashes
        failed_now = self.data.failures.get(c, 0) - self._failed_before.get(c, 0)
        nothing_else = crashes == failed_now and not any(True for _ in self.data.states_of(c))
        if ex.crashed and crashes >= FAILURE_LIMIT and nothing_else:
            raise AgentFailureError(
                f"capability {c!r}: all {crashes} executions failed, the last with: {ex.failure}; "
                "nothing about it can be learned, so learning stops (fix the agent, α or the simulator; "
                "the failures are kept in the dataset)"
            )
        p = self.progress
        if not self._failure_warned and p.executions >= 20 and p.failures > FAILURE_SHARE * p.executions:
            self._failure_warned = True
            warnings.warn(
                f"{p.failures} of {p.executions} executions failed (the last, of {c!r}: {ex.failure}); "
                "failed executions are not evidence, so the model describes only the others",
                FailureWarning,
                stacklevel=2,
            )

    def _declare(self, c: Capability) -> None:
        if c.name in self.capability_table:
            return
        self.capability_table[c.name] = c
        if self.data.declare(c) and self.sink is not None:
            self.sink.write_capability(c)

    def _max_probability_change(self, before: CompoundModel, log_start: int) -> float:
        """The largest change of Pr_{h∧}(s′|s,c) over the (c, s) pairs this query
        touched (section 4.2's "effect probability changing by more than 5%")."""
        after = self.h_and
        worst = 0.0
        for c, s in set(self.data.changes_since(log_start)):
            old = before.distribution(s, c)
            new = after.distribution(s, c)
            for s2 in set(old) | set(new):
                worst = max(worst, abs(float(old.get(s2, 0)) - float(new.get(s2, 0))))
        return worst

"""Statistical model checking of a fixed scheduler on the agent itself: a plan (the
output of ``capver plan``, or any sequence of capabilities) or a policy from states to
capabilities is executed with the real agent in its simulator, and the probability of
a path formula under it is bounded by an anytime-valid confidence sequence, stopping as
soon as the question is decided.

Why: the verdicts of :mod:`.agent_verdict` and :mod:`.confidence` quantify over every
scheduler, so their cost grows with the states h∨ reaches; a user who has chosen what
to ask the agent (learn → plan on the model → execute) wants the probability of that
one scheduler, whose executions are i.i.d. Bernoulli trials whatever the state space.

**The runs.**  A run starts in the setting's initial state that α maps to ``init``.
At the i-th decision (i = 0, 1, …) the path formula is checked on the prefix of
α-states (the capability-level run of section 2: one state per executed capability,
as the properties are read on models): ``F≤k φ`` succeeds at the first s_i ⊨ φ with
i ≤ k; ``G≤k φ`` fails at the first s_i ⊭ φ with i ≤ k; ``ψ U≤k φ`` succeeds at the
first s_i ⊨ φ and fails at the first s_i ⊭ ψ ∨ φ.  Otherwise the scheduler names the
next capability, which the agent executes.  A run that ends undecided — the scheduler
stops (a plan's end), the bound k passes, or ``max_executions`` capability executions
were made (the step limit an unbounded formula needs) — succeeds for ``G`` and fails for
``F`` and ``U``: the formula is decided on the finite run it had, which the verdict
states with its limit.  A failed execution (the agent crashed, a budget ran out) ends
the run where it left the agent, as a run that ended undecided there: it is the
agent's behaviour under this scheduler, and is counted.

**The interval.**  The runs are looked at after n_1 < n_2 < … < n_K = ``max_runs``
runs (:func:`look_times`: 16, then ×1.2 each time), and at the k-th look the interval
is the exact Clopper–Pearson interval of S successes in n_k runs at level δ/K
(:func:`interval_at`).  By the union bound over the K looks,
P(∃k: p ∉ interval_k) ≤ K · δ/K = δ, whatever the looks decided: stopping at the
first look where the question is decided (or the interval is narrow enough, or the
user stops) keeps the guarantee, and the interval printed is that of the last look
(``proofs/`` checks the failure rate by Monte Carlo under that stopping rule, and that
a plain δ-level interval read at every look fails the same check).  A confidence
sequence valid at every n (Robbins' Beta(½, ½) mixture martingale, measured first)
needed about a fifth more runs at the width users ask for (0.1 at 95 %, p = 0.74:
961–1,000 runs instead of 818), which is why the looks are fixed in advance.  ``P>=p`` is decided (within the
bound) when the lower end is ≥ p and (outside) when the upper end is < p; ``<=`` alike
on the other side; ``P=?`` stops once the interval is at most ``width`` wide.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from capver.agents.base import Agent
from capver.core.dataset import TransitionDataset
from capver.core.properties import (
    Eventually,
    Globally,
    PathFormula,
    ProbabilityBound,
    ProbabilityQuery,
    Property,
    Until,
    holds,
)
from capver.core.state import Capability, State
from capver.core.vocabulary import Vocabulary
from capver.engines.execution import ExecutionBudget, execute
from capver.engines.verification.binomial import clopper_pearson
from capver.engines.verification.quantitative import BoundVerdict, interval_verdict
from capver.envs.base import Representation, Simulator
from capver.errors import UnsupportedQueryError, UsageError

Scheduler = Callable[[State, int], str | None]
"""The capability to execute in α-state ``s`` at decision ``i`` (None: stop)."""

DEFAULT_WIDTH = 0.1
DEFAULT_MAX_RUNS = 1000
DEFAULT_MAX_EXECUTIONS = 100


class Executor(Protocol):
    """What a run of the scheduler needs of a setting (``engines.learning.Setting``
    has it): the agent in its simulator, α, its initial states and budget."""

    @property
    def agent(self) -> Agent: ...
    @property
    def sim(self) -> Simulator[Any]: ...
    @property
    def alpha(self) -> Representation[Any]: ...
    @property
    def initial_states(self) -> Sequence[Any]: ...
    @property
    def budget(self) -> ExecutionBudget: ...


@dataclass(frozen=True, slots=True)
class SchedulerCheck:
    """A scheduler to check P properties under, with the agent itself, and how:
    ``name`` says what it is in the verdict ("the plan pick-up-a, stack-a-on-b"),
    ``width`` when a ``P=?`` interval is narrow enough, at most ``max_runs`` runs of at
    most ``max_executions`` capability executions each, random choices from ``seed``."""

    scheduler: Scheduler
    name: str
    width: float = DEFAULT_WIDTH
    max_runs: int = DEFAULT_MAX_RUNS
    max_executions: int = DEFAULT_MAX_EXECUTIONS
    seed: int = 0


def plan_scheduler(capabilities: Sequence[str]) -> Scheduler:
    """An open-loop plan: the i-th capability at decision i, then stop."""
    names = tuple(capabilities)
    return lambda _s, i: names[i] if i < len(names) else None


def policy_scheduler(policy: Callable[[State], str | None]) -> Scheduler:
    """A memoryless policy: the capability it names in the current α-state."""
    return lambda s, _i: policy(s)


FIRST_LOOK = 16
LOOK_GROWTH = 1.2


def look_times(max_runs: int) -> tuple[int, ...]:
    """The run counts at which the interval is computed: 16, then ×1.2 (rounded up)
    while below ``max_runs``, and ``max_runs`` itself."""
    if max_runs < 1:
        raise ValueError(f"max_runs must be positive, got {max_runs}")
    looks, n = [], min(FIRST_LOOK, max_runs)
    while n < max_runs:
        looks.append(n)
        n = math.ceil(n * LOOK_GROWTH)
    return (*looks, max_runs)


def interval_at(successes: int, runs: int, delta: float, looks: int) -> tuple[float, float]:
    """The interval at one of ``looks`` looks (module docstring): Clopper–Pearson at
    level δ / looks, so that all looks together hold the probability with
    probability ≥ 1 − δ."""
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta}")
    if runs == 0:
        return 0.0, 1.0
    return clopper_pearson(successes, runs, delta / looks)


def _decided(path: PathFormula, s: State, i: int, vocab: Vocabulary) -> bool | None:
    """The path formula on a run whose i-th state is ``s`` (every earlier one left it
    undecided): True or False once decided, else None."""
    within = path.bound is None or i <= path.bound
    if isinstance(path, Eventually):
        if within and holds(path.goal, s, vocab):
            return True
        return None if within else False
    if isinstance(path, Globally):
        if within and not holds(path.invariant, s, vocab):
            return False
        return None if within else True
    if isinstance(path, Until):
        if not within:
            return False
        if holds(path.goal, s, vocab):
            return True
        return None if holds(path.hold, s, vocab) else False
    raise TypeError(f"not a path formula: {path!r}")


def _undecided_end(path: PathFormula) -> bool:
    """A run that ended before the formula was decided: G held throughout, F and U
    did not reach their goal (module docstring)."""
    return isinstance(path, Globally)


@dataclass(frozen=True, slots=True)
class SchedulerResult:
    """``successes`` of ``runs`` runs of the scheduler satisfied the path formula;
    ``lower`` ≤ its probability for the agent ≤ ``upper`` at confidence 1 − ``delta``
    (anytime-valid); ``answer`` decides a ``P<op>p`` bound (None for ``P=?``).
    ``stopped``: why sampling ended ("decided", "width", "max-runs").  ``data``: every
    capability execution of the runs, as transitions of the agent."""

    scheduler: str
    runs: int
    successes: int
    lower: float
    upper: float
    delta: float
    answer: BoundVerdict | None
    stopped: str
    executions: int
    failed_executions: int
    steps: int
    max_executions: int
    data: TransitionDataset

    @property
    def width(self) -> float:
        return self.upper - self.lower


def check_scheduler(
    setting: Executor,
    capabilities: Mapping[str, Capability],
    prop: Property,
    init: State,
    scheduler: Scheduler,
    rng: np.random.Generator,
    *,
    name: str = "a policy",
    delta: float = 0.05,
    width: float = DEFAULT_WIDTH,
    max_runs: int = DEFAULT_MAX_RUNS,
    max_executions: int = DEFAULT_MAX_EXECUTIONS,
    progress: Callable[[int, int, float, float], None] | None = None,
) -> SchedulerResult:
    """Run ``scheduler`` with the agent from ``init`` until ``prop`` (``P<op>p`` or
    ``P=?`` of F, G or U) is decided, its interval is at most ``width`` wide (for
    ``P=?``), or ``max_runs`` runs were made, looking at :func:`look_times`;
    ``capabilities`` names what the scheduler may ask for.
    ``progress(runs, successes, lower, upper)`` at each look.  :class:`UnsupportedQueryError` for an E/A or R property."""
    query = prop.query
    if not isinstance(query, ProbabilityBound | ProbabilityQuery):
        raise UnsupportedQueryError(
            f"{prop.name}: a scheduler's probability is checked for P<op>p and Pmax=? / Pmin=? properties (one "
            "number under one scheduler); "
            "E [ … ] and A [ … ] quantify over every scheduler, R over expected executions"
        )
    if max_runs < 1 or max_executions < 1 or not 0 < width <= 1:
        raise UsageError("max_runs and max_executions must be positive, width in (0, 1]")
    vocab = setting.alpha.vocabulary
    starts = [x for x in setting.initial_states if setting.alpha(x) == init]
    if not starts:
        raise UsageError(f"scheduler: no initial state of the setting is {vocab.format_state(init)}")
    path = query.path
    allowed = prop.capability_names
    data = TransitionDataset(vocab, capabilities.values())
    looks = frozenset(look_times(max_runs))
    successes = runs = executions = failed = steps = 0
    lower, upper, stopped = 0.0, 1.0, "max-runs"
    while runs < max_runs:
        x, s, i = starts[0], setting.alpha(starts[0]), 0
        outcome: bool | None = None
        while outcome is None:
            outcome = _decided(path, s, i, vocab)
            if outcome is not None:
                break
            c = scheduler(s, i) if i < max_executions else None
            if c is None:
                outcome = _undecided_end(path)
                break
            if c not in capabilities or (allowed is not None and c not in allowed):
                raise UsageError(f"scheduler: at decision {i} it asks for {c!r}, not a capability of this property")
            ex = execute(setting.agent, setting.sim, setting.alpha, capabilities[c], x, rng, setting.budget)
            executions += 1
            steps += ex.steps
            if ex.failed:
                # The run ends where the failed execution left the agent (module docstring).
                failed += 1
                data.add_failure(ex.transition, ex.steps, ex.failure or "failed")
                end = _decided(path, ex.transition.s_next, i + 1, vocab)
                outcome = _undecided_end(path) if end is None else end
                break
            data.add(ex.transition, steps=ex.steps)
            x, s, i = setting.sim.get_state(), ex.transition.s_next, i + 1
        runs += 1
        successes += bool(outcome)
        if runs not in looks:
            continue
        lower, upper = interval_at(successes, runs, delta, len(looks))
        if progress is not None:
            progress(runs, successes, lower, upper)
        if isinstance(query, ProbabilityBound):
            if interval_verdict(query.comparison, query.probability, lower, upper) is not BoundVerdict.UNDECIDED:
                stopped = "decided"
                break
        elif upper - lower <= width:
            stopped = "width"
            break
    answer = (
        interval_verdict(query.comparison, query.probability, lower, upper)
        if isinstance(query, ProbabilityBound)
        else None
    )
    return SchedulerResult(
        name, runs, successes, lower, upper, delta, answer, stopped, executions, failed, steps, max_executions, data
    )

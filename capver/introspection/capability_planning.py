"""The introspector over capability models: plan with an agent's *capabilities* as
the actions, towards a goal given as a formula over the model's atoms, and check the
plan by executing it with the agent.

This joins the two papers.  The model is a compound capability model h† (paper 000,
section 2, Definition "capability model"); the planner is the bilevel introspector
of paper 002 (sections 4, 5.1 and 5.3) with GREEDY for comparison; the check is the
cross-evaluation of experiment E3 (paper 000, section 4.2: "learned capability
models can predict downstream performance and support planning").

* Ground actions — the all-outcomes determinisation of h†: one
  :class:`CapabilityAction` per (capability c, rule r ∈ h_c, cube of the irredundant
  cover of cond(r), effect η of r).  It applies where its cube holds and yields
  apply(s, η).  Every successor it produces has Pr_h(s′ | s, c) > 0 (the cube implies
  cond(r), so r ∈ R_s), and every s′ with Pr_h(s′ | s, c) > 0 is produced by one of
  them, so the determinisation's transitions are exactly the model's support.
  Built from h∧ (the pessimistic model of the lattice, conditions = the observed
  states) a plan only relies on behaviour that was actually observed.
* Rewards — R̂(s, a, s′) = ln Pr_h(s′ | s, c) (≤ 0), so a plan's return is the log
  of its path probability; GREEDY (best-first on the return) then finds a most
  probable path, and the introspector any path, towards the goal.  Ĉ = success on
  entering a state where the goal holds.
* Milestones — the mutations (section 5.1, :func:`~capver.introspection.mutation.mutate`)
  of the goal formula from the current state, with mutability taken from the ground
  actions' effects (an atom is addable if some effect adds it, deletable if some
  effect deletes it); the distance is literal counting.
* Prediction — :attr:`CapabilityPlan.path_probability` is ∏ Pr_h(sᵢ₊₁ | sᵢ, cᵢ) along
  the planned states; :attr:`CapabilityPlan.success_probability` is exact forward
  propagation of the open-loop capability sequence through Pr_h (the probability
  that the goal holds at the end); probability mass that reaches a state where h_c
  makes no prediction is reported as :attr:`CapabilityPlan.unknown_probability`.
* Execution — :func:`execute_plan` runs the capability sequence open-loop with the
  real agent (:func:`capver.engines.execution.execute`) and counts the runs that end
  in a goal state.

A goal read from text (:func:`capver.io.literal_text.parse_dnf`, e.g.
``"on(a,b) ~clear(c) | holding(a)"``) becomes a formula by :func:`goal_formula`; any
closed formula of :mod:`capver.introspection.fol` is
accepted by :func:`plan_capabilities` as well.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from capver.core.state import Capability, Effect, State
from capver.core.vocabulary import Atom, Literal, Vocabulary
from capver.engines.execution import execute
from capver.engines.learning import Setting
from capver.errors import IntrospectionError
from capver.introspection.fol import (
    BitFormula,
    Formula,
    Lit,
    Not,
    check_formula,
    compile_formula,
    conj,
    disj,
)
from capver.introspection.mutation import (
    Mutability,
    Mutation,
    is_immutably_valid,
    mutate,
    mutations_of,
)
from capver.introspection.relational import MutationGoal
from capver.introspection.search import SearchBudget, make_planner
from capver.introspection.search.problem import TERMINATION, Milestones, simulate
from capver.logic.bdd import Cube
from capver.model.capability_model import CompoundModel

CAPABILITY_PLANNERS = ("introspector", "greedy")
"""Planners that pursue the goal on this problem (MCTS and the sampling baselines
maximise the return alone, which here only ever decreases)."""


# -- goals ---------------------------------------------------------------------------
def goal_formula(alternatives: Sequence[Sequence[Literal]]) -> Formula:
    """The goal formula of a disjunction of conjunctions of ground literals (as
    :func:`capver.io.literal_text.parse_dnf` reads them from text)."""
    if not alternatives or any(not alt for alt in alternatives):
        raise IntrospectionError("a goal needs at least one literal in every alternative")
    conjunctions: list[Formula] = []
    for alt in alternatives:
        lits: list[Formula] = []
        for lit in alt:
            f = Lit(lit.atom.predicate, lit.atom.args)
            lits.append(f if lit.positive else Not(f))
        conjunctions.append(conj(*lits))
    return disj(*conjunctions)


def goal_literals(atoms: Iterable[Atom | str], negated: Iterable[Atom | str] = ()) -> Formula:
    """The conjunction of the given atoms and of the negations of ``negated``."""
    parts: list[Formula] = []
    for a in atoms:
        at = Atom.parse(a) if isinstance(a, str) else a
        parts.append(Lit(at.predicate, at.args))
    for a in negated:
        at = Atom.parse(a) if isinstance(a, str) else a
        parts.append(Not(Lit(at.predicate, at.args)))
    if not parts:
        raise IntrospectionError("a goal needs at least one literal")
    return conj(*parts)


# -- the determinised model ---------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class CapabilityAction:
    """One ground action: capability ``capability`` applied where ``cube`` holds,
    with outcome ``effect`` of rule ``rule`` (which gives it probability
    ``probability`` within that rule)."""

    capability: Capability
    rule: int
    cube: Cube
    effect: Effect
    probability: Fraction

    @property
    def name(self) -> str:
        return self.capability.name

    def applicable(self, s: State) -> bool:
        return (s & self.cube.mask) == self.cube.value

    def apply(self, s: State) -> State:
        return (s & ~self.effect.delete) | self.effect.add

    def describe(self, vocab: Vocabulary) -> str:
        return f"{self.name} [rule {self.rule + 1}, outcome {self.effect.format(vocab)} p={self.probability}]"


def ground_actions(model: CompoundModel) -> tuple[CapabilityAction, ...]:
    """The all-outcomes determinisation of ``model`` (module docstring), in
    capability, rule, cube and effect order."""
    out: list[CapabilityAction] = []
    for cm in model.values():
        for i, rule in enumerate(cm.rules):
            for cube in rule.condition.cover:
                for p, eta in rule.effects:
                    out.append(CapabilityAction(cm.capability, i, cube, eta, p))
    return tuple(out)


def mutability_of(vocab: Vocabulary, actions: Sequence[CapabilityAction]) -> Mutability:
    """Atoms some action adds, and atoms some action deletes without re-adding."""
    add = dele = 0
    for a in actions:
        add |= a.effect.add
        dele |= a.effect.delete & ~a.effect.add
    return Mutability.from_atoms(vocab, vocab.atoms_of(add), vocab.atoms_of(dele))


@dataclass(frozen=True, slots=True)
class CapabilityProblem:
    """The planning problem (an :class:`~.search.IntrospectableProblem`) of reaching
    ``goal`` from ``initial`` with the capabilities of ``model``; actions are indices
    into ``ground``."""

    model: CompoundModel
    goal: Formula
    initial: State
    horizon: int
    ground: tuple[CapabilityAction, ...]
    mutability: Mutability
    compiled_goal: BitFormula
    _applicable: dict[State, tuple[int, ...]] = field(default_factory=dict, repr=False, compare=False)

    @staticmethod
    def build(model: CompoundModel, goal: Formula, initial: State, horizon: int = 20) -> CapabilityProblem:
        vocab = model.vocabulary
        if horizon < 1:
            raise IntrospectionError(f"horizon must be a positive number of capability executions, got {horizon}")
        if initial < 0 or initial >> len(vocab):
            raise IntrospectionError(f"initial state {initial:#x} has bits outside the {len(vocab)} atoms of the model")
        check_formula(goal, vocab, where="goal")
        ground = ground_actions(model)
        return CapabilityProblem(
            model, goal, initial, horizon, ground, mutability_of(vocab, ground), compile_formula(goal, vocab)
        )

    @property
    def vocab(self) -> Vocabulary:
        return self.model.vocabulary

    def goal_holds(self, s: State) -> bool:
        return self.compiled_goal.holds(s)

    # -- PlanningProblem ------------------------------------------------------------------
    def actions(self, s: State) -> Sequence[int]:
        """Applicable ground actions, one per (capability, successor): two cubes or
        two rules leading to the same state are the same step for a plan."""
        hit = self._applicable.get(s)
        if hit is None:
            seen: set[tuple[str, State]] = set()
            out = []
            for i, a in enumerate(self.ground):
                if a.applicable(s):
                    key = (a.name, a.apply(s))
                    if key not in seen:
                        seen.add(key)
                        out.append(i)
            hit = self._applicable[s] = tuple(out)
        return hit

    def successor(self, s: State, a: int) -> State:
        return self.ground[a].apply(s)

    def reward(self, s: State, a: int, s_next: State) -> float:
        return math.log(self.model.prob(s, self.ground[a].name, s_next))

    def termination(self, s: State, a: int, s_next: State) -> int:
        return 1 if self.compiled_goal.holds(s_next) else 0

    def format_action(self, a: int) -> str:
        return self.ground[a].name

    # -- introspection --------------------------------------------------------------------
    def mutations(self, s: State) -> tuple[list[Mutation], bool]:
        """(mutations, immutably valid) of the goal from ``s``."""
        result = mutate(self.goal, s, self.mutability, minimize=True)
        return mutations_of(result), is_immutably_valid(result)

    def milestones(self, s: State) -> Milestones[State] | None:
        muts, valid = self.mutations(s)
        if valid:
            # The goal holds and nothing can undo it: any step ends in success.
            return Milestones(TERMINATION, 1.0, (MutationGoal(0, 0, Mutation()),))
        if not muts:
            return None
        vocab = self.vocab
        return Milestones(TERMINATION, 1.0, tuple(MutationGoal(*m.masks(vocab), m) for m in muts))


# -- plans -------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class CapabilityPlan:
    """A capability plan and what the model predicts for it."""

    planner: str
    goal: Formula
    initial: State
    steps: tuple[CapabilityAction, ...]
    states: tuple[State, ...]  # the planned path s₀ … sₙ
    milestones: tuple[Mutation, ...]  # the goal's mutations from s₀
    solved: bool
    path_probability: Fraction
    success_probability: Fraction
    unknown_probability: Fraction
    runtime: float  # the planner alone, seconds
    build_seconds: float  # grounding the model (conditions' covers), seconds
    expanded: int
    generated: int
    timed_out: bool

    @property
    def capability_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.steps)


def propagate(model: CompoundModel, s0: State, capabilities: Sequence[str]) -> tuple[dict[State, Fraction], Fraction]:
    """Pr_h over the states after executing ``capabilities`` open-loop from ``s0``,
    and the probability mass that met a state where the capability's model makes no
    prediction (it is dropped from the distribution)."""
    dist: dict[State, Fraction] = {s0: Fraction(1)}
    lost = Fraction(0)
    for c in capabilities:
        nxt: dict[State, Fraction] = {}
        for s, p in dist.items():
            d = model.distribution(s, c)
            if not d:
                lost += p
                continue
            for s2, q in d.items():
                nxt[s2] = nxt.get(s2, Fraction(0)) + p * q
        dist = nxt
    return dist, lost


def plan_capabilities(
    model: CompoundModel,
    goal: Formula,
    initial: State,
    *,
    planner: str = "introspector",
    horizon: int = 20,
    rng: np.random.Generator,
    budget: SearchBudget | None = None,
) -> CapabilityPlan:
    """Plan from ``initial`` to ``goal`` with the capabilities of ``model``.

    A goal that already holds gives the empty plan.  The returned plan is
    re-simulated on the determinised model (an inconsistent one raises
    :class:`IntrospectionError`); ``solved`` says whether it ends in a goal state."""
    if planner not in CAPABILITY_PLANNERS:
        raise IntrospectionError(f"unknown capability planner {planner!r}; expected one of {list(CAPABILITY_PLANNERS)}")
    t0 = time.perf_counter()
    problem = CapabilityProblem.build(model, goal, initial, horizon)
    build_s = time.perf_counter() - t0
    muts, _valid = problem.mutations(initial)
    if problem.goal_holds(initial):
        return CapabilityPlan(
            planner,
            goal,
            initial,
            (),
            (initial,),
            tuple(muts),
            True,
            Fraction(1),
            Fraction(1),
            Fraction(0),
            0.0,
            build_s,
            0,
            0,
            False,
        )
    result = make_planner(planner).solve(problem, rng, budget)
    plan = result.plan or ()
    rollout = simulate(problem, plan)
    if rollout.success != result.success:
        raise IntrospectionError(f"{planner}: reported success {result.success}, re-simulated {rollout.success}")
    steps = tuple(problem.ground[a] for a in plan)
    path_p = Fraction(1)
    for s, a, s2 in zip(rollout.states, steps, rollout.states[1:]):
        path_p *= model.prob(s, a.name, s2)
    dist, lost = propagate(model, initial, [a.name for a in steps])
    success_p = sum((p for s, p in dist.items() if problem.goal_holds(s)), Fraction(0))
    return CapabilityPlan(
        planner,
        goal,
        initial,
        steps,
        rollout.states,
        tuple(muts),
        result.solved,
        path_p,
        success_p,
        lost,
        result.runtime,
        build_s,
        result.expanded,
        result.generated,
        result.timed_out,
    )


def plan_is_valid(model: CompoundModel, plan: CapabilityPlan) -> bool:
    """Every planned step has positive probability under ``model`` and, if the plan
    claims to be solved, the goal holds in its last state."""
    if len(plan.states) != len(plan.steps) + 1 or plan.states[0] != plan.initial:
        return False
    for s, a, s2 in zip(plan.states, plan.steps, plan.states[1:]):
        if model.prob(s, a.name, s2) <= 0:
            return False
    return not plan.solved or compile_formula(plan.goal, model.vocabulary).holds(plan.states[-1])


# -- execution with the agent (E3) -----------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ExecutionReport:
    """Open-loop executions of a capability plan with the real agent."""

    runs: int
    successes: int  # the goal held at the end
    on_path: int  # every state was the planned one
    predicted_possible: int  # the final state had positive predicted probability (E3)
    failed_executions: int  # capability executions the executor recorded as failed
    steps: int  # simulator steps, over all runs
    predicted_success: Fraction

    @property
    def success_rate(self) -> float:
        return self.successes / self.runs

    @property
    def reachability_accuracy(self) -> float:
        return self.predicted_possible / self.runs


def execute_plan(
    plan: CapabilityPlan,
    setting: Setting,
    rng: np.random.Generator,
    *,
    model: CompoundModel | None = None,
    runs: int = 100,
    x0: Any = None,
) -> ExecutionReport:
    """Execute ``plan``'s capabilities ``runs`` times with ``setting``'s agent, each
    time from ``x0`` (default: the setting's initial state that α maps to the plan's
    initial state; for symbolic simulators the plan's initial state itself).
    ``model`` (default: none) is used for the E3 count of predicted-possible final
    states; without it that count uses only the planned final state."""
    if runs < 1:
        raise IntrospectionError(f"runs must be positive, got {runs}")
    alpha = setting.alpha
    if x0 is None:
        x0 = next((x for x in setting.initial_states if alpha(x) == plan.initial), None)
        if x0 is None:
            if not setting.symbolic_states:
                raise IntrospectionError(
                    "no initial state of the setting is the plan's initial state "
                    f"{alpha.vocabulary.format_state(plan.initial)}; pass x0"
                )
            x0 = plan.initial
    elif alpha(x0) != plan.initial:
        raise IntrospectionError("x0 is not the plan's initial state under α")
    goal = compile_formula(plan.goal, alpha.vocabulary)
    possible: set[State] = {plan.states[-1]}
    if model is not None:
        dist, _lost = propagate(model, plan.initial, plan.capability_names)
        possible = {s for s, p in dist.items() if p > 0}
    successes = on_path = hits = failed = steps = 0
    for _ in range(runs):
        x = x0
        s = plan.initial
        followed = True
        for i, a in enumerate(plan.steps):
            ex = execute(setting.agent, setting.sim, alpha, a.capability, x, rng, setting.budget)
            x = setting.sim.get_state()
            s = ex.transition.s_next
            steps += ex.steps
            failed += ex.failed
            followed = followed and s == plan.states[i + 1]
        successes += goal.holds(s)
        on_path += followed
        hits += s in possible
    return ExecutionReport(runs, successes, on_path, hits, failed, steps, plan.success_probability)

"""Relational RL problems (section 5 of the introspection paper): a grounded domain
(T̂ as action schemas), a reward decision list R̂ and a termination decision list Ĉ,
with milestone enumeration Ĝ(s) by state mutation (section 5.1).

:meth:`RelationalProblem.milestones` is the automatic, domain-agnostic introspection
of section 5.3: it mutates the formula under which R̂ outputs r_max; once no reward
milestone is left (the formula is unsatisfiable or immutably valid from s) it
mutates the formula under which Ĉ signals success.  Each mutation becomes a goal
whose distance is the STRIPS literal-counting heuristic (Fikes & Nilsson 1971): the
number of its literals that do not hold yet.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from capver.core.state import State
from capver.core.vocabulary import Atom, Vocabulary
from capver.errors import IntrospectionError
from capver.introspection.decision_list import CompiledDecisionList, DecisionList
from capver.introspection.mutation import (
    Mutability,
    Mutation,
    is_immutably_valid,
    mutate,
    mutations_of,
)
from capver.introspection.schema import GroundTask, RelationalDomain
from capver.introspection.search.problem import REWARD, TERMINATION, Milestones


@dataclass(frozen=True, slots=True)
class MutationGoal:
    """A mutation as bit masks; distance = unsatisfied literals (literal counting)."""

    make_true: int
    make_false: int
    mutation: Mutation

    def distance(self, s: State) -> int:
        return (self.make_true & ~s).bit_count() + (self.make_false & s).bit_count()

    def describe(self) -> str:
        return str(self.mutation)


@dataclass(frozen=True, slots=True)
class RelationalProblem:
    """A relational RL task instance over bitset states; actions are indices into
    ``task.actions``."""

    name: str
    task: GroundTask
    reward_list: DecisionList
    termination_list: DecisionList
    horizon: int
    mutability: Mutability
    mutation_limit: int
    _reward: CompiledDecisionList
    _termination: CompiledDecisionList

    @staticmethod
    def build(
        domain: RelationalDomain,
        objects: Mapping[str, str],
        init: Iterable[Atom | str],
        reward: DecisionList,
        termination: DecisionList,
        horizon: int,
        *,
        name: str = "",
        mutation_limit: int = 100_000,
    ) -> RelationalProblem:
        if horizon < 1:
            raise IntrospectionError(f"horizon must be a positive number of steps, got {horizon}")
        task = GroundTask.ground(domain, objects, init)
        reward.check(task.vocab)
        termination.check(task.vocab)
        termination.check_termination()
        return RelationalProblem(
            name or domain.name,
            task,
            reward,
            termination,
            horizon,
            Mutability.from_task(task),
            mutation_limit,
            reward.compile(task.vocab),
            termination.compile(task.vocab),
        )

    # -- PlanningProblem -------------------------------------------------------------
    @property
    def vocab(self) -> Vocabulary:
        return self.task.vocab

    @property
    def initial(self) -> int:
        return self.task.init

    def actions(self, s: State) -> Sequence[int]:
        return self.task.applicable(s)

    def successor(self, s: State, a: int) -> int:
        return self.task.actions[a].apply(s)

    def reward(self, s: State, a: int, s_next: State) -> float:
        return self._reward.value(s_next, s)

    def termination(self, s: State, a: int, s_next: State) -> int:
        return int(self._termination.value(s_next, s))

    def format_action(self, a: int) -> str:
        return self.task.actions[a].name

    def format_state(self, s: State) -> str:
        return self.task.vocab.format_state(s)

    # -- introspection (section 5.1, 5.3) ---------------------------------------------
    def mutations(self, s: State, kind: str) -> tuple[list[Mutation], bool]:
        """(mutations, immutably valid) of the r_max formula (``kind="reward"``) or
        the success formula (``kind="termination"``) from ``s``."""
        if kind == REWARD:
            formula = self.reward_list.condition_for(self.reward_list.max_value)
        elif kind == TERMINATION:
            formula = self.termination_list.condition_for(1)
        else:
            raise IntrospectionError(f"milestone kind must be 'reward' or 'termination', got {kind!r}")
        result = mutate(formula, s, self.mutability, minimize=True, limit=self.mutation_limit)
        return mutations_of(result), is_immutably_valid(result)

    def milestones(self, s: State) -> Milestones[int] | None:
        for kind, target in ((REWARD, self.reward_list.max_value), (TERMINATION, 1.0)):
            muts, valid = self.mutations(s, kind)
            if valid and kind == TERMINATION:
                # Any transition ends the episode successfully: aim for no literal.
                return Milestones(kind, target, (MutationGoal(0, 0, Mutation()),))
            if valid or not muts:
                # Immutably valid: every transition already pays r_max, nothing to aim
                # for; unsatisfiable: no such milestone exists.
                continue
            vocab = self.task.vocab
            goals = tuple(MutationGoal(*m.masks(vocab), m) for m in muts)
            return Milestones(kind, target, goals)
        return None

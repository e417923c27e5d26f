"""capver's own PPDDL simulator: the environment E, its simulator S_E and the
representation α of section 2 of the paper for PDDL(Gym) domains.

A :class:`PPDDLTask` grounds a domain and a problem: its vocabulary V = ⟨P, O⟩ has
every type-consistent grounding of the non-action predicates as an atom, a state
is an ``int`` bitset over V (so X = S and α is the identity,
:class:`AtomsRepresentation`), and its ground actions are the low-level actions A.
:meth:`PPDDLTask.outcomes` gives the exact successor distribution of PPDDL
semantics (``when`` conditions read the pre-state, independent ``probabilistic``
effects multiply, the missing mass of a ``probabilistic`` is the empty effect,
an atom both added and deleted ends up true).

pddlgym's action predicates are not fluents: a ground action is applicable iff its
precondition holds when its own action literal (the first action-predicate
conjunct of its precondition, grounded with its arguments) is true and every other
action-predicate atom is false — pddlgym evaluates preconditions against
``state ∪ {action}``.

Preconditions, conditions and goals are grounded once into negation normal form
over bit masks (:class:`GConj`, :class:`GDisj`); ground actions are indexed by one
positive precondition atom each so that :meth:`PPDDLTask.applicable` looks only at
actions whose index atom is true, and results are cached per state.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np

from capver.core.state import State
from capver.core.vocabulary import Atom, Predicate, Vocabulary
from capver.envs.base import InvalidActionError
from capver.envs.ppddl.parser import (
    action_literal,
    parse_domain_file,
    parse_problem_file,
)
from capver.envs.ppddl.syntax import (
    ActionSchema,
    AndF,
    AtomF,
    Domain,
    EffAnd,
    Effect,
    EffForAll,
    EffLiteral,
    EffProbabilistic,
    EffWhen,
    EqualsF,
    ExistsF,
    ForAllF,
    Formula,
    ImplyF,
    NotF,
    OrF,
    Problem,
    TypedName,
    is_variable,
)
from capver.errors import VocabularyError

_ONE = Fraction(1)
_CACHE_LIMIT = 1 << 16  # cached states per task before the caches are flushed


@dataclass(frozen=True, slots=True, order=True)
class GroundAction:
    """A ground action schema ``name(args)``: the simulator's low-level action."""

    name: str
    args: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.name}({','.join(self.args)})" if self.args else self.name

    @staticmethod
    def parse(text: str) -> GroundAction:
        """Parse the ``str`` form, e.g. ``pick-up(a,robot)``."""
        atom = Atom.parse(text)
        return GroundAction(atom.predicate, atom.args)


# ---------------------------------------------------------------------- ground formulas
@dataclass(frozen=True, slots=True)
class GConj:
    """All atoms of ``pos`` true, all of ``neg`` false, every disjunction of
    ``rest`` true."""

    pos: int = 0
    neg: int = 0
    rest: tuple[GDisj, ...] = ()

    def holds(self, s: State) -> bool:
        if (s & self.pos) != self.pos or s & self.neg:
            return False
        return all(d.holds(s) for d in self.rest)


@dataclass(frozen=True, slots=True)
class GDisj:
    """At least one conjunction of ``parts`` true (none: false)."""

    parts: tuple[GConj, ...] = ()

    def holds(self, s: State) -> bool:
        return any(c.holds(s) for c in self.parts)


GroundFormula = GConj | GDisj
TRUE = GConj()
FALSE = GDisj()


def _conj(items: Sequence[GroundFormula | bool]) -> GroundFormula | bool:
    pos = neg = 0
    rest: list[GDisj] = []
    for it in items:
        if it is True:
            continue
        if it is False:
            return False
        if isinstance(it, GConj):
            pos |= it.pos
            neg |= it.neg
            rest.extend(it.rest)
        else:
            rest.append(it)
    if pos & neg:
        return False
    if not pos and not neg and not rest:
        return True
    if not pos and not neg and len(rest) == 1:
        return rest[0]
    return GConj(pos, neg, tuple(rest))


def _disj(items: Sequence[GroundFormula | bool]) -> GroundFormula | bool:
    parts: list[GConj] = []
    for it in items:
        if it is False:
            continue
        if it is True:
            return True
        if isinstance(it, GDisj):
            parts.extend(it.parts)
        else:
            parts.append(it)
    if not parts:
        return False
    if len(parts) == 1:
        return parts[0]
    return GDisj(tuple(parts))


def _as_formula(f: GroundFormula | bool) -> GroundFormula:
    if f is True:
        return TRUE
    if f is False:
        return FALSE
    return f


# ---------------------------------------------------------------------- ground effects
@dataclass(frozen=True, slots=True)
class GEffect:
    """A ground effect: unconditional add/delete masks, conditional parts (applied
    when their condition holds in the pre-state) and independent probabilistic
    choices (branches with their probabilities; the missing mass changes nothing)."""

    add: int = 0
    delete: int = 0
    whens: tuple[tuple[GroundFormula, GEffect], ...] = ()
    choices: tuple[tuple[tuple[Fraction, GEffect], ...], ...] = ()

    @property
    def deterministic(self) -> bool:
        return not self.whens and not self.choices

    def distribution(self, s: State) -> dict[tuple[int, int], Fraction]:
        """Distribution over (add, delete) mask pairs in pre-state ``s``."""
        out: dict[tuple[int, int], Fraction] = {(self.add, self.delete): _ONE}
        for cond, body in self.whens:
            if cond.holds(s):
                out = _product(out, body.distribution(s))
        for branches in self.choices:
            mix: dict[tuple[int, int], Fraction] = {}
            rest = _ONE
            for p, body in branches:
                rest -= p
                for key, q in body.distribution(s).items():
                    mix[key] = mix.get(key, 0) + p * q
            if rest:
                mix[(0, 0)] = mix.get((0, 0), 0) + rest
            out = _product(out, mix)
        return out


def _product(
    a: Mapping[tuple[int, int], Fraction], b: Mapping[tuple[int, int], Fraction]
) -> dict[tuple[int, int], Fraction]:
    out: dict[tuple[int, int], Fraction] = {}
    for (a_add, a_del), p in a.items():
        for (b_add, b_del), q in b.items():
            key = (a_add | b_add, a_del | b_del)
            out[key] = out.get(key, 0) + p * q
    return out


def _merge_effects(parts: Sequence[GEffect]) -> GEffect:
    add = delete = 0
    whens: list[tuple[GroundFormula, GEffect]] = []
    choices: list[tuple[tuple[Fraction, GEffect], ...]] = []
    for e in parts:
        add |= e.add
        delete |= e.delete
        whens.extend(e.whens)
        choices.extend(e.choices)
    return GEffect(add, delete, tuple(whens), tuple(choices))


# ---------------------------------------------------------------------- the task
class PPDDLTask:
    """A grounded PPDDL domain + problem.

    Attributes: ``domain``, ``problem``, ``vocabulary``, ``initial_state`` (bitset),
    ``goal`` (``(pos_mask, neg_mask)`` for a conjunction of literals, otherwise a
    ground formula with ``holds(s)``), ``ground_actions`` (every type-consistent
    grounding of every action schema, in domain order then argument order).
    """

    def __init__(self, domain: Domain, problem: Problem) -> None:
        if problem.domain_name != domain.name:
            raise VocabularyError(
                f"problem {problem.name!r} is for domain {problem.domain_name!r}, not {domain.name!r}"
            )
        self.domain = domain
        self.problem = problem
        self._action_predicates = frozenset(domain.action_predicates)
        objects = {c.name: c.type for c in domain.constants}
        objects.update({o.name: o.type for o in problem.objects})
        self.vocabulary = Vocabulary.build(
            [
                Predicate(p.name, tuple(t.type for t in p.parameters))
                for p in domain.predicates
                if p.name not in self._action_predicates
            ],
            objects=objects,
            types=domain.type_parents,
        )
        self._pools: dict[str, list[str]] = {}
        self.initial_state: State = self.vocabulary.state(Atom(a.predicate, a.args) for a in problem.init)
        goal = _as_formula(self._ground(problem.goal, {}, None, False))
        self._goal_formula = goal
        self.goal: tuple[int, int] | GroundFormula = (
            (goal.pos, goal.neg) if isinstance(goal, GConj) and not goal.rest else goal
        )

        actions: list[GroundAction] = []
        literals: list[Atom | None] = []
        self._schema_of: list[ActionSchema] = []
        self._binding_of: list[dict[str, str]] = []
        for schema in domain.actions:
            lifted = action_literal(schema, self._action_predicates)
            names = [p.name for p in schema.parameters]
            for args in itertools.product(*(self._objects_of(p.type) for p in schema.parameters)):
                binding = dict(zip(names, args))
                actions.append(GroundAction(schema.name, tuple(args)))
                literals.append(None if lifted is None else self._ground_atom(lifted, binding))
                self._schema_of.append(schema)
                self._binding_of.append(binding)
        self.ground_actions: tuple[GroundAction, ...] = tuple(actions)
        self._literals = tuple(literals)
        self._index = {a: i for i, a in enumerate(actions)}
        self._pre: list[GroundFormula] = [
            _as_formula(self._ground(self._schema_of[i].precondition, self._binding_of[i], literals[i], False))
            for i in range(len(actions))
        ]
        self._effects: list[GEffect | None] = [None] * len(actions)
        self._build_index()
        self._applicable_cache: dict[State, tuple[int, ...]] = {}
        self._outcome_cache: dict[tuple[State, int], list[tuple[Fraction, State]]] = {}

    # -- grounding -------------------------------------------------------------------
    def _objects_of(self, t: str) -> list[str]:
        pool = self._pools.get(t)
        if pool is None:
            pool = self._pools[t] = self.vocabulary.objects_of(t)
        return pool

    @staticmethod
    def _ground_atom(atom: AtomF, binding: Mapping[str, str]) -> Atom:
        return Atom(atom.predicate, tuple(binding[a] if is_variable(a) else a for a in atom.args))

    def _bindings(self, variables: Sequence[TypedName], binding: Mapping[str, str]) -> Iterator[dict[str, str]]:
        names = [v.name for v in variables]
        for args in itertools.product(*(self._objects_of(v.type) for v in variables)):
            inner = dict(binding)
            inner.update(zip(names, args))
            yield inner

    def _ground(self, f: Formula, binding: Mapping[str, str], own: Atom | None, negated: bool) -> GroundFormula | bool:
        """Ground ``f`` (negated if ``negated``) into negation normal form."""
        if isinstance(f, AtomF):
            atom = self._ground_atom(f, binding)
            if f.predicate in self._action_predicates:
                return (atom == own) != negated
            bit = 1 << self.vocabulary.index(atom)
            return GConj(0, bit) if negated else GConj(bit, 0)
        if isinstance(f, EqualsF):
            left = binding.get(f.left, f.left)
            right = binding.get(f.right, f.right)
            return (left == right) != negated
        if isinstance(f, NotF):
            return self._ground(f.arg, binding, own, not negated)
        if isinstance(f, (AndF, OrF)):
            items = [self._ground(p, binding, own, negated) for p in f.parts]
            return _conj(items) if isinstance(f, AndF) != negated else _disj(items)
        if isinstance(f, ImplyF):  # premise → conclusion  ≡  ¬premise ∨ conclusion
            items = [
                self._ground(f.premise, binding, own, not negated),
                self._ground(f.conclusion, binding, own, negated),
            ]
            return _conj(items) if negated else _disj(items)
        if isinstance(f, (ExistsF, ForAllF)):
            items = [self._ground(f.body, b, own, negated) for b in self._bindings(f.variables, binding)]
            return _disj(items) if isinstance(f, ExistsF) != negated else _conj(items)
        raise TypeError(f"not a formula: {f!r}")

    def _ground_effect(self, e: Effect, binding: Mapping[str, str]) -> GEffect:
        if isinstance(e, EffLiteral):
            bit = 1 << self.vocabulary.index(self._ground_atom(e.atom, binding))
            return GEffect(add=bit) if e.positive else GEffect(delete=bit)
        if isinstance(e, EffAnd):
            return _merge_effects([self._ground_effect(p, binding) for p in e.parts])
        if isinstance(e, EffForAll):
            return _merge_effects([self._ground_effect(e.body, b) for b in self._bindings(e.variables, binding)])
        if isinstance(e, EffWhen):
            cond = self._ground(e.condition, binding, None, False)
            if cond is False:
                return GEffect()
            body = self._ground_effect(e.body, binding)
            if cond is True:
                return body
            return GEffect(whens=((cond, body),))
        if isinstance(e, EffProbabilistic):
            branches = tuple((p, self._ground_effect(body, binding)) for p, body in e.branches if p > 0)
            if len(branches) == 1 and branches[0][0] == 1:
                return branches[0][1]
            return GEffect(choices=(branches,)) if branches else GEffect()
        raise TypeError(f"not an effect: {e!r}")

    def _effect(self, i: int) -> GEffect:
        eff = self._effects[i]
        if eff is None:
            eff = self._effects[i] = self._ground_effect(self._schema_of[i].effect, self._binding_of[i])
        return eff

    def _build_index(self) -> None:
        """Bucket each ground action under one atom of its positive precondition,
        preferring atoms of predicates that are rarely true (estimated from the
        initial state), so that few actions are tested per state."""
        vocab = self.vocabulary
        true_count: dict[str, int] = {}
        total: dict[str, int] = {}
        for i, atom in enumerate(vocab.atoms):
            total[atom.predicate] = total.get(atom.predicate, 0) + 1
            if self.initial_state >> i & 1:
                true_count[atom.predicate] = true_count.get(atom.predicate, 0) + 1
        density = {p: (true_count.get(p, 0) + 1) / (n + 1) for p, n in total.items()}
        # Bucket entries: (action index, pos mask, neg mask, remaining disjunctions).
        buckets: dict[int, list[tuple[int, int, int, GConj | None]]] = {}
        unindexed: list[int] = []
        for i, pre in enumerate(self._pre):
            if isinstance(pre, GDisj):
                if pre.parts:  # the empty disjunction (never applicable) is dropped
                    unindexed.append(i)
                continue
            if not pre.pos:
                unindexed.append(i)
                continue
            best = min(
                _bits(pre.pos),
                key=lambda b: (density[vocab.atoms[b].predicate], len(buckets.get(b, ())), b),
            )
            more = GConj(0, 0, pre.rest) if pre.rest else None
            buckets.setdefault(best, []).append((i, pre.pos, pre.neg, more))
        self._buckets = {b: tuple(v) for b, v in buckets.items()}
        self._unindexed = tuple(unindexed)

    # -- queries ---------------------------------------------------------------------
    def index_of(self, a: GroundAction) -> int:
        """Position of ``a`` in :attr:`ground_actions`; InvalidActionError if none."""
        try:
            return self._index[a]
        except (KeyError, TypeError):
            raise InvalidActionError(a) from None

    def action_literal(self, a: GroundAction) -> Atom | None:
        """pddlgym's action literal of ``a`` (None for a domain without action
        predicates)."""
        return self._literals[self.index_of(a)]

    def precondition(self, a: GroundAction) -> GroundFormula:
        """The ground precondition of ``a`` (action literals already resolved)."""
        return self._pre[self.index_of(a)]

    def effect(self, a: GroundAction) -> GEffect:
        """The ground effect of ``a`` (grounded on first use)."""
        return self._effect(self.index_of(a))

    def is_applicable(self, s: State, a: GroundAction) -> bool:
        return self._pre[self.index_of(a)].holds(s)

    def _applicable_indices(self, s: State) -> tuple[int, ...]:
        hit = self._applicable_cache.get(s)
        if hit is not None:
            return hit
        pre = self._pre
        found = [i for i in self._unindexed if pre[i].holds(s)]
        buckets = self._buckets
        rest = s
        while rest:
            low = rest & -rest
            bucket = buckets.get(low.bit_length() - 1)
            if bucket is not None:
                # Inlined GConj.holds: this loop dominates applicable().
                for i, pos, neg, more in bucket:
                    if (s & pos) == pos and not s & neg and (more is None or more.holds(s)):
                        found.append(i)
            rest ^= low
        found.sort()
        result = tuple(found)
        if len(self._applicable_cache) >= _CACHE_LIMIT:
            self._applicable_cache.clear()
        self._applicable_cache[s] = result
        return result

    def applicable(self, s: State) -> list[GroundAction]:
        """The ground actions applicable in ``s``, in :attr:`ground_actions` order."""
        acts = self.ground_actions
        return [acts[i] for i in self._applicable_indices(s)]

    def outcomes(self, s: State, a: GroundAction) -> list[tuple[Fraction, State]]:
        """Exact distribution of successors of ``s`` under ``a``: pairs (probability,
        successor), successors distinct and increasing, probabilities summing to 1.
        Raises InvalidActionError if ``a`` is not applicable in ``s``."""
        i = self.index_of(a)
        key = (s, i)
        hit = self._outcome_cache.get(key)
        if hit is not None:
            return list(hit)
        if not self._pre[i].holds(s):
            raise InvalidActionError(a)
        eff = self._effect(i)
        if eff.deterministic:
            result = [(_ONE, (s & ~eff.delete) | eff.add)]
        else:
            succ: dict[State, Fraction] = {}
            for (add, delete), p in eff.distribution(s).items():
                t = (s & ~delete) | add
                succ[t] = succ.get(t, 0) + p
            result = sorted(((p, t) for t, p in succ.items() if p), key=lambda pt: pt[1])
        if len(self._outcome_cache) >= _CACHE_LIMIT:
            self._outcome_cache.clear()
        self._outcome_cache[key] = result
        return list(result)

    def sample(self, s: State, a: GroundAction, rng: np.random.Generator) -> State:
        """One successor of ``s`` under ``a`` drawn from :meth:`outcomes` with ``rng``
        (no draw is made when the outcome is certain)."""
        outs = self.outcomes(s, a)
        if len(outs) == 1:
            return outs[0][1]
        u = rng.random()
        acc = 0.0
        for p, t in outs:
            acc += float(p)
            if u < acc:
                return t
        return outs[-1][1]  # float rounding left u just below the exact total 1

    def goal_holds(self, s: State) -> bool:
        return self._goal_formula.holds(s)

    def __repr__(self) -> str:
        return (
            f"PPDDLTask({self.domain.name}/{self.problem.name}: {len(self.vocabulary)} atoms, "
            f"{len(self.ground_actions)} ground actions)"
        )


def _bits(mask: int) -> Iterator[int]:
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def parse_task(domain_path: str | Path, problem_path: str | Path) -> PPDDLTask:
    """Parse, check and ground a user's domain and problem files."""
    domain = parse_domain_file(domain_path)
    return PPDDLTask(domain, parse_problem_file(problem_path, domain))


# ---------------------------------------------------------------------- simulator / α
class PPDDLSimulator:
    """S_E of section 2 over a PPDDL task: states are the task's bitsets.

    ``step`` samples the successor with a numpy Generator that ``reset(seed)``
    (or the constructor) seeds; ``reset()`` without a seed keeps the current
    generator, so one seeded run is reproducible end to end."""

    def __init__(self, task: PPDDLTask, seed: int | None = None) -> None:
        self.task = task
        self._rng = np.random.default_rng(seed)
        self._state: State = task.initial_state

    def reset(self, seed: int | None = None) -> State:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._state = self.task.initial_state
        return self._state

    def get_state(self) -> State:
        return self._state

    def set_state(self, x: State) -> None:
        if not isinstance(x, int) or x < 0 or x & ~self.task.vocabulary.full_mask:
            raise VocabularyError(
                f"state {x!r} is not a bitset over the {len(self.task.vocabulary)} atoms "
                f"of {self.task.domain.name}/{self.task.problem.name}"
            )
        self._state = x

    def step(self, action: GroundAction | str) -> State:
        """Apply ``action`` (a GroundAction or its ``str`` form); raises
        InvalidActionError if it is not available in the current state."""
        try:
            a = GroundAction.parse(action) if isinstance(action, str) else action
            applicable = self.task.is_applicable(self._state, a)
        except (VocabularyError, InvalidActionError):
            applicable = False
        if not applicable:
            raise InvalidActionError(action)
        self._state = self.task.sample(self._state, a, self._rng)
        return self._state

    def available_actions(self) -> list[GroundAction]:
        return self.task.applicable(self._state)


class AtomsRepresentation:
    """α for a PPDDL task: environment states already are atom bitsets."""

    def __init__(self, task: PPDDLTask) -> None:
        self._vocabulary = task.vocabulary

    @property
    def vocabulary(self) -> Vocabulary:
        return self._vocabulary

    def __call__(self, x: State) -> State:
        return x

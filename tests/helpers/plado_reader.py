"""A PPDDL export as plado reads it: its applicable actions and successor
distributions in a capver state, for tests that compare them with the model.  Import
it from tests as ``from tests.helpers.plado_reader import PladoReader``."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

from capver.core.state import State
from capver.core.vocabulary import Vocabulary
from capver.io.ppddl_export.names import PDDLNames


class PladoReader:
    """plado's view of one domain / problem pair written by capver.

    plado keeps the predicates no effect changes as static facts of the problem, so
    only states whose static part (``static``) equals the problem's are read right."""

    def __init__(self, domain: Path, problem: Path, names: PDDLNames, vocab: Vocabulary) -> None:
        from plado.parser import normalize_conditions, normalize_effects, parse
        from plado.semantics.applicable_actions_generator import ApplicableActionsGenerator
        from plado.semantics.successor_generator import SuccessorGenerator
        from plado.semantics.task import Task

        d, p = parse(str(domain), str(problem))
        normalize_conditions(d, p)
        normalize_effects(d)
        self.task = task = Task(d, p)
        self.names, self.vocab = names, vocab
        self.fluent = {task.predicates[i].name: i for i in range(task.num_fluent_predicates)}
        self.static = sum(1 << i for i, a in enumerate(vocab.atoms) if names.atom(a).predicate not in self.fluent)
        self._obj = {o: k for k, o in enumerate(task.objects)}
        self._back = {(names.atom(a).predicate, names.atom(a).args): i for i, a in enumerate(vocab.atoms)}
        self.capability_of = {n: c for c, n in names.actions.items()}
        self._applicable, self._successors = ApplicableActionsGenerator(task), SuccessorGenerator(task)

    def distributions(self, x: State) -> dict[str, dict[State, Fraction]]:
        """PDDL action name → its successor distribution in ``x``, for every action
        plado finds applicable there."""
        task = self.task
        ps = task.initial_state.duplicate()
        for i in range(task.num_fluent_predicates):
            ps.atoms[i] = set()
        for a in self.vocab.atoms_of(x):
            pa = self.names.atom(a)
            if pa.predicate in self.fluent:
                ps.atoms[self.fluent[pa.predicate]].add(tuple(self._obj[o] for o in pa.args))
        out: dict[str, dict[State, Fraction]] = {}
        for ga in self._applicable(ps):
            got: dict[State, Fraction] = {}
            for succ, prob in self._successors(ps, ga):
                s2 = x & self.static
                for i in range(task.num_fluent_predicates):
                    for args in succ.atoms[i]:
                        s2 |= 1 << self._back[(task.predicates[i].name, tuple(task.objects[o] for o in args))]
                got[s2] = got.get(s2, Fraction(0)) + Fraction(prob)
            # plado lists no successor at all when no atomic effect fires (e.g. no
            # (when ...) condition holds): the state stays as it is.
            out[task.actions[ga[0]].name] = {k: v for k, v in got.items() if v} or {x: Fraction(1)}
        return out

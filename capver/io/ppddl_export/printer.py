"""PDDL text of the parts of one capability model under one naming, shared by the three
export flavours of :mod:`capver.io.ppddl_export` (PPDDL, pddlgym, determinised):
formulas from BDDs (via the model language's cover printer), cubes, effects (η⁻ ∖ η⁺
deleted, as apply(s, η) does in paper section 2), outcome distributions, the
vocabulary sections, the header notes, the problem file, and the :requirements the
printed text uses."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from capver.core.state import NO_EFFECT, Effect, State
from capver.core.vocabulary import ROOT_TYPE, Atom, Literal, Vocabulary
from capver.errors import VocabularyError
from capver.io.dsl.conditions import condition_sexp
from capver.io.dsl.syntax import Sexp, flat, quote
from capver.io.ppddl_export.names import PDDLNames
from capver.io.ppddl_export.probabilities import _fraction, written_probabilities
from capver.logic.bdd import Cube, Node
from capver.logic.condition import Condition, ConditionKind, LogicContext
from capver.model.capability_model import CompoundModel

REQUIREMENT_ORDER = (
    ":strips",
    ":typing",
    ":negative-preconditions",
    ":disjunctive-preconditions",
    ":conditional-effects",
    ":probabilistic-effects",
)


def _atom_text(a: Atom) -> str:
    return "(" + " ".join((a.predicate, *a.args)) + ")"


def _typed(items: Iterable[tuple[str, str]], *, explicit: bool = False) -> str:
    """``a b - block c - object`` from (name, type) pairs; plain names when every type
    is the root type (so that untyped domains stay untyped), unless ``explicit``."""
    pairs = list(items)
    if not explicit and all(t == ROOT_TYPE for _, t in pairs):
        return " ".join(n for n, _ in pairs)
    groups: dict[str, list[str]] = {}
    for n, t in pairs:
        groups.setdefault(t, []).append(n)
    return " ".join(f"{' '.join(ns)} - {t}" for t, ns in groups.items())


def _vars(k: int) -> list[str]:
    return [f"?x{i + 1}" for i in range(k)]


def _comment(text: str) -> list[str]:
    out, cur = [], ";"
    for word in text.split():
        if len(cur) + 1 + len(word) > 88 and cur != ";":
            out.append(cur)
            cur = ";"
        cur += " " + word
    return [*out, cur]


class _Printer:
    """PDDL text of the parts of one model under one naming; records which PDDL
    requirements the printed text uses."""

    def __init__(self, model: CompoundModel, names: PDDLNames) -> None:
        self.model = model
        self.ctx: LogicContext = model.ctx
        self.vocab = model.vocabulary
        self.names = names
        self._atoms = {i: names.atom(a) for i, a in enumerate(self.vocab.atoms)}
        # The model language prints an atom as [quote(p), quote(o1), ...]; this maps
        # that form back to the atom, so its cover printer can be reused verbatim.
        self._dsl_atoms = {(quote(a.predicate), *(quote(x) for x in a.args)): i for i, a in enumerate(self.vocab.atoms)}
        self.twin_names: dict[str, str] = {}  # PDDL predicate -> its twin
        self.nullary: list[str] = []  # predicates standing for single atoms
        self.used: set[str] = {":strips"}
        if len(self.vocab.types) > 1:
            self.used.add(":typing")

    def requirements(self) -> str:
        return "(:requirements " + " ".join(r for r in REQUIREMENT_ORDER if r in self.used) + ")"

    def atom(self, i: int) -> str:
        return _atom_text(self._atoms[i])

    def formula(self, u: Node) -> str:
        """A compact PDDL goal description of the BDD ``u``."""
        b = self.ctx.bdd
        cond = Condition(self.ctx, ConditionKind.FORMULA, smt=self.ctx.smt.from_bdd(b, u), bdd=u)
        return flat(self._translate(condition_sexp(cond)))

    def _translate(self, e: Sexp) -> Sexp:
        if isinstance(e, str):  # the cover printer's constants
            if e == "true":
                return ["and"]
            self.used.add(":disjunctive-preconditions")
            return ["or"]
        head = e[0]
        if head in ("and", "or", "not"):
            if head == "or":
                self.used.add(":disjunctive-preconditions")
            elif head == "not":
                self.used.add(":negative-preconditions")
            return [head, *(self._translate(x) for x in e[1:])]
        return self.atom(self._dsl_atoms[tuple(e)])  # type: ignore[arg-type]

    def cube(self, cube: Cube, twins: frozenset[int] = frozenset()) -> str:
        """The conjunction of a cube; a negative literal of an atom in ``twins`` is
        written as its twin, any other as ``(not ...)``."""
        parts = []
        for i in range(len(self.vocab)):
            if cube.mask >> i & 1:
                if cube.value >> i & 1:
                    parts.append(self.atom(i))
                elif i in twins:
                    parts.append(self.twin(i))
                else:
                    self.used.add(":negative-preconditions")
                    parts.append(f"(not {self.atom(i)})")
        return "(and" + "".join(" " + p for p in parts) + ")"

    def effect(self, eta: Effect, complemented: frozenset[int] = frozenset()) -> str:
        """``(and ...)`` of an effect; deletions are η⁻ ∖ η⁺ (add wins, as in apply)."""
        parts: list[str] = []
        delete = eta.delete & ~eta.add
        for i in range(len(self.vocab)):
            bit = 1 << i
            if eta.add & bit:
                parts.append(self.atom(i))
                if i in complemented:
                    parts.append(f"(not {self.twin(i)})")
            elif delete & bit:
                parts.append(f"(not {self.atom(i)})")
                if i in complemented:
                    parts.append(self.twin(i))
        return "(and" + "".join(" " + p for p in parts) + ")"

    def distribution(self, dist: Sequence[tuple[Effect, Fraction]], exact_fractions: bool) -> list[str]:
        """The lines of one outcome distribution: the effect itself when it is
        certain, else ``(probabilistic ...)`` with written probabilities."""
        if len(dist) == 1:
            return [self.effect(dist[0][0])]
        self.used.add(":probabilistic-effects")
        lines = ["(probabilistic"]
        for w in written_probabilities([p for _, p in dist], exact_fractions=exact_fractions):
            note = "" if w.is_exact else f" ; = {_fraction(w.exact)}"
            lines.append(f"  {w.text} {self.effect(dist[w.index][0])}{note}")
        # a closing parenthesis after a comment would be commented out
        lines.append(")")
        return lines

    def noop(self, u: Node) -> str | None:
        """An effect that changes nothing in any state of ``u`` and is not the bare
        ``(and)``: a literal that ``u`` implies, re-asserted; None if there is none."""
        b = self.ctx.bdd
        for i in range(len(self.vocab)):
            x = b.var(i)
            if b.conj(u, b.neg(x)) == b.false:
                return self.atom(i)
            if b.conj(u, x) == b.false:
                return f"(not {self.atom(i)})"
        return None

    def twin(self, i: int) -> str:
        a = self._atoms[i]
        return _atom_text(Atom(self.twin_names[a.predicate], a.args))

    def rename_atoms(self, renamed: Mapping[int, str]) -> None:
        """Write atom i as the nullary predicate ``renamed[i]`` instead."""
        for i, pname in renamed.items():
            self._atoms[i] = Atom(pname, ())
        self.nullary = list(renamed.values())

    def vocabulary_sections(
        self, predicate_extra: Sequence[tuple[str, str]] = (), *, only_nullary: bool = False
    ) -> list[str]:
        """(:types), (:constants), (:predicates) lines; ``predicate_extra`` adds
        (PDDL name, capver predicate whose signature it copies).  Every parameter is
        typed on its own (``?x1 - block ?x2 - block``): pddlgym refuses the grouped
        form ``?x1 ?x2 - block``."""
        vocab, names = self.vocab, self.names
        lines: list[str] = []
        if only_nullary:  # no types, constants or parameters at all
            return ["  (:predicates"] + [f"    ({pname})" for pname in dict.fromkeys(self.nullary)] + ["  )"]
        typing = len(vocab.types) > 1
        declared = [(names.types[t], names.types[p or ROOT_TYPE]) for t, p in vocab.types.items() if t != ROOT_TYPE]
        if declared:
            # ``- object`` spelled out: pddlgym only knows the types it is told of
            lines.append(f"  (:types {_typed(declared, explicit=True)})")
        if vocab.objects:
            lines.append(
                f"  (:constants {_typed(((names.objects[o], names.types[t]) for o, t in vocab.objects.items()), explicit=typing)})"
            )
        decls = []
        sigs = [(names.predicates[p.name], p.name) for p in vocab.predicates.values()] + list(predicate_extra)
        for pname, source in sigs:
            ptypes = [names.types[t] for t in vocab.predicates[source].param_types]
            params = [f"{v} - {t}" if typing else v for v, t in zip(_vars(len(ptypes)), ptypes, strict=True)]
            decls.append("(" + " ".join([pname, *params]) + ")")
        decls += [f"({pname})" for pname in self.nullary]
        lines.append("  (:predicates")
        lines += [f"    {d}" for d in decls]
        lines[-1] += ")"
        return lines


def _header(title: str, model_name: str, notes: Sequence[str], table: Sequence[str]) -> list[str]:
    lines = [f"; {title} of capability model {json.dumps(model_name, ensure_ascii=False)}, written by capver.", ";"]
    for note in notes:
        lines += _comment(note)
        lines.append(";")
    return lines + list(table)


def _probability_note(exact_fractions: bool) -> str:
    if exact_fractions:
        return (
            "Probabilities are exact fractions (capver's own PPDDL reader reads them; most other tools "
            "read only decimals) and those of each probabilistic effect sum to exactly 1."
        )
    return (
        "Probabilities are decimals: exact where the fraction terminates, otherwise rounded, with the "
        "exact fraction in a comment. Those of each probabilistic effect sum to exactly 1, so no "
        "implicit 'nothing happens' outcome applies ((and) is written for the empty effect)."
    )


def _idle_note(idle: Sequence[str], kept: bool) -> str | None:
    if not idle:
        return None
    listed = ", ".join(json.dumps(c, ensure_ascii=False) for c in idle)
    if kept:
        return (
            f"{len(idle)} capabilities can never change the state (every rule's effect is empty): {listed}. "
            "They are kept (keep-idle) with an effect that re-asserts a literal their precondition implies."
        )
    return (
        f"{len(idle)} capabilities are left out because they can never change the state (every rule's "
        f"effect is empty), so no plan needs them: {listed}. Export with --keep-idle to keep them."
    )


def _norules_note(model: CompoundModel) -> str | None:
    empty = [c for c, cm in model.items() if not cm.rules]
    if not empty:
        return None
    listed = ", ".join(json.dumps(c, ensure_ascii=False) for c in empty)
    return f"{len(empty)} capabilities have no rules (no prediction anywhere) and are not exported: {listed}."


def _idle_capabilities(model: CompoundModel) -> list[str]:
    """Capabilities with rules, all of whose effects are empty: they never change the state."""
    return [
        c for c, cm in model.items() if cm.rules and all(eta == NO_EFFECT for r in cm.rules for _, eta in r.effects)
    ]


@dataclass(frozen=True, slots=True)
class ExportStats:
    """What an export contains: ``actions`` written, capabilities left out because
    they never change the state (``idle``) and because they have no rules."""

    actions: int
    idle: tuple[str, ...]
    idle_kept: bool
    no_rules: tuple[str, ...]


NO_STATS = ExportStats(0, (), False, ())
"""The stats of an export made without them (the default of the export classes)."""


def _write_pair(directory: str | Path, dname: str, dtext: str, pname: str, ptext: str) -> tuple[Path, Path]:
    d = Path(directory)
    (d / pname).parent.mkdir(parents=True, exist_ok=True)
    (d / dname).write_text(dtext, encoding="utf-8")
    (d / pname).write_text(ptext, encoding="utf-8")
    return d / dname, d / pname


def _check_problem(vocab: Vocabulary, init: State, goal: Sequence[Literal]) -> tuple[Literal, ...]:
    if init < 0 or init & ~vocab.full_mask:
        raise VocabularyError(f"initial state {init!r} is not a bitset over the {len(vocab)} atoms of the model")
    for lit in goal:
        vocab.index(lit.atom)
    return tuple(goal)


def _union(model: CompoundModel, regions: Sequence[tuple[Node, object]]) -> Node:
    b = model.ctx.bdd
    union = b.false
    for u, _ in regions:
        union = b.disj(union, u)
    return union


def _goal(
    pr: _Printer, goal: Sequence[Literal], *, negative: bool, twins: frozenset[int] = frozenset()
) -> tuple[list[str], str]:
    """The goal's conjunction (recording the requirements it needs)."""
    conj = []
    for lit in goal:
        i = pr.vocab.index(lit.atom)
        if lit.positive:
            conj.append(pr.atom(i))
        elif negative and i not in twins:
            pr.used.add(":negative-preconditions")
            conj.append(f"(not {pr.atom(i)})")
        else:
            conj.append(pr.twin(i))
    return conj, "(and" + "".join(" " + x for x in conj) + ")"


def _problem_text(
    names: PDDLNames,
    pr: _Printer,
    init: State,
    goal: Sequence[Literal],
    model_name: str,
    goal_text: str,
    *,
    twins: frozenset[int] = frozenset(),
    suffix: str = "",
) -> str:
    vocab = pr.vocab
    facts = [pr.atom(i) for i in range(len(vocab)) if init >> i & 1]
    facts += [pr.twin(i) for i in sorted(twins) if not init >> i & 1]
    lines = [
        f"; Problem for the capver export of capability model {json.dumps(model_name, ensure_ascii=False)}.",
        f"; Initial state: {vocab.format_state(init)}",
        f"; Goal: {' & '.join(('' if x.positive else '~') + str(x.atom) for x in goal) or '(none)'}",
        "",
        f"(define (problem {names.domain}-problem{suffix})",
        f"  (:domain {names.domain}{suffix})",
        "  (:objects)",
        "  (:init" + "".join(f"\n    {f}" for f in facts) + ")",
        f"  (:goal {goal_text}))",
    ]
    return "\n".join(lines) + "\n"


def _noop_pieces(cube: Cube, idle: bool) -> list[Cube]:
    """The cubes an action of ``cube`` is written for: the cube itself, or, for a kept
    idle capability applicable everywhere (an empty cube, with no literal to
    re-assert), its two halves on the first atom."""
    return [Cube(1, 1), Cube(1, 0)] if idle and cube.mask == 0 else [cube]


def _cube_noop(pr: _Printer, cube: Cube, twins: frozenset[int] = frozenset()) -> str:
    """A literal of the non-empty ``cube`` re-asserted: changes nothing where the cube
    holds, and is not the bare ``(and)`` that some tools refuse."""
    for i in range(len(pr.vocab)):
        if cube.mask >> i & 1:
            if cube.value >> i & 1:
                return pr.atom(i)
            return pr.twin(i) if i in twins else f"(not {pr.atom(i)})"
    raise ValueError("an empty cube implies no literal")

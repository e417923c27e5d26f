"""Export a compound capability model h† (paper, section 2, Definition "capability
model" and Pr_h) as a PPDDL domain + problem, and as an all-outcomes determinised
classical PDDL domain + problem for off-the-shelf planners.

**PPDDL.**  Each capability c becomes one ground action.  Its precondition is the
union ⋁_r cond(r) of its rule conditions: where no rule matches, Pr_h(·|s,c) = 0,
i.e. the model makes no prediction, which in PDDL is "not applicable".  Rules may
overlap (in h∨ every untried state satisfies every optimistic condition), so the
state space is split on the BDDs into regions by the set R_s of matching rules
(:func:`capver.engines.verify.regions`), and the effect is one
``(when REGION (probabilistic p1 e1 ... pk ek))`` per region with the averaged
distribution (1/|R_s|) Σ_r effects(r) (:func:`capver.model.capability_model.rule_mixture`).
Regions are disjoint, so exactly one ``when`` fires in every state that satisfies
the precondition, and each region's probabilities are exact fractions (``1/3``)
summing to exactly 1 — PPDDL's implicit no-op for a missing mass never applies,
and the empty effect is written explicitly as ``(and)`` (a region whose only
outcome is the empty effect gets no ``when`` at all, which means the same).
Region formulas are printed from the BDD by the model language's compact cover
printer (:func:`capver.io.dsl.condition_sexp`).  An atom both added and deleted by a model
effect ends up true (apply(s, η) = (s ∖ η⁻) ∪ η⁺); only η⁻ ∖ η⁺ is written as
deletions, so the PDDL reading agrees whatever a tool does with such conflicts.

**Determinised PDDL** (all-outcomes determinisation): one deterministic action per
(capability, region, outcome, cube of the region's irredundant cover), whose
precondition is that cube — a conjunction, as STRIPS planners need — and whose
effect is that outcome.  Negative literals are compiled away for planners without
``:negative-preconditions`` (pyperplan): an atom a needed negatively gets a twin
``not-a`` that is true in the initial state iff a is false and that every effect
adding (deleting) a deletes (adds), so ``not-a`` ⇔ ¬a in every reachable state.

Tools capver did not write check both outputs (tests/test_export.py): plado
parses the PPDDL — fractions such as ``1/3`` included, so no decimal variant is
needed — and its successor generator reproduces Pr_h exactly (the ``pddl`` package
has no ``probabilistic``, pddlgym's parser has no ``when``); the ``pddl`` package
parses the determinised files and pyperplan solves them.

Names become PDDL-safe (lower case, a letter first, letters, digits, ``-`` and
``_``; e.g. the capability ``on(a,b)&~clear(a)`` becomes the action
``achieve-on-a-b-not-clear-a``) and the mapping is written as a comment table at
the top of every file.  Capabilities without rules have no prediction anywhere and
are listed there but not exported.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from types import MappingProxyType

from capver.errors import PlanningError, VocabularyError
from capver.io.dsl import Sexp, condition_sexp, flat, quote
from capver.logic.bdd import Cube, Node, isop
from capver.logic.condition import Condition, ConditionKind, LogicContext
from capver.model.capability_model import CompoundModel, rule_mixture
from capver.model.state import NO_EFFECT, Capability, Effect, State
from capver.model.vocabulary import ROOT_TYPE, Atom, Literal, Vocabulary

PPDDL_REQUIREMENTS = (
    ":typing",
    ":negative-preconditions",
    ":disjunctive-preconditions",
    ":conditional-effects",
    ":probabilistic-effects",
)
COMPLEMENT_PREFIX = "not-"
_RESERVED = frozenset(
    {
        "and", "or", "not", "imply", "exists", "forall", "when", "probabilistic", "oneof",
        "define", "domain", "problem", "either", "object", "increase", "decrease", "assign",
        "scale-up", "scale-down", "minimize", "maximize", "number", "at", "over", "all",
    }
)
_UNSAFE = re.compile(r"[^a-z0-9_-]+")


# =====================================================================================
# Names
# =====================================================================================


def pddl_name(text: str) -> str:
    """A PDDL-safe spelling of ``text``: lower case, ``~`` read as ``not-``, every run
    of other characters replaced by one ``-``, a letter first, not a keyword.  Not
    injective — :class:`PDDLNames` resolves collisions."""
    s = text.lower().replace("~", "-not-")
    s = _UNSAFE.sub("-", s)
    s = re.sub(r"-{2,}", "-", s).strip("-")
    if not s or not s[0].isalpha():
        s = "n-" + s if s else "n"
    if s in _RESERVED:
        s += "-x"
    return s


class _Allocator:
    """Hands out distinct PDDL names; a clash gets ``-2``, ``-3``, ...  PDDL keeps
    types, objects, predicates and actions apart, but one namespace for all of them
    keeps every tool (some confuse an action with a predicate of the same name) happy."""

    def __init__(self) -> None:
        self.used: set[str] = {ROOT_TYPE}

    def take(self, wanted: str) -> str:
        name, k = wanted, 1
        while name in self.used:
            k += 1
            name = f"{wanted}-{k}"
        self.used.add(name)
        return name


def _capability_base(cap: Capability) -> str:
    # A name that spells its intent reads as the goal it pursues.
    if cap.intent and cap.name == Capability.for_intent(cap.intent).name:
        return "achieve-" + pddl_name(cap.name)
    return pddl_name(cap.name)


@dataclass(frozen=True, slots=True)
class PDDLNames:
    """capver name → PDDL name, for every type, object, predicate and capability of a
    model (capabilities without rules too, so the comment table can list them)."""

    domain: str
    types: Mapping[str, str]
    objects: Mapping[str, str]
    predicates: Mapping[str, str]
    actions: Mapping[str, str]

    @staticmethod
    def of(model: CompoundModel, domain: str) -> PDDLNames:
        vocab = model.vocabulary
        alloc = _Allocator()
        types = {ROOT_TYPE: ROOT_TYPE}
        types.update({t: alloc.take(pddl_name(t)) for t in vocab.types if t != ROOT_TYPE})
        objects = {o: alloc.take(pddl_name(o)) for o in vocab.objects}
        predicates = {p: alloc.take(pddl_name(p)) for p in vocab.predicates}
        actions = {c: alloc.take(_capability_base(cm.capability)) for c, cm in model.items()}
        return PDDLNames(
            pddl_name(domain),
            MappingProxyType(types),
            MappingProxyType(objects),
            MappingProxyType(predicates),
            MappingProxyType(actions),
        )

    def atom(self, a: Atom) -> Atom:
        """The PDDL spelling of a model atom (an :class:`Atom` over PDDL names: the atom
        a PDDL tool, e.g. :class:`capver.envs.ppddl.PPDDLTask`, has for it)."""
        return Atom(self.predicates[a.predicate], tuple(self.objects[x] for x in a.args))

    def table(self, vocab: Vocabulary) -> list[str]:
        """The mapping as comment lines."""
        rows: list[tuple[str, str, str]] = []
        rows += [("type", t, n) for t, n in self.types.items() if t != ROOT_TYPE]
        rows += [("object", o, n) for o, n in self.objects.items()]
        rows += [("predicate", p, n) for p, n in self.predicates.items()]
        rows += [("capability", c, n) for c, n in self.actions.items()]
        width = max((len(json.dumps(k, ensure_ascii=False)) for _, k, _ in rows), default=0)
        lines = ["; Names (capver name -> PDDL name):"]
        for kind, k, n in rows:
            lines.append(f";   {kind:<10} {json.dumps(k, ensure_ascii=False):<{width}}  ->  {n}")
        return lines


# =====================================================================================
# Problems
# =====================================================================================


def goal_holds(vocab: Vocabulary, goal: Sequence[Literal], s: State) -> bool:
    pos, neg = vocab.literals(goal)
    return (s & pos) == pos and not s & neg


# =====================================================================================
# Printing helpers
# =====================================================================================


def _atom_text(a: Atom) -> str:
    return "(" + " ".join((a.predicate, *a.args)) + ")"


def _fraction(p: Fraction) -> str:
    return str(p.numerator) if p.denominator == 1 else f"{p.numerator}/{p.denominator}"


def _typed(items: Iterable[tuple[str, str]]) -> str:
    """``a b - block c - object`` from (name, type) pairs; plain names when every type
    is the root type (so that untyped domains stay untyped)."""
    pairs = list(items)
    if all(t == ROOT_TYPE for _, t in pairs):
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
    """PDDL text of the parts of one model under one naming."""

    def __init__(self, model: CompoundModel, names: PDDLNames) -> None:
        self.model = model
        self.ctx: LogicContext = model.ctx
        self.vocab = model.vocabulary
        self.names = names
        self._atoms = {i: names.atom(a) for i, a in enumerate(self.vocab.atoms)}
        # The model language prints an atom as [quote(p), quote(o1), ...]; this maps
        # that form back to the atom, so its cover printer can be reused verbatim.
        self._dsl_atoms = {
            (quote(a.predicate), *(quote(x) for x in a.args)): i for i, a in enumerate(self.vocab.atoms)
        }
        self.twin_names: dict[str, str] = {}  # PDDL predicate -> its not- twin

    def atom(self, i: int) -> str:
        return _atom_text(self._atoms[i])

    def formula(self, u: Node) -> str:
        """A compact PDDL goal description of the BDD ``u``."""
        b = self.ctx.bdd
        cond = Condition(self.ctx, ConditionKind.FORMULA, smt=self.ctx.smt.from_bdd(b, u), bdd=u)
        return flat(self._translate(condition_sexp(cond)))

    def _translate(self, e: Sexp) -> Sexp:
        if isinstance(e, str):  # the cover printer's constants
            return ["and"] if e == "true" else ["or"]
        head = e[0]
        if head in ("and", "or", "not"):
            return [head, *(self._translate(x) for x in e[1:])]
        return self.atom(self._dsl_atoms[tuple(e)])  # type: ignore[arg-type]

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

    def twin(self, i: int) -> str:
        a = self._atoms[i]
        return _atom_text(Atom(self.twin_names[a.predicate], a.args))

    def vocabulary_sections(self, predicate_extra: Sequence[tuple[str, str]] = ()) -> list[str]:
        """(:types), (:constants), (:predicates) lines; ``predicate_extra`` adds
        (PDDL name, capver predicate whose signature it copies)."""
        vocab, names = self.vocab, self.names
        lines: list[str] = []
        declared = [(names.types[t], names.types[p or ROOT_TYPE]) for t, p in vocab.types.items() if t != ROOT_TYPE]
        if declared:
            lines.append(f"  (:types {_typed(declared)})")
        if vocab.objects:
            lines.append(
                f"  (:constants {_typed((names.objects[o], names.types[t]) for o, t in vocab.objects.items())})"
            )
        decls = []
        sigs = [(names.predicates[p.name], p.name) for p in vocab.predicates.values()] + list(predicate_extra)
        for pname, source in sigs:
            ptypes = [names.types[t] for t in vocab.predicates[source].param_types]
            decls.append("(" + " ".join([pname, _typed(zip(_vars(len(ptypes)), ptypes, strict=True))]).strip() + ")")
        lines.append("  (:predicates")
        lines += [f"    {d}" for d in decls]
        lines[-1] += ")"
        return lines


def _header(title: str, model_name: str, notes: str, names: PDDLNames, vocab: Vocabulary) -> list[str]:
    lines = [f"; {title} of capability model {json.dumps(model_name, ensure_ascii=False)}, written by capver.", ";"]
    lines += _comment(notes)
    lines.append(";")
    return lines + names.table(vocab)


_PPDDL_NOTES = (
    "Each capability is one action. Its precondition is the union of its rules' conditions: where no "
    "rule matches, the model makes no prediction (Pr_h = 0), so the action is not applicable. The "
    "state space is split into disjoint regions by the set of rules that match there; each region has "
    "one (when REGION (probabilistic ...)) whose exact probabilities are the average of the matching "
    "rules' distributions and sum to exactly 1, so PPDDL's implicit 'nothing happens' remainder never "
    "applies ((and) is written for the empty effect; a region where nothing can change has no when). "
    "The action's outcome distribution in every state is therefore exactly the model's Pr_h(. | s, c)."
)

_DET_NOTES = (
    "All-outcomes determinisation: one deterministic action per (capability, region, outcome, cube of "
    "the region's irredundant cover); its precondition is that cube and its effect that outcome, so a "
    "plan here picks one possible outcome of each capability it uses."
)

_COMPILED_NOTES = (
    "Negative preconditions are compiled away (pyperplan and other STRIPS planners support only "
    "positive ones): for an atom needed negatively, the predicate not-P holds exactly when P does not "
    "- it is set in the initial state for every such atom that is false, and every effect that adds "
    "(deletes) the atom deletes (adds) its not- twin."
)


# =====================================================================================
# PPDDL export
# =====================================================================================


@dataclass(frozen=True, slots=True)
class PPDDLExport:
    """Domain and problem text of a PPDDL export, with the names used."""

    domain: str
    problem: str
    names: PDDLNames
    init: State
    goal: tuple[Literal, ...]

    def write(
        self, directory: str | Path, domain_file: str = "domain.pddl", problem_file: str = "problem.pddl"
    ) -> tuple[Path, Path]:
        return _write_pair(directory, domain_file, self.domain, problem_file, self.problem)


def _write_pair(directory: str | Path, dname: str, dtext: str, pname: str, ptext: str) -> tuple[Path, Path]:
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    (d / dname).write_text(dtext, encoding="utf-8")
    (d / pname).write_text(ptext, encoding="utf-8")
    return d / dname, d / pname


def _check_problem(vocab: Vocabulary, init: State, goal: Sequence[Literal]) -> tuple[Literal, ...]:
    if init < 0 or init & ~vocab.full_mask:
        raise VocabularyError(f"initial state {init!r} is not a bitset over the {len(vocab)} atoms of the model")
    for lit in goal:
        vocab.index(lit.atom)
    return tuple(goal)


def export_ppddl(
    model: CompoundModel,
    *,
    init: State = 0,
    goal: Sequence[Literal] = (),
    name: str = "capver-model",
) -> PPDDLExport:
    """The PPDDL domain and problem of ``model`` (see the module docstring); the
    problem starts in ``init`` and asks for the conjunction ``goal``."""
    goal = _check_problem(model.vocabulary, init, goal)
    names = PDDLNames.of(model, name)
    pr = _Printer(model, names)
    b = model.ctx.bdd
    lines = _header("PPDDL domain", name, _PPDDL_NOTES, names, model.vocabulary)
    lines += ["", f"(define (domain {names.domain})", f"  (:requirements {' '.join(PPDDL_REQUIREMENTS)})"]
    lines += pr.vocabulary_sections()
    for c, cm in model.items():
        regs = cm.regions()
        lines.append("")
        if not regs:
            lines.append(f"  ; capability {json.dumps(c, ensure_ascii=False)} has no rules: not exported")
            continue
        union = b.false
        for u, _ in regs:
            union = b.disj(union, u)
        lines.append(
            f"  ; capability {json.dumps(c, ensure_ascii=False)}: {len(cm.rules)} rule(s), {len(regs)} region(s)"
        )
        lines += [f"  (:action {names.actions[c]}", "    :parameters ()", f"    :precondition {pr.formula(union)}"]
        notes: list[str] = []
        branches: list[list[str]] = []
        for k, (u, rules) in enumerate(regs, 1):
            dist = sorted(rule_mixture(rules).items())
            head = f"      ; region {k}: {len(rules)} matching rule(s)"
            if dist == [(NO_EFFECT, 1)]:
                # (when R (and)) changes nothing, and plado 0.1.6 crashes on it.
                notes.append(f"{head}, nothing changes")
                continue
            if len(dist) == 1:
                body = [pr.effect(dist[0][0])]
            else:
                body = ["(probabilistic"] + [f"  {_fraction(p)} {pr.effect(e)}" for e, p in dist]
                body[-1] += ")"
            if u != union:
                body = [f"(when {pr.formula(u)}"] + ["  " + x for x in body]
                body[-1] += ")"
            branches.append([head] + ["      " + x for x in body])
        if not branches:
            lines += notes + ["    :effect (and))"]
        elif len(branches) == 1 and not notes:
            lines += [branches[0][0], "    :effect", *branches[0][1:]]
            lines[-1] += ")"
        else:
            lines.append("    :effect (and")
            for br in branches:
                lines += br
            lines += notes
            lines.append("    ))")
    lines.append(")")
    problem = _problem_text(names, pr, init, goal, name, negative=True)
    return PPDDLExport("\n".join(lines) + "\n", problem, names, init, goal)


def _problem_text(
    names: PDDLNames,
    pr: _Printer,
    init: State,
    goal: Sequence[Literal],
    model_name: str,
    *,
    negative: bool,
    twins: frozenset[int] = frozenset(),
    suffix: str = "",
) -> str:
    vocab = pr.vocab
    facts = [pr.atom(i) for i in range(len(vocab)) if init >> i & 1]
    facts += [pr.twin(i) for i in sorted(twins) if not init >> i & 1]
    conj = []
    for lit in goal:
        i = vocab.index(lit.atom)
        if lit.positive:
            conj.append(pr.atom(i))
        else:
            conj.append(f"(not {pr.atom(i)})" if negative else pr.twin(i))
    lines = [
        f"; Problem for the capver export of capability model {json.dumps(model_name, ensure_ascii=False)}.",
        f"; Initial state: {vocab.format_state(init)}",
        f"; Goal: {' & '.join(('' if x.positive else '~') + str(x.atom) for x in goal) or '(none)'}",
        "",
        f"(define (problem {names.domain}-problem{suffix})",
        f"  (:domain {names.domain}{suffix})",
        "  (:objects)",
        "  (:init" + "".join(f"\n    {f}" for f in facts) + ")",
        f"  (:goal (and{''.join(' ' + x for x in conj)})))",
    ]
    return "\n".join(lines) + "\n"


# =====================================================================================
# Determinised export
# =====================================================================================


@dataclass(frozen=True, slots=True)
class DetAction:
    """One deterministic action: capability ``capability`` in region ``region`` of
    its state-space split (1-based), outcome ``effect`` (probability ``probability``
    there), applicable where ``cube`` holds."""

    name: str
    capability: str
    region: int
    effect: Effect
    probability: Fraction
    cube: Cube


@dataclass(frozen=True, slots=True)
class DeterminizedExport:
    """Domain and problem text of the all-outcomes determinisation; ``actions`` maps
    each PDDL action name to what it stands for, ``twins`` are the indices of the
    atoms that have a ``not-`` twin (none with negative preconditions kept) and
    ``twin_predicates`` maps a PDDL predicate to its twin's name."""

    domain: str
    problem: str
    names: PDDLNames
    actions: Mapping[str, DetAction]
    twins: frozenset[int]
    twin_predicates: Mapping[str, str]
    init: State
    goal: tuple[Literal, ...]

    def twin(self, a: Atom) -> Atom:
        """The PDDL atom ``not-a`` of a model atom that has a twin."""
        pa = self.names.atom(a)
        return Atom(self.twin_predicates[pa.predicate], pa.args)

    def write(
        self, directory: str | Path, domain_file: str = "domain_det.pddl", problem_file: str = "problem_det.pddl"
    ) -> tuple[Path, Path]:
        return _write_pair(directory, domain_file, self.domain, problem_file, self.problem)


def export_determinized(
    model: CompoundModel,
    *,
    init: State = 0,
    goal: Sequence[Literal] = (),
    name: str = "capver-model",
    negative_preconditions: bool = False,
) -> DeterminizedExport:
    """The all-outcomes determinisation of ``model`` as classical PDDL.  With
    ``negative_preconditions`` False (the default) negative literals are compiled
    into ``not-`` twin predicates (module docstring); with True they are kept and the
    domain requires ``:negative-preconditions``."""
    vocab = model.vocabulary
    goal = _check_problem(vocab, init, goal)
    names = PDDLNames.of(model, name)
    pr = _Printer(model, names)
    b = model.ctx.bdd
    alloc = _Allocator()
    alloc.used |= set(names.types.values()) | set(names.objects.values()) | set(names.predicates.values())
    alloc.used |= set(names.actions.values())

    per_capability: list[tuple[str, list[DetAction]]] = []
    negated = 0
    for c, cm in model.items():
        acts: list[DetAction] = []
        for k, (u, rules) in enumerate(cm.regions(), 1):
            cover = isop(b, u)
            for cube in cover:
                negated |= cube.mask & ~cube.value
            for j, (eta, p) in enumerate(sorted(rule_mixture(rules).items()), 1):
                for m, cube in enumerate(cover, 1):
                    base = f"{names.actions[c]}-r{k}-o{j}" + (f"-c{m}" if len(cover) > 1 else "")
                    acts.append(DetAction(alloc.take(base), c, k, eta, p, cube))
        per_capability.append((c, acts))
    for lit in goal:
        if not lit.positive:
            negated |= 1 << vocab.index(lit.atom)
    twins = frozenset() if negative_preconditions else frozenset(i for i in range(len(vocab)) if negated >> i & 1)
    twin_preds = sorted({vocab.atoms[i].predicate for i in twins}, key=list(vocab.predicates).index)
    pr.twin_names = {names.predicates[p]: alloc.take(COMPLEMENT_PREFIX + names.predicates[p]) for p in twin_preds}

    requirements = [":strips"] + ([":typing"] if len(vocab.types) > 1 else [])
    if negative_preconditions:
        requirements.append(":negative-preconditions")
    notes = _DET_NOTES + (" " + _COMPILED_NOTES if not negative_preconditions else "")
    lines = _header("Determinised PDDL domain", name, notes, names, vocab)
    width = max(map(len, pr.twin_names.values()), default=0)
    lines += [f";   twin       {t:<{width}}  =  not {p}" for p, t in pr.twin_names.items()]
    lines += ["", f"(define (domain {names.domain}-det)", f"  (:requirements {' '.join(requirements)})"]
    lines += pr.vocabulary_sections([(pr.twin_names[names.predicates[p]], p) for p in twin_preds])
    table: dict[str, DetAction] = {}
    for c, acts in per_capability:
        lines.append("")
        if not acts:
            lines.append(f"  ; capability {json.dumps(c, ensure_ascii=False)} has no rules: not exported")
            continue
        for a in acts:
            table[a.name] = a
            lines += [
                f"  ; {json.dumps(c, ensure_ascii=False)}, region {a.region}, outcome with probability {_fraction(a.probability)}",
                f"  (:action {a.name}",
                "    :parameters ()",
                f"    :precondition {_cube_text(pr, a.cube, twins, negative_preconditions)}",
                f"    :effect {pr.effect(a.effect, twins)})",
            ]
    lines.append(")")
    problem = _problem_text(names, pr, init, goal, name, negative=negative_preconditions, twins=twins, suffix="-det")
    return DeterminizedExport(
        "\n".join(lines) + "\n", problem, names, MappingProxyType(table), twins,
        MappingProxyType(dict(pr.twin_names)), init, goal,
    )


def _cube_text(pr: _Printer, cube: Cube, twins: frozenset[int], keep_negative: bool) -> str:
    parts = []
    for i in range(len(pr.vocab)):
        if cube.mask >> i & 1:
            if cube.value >> i & 1:
                parts.append(pr.atom(i))
            else:
                parts.append(f"(not {pr.atom(i)})" if keep_negative else pr.twin(i))
    return "(and" + "".join(" " + p for p in parts) + ")"


# =====================================================================================
# Planning with pyperplan and validating the plan under the model
# =====================================================================================


BLIND_SEARCHES = ("bfs", "ids")
HEURISTIC_SEARCHES = ("astar", "wastar", "gbf", "ehs")
"""pyperplan's searches usable here (its ``sat`` search needs an external SAT solver)."""


def check_search(search: str, heuristic: str | None) -> None:
    """Raise :class:`PlanningError` unless pyperplan can run ``search`` with
    ``heuristic`` (blind searches take none, the others need one)."""
    from pyperplan import planner

    if search not in BLIND_SEARCHES + HEURISTIC_SEARCHES:
        raise PlanningError(
            f"unknown pyperplan search {search!r}; expected one of {list(BLIND_SEARCHES + HEURISTIC_SEARCHES)}"
        )
    if heuristic is not None and heuristic not in planner.HEURISTICS:
        raise PlanningError(f"unknown pyperplan heuristic {heuristic!r}; expected one of {sorted(planner.HEURISTICS)}")
    if search in BLIND_SEARCHES and heuristic is not None:
        raise PlanningError(f"pyperplan search {search!r} takes no heuristic; expected one of {HEURISTIC_SEARCHES}")
    if search in HEURISTIC_SEARCHES and heuristic is None:
        raise PlanningError(f"pyperplan search {search!r} needs a heuristic, e.g. 'hff'")


def solve(
    domain_path: str | Path,
    problem_path: str | Path,
    *,
    search: str = "bfs",
    heuristic: str | None = None,
) -> list[str] | None:
    """Run pyperplan on classical PDDL files; the plan as action names, or None when
    the search finds none (the default breadth-first search is complete and finds a
    shortest plan).  ``search`` and ``heuristic`` are pyperplan's names (e.g.
    ``"gbf"`` with ``"hff"``)."""
    from pyperplan import planner

    check_search(search, heuristic)
    heur = None if heuristic is None else planner.HEURISTICS[heuristic]
    plan = planner.search_plan(str(domain_path), str(problem_path), planner.SEARCHES[search], heur)
    if plan is None:
        return None
    # pyperplan names a ground operator "(name args)"; the exported actions have no arguments
    return [op.name.strip("()").split()[0] for op in plan]


def solve_export(det: DeterminizedExport, *, search: str = "bfs", heuristic: str | None = None) -> list[str] | None:
    """:func:`solve` on a determinised export, through a temporary directory."""
    with tempfile.TemporaryDirectory(prefix="capver-det-") as tmp:
        d, p = det.write(tmp)
        return solve(d, p, search=search, heuristic=heuristic)


@dataclass(frozen=True, slots=True)
class PlanStep:
    """One plan step replayed on the model: ``probability`` = Pr_h(s′ | s, c) of the
    step's determinised outcome s′ = apply(s, η)."""

    action: str
    capability: str
    state: State
    next_state: State
    probability: Fraction


@dataclass(frozen=True, slots=True)
class PlanValidation:
    """A plan of the determinised export replayed with the model's Pr_h."""

    steps: tuple[PlanStep, ...]
    goal_reached: bool
    failure: str | None = None

    @property
    def valid(self) -> bool:
        """Every step has positive probability and the goal holds at the end."""
        return self.failure is None and self.goal_reached

    @property
    def probability(self) -> Fraction:
        """Probability that executing the capabilities yields exactly this outcome chain."""
        out = Fraction(1)
        for st in self.steps:
            out *= st.probability
        return out


def validate_plan(model: CompoundModel, det: DeterminizedExport, plan: Sequence[str]) -> PlanValidation:
    """Replay ``plan`` (action names of ``det``) from ``det.init`` with the model:
    each step's outcome must have Pr_h(s′ | s, c) > 0, and ``det.goal`` must hold at
    the end."""
    vocab = model.vocabulary
    s = det.init
    steps: list[PlanStep] = []
    for name in plan:
        a = det.actions.get(name)
        if a is None:
            return PlanValidation(tuple(steps), False, f"step {len(steps) + 1}: {name!r} is not an action of the export")
        s2 = a.effect.apply(s)
        p = model.prob(s, a.capability, s2)
        steps.append(PlanStep(name, a.capability, s, s2, p))
        if p == 0:
            return PlanValidation(
                tuple(steps),
                False,
                f"step {len(steps)}: capability {a.capability!r} cannot lead from {vocab.format_state(s)} "
                f"to {vocab.format_state(s2)} under the model",
            )
        s = s2
    return PlanValidation(tuple(steps), goal_holds(vocab, det.goal, s))


__all__ = [
    "DetAction",
    "DeterminizedExport",
    "PDDLNames",
    "PPDDLExport",
    "PlanStep",
    "PlanValidation",
    "check_search",
    "export_determinized",
    "export_ppddl",
    "goal_holds",
    "pddl_name",
    "solve",
    "solve_export",
    "validate_plan",
]

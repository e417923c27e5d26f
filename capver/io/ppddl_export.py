"""Export a compound capability model h† (paper, section 2, Definition "capability
model" and Pr_h) as files that PDDL and PPDDL tools read as written.

Three flavours, one translation of the model:

**PPDDL** (:func:`export_ppddl`).  Each capability c becomes one ground action.  Its
precondition is the union ⋁_r cond(r) of its rule conditions: where no rule matches,
Pr_h(·|s,c) = 0, i.e. the model makes no prediction, which in PDDL is "not
applicable".  Rules may overlap (in h∨ every untried state satisfies every optimistic
condition), so the state space is split on the BDDs into regions by the set R_s of
matching rules (:meth:`capver.model.capability_model.CapabilityModel.regions`), and the
effect is one ``(when REGION (probabilistic p1 e1 ... pk ek))`` per region with the
averaged distribution (1/|R_s|) Σ_r effects(r) (:func:`rule_mixture`).  Regions are
disjoint, so exactly one ``when`` fires in every state that satisfies the
precondition (a region where nothing can change gets no ``when``).  An atom both added
and deleted by a model effect ends up true (apply(s, η) = (s ∖ η⁻) ∪ η⁺); only
η⁻ ∖ η⁺ is written as deletions, so every tool's reading of such conflicts agrees.

**pddlgym** (:func:`export_pddlgym`).  pddlgym 0.0.7 reads neither ``when`` nor
disjunctive preconditions (it would treat ``(or ...)`` as a conjunction), and its
prover refuses an atom with a repeated argument in a precondition, so the conditional
effects are compiled away, atoms like ``(adjacent l1 l1)`` become nullary predicates,
and each action has pddlgym's action predicate (listed in an ``; (:actions ...)``
comment) in its precondition: one action per (capability, region, cube of the
region's irredundant cover), whose precondition is that cube and whose effect is the
region's distribution.  In every state the applicable actions of a capability all
belong to its one matching region, so each gives exactly Pr_h(·|s,c).

**Determinised PDDL** (:func:`export_determinized`, all-outcomes determinisation).
For each capability and each effect η that it has with positive probability in some
region, the union U_η of those regions gets one deterministic action per cube of its
irredundant cover, with effect η: equal effects of different regions are merged, and
outcomes that change nothing (η empty, or η already true under the cube) are dropped,
since no plan needs them.  Negative literals are compiled away for planners without
``:negative-preconditions`` (pyperplan): an atom a needed negatively gets a twin
predicate that is true in the initial state iff a is false and that every effect
adding (deleting) a deletes (adds), so the twin ⇔ ¬a in every reachable state.

**Probabilities** are decimals, because that is what PPDDL tools read (Loki, Mimir
and pddlgym refuse fractions).  A probability whose fraction terminates in base 10 is
written exactly; any other is rounded to enough digits (at least 6, and at least 3
significant ones) with the exact fraction in a ``;`` comment.  The written decimals of
one ``probabilistic`` sum to exactly 1 (largest-remainder rounding), so no tool adds
an implicit "nothing happens" outcome, and their order is chosen so that their sum in
binary floating point, added left to right as pddlgym does, is 1.0 as well (pddlgym
asserts that the sum is at most 1.0 and adds 1 − sum as a no-change outcome).
``exact_fractions=True`` writes ``1/3`` instead, for capver's own reader
(:mod:`capver.envs.ppddl`), which reads both forms exactly.

**Requirements** declare exactly what a file uses (``:strips`` always; ``:typing``,
``:negative-preconditions``, ``:disjunctive-preconditions``, ``:conditional-effects``,
``:probabilistic-effects`` only when something in the domain or the problem's goal
needs them): Loki's strict mode refuses undeclared and unused ones alike.

**Idle capabilities.**  A capability whose every rule has the empty effect can never
change the state, so no plan uses it; it is left out (the header says how many and
why).  ``keep_idle=True`` keeps it with an effect that changes nothing but is not the
bare ``(and)`` (plado crashes on that, and unified-planning writes such an action
without ``:effect``, which Fast Downward refuses): it re-asserts a literal that the
precondition implies.  Capabilities without rules have no prediction anywhere and are
never exported.

**Names** keep their spelling wherever PDDL allows (lower case, a letter first,
letters, digits, ``-`` and ``_``, not a keyword).  All names share one namespace
(unified-planning refuses a type and an object of the same name, pddlgym an action
named like a predicate), in which objects come first, then predicates, then
capabilities; a type that clashes with one of them becomes ``NAME-type``.  A capability that spells its intent becomes ``achieve-...``; a
negated ``not-`` atom loses the prefix instead of doubling it (``~not-flattire`` is
``achieve-flattire``) unless that name is another predicate.  Every changed name is
listed in a comment at the top of every file (:meth:`PDDLNames.renames`).
"""

from __future__ import annotations

import itertools
import json
import random
import re
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from types import MappingProxyType

from capver.errors import PlanningError, VocabularyError
from capver.io.dsl.conditions import condition_sexp
from capver.io.dsl.syntax import Sexp, flat, quote
from capver.io.names import IdentifierRule, NameAllocator, build_name_map
from capver.logic.bdd import Cube, Node, isop
from capver.logic.condition import Condition, ConditionKind, LogicContext
from capver.model.capability_model import CompoundModel, rule_mixture
from capver.model.properties import terminating_places
from capver.model.state import NO_EFFECT, Capability, Effect, State
from capver.model.vocabulary import ROOT_TYPE, Atom, Literal, Vocabulary

REQUIREMENT_ORDER = (
    ":strips",
    ":typing",
    ":negative-preconditions",
    ":disjunctive-preconditions",
    ":conditional-effects",
    ":probabilistic-effects",
)
PDDL_KEYWORDS = frozenset(
    {
        "and", "or", "not", "imply", "exists", "forall", "when", "probabilistic", "oneof",
        "define", "domain", "problem", "either", "object", "increase", "decrease", "assign",
        "scale-up", "scale-down", "minimize", "maximize", "number", "at", "over", "all",
    }
)
PDDL_RULE = IdentifierRule(
    unsafe=re.compile(r"[^a-z0-9_-]+"),
    separator="-",
    prefix="n-",
    empty="n",
    keywords=PDDL_KEYWORDS,
    keyword_suffix="-x",
    replacements=(("~", "-not-"),),
    lower=True,
)
"""PDDL identifiers: lower case (PDDL is case-insensitive), ``~`` read as ``not-``,
every run of other characters one ``-``, a letter first, no keyword."""

NEGATION_PREFIX = "not-"
MIN_DECIMALS = 6
"""Decimal places of a rounded probability (more when needed for 3 significant digits)."""


# =====================================================================================
# Names
# =====================================================================================


def pddl_name(text: str) -> str:
    """A PDDL-safe spelling of ``text`` (:data:`PDDL_RULE`).  Not injective —
    :class:`PDDLNames` resolves collisions."""
    return PDDL_RULE.spell(text)


def _negated(predicate: str, predicates: Iterable[str]) -> str:
    """The name of the negation of the PDDL predicate ``predicate``, without a doubled
    ``not-not-``: ``p`` gives ``not-p``; ``not-p`` gives ``p`` when no predicate is
    called ``p``, else ``not-p-false``."""
    if predicate.startswith(NEGATION_PREFIX):
        rest = predicate[len(NEGATION_PREFIX):]
        return rest if rest and rest not in set(predicates) else f"{predicate}-false"
    return NEGATION_PREFIX + predicate


def _capability_base(cap: Capability, predicates: Mapping[str, str], objects: Mapping[str, str]) -> str:
    # A name that spells its intent reads as the goal it pursues.
    if cap.intent and cap.name == Capability.for_intent(cap.intent).name:
        parts = []
        for lit in cap.intent:
            pred = predicates[lit.atom.predicate]
            head = pred if lit.positive else _negated(pred, predicates.values())
            parts.append("-".join([head, *(objects[x] for x in lit.atom.args)]))
        return "achieve-" + "-".join(parts)
    return pddl_name(cap.name)


@dataclass(frozen=True, slots=True)
class PDDLNames:
    """capver name → PDDL name, for every type, object, predicate and capability of a
    model (capabilities without rules too), all in one namespace (see :meth:`of`)."""

    domain: str
    types: Mapping[str, str]
    objects: Mapping[str, str]
    predicates: Mapping[str, str]
    actions: Mapping[str, str]
    taken: frozenset[str] = field(default=frozenset())
    """Every name in the predicate/action namespace, for names made later."""

    @staticmethod
    def of(model: CompoundModel, domain: str) -> PDDLNames:
        vocab = model.vocabulary
        # PDDL keeps types, objects, predicates and actions apart, but unified-planning
        # refuses one name for two of them and pddlgym an action named like a
        # predicate: one namespace, in which the names a user sees most (objects, then
        # predicates, then capabilities) keep their spelling, and a type that clashes
        # becomes NAME-type.
        shared = NameAllocator(PDDL_RULE, {ROOT_TYPE})
        objects = build_name_map(vocab.objects, shared)
        predicates = build_name_map(vocab.predicates, shared)
        actions = {c: shared.take(_capability_base(cm.capability, predicates, objects)) for c, cm in model.items()}
        types = {ROOT_TYPE: ROOT_TYPE}
        for t in vocab.types:
            if t != ROOT_TYPE:
                spelled = pddl_name(t)
                types[t] = shared.take(spelled if spelled not in shared.used else f"{spelled}-type")
        return PDDLNames(
            pddl_name(domain),
            MappingProxyType(types),
            MappingProxyType(objects),
            MappingProxyType(predicates),
            MappingProxyType(actions),
            frozenset(shared.used),
        )

    def atom(self, a: Atom) -> Atom:
        """The PDDL spelling of a model atom (an :class:`Atom` over PDDL names: the atom
        a PDDL tool, e.g. :class:`capver.envs.ppddl.PPDDLTask`, has for it)."""
        return Atom(self.predicates[a.predicate], tuple(self.objects[x] for x in a.args))

    def renames(self) -> list[tuple[str, str, str]]:
        """(kind, capver name, PDDL name) of every name the export had to change."""
        rows: list[tuple[str, str, str]] = []
        rows += [("type", t, n) for t, n in self.types.items() if t != n]
        rows += [("object", o, n) for o, n in self.objects.items() if o != n]
        rows += [("predicate", p, n) for p, n in self.predicates.items() if p != n]
        rows += [("capability", c, n) for c, n in self.actions.items() if c != n]
        return rows

    def table(self, extra: Sequence[tuple[str, str, str]] = ()) -> list[str]:
        """The renamed names as comment lines (``extra`` rows appended)."""
        rows = self.renames() + list(extra)
        if not rows:
            return ["; Names: every type, object, predicate and capability keeps its capver name."]
        width = max(len(json.dumps(k, ensure_ascii=False)) for _, k, _ in rows)
        lines = ["; Renamed (capver name -> PDDL name; every other name is kept as it is):"]
        for kind, k, n in rows:
            lines.append(f";   {kind:<10} {json.dumps(k, ensure_ascii=False):<{width}}  ->  {n}")
        return lines


# =====================================================================================
# Probabilities as decimals
# =====================================================================================


def _float_sum(texts: Sequence[str]) -> float:
    total = 0.0
    for t in texts:
        total += float(t)
    return total


def _decimal_text(units: int, places: int) -> str:
    if units == 10**places:
        return "1.0"
    digits = str(units).rjust(places, "0").rstrip("0")
    return "0." + (digits or "0")


@dataclass(frozen=True, slots=True)
class WrittenProbability:
    """One outcome's probability as written: ``text`` (a decimal, or a fraction in
    exact mode), the exact value ``exact``, and whether ``text`` equals it."""

    index: int
    text: str
    exact: Fraction
    is_exact: bool


def written_probabilities(probs: Sequence[Fraction], *, exact_fractions: bool = False) -> list[WrittenProbability]:
    """How the outcome probabilities ``probs`` (summing to 1) are written, in the
    order they are written (``index`` points into ``probs``): decimals that sum to
    exactly 1, and to 1.0 in floating point added left to right when any order
    allows it (module docstring)."""
    if sum(probs) != 1:
        raise ValueError(f"probabilities {probs} do not sum to 1")
    if exact_fractions:
        return [WrittenProbability(i, _fraction(p), p, True) for i, p in enumerate(probs)]
    exact = [terminating_places(p) for p in probs]
    places = max([MIN_DECIMALS, *(e for e in exact if e is not None)])
    for p, e in zip(probs, exact, strict=True):
        if e is None:
            # at least 3 significant digits: p ≥ 10^-k needs k + 2 places
            places = max(places, len(str(p.denominator // p.numerator)) + 2)
    scale = 10**places
    units = [int(p * scale) for p in probs]  # exact for terminating ones, floor otherwise
    short = scale - sum(units)
    rounded = sorted((i for i, e in enumerate(exact) if e is None), key=lambda i: (-(probs[i] * scale - units[i]), i))
    for i in rounded[:short]:
        units[i] += 1
    texts = [_decimal_text(u, places) for u in units]
    order = _float_order(texts)
    if _float_sum([texts[i] for i in order]) > 1.0:
        # no order adds up to at most 1.0 in floating point: move one unit between two
        # rounded entries (each stays within 2 units of its exact value) and retry
        for i, j in itertools.permutations(rounded, 2):
            if units[i] <= 1:
                continue
            trial = list(units)
            trial[i] -= 1
            trial[j] += 1
            cand = [_decimal_text(u, places) for u in trial]
            cand_order = _float_order(cand)
            if _float_sum([cand[k] for k in cand_order]) <= 1.0:
                texts, order = cand, cand_order
                break
    return [WrittenProbability(i, texts[i], probs[i], exact[i] is not None) for i in order]


def _float_order(texts: Sequence[str]) -> list[int]:
    """An order of ``texts`` whose left-to-right floating-point sum is exactly 1.0
    (else at most 1.0; else the given order)."""
    n = len(texts)
    candidates: Iterable[tuple[int, ...]]
    if n <= 6:
        candidates = itertools.permutations(range(n))
    else:
        by_size = sorted(range(n), key=lambda i: float(texts[i]))
        rng = random.Random(n)  # seeded: the same file every time
        shuffles = [tuple(rng.sample(range(n), n)) for _ in range(200)]
        candidates = [tuple(range(n)), tuple(by_size), tuple(reversed(by_size)), *shuffles]
    fallback: list[int] | None = None
    for order in candidates:
        total = _float_sum([texts[i] for i in order])
        if total == 1.0:
            return list(order)
        if total < 1.0 and fallback is None:
            fallback = list(order)
    return fallback if fallback is not None else list(range(n))


def _fraction(p: Fraction) -> str:
    return str(p.numerator) if p.denominator == 1 else f"{p.numerator}/{p.denominator}"


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
        self._dsl_atoms = {
            (quote(a.predicate), *(quote(x) for x in a.args)): i for i, a in enumerate(self.vocab.atoms)
        }
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


_PPDDL_NOTES = (
    "Each capability is one action. Its precondition is the union of its rules' conditions: where no "
    "rule matches, the model makes no prediction (Pr_h = 0), so the action is not applicable. The "
    "state space is split into disjoint regions by the set of rules that match there; each region has "
    "one (when REGION (probabilistic ...)) whose probabilities are the average of the matching "
    "rules' distributions (a region where nothing can change has no when). The action's outcome "
    "distribution in every state is therefore the model's Pr_h(. | s, c)."
)
_GYM_NOTES = (
    "pddlgym flavour (load with pddlgym.core.PDDLEnv(domain, problems_dir, dynamic_action_space=True)): "
    "conditional effects and disjunctions are compiled away. Each capability becomes one action per "
    "(region, cube of the region's irredundant cover); its precondition is pddlgym's action literal and "
    "that cube, and its effect the region's outcome distribution, so every applicable action of a "
    "capability gives Pr_h(. | s, c). The action predicates are listed in the actions comment "
    "below, where pddlgym reads them (it takes the first such list in the file). Actions are not operators_as_actions: pddlgym 0.0.7's action space "
    "for those writes the domain back as PDDL and cannot write probabilistic effects."
)
_DET_NOTES = (
    "All-outcomes determinisation: for each capability and each effect it has with positive probability "
    "somewhere, one deterministic action per cube of the irredundant cover of the states where it has; "
    "its precondition is that cube and its effect that outcome, so a plan here picks one possible outcome "
    "of each capability it uses. Outcomes that change nothing are left out: no plan needs them."
)
_COMPILED_NOTES = (
    "Negative preconditions are compiled away (pyperplan and other STRIPS planners support only "
    "positive ones): for an atom needed negatively, a twin predicate (listed below) holds exactly when "
    "the atom does not - it is set in the initial state for every such atom that is false, and every "
    "effect that adds (deletes) the atom deletes (adds) its twin."
)


def _probability_note(exact_fractions: bool) -> str:
    if exact_fractions:
        return ("Probabilities are exact fractions (capver's own PPDDL reader reads them; most other tools "
                "read only decimals) and those of each probabilistic effect sum to exactly 1.")
    return ("Probabilities are decimals: exact where the fraction terminates, otherwise rounded, with the "
            "exact fraction in a comment. Those of each probabilistic effect sum to exactly 1, so no "
            "implicit 'nothing happens' outcome applies ((and) is written for the empty effect).")


def _idle_note(idle: Sequence[str], kept: bool) -> str | None:
    if not idle:
        return None
    listed = ", ".join(json.dumps(c, ensure_ascii=False) for c in idle)
    if kept:
        return (f"{len(idle)} capabilities can never change the state (every rule's effect is empty): {listed}. "
                "They are kept (keep-idle) with an effect that re-asserts a literal their precondition implies.")
    return (f"{len(idle)} capabilities are left out because they can never change the state (every rule's "
            f"effect is empty), so no plan needs them: {listed}. Export with --keep-idle to keep them.")


def _norules_note(model: CompoundModel) -> str | None:
    empty = [c for c, cm in model.items() if not cm.rules]
    if not empty:
        return None
    listed = ", ".join(json.dumps(c, ensure_ascii=False) for c in empty)
    return f"{len(empty)} capabilities have no rules (no prediction anywhere) and are not exported: {listed}."


def _idle_capabilities(model: CompoundModel) -> list[str]:
    """Capabilities with rules, all of whose effects are empty: they never change the state."""
    return [c for c, cm in model.items() if cm.rules and all(eta == NO_EFFECT for r in cm.rules for _, eta in r.effects)]


@dataclass(frozen=True, slots=True)
class ExportStats:
    """What an export contains: ``actions`` written, capabilities left out because
    they never change the state (``idle``) and because they have no rules."""

    actions: int
    idle: tuple[str, ...]
    idle_kept: bool
    no_rules: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PPDDLExport:
    """Domain and problem text of a PPDDL export, with the names used."""

    domain: str
    problem: str
    names: PDDLNames
    init: State
    goal: tuple[Literal, ...]
    stats: ExportStats = ExportStats(0, (), False, ())

    def write(
        self, directory: str | Path, domain_file: str = "domain.pddl", problem_file: str = "problem.pddl"
    ) -> tuple[Path, Path]:
        return _write_pair(directory, domain_file, self.domain, problem_file, self.problem)


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


def export_ppddl(
    model: CompoundModel,
    *,
    init: State = 0,
    goal: Sequence[Literal] = (),
    name: str = "capver-model",
    exact_fractions: bool = False,
    keep_idle: bool = False,
) -> PPDDLExport:
    """The PPDDL domain and problem of ``model`` (see the module docstring); the
    problem starts in ``init`` and asks for the conjunction ``goal``."""
    goal = _check_problem(model.vocabulary, init, goal)
    names = PDDLNames.of(model, name)
    pr = _Printer(model, names)
    idle = _idle_capabilities(model)
    body: list[str] = []
    actions = 0
    for c, cm in model.items():
        regs = cm.regions()
        if not regs or (c in idle and not keep_idle):
            continue
        union = _union(model, regs)
        cap = json.dumps(c, ensure_ascii=False)
        body += ["", f"  ; capability {cap}: {len(cm.rules)} rule(s), {len(regs)} region(s)"]
        body += [f"  (:action {names.actions[c]}", "    :parameters ()", f"    :precondition {pr.formula(union)}"]
        actions += 1
        if c in idle:
            noop = pr.noop(union)
            if noop is None:  # the precondition implies no literal: re-assert one where it holds
                pr.used.add(":conditional-effects")
                noop = f"(when {pr.atom(0)} {pr.atom(0)})"
            body.append(f"    :effect {noop})")
            continue
        branches: list[list[str]] = []
        for k, (u, rules) in enumerate(regs, 1):
            dist = sorted(rule_mixture(rules).items())
            if dist == [(NO_EFFECT, 1)]:
                continue  # no when: nothing changes there
            lines = pr.distribution(dist, exact_fractions)
            if u != union:
                pr.used.add(":conditional-effects")
                lines = [f"(when {pr.formula(u)}"] + ["  " + x for x in lines] + [")"]
            branches.append([f"      ; region {k}: {len(rules)} matching rule(s)"] + ["      " + x for x in lines])
        if len(branches) == 1:
            body += [branches[0][0], "    :effect", *branches[0][1:], "    )"]
        else:
            body.append("    :effect (and")
            for br in branches:
                body += br
            body.append("    ))")
    _, goal_text = _goal(pr, goal, negative=True)
    notes = [_PPDDL_NOTES, _probability_note(exact_fractions)]
    notes += [n for n in (_idle_note(idle, keep_idle), _norules_note(model)) if n]
    lines = _header("PPDDL domain", name, notes, names.table())
    lines += ["", f"(define (domain {names.domain})", f"  {pr.requirements()}"]
    lines += pr.vocabulary_sections() + body + [")"]
    problem = _problem_text(names, pr, init, goal, name, goal_text)
    stats = ExportStats(actions, tuple(idle), keep_idle, tuple(c for c, cm in model.items() if not cm.rules))
    return PPDDLExport("\n".join(lines) + "\n", problem, names, init, goal, stats)


def _goal(pr: _Printer, goal: Sequence[Literal], *, negative: bool, twins: frozenset[int] = frozenset()) -> tuple[list[str], str]:
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


# =====================================================================================
# pddlgym flavour
# =====================================================================================


@dataclass(frozen=True, slots=True)
class GymAction:
    """One action of the pddlgym flavour: capability ``capability`` where ``cube``
    holds, inside region ``region`` (1-based) of its state-space split."""

    name: str
    capability: str
    region: int
    cube: Cube


@dataclass(frozen=True, slots=True)
class PDDLGymExport:
    """Domain and problem text of the pddlgym flavour; ``actions`` maps each PDDL
    action name to what it stands for."""

    domain: str
    problem: str
    names: PDDLNames
    actions: Mapping[str, GymAction]
    init: State
    goal: tuple[Literal, ...]
    stats: ExportStats
    renamed_atoms: Mapping[Atom, Atom]
    """Atoms with a repeated argument, written as nullary predicates (pddlgym's prover
    refuses ``(adjacent l1 l1)`` in a precondition)."""

    def atom(self, a: Atom) -> Atom:
        """The PDDL atom of the model atom ``a`` in this flavour."""
        return self.renamed_atoms.get(a) or self.names.atom(a)

    def write(
        self, directory: str | Path, domain_file: str = "domain.pddl", problem_file: str = "problems/problem.pddl"
    ) -> tuple[Path, Path]:
        """``domain.pddl`` and ``problems/problem.pddl``: pddlgym wants a folder of
        problems."""
        return _write_pair(directory, domain_file, self.domain, problem_file, self.problem)


def export_pddlgym(
    model: CompoundModel,
    *,
    init: State = 0,
    goal: Sequence[Literal] = (),
    name: str = "capver-model",
    keep_idle: bool = False,
) -> PDDLGymExport:
    """The pddlgym flavour of ``model`` (module docstring)."""
    goal = _check_problem(model.vocabulary, init, goal)
    names = PDDLNames.of(model, name)
    pr = _Printer(model, names)
    b = model.ctx.bdd
    alloc = NameAllocator(PDDL_RULE, names.taken)
    # pddlgym's prover binds every constant to itself up front and then checks only
    # nullary literals: a precondition (fire l1) would always hold.  So every atom is
    # a nullary predicate here (which also avoids its refusal of (adjacent l1 l1)).
    nullary = {i: (names.predicates[a.predicate] if not a.args else
                   alloc.take("-".join([names.predicates[a.predicate], *(names.objects[x] for x in a.args)])))
               for i, a in enumerate(model.vocabulary.atoms)}
    pr.rename_atoms(nullary)
    pr.used.discard(":typing")
    idle = _idle_capabilities(model)
    body: list[str] = []
    table: dict[str, GymAction] = {}
    for c, cm in model.items():
        regs = cm.regions()
        if not regs or (c in idle and not keep_idle):
            continue
        cap = json.dumps(c, ensure_ascii=False)
        body += ["", f"  ; capability {cap}: {len(cm.rules)} rule(s), {len(regs)} region(s)"]
        for k, (u, rules) in enumerate(regs, 1):
            dist = sorted(rule_mixture(rules).items())
            if dist == [(NO_EFFECT, 1)] and c not in idle:
                continue  # nothing changes in this region
            cover = isop(b, u)
            for m, cube in enumerate(cover, 1):
                base = names.actions[c] + (f"-r{k}" if len(regs) > 1 else "") + (f"-c{m}" if len(cover) > 1 else "")
                for q, sub in enumerate(pieces := _noop_pieces(cube, c in idle), 1):
                    n = alloc.take(base + (f"-{q}" if len(pieces) > 1 else ""))
                    lines = [_cube_noop(pr, sub)] if c in idle else pr.distribution(dist, False)
                    table[n] = GymAction(n, c, k, sub)
                    # pddlgym's action literal (n) is part of the precondition
                    body += _gym_action(n, f"(and ({n})" + pr.cube(sub)[len("(and"):], lines)
    _, goal_text = _goal(pr, goal, negative=True)
    notes = [_GYM_NOTES, _probability_note(False)]
    notes += [n for n in (_idle_note(idle, keep_idle), _norules_note(model)) if n]
    notes.append("Every atom is a nullary predicate here (listed below): pddlgym 0.0.7's prover checks only "
                 "nullary literals of a ground precondition, and refuses an atom with a repeated argument.")
    extra = [("atom", str(a), f"({nullary[i]})") for i, a in enumerate(model.vocabulary.atoms)
             if str(a) != nullary[i]]
    lines = _header("pddlgym PPDDL domain", name, notes, names.table(extra))
    # pddlgym reads its action predicates from this comment; other tools ignore it
    lines += [";", "; (:actions " + " ".join(table) + ")"]
    pr.nullary += list(table)
    lines += ["", f"(define (domain {names.domain})", f"  {pr.requirements()}"]
    lines += pr.vocabulary_sections(only_nullary=True) + body + [")"]
    problem = _problem_text(names, pr, init, goal, name, goal_text)
    stats = ExportStats(len(table), tuple(idle), keep_idle, tuple(c for c, cm in model.items() if not cm.rules))
    renamed = MappingProxyType({a: Atom(nullary[i], ()) for i, a in enumerate(model.vocabulary.atoms)})
    return PDDLGymExport("\n".join(lines) + "\n", problem, names, MappingProxyType(table), init, goal, stats, renamed)


def _gym_action(name: str, precondition: str, effect: Sequence[str]) -> list[str]:
    if effect[0] == "(probabilistic":
        # pddlgym steps only an effect that is a conjunction or a single literal
        effect = ["(and", *("  " + x for x in effect), ")"]
    return [f"  (:action {name}", "    :parameters ()", f"    :precondition {precondition}",
            "    :effect", *("      " + x for x in effect), "    )"]


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


# =====================================================================================
# Determinised export
# =====================================================================================


@dataclass(frozen=True, slots=True)
class DetAction:
    """One deterministic action: capability ``capability`` with outcome ``effect``,
    applicable in the states of the BDD ``where`` (the cube ``cube`` in the STRIPS
    style, None in the formula style); ``probability`` is the largest probability the
    outcome has there (Pr_h at a state gives the exact one)."""

    name: str
    capability: str
    effect: Effect
    probability: Fraction
    where: Node
    cube: Cube | None


@dataclass(frozen=True, slots=True)
class DeterminizedExport:
    """Domain and problem text of the all-outcomes determinisation; ``actions`` maps
    each PDDL action name to what it stands for, ``twins`` are the indices of the
    atoms that have a twin predicate (none with negative preconditions kept) and
    ``twin_predicates`` maps a PDDL predicate to its twin's name."""

    domain: str
    problem: str
    names: PDDLNames
    actions: Mapping[str, DetAction]
    twins: frozenset[int]
    twin_predicates: Mapping[str, str]
    init: State
    goal: tuple[Literal, ...]
    stats: ExportStats = ExportStats(0, (), False, ())

    def twin(self, a: Atom) -> Atom:
        """The PDDL atom of the twin of a model atom that has one."""
        pa = self.names.atom(a)
        return Atom(self.twin_predicates[pa.predicate], pa.args)

    def write(
        self, directory: str | Path, domain_file: str = "domain_det.pddl", problem_file: str = "problem_det.pddl"
    ) -> tuple[Path, Path]:
        return _write_pair(directory, domain_file, self.domain, problem_file, self.problem)


def _dnf(pr: _Printer, cover: Sequence[Cube]) -> str:
    """``(or CUBE ...)`` of a cover: a disjunctive normal form, which Fast Downward's
    translator takes as it is (a nested formula it multiplies out, which can take
    more memory than a machine has)."""
    if len(cover) == 1:
        return pr.cube(cover[0])
    pr.used.add(":disjunctive-preconditions")
    return "(or " + " ".join(pr.cube(c) for c in cover) + ")"


def _unchanged(eta: Effect) -> Cube:
    """The states that η leaves as they are: its additions true, its (effective)
    deletions false."""
    delete = eta.delete & ~eta.add
    return Cube(eta.add | delete, eta.add)


def export_determinized(
    model: CompoundModel,
    *,
    init: State = 0,
    goal: Sequence[Literal] = (),
    name: str = "capver-model",
    negative_preconditions: bool = False,
    keep_idle: bool = False,
    strips: bool = True,
) -> DeterminizedExport:
    """The all-outcomes determinisation of ``model`` as classical PDDL.

    ``strips`` True (the default): one action per cube, preconditions are
    conjunctions, as STRIPS planners (pyperplan) need; with ``negative_preconditions``
    False negative literals are compiled into twin predicates (module docstring), with
    True they are kept and the domain requires ``:negative-preconditions``.
    ``strips`` False: one action per (capability, outcome), whose precondition is the
    disjunction of the cubes (negative and disjunctive preconditions, which Fast
    Downward, unified-planning and Mimir read); several times smaller on learned h∨
    models."""
    negative_preconditions = negative_preconditions or not strips
    vocab = model.vocabulary
    goal = _check_problem(vocab, init, goal)
    names = PDDLNames.of(model, name)
    pr = _Printer(model, names)
    b = model.ctx.bdd
    alloc = NameAllocator(PDDL_RULE, names.taken)
    idle = _idle_capabilities(model)

    # (capability, effect, largest probability, where, cover) before naming
    planned: list[tuple[str, Effect, Fraction, Node, list[Cube]]] = []
    for c, cm in model.items():
        regs = cm.regions()
        if not regs:
            continue
        if c in idle:
            if keep_idle:
                union = _union(model, regs)
                planned.append((c, NO_EFFECT, Fraction(1), union, isop(b, union)))
            continue
        where: dict[Effect, Node] = {}
        best: dict[Effect, Fraction] = {}
        for u, rules in regs:
            for eta, p in rule_mixture(rules).items():
                if eta == NO_EFFECT:
                    continue
                where[eta] = b.disj(where.get(eta, b.false), u)
                best[eta] = max(best.get(eta, Fraction(0)), p)
        for eta in sorted(where):
            # merged over regions, and only where the outcome changes something
            changes = b.conj(where[eta], b.neg(b.cube(_unchanged(eta))))
            if changes != b.false:
                # the cubes may take in states where η changes nothing (a harmless self-loop)
                planned.append((c, eta, best[eta], changes, isop(b, changes, where[eta])))
    negated = 0
    for _, _, _, _, cover in (planned if strips else []):
        for cube in cover:
            negated |= cube.mask & ~cube.value
    for lit in goal:
        if not lit.positive:
            negated |= 1 << vocab.index(lit.atom)
    twins = frozenset() if negative_preconditions else frozenset(i for i in range(len(vocab)) if negated >> i & 1)
    twin_preds = sorted({vocab.atoms[i].predicate for i in twins}, key=list(vocab.predicates).index)
    for pred in twin_preds:
        pname = names.predicates[pred]
        wanted = _negated(pname, names.predicates.values())
        # a twin named like an existing predicate would be renamed with a number: say -false instead
        pr.twin_names[pname] = alloc.take(wanted if wanted not in alloc.used else f"{pname}-false")

    body: list[str] = []
    table: dict[str, DetAction] = {}
    counter: dict[str, int] = {}
    for c, eta, p, u, cover in planned:
        counter[c] = counter.get(c, 0) + 1
        j = counter[c]
        if j == 1:
            body += ["", f"  ; capability {json.dumps(c, ensure_ascii=False)}"]
        if not strips:
            n = alloc.take(f"{names.actions[c]}-o{j}")
            table[n] = DetAction(n, c, eta, p, u, None)
            if eta == NO_EFFECT:
                effect = pr.noop(u)
                if effect is None:
                    pr.used.add(":conditional-effects")
                    effect = f"(when {pr.atom(0)} {pr.atom(0)})"
            else:
                effect = pr.effect(eta)
            body += [
                f"  ; outcome {j}, probability up to {_fraction(p)}" if eta != NO_EFFECT else "  ; changes nothing (kept)",
                f"  (:action {n}",
                "    :parameters ()",
                f"    :precondition {_dnf(pr, cover)}",
                f"    :effect {effect})",
            ]
            continue
        for m, cube in enumerate(cover, 1):
            base = f"{names.actions[c]}-o{j}" + (f"-c{m}" if len(cover) > 1 else "")
            for q, sub in enumerate(pieces := _noop_pieces(cube, eta == NO_EFFECT), 1):
                n = alloc.take(base + (f"-{q}" if len(pieces) > 1 else ""))
                table[n] = DetAction(n, c, eta, p, b.cube(sub), sub)
                body += [
                    f"  ; outcome {j}, probability up to {_fraction(p)}" if eta != NO_EFFECT
                    else "  ; changes nothing (kept)",
                    f"  (:action {n}",
                    "    :parameters ()",
                    f"    :precondition {pr.cube(sub, twins)}",
                    f"    :effect {_cube_noop(pr, sub, twins) if eta == NO_EFFECT else pr.effect(eta, twins)})",
                ]
    _, goal_text = _goal(pr, goal, negative=negative_preconditions, twins=twins)
    notes = [_DET_NOTES] + ([_COMPILED_NOTES] if not negative_preconditions else [])
    notes += [n for n in (_idle_note(idle, keep_idle), _norules_note(model)) if n]
    twin_rows = [("twin", f"not {p}", t) for p, t in pr.twin_names.items()]
    lines = _header("Determinised PDDL domain", name, notes, names.table(twin_rows))
    lines += ["", f"(define (domain {names.domain}-det)", f"  {pr.requirements()}"]
    lines += pr.vocabulary_sections([(pr.twin_names[names.predicates[p]], p) for p in twin_preds]) + body + [")"]
    problem = _problem_text(names, pr, init, goal, name, goal_text, twins=twins, suffix="-det")
    stats = ExportStats(len(table), tuple(idle), keep_idle, tuple(c for c, cm in model.items() if not cm.rules))
    return DeterminizedExport(
        "\n".join(lines) + "\n", problem, names, MappingProxyType(table), twins,
        MappingProxyType(dict(pr.twin_names)), init, goal, stats,
    )


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
    "ExportStats",
    "GymAction",
    "PDDLGymExport",
    "PDDLNames",
    "PPDDLExport",
    "PlanStep",
    "PlanValidation",
    "check_search",
    "export_determinized",
    "export_pddlgym",
    "export_ppddl",
    "goal_holds",
    "pddl_name",
    "solve",
    "solve_export",
    "validate_plan",
    "written_probabilities",
]

"""The all-outcomes determinisation of a capability model as classical PDDL (the
**Determinised PDDL** paragraph of :mod:`capver.io.ppddl_export`): one deterministic
action per (capability, outcome η with Pr_h > 0 somewhere, cube), negative literals
compiled into twin predicates for STRIPS planners.  Solving and replaying its plans
is :mod:`capver.engines.classical_planning`."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from types import MappingProxyType

from capver.core.state import NO_EFFECT, Effect, State
from capver.core.vocabulary import Atom, Literal
from capver.identifiers import NameAllocator
from capver.io.ppddl_export.names import PDDL_RULE, PDDLNames, _negated
from capver.io.ppddl_export.printer import (
    NO_STATS,
    ExportStats,
    _check_problem,
    _cube_noop,
    _goal,
    _header,
    _idle_capabilities,
    _idle_note,
    _noop_pieces,
    _norules_note,
    _Printer,
    _problem_text,
    _union,
    _write_pair,
)
from capver.io.ppddl_export.probabilities import _fraction
from capver.logic.bdd import Cube, Node, isop
from capver.model.capability_model import CompoundModel, rule_mixture

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
    stats: ExportStats = NO_STATS

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
    for _, _, _, _, cover in planned if strips else []:
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
                f"  ; outcome {j}, probability up to {_fraction(p)}"
                if eta != NO_EFFECT
                else "  ; changes nothing (kept)",
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
                    f"  ; outcome {j}, probability up to {_fraction(p)}"
                    if eta != NO_EFFECT
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
        "\n".join(lines) + "\n",
        problem,
        names,
        MappingProxyType(table),
        twins,
        MappingProxyType(dict(pr.twin_names)),
        init,
        goal,
        stats,
    )

"""The pddlgym flavour of the export (the **pddlgym** paragraph of
:mod:`capver.io.ppddl_export`): conditional effects and disjunctions compiled away
into one action per (capability, region, cube), every atom a nullary predicate, so
that pddlgym 0.0.7 steps each capability with Pr_h(·|s,c) of paper section 2."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from capver.core.state import NO_EFFECT, State
from capver.core.vocabulary import Atom, Literal
from capver.identifiers import NameAllocator
from capver.io.ppddl_export.names import PDDL_RULE, PDDLNames
from capver.io.ppddl_export.printer import (
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
    _probability_note,
    _problem_text,
    _write_pair,
)
from capver.logic.bdd import Cube, isop
from capver.model.capability_model import CompoundModel, rule_mixture

_GYM_NOTES = (
    "pddlgym flavour (load with pddlgym.core.PDDLEnv(domain, problems_dir, dynamic_action_space=True)): "
    "conditional effects and disjunctions are compiled away. Each capability becomes one action per "
    "(region, cube of the region's irredundant cover); its precondition is pddlgym's action literal and "
    "that cube, and its effect the region's outcome distribution, so every applicable action of a "
    "capability gives Pr_h(. | s, c). The action predicates are listed in the actions comment "
    "below, where pddlgym reads them (it takes the first such list in the file). Actions are not operators_as_actions: pddlgym 0.0.7's action space "
    "for those writes the domain back as PDDL and cannot write probabilistic effects."
)


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
    nullary = {
        i: (
            names.predicates[a.predicate]
            if not a.args
            else alloc.take("-".join([names.predicates[a.predicate], *(names.objects[x] for x in a.args)]))
        )
        for i, a in enumerate(model.vocabulary.atoms)
    }
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
                    body += _gym_action(n, f"(and ({n})" + pr.cube(sub)[len("(and") :], lines)
    _, goal_text = _goal(pr, goal, negative=True)
    notes = [_GYM_NOTES, _probability_note(False)]
    notes += [n for n in (_idle_note(idle, keep_idle), _norules_note(model)) if n]
    notes.append(
        "Every atom is a nullary predicate here (listed below): pddlgym 0.0.7's prover checks only "
        "nullary literals of a ground precondition, and refuses an atom with a repeated argument."
    )
    extra = [("atom", str(a), f"({nullary[i]})") for i, a in enumerate(model.vocabulary.atoms) if str(a) != nullary[i]]
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
    return [
        f"  (:action {name}",
        "    :parameters ()",
        f"    :precondition {precondition}",
        "    :effect",
        *("      " + x for x in effect),
        "    )",
    ]

"""The PPDDL flavour of the export (the **PPDDL** paragraph of
:mod:`capver.io.ppddl_export`): one ground action per capability c, precondition
⋁_r cond(r), one ``(when REGION (probabilistic ...))`` per region of matching rules
with the averaged distribution, so that every state gets Pr_h(·|s,c) of paper
section 2."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from capver.core.state import NO_EFFECT, State
from capver.core.vocabulary import Literal
from capver.io.ppddl_export.names import PDDLNames
from capver.io.ppddl_export.printer import (
    NO_STATS,
    ExportStats,
    _check_problem,
    _goal,
    _header,
    _idle_capabilities,
    _idle_note,
    _norules_note,
    _Printer,
    _probability_note,
    _problem_text,
    _union,
    _write_pair,
)
from capver.model.capability_model import CompoundModel, rule_mixture

_PPDDL_NOTES = (
    "Each capability is one action. Its precondition is the union of its rules' conditions: where no "
    "rule matches, the model makes no prediction (Pr_h = 0), so the action is not applicable. The "
    "state space is split into disjoint regions by the set of rules that match there; each region has "
    "one (when REGION (probabilistic ...)) whose probabilities are the average of the matching "
    "rules' distributions (a region where nothing can change has no when). The action's outcome "
    "distribution in every state is therefore the model's Pr_h(. | s, c)."
)


@dataclass(frozen=True, slots=True)
class PPDDLExport:
    """Domain and problem text of a PPDDL export, with the names used."""

    domain: str
    problem: str
    names: PDDLNames
    init: State
    goal: tuple[Literal, ...]
    stats: ExportStats = NO_STATS

    def write(
        self, directory: str | Path, domain_file: str = "domain.pddl", problem_file: str = "problem.pddl"
    ) -> tuple[Path, Path]:
        return _write_pair(directory, domain_file, self.domain, problem_file, self.problem)


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

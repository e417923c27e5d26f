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

The package, one part a module: :mod:`~capver.io.ppddl_export.names`,
:mod:`~capver.io.ppddl_export.probabilities`, :mod:`~capver.io.ppddl_export.printer`
(what the flavours share), :mod:`~capver.io.ppddl_export.ppddl`,
:mod:`~capver.io.ppddl_export.pddlgym_flavour` and
:mod:`~capver.io.ppddl_export.determinised`.  Solving the determinised files with
pyperplan and replaying a plan under the model are not file I/O: they live in
:mod:`capver.engines.classical_planning` and are re-exported here.
"""

from __future__ import annotations

from capver.engines.classical_planning import (
    PlanStep,
    PlanValidation,
    check_search,
    goal_holds,
    solve,
    solve_export,
    validate_plan,
)
from capver.io.ppddl_export.determinised import DetAction, DeterminizedExport, export_determinized
from capver.io.ppddl_export.names import PDDLNames, pddl_name
from capver.io.ppddl_export.pddlgym_flavour import GymAction, PDDLGymExport, export_pddlgym
from capver.io.ppddl_export.ppddl import PPDDLExport, export_ppddl
from capver.io.ppddl_export.printer import ExportStats
from capver.io.ppddl_export.probabilities import written_probabilities

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

"""PDDL names of a capability model's types, objects, predicates and capabilities for
the PDDL/PPDDL export (the **Names** paragraph of :mod:`capver.io.ppddl_export`): one
namespace, capver's spelling kept wherever PDDL allows, every change listed."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from capver.core.state import Capability
from capver.core.vocabulary import ROOT_TYPE, Atom
from capver.identifiers import IdentifierRule, NameAllocator, build_name_map
from capver.model.capability_model import CompoundModel

PDDL_KEYWORDS = frozenset(
    {
        "and",
        "or",
        "not",
        "imply",
        "exists",
        "forall",
        "when",
        "probabilistic",
        "oneof",
        "define",
        "domain",
        "problem",
        "either",
        "object",
        "increase",
        "decrease",
        "assign",
        "scale-up",
        "scale-down",
        "minimize",
        "maximize",
        "number",
        "at",
        "over",
        "all",
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


def pddl_name(text: str) -> str:
    """A PDDL-safe spelling of ``text`` (:data:`PDDL_RULE`).  Not injective —
    :class:`PDDLNames` resolves collisions."""
    return PDDL_RULE.spell(text)


def _negated(predicate: str, predicates: Iterable[str]) -> str:
    """The name of the negation of the PDDL predicate ``predicate``, without a doubled
    ``not-not-``: ``p`` gives ``not-p``; ``not-p`` gives ``p`` when no predicate is
    called ``p``, else ``not-p-false``."""
    if predicate.startswith(NEGATION_PREFIX):
        rest = predicate[len(NEGATION_PREFIX) :]
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

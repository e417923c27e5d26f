"""The shared form in which the capability-model writer prints a learned model's
lattice conditions (h∧'s pcond(S) and h∨'s ocond(S), paper section 3.1): each
capability's tried states once, as a ``(:derived (tried-NAME) ...)`` formula, and
each rule by how its block differs from them (see the comment below)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from capver.core.state import State
from capver.io.dsl.conditions import _LiteralTexts
from capver.io.dsl.layout import _comment, _layout
from capver.io.dsl.syntax import KEYWORDS, WIDTH, Sexp, flat, quote
from capver.io.explain import plural
from capver.logic.bdd import Cube, isop_of_interval, isop_of_states
from capver.logic.condition import ConditionKind
from capver.model.capability_model import CapabilityModel, CompoundModel, SuccessCase, intent_success

# -- the shared form of lattice models ---------------------------------------------------------
#
# Every rule of a learned capability has a condition over the same set of tried states
# U = Φ_c: h∧'s pcond(S) = S and h∨'s ocond(S) = ¬(U ∖ S).  Printed one by one, each
# h∨ condition repeats U's states in its cover, which made a 30-atom Blocksworld h∨
# several megabytes and most of a run's writing time (the covers of complements of
# state sets).  Here U is printed once per capability, as a derived formula
# ``(:derived (tried-NAME) ...)``, and every rule says how its block differs from the
# other tried states by the ISOP cover f of the interval [S, ¬(U ∖ S)]:
#
#     pcond(S) = (and (tried-NAME) f)        ocond(S) = (or (not (tried-NAME)) f)
#
# both exact (S ⊆ f ⊆ S ∪ ¬U).  The tried sets of different capabilities are mostly the
# same few reachable states, so a tried set is written as the list of its states by name
# ``(sK)`` (each defined once, true atoms first) when that is shorter than its cover.


@dataclass(frozen=True, slots=True)
class _SharedRules:
    """How the rules of one capability are printed in the shared form: the text of its
    tried set (a ``(tried-NAME)`` reference, or the set itself when one rule uses it),
    and each rule's f."""

    tried: frozenset[int]
    reference: Sexp
    definition: str | None  # the derived formula's name when the set is named
    body: Sexp
    fs: tuple[tuple[Cube, ...], ...]
    optimistic: bool


class _SharedForm:
    """The shared printing of a model's lattice conditions; capabilities whose rules
    are not all lattice conditions of one kind over one tried set keep the per-rule
    printing."""

    def __init__(self, model: CompoundModel) -> None:
        vocab = model.vocabulary
        self.texts = _LiteralTexts.of(vocab)
        self.n = len(vocab)
        self.taken = set(KEYWORDS) | set(vocab.predicates)
        self.state_prefix = self._state_prefix()
        self.state_names: dict[int, str] = {}
        self.caps: dict[str, _SharedRules] = {}
        for name, cm in model.items():
            plan = self._plan(cm)
            if plan is not None:
                self.caps[name] = plan

    def _state_prefix(self) -> str:
        prefix = "s"
        while any(re.fullmatch(re.escape(prefix) + r"[0-9]+", t) for t in self.taken):
            prefix += "s"
        return prefix

    def _fresh(self, base: str) -> str:
        name, k = base, 1
        while name in self.taken:
            k += 1
            name = f"{base}-{k}"
        self.taken.add(name)
        return name

    def _state_name(self, s: State) -> str:
        name = self.state_names.get(s)
        if name is None:
            name = self.state_names[s] = self._fresh(f"{self.state_prefix}{len(self.state_names) + 1}")
        return name

    def _plan(self, cm: CapabilityModel) -> _SharedRules | None:
        conds = [r.condition for r in cm.rules]
        kinds = {c.kind for c in conds}
        if len(kinds) != 1 or ConditionKind.FORMULA in kinds:
            return None
        optimistic = ConditionKind.OPTIMISTIC in kinds
        if optimistic:
            universes = {c.universe for c in conds}
            if len(universes) != 1:
                return None
            (tried,) = universes
        else:
            tried = frozenset().union(*(c.states for c in conds))
        fs: list[tuple[Cube, ...]] = []
        uses = 0
        for c in conds:
            others = tried - c.states
            f = tuple(isop_of_interval(self.n, c.states, others)) if others else (Cube(0, 0),)
            fs.append(f)
            everywhere = len(f) == 1 and f[0].mask == 0
            # pcond needs U unless f is false; ocond needs it unless f is true.
            uses += (not everywhere) if optimistic else bool(f)
        # Computed only when used: it may name states, and every named state is defined.
        body = self._set_sexp(tried) if uses else "false"
        definition = None
        reference = body
        if uses > 1:
            slug = _SLUG.sub("-", cm.capability.name.replace("~", "not-")).strip("-")
            definition = self._fresh(f"tried-{slug or 'capability'}")
            reference = f"({quote(definition)})"
        return _SharedRules(tried, reference, definition, body, tuple(fs), optimistic)

    def _set_sexp(self, states: frozenset[int]) -> Sexp:
        """The shorter text of a set of states: its ISOP cover, or its states by name."""
        if len(states) > 1 and _isolated(states, self.n):
            # No two states are neighbours, so the cover is their minterms: names win.
            return ["or", *(f"({self._state_name(s)})" for s in sorted(states))]
        cover = isop_of_states(self.n, states)
        if len(cover) > 1:
            names = len(self.state_names) + len(states)  # an upper bound on every index
            by_name = len("(or )") + len(states) * (len(self.state_prefix) + len(str(names)) + 3)
            if by_name < self.texts.cover_length(cover, stop=by_name):
                return ["or", *(f"({self._state_name(s)})" for s in sorted(states))]
        return self._cover_sexp(cover)

    def _cover_sexp(self, cover: Sequence[Cube]) -> Sexp:
        if not cover:
            return "false"
        if len(cover) == 1 and cover[0].mask == 0:
            return "true"
        cubes = [self._cube_sexp(c) for c in cover]
        return cubes[0] if len(cubes) == 1 else ["or", *cubes]

    def _cube_sexp(self, c: Cube) -> Sexp:
        lits = self.texts.literals(c)
        return lits[0] if len(lits) == 1 else ["and", *lits]

    def condition(self, plan: _SharedRules, k: int) -> Sexp:
        """Rule k's condition: (and U f) for h∧, (or (not U) f) for h∨."""
        f = plan.fs[k]
        if not f:
            return ["not", plan.reference] if plan.optimistic else "false"
        if len(f) == 1 and f[0].mask == 0:
            return "true" if plan.optimistic else plan.reference
        if plan.optimistic:
            return ["or", ["not", plan.reference], *(self._cube_sexp(c) for c in f)]
        parts = self.texts.literals(f[0]) if len(f) == 1 else [self._cover_sexp(f)]
        return ["and", plan.reference, *parts]

    def summary_lines(self, model: CompoundModel) -> list[str]:
        """Comments for the top of the file: how to read named formulas, and one line
        per capability (its rules, tried states and how often its rules achieve the
        intent), so that the file can be skimmed before its conditions are read."""
        lines = [";"]
        if self.state_names or any(p.definition for p in self.caps.values()):
            lines += _comment(
                "(:derived (NAME) F) names the condition F, and (NAME) in a later condition stands for it: "
                f"({self.state_prefix}K) is one observed state, (tried-C) the states where capability C was tried.",
                "",
            )
            lines.append(";")
        n_rules = sum(len(m.rules) for m in model.values())
        caps = "capability" if len(model) == 1 else "capabilities"
        lines += _comment(
            f"Summary: {len(model)} {caps}, {plural(n_rules, 'rule')}"
            + (f", {plural(len(self.state_names), 'named observed state')}" if self.state_names else "")
            + ". Per capability: its rules, the states where it was tried, and how many of its rules "
            "always, sometimes and never achieve its intent.",
            "",
        )
        names = [quote(cm.capability.name) for cm in model.values()]
        width = max(len("capability"), *map(len, names))
        lines.append(f";   {'capability':<{width}}  rules  tried  always  sometimes  never")
        for name, cm in zip(names, model.values(), strict=True):
            plan = self.caps.get(cm.capability.name)
            tried = "—" if plan is None else str(len(plan.tried))
            tally = _success_tally(cm)
            counts = "      —          —      —" if tally is None else "{:>6}  {:>9}  {:>5}".format(*tally)
            lines.append(f";   {name:<{width}}  {len(cm.rules):>5}  {tried:>5}  {counts}")
        return lines

    def state_lines(self) -> list[str]:
        """The definitions of the states named in tried sets, true atoms first."""
        if not self.state_names:
            return []
        ind = "  "
        lines = [""]
        lines += _comment(
            f"The {plural(len(self.state_names), 'observed state')} that the sets of tried states below "
            f"list by name: ({self.state_prefix}K) holds in exactly that state, its true atoms listed first.",
            ind,
        )
        pos, neg = self.texts.pos, self.texts.neg
        for s, name in self.state_names.items():
            lits = [pos[i] for i in range(self.n) if s >> i & 1] + [neg[i] for i in range(self.n) if not s >> i & 1]
            lines += _derived_lines(name, lits[0] if len(lits) == 1 else ["and", *lits], ind)
        return lines

    def tried_lines(self, cm: CapabilityModel) -> list[str]:
        """The definition of the capability's tried set, when it has one."""
        plan = self.caps.get(cm.capability.name)
        if plan is None or plan.definition is None:
            return []
        ind = "  "
        how = (
            "a rule below applies in every state outside this set, and in the states of it that the rest of "
            "its condition picks out"
            if plan.optimistic
            else "a rule below applies in the states of this set that the rest of its condition picks out"
        )
        lines = _comment(
            f"({plan.definition}): the {plural(len(plan.tried), 'state')} where capability "
            f"{quote(cm.capability.name)} was tried; {how}.",
            ind,
        )
        return lines + _derived_lines(plan.definition, plan.body, ind)


_SLUG = re.compile(r"[^A-Za-z0-9_\-]+")


def _success_tally(cm: CapabilityModel) -> tuple[int, int, int] | None:
    """How many rules always, sometimes and never achieve the capability's intent
    (None for a capability without an intent)."""
    if not cm.capability.intent:
        return None
    always = sometimes = never = 0
    for r in cm.rules:
        s = intent_success(cm.capability, r)
        if s.case is SuccessCase.RANGE and s.low is not None and s.high is not None:
            if s.low == 1:
                always += 1
            elif s.high == 0:
                never += 1
            else:
                sometimes += 1
    return always, sometimes, never


def _isolated(states: frozenset[int], n: int) -> bool:
    """Whether no two of the states differ in exactly one atom."""
    bits = [1 << i for i in range(n)]
    return not any(s ^ b in states for s in states for b in bits)


def _derived_lines(name: str, body: Sexp, indent: str) -> list[str]:
    """``(:derived (NAME) BODY)``, on one line when it fits, else BODY below."""
    head = f"{indent}(:derived ({quote(name)})"
    one = f"{head} {flat(body)})"
    if len(one) <= WIDTH:
        return [one]
    inner = indent + "  "
    sub = _layout(body, len(inner), fill_or=True)
    return [head, inner + sub[0], *sub[1:-1], sub[-1] + ")"] if len(sub) > 1 else [head, inner + sub[0] + ")"]

"""Export a compound capability model h† (paper, section 2, Definition "capability
model" and Pr_h) as a PRISM MDP, the input language of the probabilistic model
checkers PRISM and Storm, and check quantitative queries on it with Storm.

**Translation.**  The state space is the model's: one Boolean variable per atom of
the vocabulary, initialised from the given initial state.  Every capability c is an
action label; as in :mod:`capver.io.ppddl_export`, its rules are split on the BDDs
into regions sharing one set R_s of matching rules
(:meth:`capver.model.capability_model.CapabilityModel.regions`), and each region
becomes one command

    [c] REGION -> p1 : η1 + … + pk : ηk;

whose guard is the region's irredundant cube cover (:func:`capver.logic.bdd.isop`)
and whose updates are the region's distribution over effects
(:func:`capver.model.capability_model.rule_mixture`), one update per distinct
effect, with exact rational probabilities written as fractions (``1/3``; PRISM and
Storm read them as rationals, so Storm's exact engine sees exactly Pr_h).  Regions
are disjoint, so in every state at most one command per capability is enabled and
the MDP's choices in s are exactly the capabilities the model enables in s, each
with distribution Pr_h(·|s,c).  Regions where no rule matches produce no command:
there the capability is not enabled (the model makes no prediction).  An atom both
added and deleted by an effect ends up true (apply(s, η) = (s ∖ η⁻) ∪ η⁺), so only
η⁻ ∖ η⁺ is written as ``false`` updates.

**Deadlocks.**  A state where no capability is enabled has no command.  Storm (like
PRISM) fixes such deadlocks by default when building: it adds a self-loop and the
label ``"deadlock"`` (stormpy 2.0's ``BuilderOptions`` has no switch for it; it is
Storm's global ``--build:nofixdl`` setting, which stormpy leaves off).  So no
command is needed and none is written; a state without capabilities is then
absorbing, which is also what capver's explicit engine
(:mod:`capver.engines.verification.explicit`) assumes.  For tools run with deadlock
fixing off, ``deadlock_loop=True`` adds the unlabelled ``[] NONE_ENABLED -> true;``
(it earns no ``"executions"`` reward, as Storm's own self-loop).

**Rewards.**  The reward structure ``"executions"`` gives 1 to every command of a
capability, so ``R{"executions"}min=? [F φ]`` is the least expected number of
capability executions until φ holds (Rmin/Rmax).  It also gives every state 0, which
changes nothing but keeps the structure non-empty where only deadlocks are
reachable (Storm refuses to check a reward structure without any reward).

**Names.**  Variables, action labels and the module get PRISM identifiers (a letter
first, then letters, digits and ``_``, no keyword of PRISM or Storm): ``fire(l1)``
becomes ``fire_l1`` and the capability ``on(a,b)&~clear(a)`` becomes
``on_a_b_and_not_clear_a``; clashes get ``_2``, ``_3``, ….  Every atom also has a
``label "NAME"`` with its variable's name, so properties can say ``"fire_l1"``.
:class:`PrismNames` keeps both maps, and the file starts with them as comments.

**Storm.**  The Storm engine (:mod:`capver.engines.verification.storm`) takes PRISM
text and knows no capability models; this module's ``storm_*`` functions export a
model and call it.  The identifier rules are shared with the PPDDL export
(:mod:`capver.identifiers`, at the bottom layer so that both can import it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from types import MappingProxyType

from capver.core.state import Effect, State
from capver.core.vocabulary import Literal, Vocabulary
from capver.engines.verification import storm
from capver.errors import VocabularyError
from capver.identifiers import IdentifierRule, NameAllocator, build_name_map
from capver.logic.bdd import BDDBackend, Cube, Node, isop
from capver.model.capability_model import CompoundModel, rule_mixture

EXECUTIONS_REWARD = "executions"
"""Name of the reward structure giving 1 per capability execution."""

PRISM_KEYWORDS = frozenset(
    {
        # PRISM's reserved words (its manual) ...
        "A",
        "bool",
        "clock",
        "const",
        "ctmc",
        "C",
        "double",
        "dtmc",
        "E",
        "endinit",
        "endinvariant",
        "endmodule",
        "endobservables",
        "endplayer",
        "endrewards",
        "endsystem",
        "false",
        "formula",
        "filter",
        "func",
        "F",
        "global",
        "G",
        "init",
        "invariant",
        "I",
        "int",
        "label",
        "max",
        "mdp",
        "min",
        "module",
        "X",
        "nondeterministic",
        "observable",
        "observables",
        "of",
        "Pmax",
        "Pmin",
        "P",
        "player",
        "pomdp",
        "popta",
        "probabilistic",
        "prob",
        "pta",
        "rate",
        "rewards",
        "Rmax",
        "Rmin",
        "R",
        "S",
        "smg",
        "stochastic",
        "system",
        "true",
        "U",
        "W",
        # ... the further words Storm 1.x (stormpy 2.0) rejects as identifiers (tried one by one) ...
        "ceil",
        "ctmdp",
        "floor",
        "ma",
        # ... and the labels Storm adds itself.
        "deadlock",
        "overlap_guards",
        "out_of_bounds",
    }
)
PRISM_RULE = IdentifierRule(
    unsafe=re.compile(r"[^A-Za-z0-9_]+"),
    separator="_",
    prefix="x_",
    empty="x",
    keywords=PRISM_KEYWORDS,
    keyword_suffix="_",
    replacements=(("~", "_not_"), ("&", "_and_")),
)
"""PRISM identifiers: ``~`` read as ``not``, ``&`` as ``and``, every other run of
unsafe characters one ``_``, a letter first, no keyword."""


def prism_identifier(text: str) -> str:
    """A PRISM-safe spelling of ``text`` (:data:`PRISM_RULE`).  Not injective —
    :class:`PrismNames` resolves clashes."""
    return PRISM_RULE.spell(text)


@dataclass(frozen=True, slots=True)
class PrismNames:
    """capver name → PRISM identifier.  ``variables[i]`` is the variable (and label
    name) of atom i; ``atoms`` maps the atom's text (``str(atom)``) to the same
    identifier; ``actions`` maps every capability (those without rules too) to its
    action label."""

    module: str
    variables: tuple[str, ...]
    atoms: Mapping[str, str]
    actions: Mapping[str, str]

    @staticmethod
    def of(model: CompoundModel, module: str = "capver") -> PrismNames:
        # One namespace for variables, actions and the module, so no tool can confuse them.
        alloc = NameAllocator(PRISM_RULE)
        variables = tuple(build_name_map((str(a) for a in model.vocabulary.atoms), alloc).values())
        actions = build_name_map(model, alloc)
        return PrismNames(
            alloc.take(prism_identifier(module)),
            variables,
            MappingProxyType({str(a): v for a, v in zip(model.vocabulary.atoms, variables, strict=True)}),
            MappingProxyType(actions),
        )

    def table(self) -> list[str]:
        """The maps as PRISM comment lines."""
        rows = [("atom", a, v) for a, v in self.atoms.items()] + [("capability", c, n) for c, n in self.actions.items()]
        width = max((len(json.dumps(k, ensure_ascii=False)) for _, k, _ in rows), default=0)
        lines = ["// Names (capver name -> PRISM identifier; every atom is also a label of that name):"]
        lines += [f"//   {kind:<10} {json.dumps(k, ensure_ascii=False):<{width}}  ->  {n}" for kind, k, n in rows]
        return lines


def _fraction(p: Fraction) -> str:
    return str(p.numerator) if p.denominator == 1 else f"{p.numerator}/{p.denominator}"


@dataclass(frozen=True, slots=True)
class PrismExport:
    """The PRISM text of a model, the names used and the initial state."""

    text: str
    names: PrismNames
    vocabulary: Vocabulary
    bdd: BDDBackend = field(repr=False, compare=False)
    init: State = 0
    reward: str = EXECUTIONS_REWARD

    # Properties name the atoms by their labels, not their variables: Storm turns a
    # property's state formula into labels of the built model, and a model built once
    # for many properties (storm.build without properties) knows only the declared
    # labels — a variable in a property then fails with "unknown label".

    @property
    def labels(self) -> tuple[str, ...]:
        """``"v"`` for each atom's variable v: the atoms in a property."""
        return tuple(f'"{v}"' for v in self.names.variables)

    def cube(self, c: Cube) -> str:
        """A conjunction of literals as a PRISM property expression (over labels)."""
        return cube_expression(self.labels, c)

    def formula(self, node: Node) -> str:
        """A BDD over the model's atoms (a node of ``model.ctx.bdd``) as a PRISM
        property expression (over labels): its irredundant cube cover."""
        return cover_expression(self.labels, isop(self.bdd, node))

    def literals(self, goal: Sequence[Literal]) -> str:
        """The conjunction of ``goal`` as a PRISM property expression (``true`` when
        empty)."""
        pos, neg = self.vocabulary.literals(goal)
        return self.cube(Cube(pos | neg, pos))

    def write(self, path: str | Path) -> Path:
        p = Path(path)
        p.write_text(self.text, encoding="utf-8")
        return p


def cube_expression(variables: Sequence[str], c: Cube) -> str:
    """``v1 & !v3`` for the cube (``variables[i]`` spells atom i: a variable in a
    guard, a quoted label in a property); ``true`` for the empty cube."""
    parts = []
    for i, v in enumerate(variables):
        if c.mask >> i & 1:
            parts.append(v if c.value >> i & 1 else f"!{v}")
    return " & ".join(parts) if parts else "true"


def cover_expression(variables: Sequence[str], cover: Sequence[Cube]) -> str:
    """A disjunction of cubes as a PRISM expression; ``false`` for no cube."""
    if not cover:
        return "false"
    if len(cover) == 1:
        return cube_expression(variables, cover[0])
    return " | ".join(f"({cube_expression(variables, c)})" for c in cover)


def _update(variables: Sequence[str], eta: Effect) -> str:
    # Deletions are η⁻ ∖ η⁺: apply lets an add win over a delete of the same atom.
    delete = eta.delete & ~eta.add
    parts = []
    for i, v in enumerate(variables):
        if eta.add >> i & 1:
            parts.append(f"({v}'=true)")
        elif delete >> i & 1:
            parts.append(f"({v}'=false)")
    return " & ".join(parts) if parts else "true"


def export_prism(
    model: CompoundModel,
    init: State = 0,
    *,
    name: str = "capver-model",
    deadlock_loop: bool = False,
) -> PrismExport:
    """The PRISM MDP of ``model`` started in ``init`` (see the module docstring).
    ``deadlock_loop`` adds an unlabelled self-loop where no capability is enabled,
    for tools that do not fix deadlocks themselves (Storm and PRISM do)."""
    vocab = model.vocabulary
    if init < 0 or init & ~vocab.full_mask:
        raise VocabularyError(f"initial state {init!r} is not a bitset over the {len(vocab)} atoms of the model")
    names = PrismNames.of(model)
    var = names.variables
    b = model.ctx.bdd
    lines = [
        f"// PRISM MDP of capability model {json.dumps(name, ensure_ascii=False)}, written by capver.",
        "// One Boolean variable per atom; one command per capability and region of its state space",
        "// (the states sharing one set of matching rules), with the region's exact distribution over",
        "// effects. Where no rule matches, the capability has no command: it is not enabled there.",
        f"// Initial state: {vocab.format_state(init)}",
        "//",
        *names.table(),
        "",
        "mdp",
        "",
        f"module {names.module}",
    ]
    lines += [f"  {v} : bool init {'true' if init >> i & 1 else 'false'};" for i, v in enumerate(var)]
    enabled = b.false
    rewarded: list[str] = []
    for c, cm in model.items():
        regs = cm.regions()
        lines.append("")
        if not regs:
            lines.append(f"  // capability {json.dumps(c, ensure_ascii=False)} has no rules: never enabled")
            continue
        rewarded.append(names.actions[c])
        lines.append(
            f"  // capability {json.dumps(c, ensure_ascii=False)}: {len(cm.rules)} rule(s), {len(regs)} region(s)"
        )
        for u, rules in regs:
            enabled = b.disj(enabled, u)
            dist = sorted(rule_mixture(rules).items())
            updates = " + ".join(f"{_fraction(p)} : {_update(var, eta)}" for eta, p in dist)
            lines.append(f"  [{names.actions[c]}] {cover_expression(var, isop(b, u))} -> {updates};")
    if deadlock_loop:
        none_enabled = b.neg(enabled)
        if none_enabled != b.false:
            lines += ["", "  // no capability is enabled: stay (no reward)"]
            lines.append(f"  [] {cover_expression(var, isop(b, none_enabled))} -> true;")
    lines += ["", "endmodule", ""]
    lines += [f'label "{v}" = {v};' for v in var]
    lines += ["", f'rewards "{EXECUTIONS_REWARD}"']
    lines += [f"  [{a}] true : 1;" for a in rewarded]
    # A zero state reward keeps the structure non-empty when no capability command is
    # reachable (only deadlocks): Storm refuses to check an empty reward structure.
    lines += ["  true : 0;", "endrewards"]
    return PrismExport("\n".join(lines) + "\n", names, vocab, b, init)


# =====================================================================================
# Storm on a model (the engine takes PRISM text; this layer writes it)
# =====================================================================================


def storm_model(model: CompoundModel, init: State = 0, *, exact: bool = True) -> tuple[PrismExport, storm.StormModel]:
    """Export ``model`` and build it in Storm (exact rationals unless ``exact`` is
    False); the Storm model knows the capver state of each of its states."""
    export = export_prism(model, init)
    return export, storm.build(export.text, exact=exact, state_bits=export.names.variables, init=init)


def storm_reach(
    model: CompoundModel,
    init: State,
    target: Node,
    bound: int | None = None,
    *,
    maximise: bool = True,
    exact: bool = True,
) -> Fraction | float:
    """Pmax (or Pmin) of F target (F<=bound target) from ``init`` by Storm; ``target``
    is a BDD node of ``model.ctx.bdd``."""
    export, sm = storm_model(model, init, exact=exact)
    return sm.check(storm.reach_formula(export.formula(target), bound, maximise=maximise))


def storm_expected_executions(
    model: CompoundModel, init: State, target: Node, *, maximise: bool = False, exact: bool = True
) -> Fraction | float:
    """Rmin (or Rmax) of the capability executions until ``target`` by Storm
    (``inf`` where the target is not reached with probability 1)."""
    export, sm = storm_model(model, init, exact=exact)
    return sm.check(storm.executions_formula(export.formula(target), maximise=maximise))


__all__ = [
    "EXECUTIONS_REWARD",
    "PRISM_KEYWORDS",
    "PrismExport",
    "PrismNames",
    "cover_expression",
    "cube_expression",
    "export_prism",
    "prism_identifier",
    "storm_expected_executions",
    "storm_model",
    "storm_reach",
]

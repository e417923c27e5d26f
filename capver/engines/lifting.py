"""Lifting the Occam model h̃ over objects (the lattice of
section 3.1 and :mod:`capver.engines.occam`).

Ground capabilities that are instances of one *schema* — the same primitive action
with other arguments (``drive(f1,l1,l2)``, ``drive(f1,l2,l1)``), or the same intent
with other objects (``on(a,b)``, ``on(b,c)``) — usually behave alike, yet the ground
h̃ learns each from its own few tried states.  Here every ground capability's
observations are rewritten over the schema's typed parameters, pooled, and h̃'s
conditions are learned once on the pooled lifted data with the same minimisers and
the same k-fold choice; effect probabilities are the MLE of the pooled counts.

The lifted vocabulary of a schema (:func:`lifted_vocabulary`) has the atoms whose
arguments are parameters or *constants* — objects that are never an argument of any
grounding of the schema (``have-water(f1)`` for ``load-medical-unit``).  An atom that
relates a parameter to another object that some other grounding takes as argument
(``victim-at(?v, l2)``) is left out: under one grounding it would be a parameter
atom, under another a constant one, so substituting objects for variables (the PDDL
meaning of a lifted rule, and how the DSL's ``:parameters`` are read) would no longer
be the inverse of lifting.  With this choice lift_σ is a bijection between the lifted
atoms and their groundings under σ, so grounding a lifted condition by substitution
gives exactly f_φ(lift_σ(s)).

A grounding keeps its ground rules when the grounded lifted rules contradict its
own data, named in :attr:`LiftedOccam.kept_ground`: at a tried state they would
predict another set of successors than was observed there, or they predict an effect
never observed for this capability (h∨ admits only those at untried states).  It
keeps them only where needed (:func:`projected_capability`; ``project=False`` keeps
the whole ground h̃): the lifted rules restricted to the effects observed for it, and
the ground h̃ at the tried states they would contradict and wherever no restricted
lifted rule applies.  Every grounding that uses the lifted rules therefore satisfies
pcond ⊆ f ⊆ ocond with the observed effect sets, so h∧ ⪯ h̃ ⪯ h∨ still holds, and
the certificate proves it with z3 on the ground model as before.

The lifted model's data types (:class:`Schema`, :class:`LiftedVocabulary`,
:class:`LiftedCapability`, :class:`LiftedOccam`) and grounding by substitution
(:func:`ground_capability`) are :mod:`capver.model.lifted`; here are the algorithms.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction

import numpy as np

from capver.core.dataset import TransitionDataset
from capver.core.state import Capability, Effect, State, observed_effect
from capver.core.vocabulary import Atom, Literal, Vocabulary
from capver.engines.occam import MINIMISERS, Minimiser, literals, occam_capability, run_occam_model
from capver.errors import VocabularyError
from capver.logic.condition import Condition, LogicContext, formula_condition
from capver.model.capability_model import CapabilityModel, CompoundModel, Rule
from capver.model.lifted import LiftedCapability, LiftedOccam, LiftedVocabulary, Schema, ground_capability
from capver.model.occam import Choice, OccamModel


def _variable_names(types: Sequence[str]) -> tuple[str, ...]:
    """``?l`` for one location, ``?l1 ?l2`` for two; the full type name when two
    types share their first letter."""
    initial = {t: (t[:1].lower() if t[:1].isalpha() else "x") for t in types}
    for t in set(types):
        if sum(1 for u in set(types) if initial[u] == initial[t]) > 1:
            initial[t] = t.lower()
    bases = [initial[t] for t in types]
    out = []
    for i, b in enumerate(bases):
        if bases.count(b) == 1:
            out.append(f"?{b}")
        else:
            out.append(f"?{b}{bases[: i + 1].count(b)}")
    return tuple(out)


def schema_of(cap: Capability, vocab: Vocabulary) -> tuple[Schema, tuple[str, ...]] | None:
    """The schema of a ground capability and its binding (its distinct arguments in
    order of appearance), or None when its name does not show its arguments (then it
    stays ground).  Repeated arguments (``drive(f1,l1,l1)``) make their own schema."""
    action: Atom | None = None
    if cap.intent:
        args = [a for lit in cap.intent for a in lit.atom.args]
    else:
        try:
            action = Atom.parse(cap.name)
        except VocabularyError:
            return None
        args = list(action.args)
    objs = tuple(dict.fromkeys(args))
    if not objs or any(o not in vocab.objects for o in objs):
        return None
    types = tuple(vocab.objects[o] for o in objs)
    variables = _variable_names(types)
    sub = dict(zip(objs, variables, strict=True))
    intent = tuple((Atom(lit.atom.predicate, tuple(sub[a] for a in lit.atom.args)), lit.positive) for lit in cap.intent)
    if action is not None:
        action = Atom(action.predicate, tuple(sub[a] for a in action.args))
        name = str(action)
    else:
        name = Capability.for_intent(tuple(Literal(a, p) for a, p in intent)).name
    schema = Schema(name, tuple(zip(variables, types, strict=True)), intent, action)
    if schema.capability(objs).name != cap.name:
        return None
    return schema, objs


# ------------------------------------------------------------------------------ vocabulary
def lifted_vocabulary(vocab: Vocabulary, schema: Schema, bindings: Sequence[tuple[str, ...]]) -> LiftedVocabulary:
    """Atoms over the parameters and the constants (objects no binding uses) whose
    substitution is a ground atom of ``vocab`` under every binding."""
    used = {o for b in bindings for o in b}
    found: dict[Atom, int] = {}
    for b in bindings:
        back = dict(zip(b, schema.variables, strict=True))
        for a in vocab.atoms:
            if any(o in used and o not in back for o in a.args):
                continue
            lifted = Atom(a.predicate, tuple(back.get(o, o) for o in a.args))
            found[lifted] = found.get(lifted, 0) + 1
    atoms = [a for a, n in found.items() if n == len(bindings)]
    objects = {o: t for o, t in vocab.objects.items() if o not in used}
    objects.update(dict(schema.params))
    lv = Vocabulary.build(vocab.predicates.values(), objects=objects, types=dict(vocab.types), atoms=atoms)
    index = {b: tuple(vocab.index(schema.substitute(a, b)) for a in atoms) for b in bindings}
    return LiftedVocabulary(lv, index)


# ------------------------------------------------------------------------------ lifted rules
def contradiction(m: CapabilityModel, data: TransitionDataset) -> str | None:
    """Why the capability model ``m`` contradicts the data of its capability (None
    when it does not): at a tried state it must predict exactly the observed
    successors, and anywhere only effects observed for the capability (what h∨
    admits at an untried state)."""
    c = m.name
    seen = {observed_effect(s, s2) for s in data.states_of(c) for s2 in data.successors(s, c)}
    vocab = data.vocab
    if m.rules and not seen:
        return "never tried (h∨ admits nothing)"
    for r in m.rules:
        for _, e in r.effects:
            if e not in seen:
                return f"the lifted rules predict the effect {e.format(vocab)}, never observed for it"
    for s in sorted(data.states_of(c)):
        want = set(data.successors(s, c))
        got = set(m.distribution(s))
        if got != want:
            return (
                f"at the tried state {vocab.format_state(s)} the lifted rules predict "
                f"{len(got)} successor(s) where {len(want)} were observed"
            )
    return None


def schemas(caps: Sequence[Capability], vocab: Vocabulary) -> dict[Schema, list[tuple[str, ...]]]:
    """Capabilities grouped by schema (bindings sorted); schemas with a
    single grounding are left out (nothing to pool)."""
    groups: dict[Schema, list[tuple[str, ...]]] = {}
    for c in caps:
        sb = schema_of(c, vocab)
        if sb is not None:
            groups.setdefault(sb[0], []).append(sb[1])
    # Bindings sorted, so that the lifted model does not depend on the order the
    # capabilities were declared in (a dataset file lists them as first observed).
    return {s: sorted(bs) for s, bs in groups.items() if len(bs) > 1}


def _pooled(
    lv: LiftedVocabulary,
    schema: Schema,
    bindings: Sequence[tuple[str, ...]],
    data: TransitionDataset,
    kept: dict[str, str],
) -> dict[State, dict[Effect, int]]:
    pooled: dict[State, dict[Effect, int]] = {}
    for b in bindings:
        c = schema.capability(b).name
        rows: list[tuple[State, Effect, int]] = []
        for s, succ in data.view(c).items():
            for s2, n in succ.items():
                e = lv.lift_effect(b, observed_effect(s, s2))
                if e is None:
                    kept[c] = "an observed effect touches atoms outside the schema's lifted vocabulary"
                    break
                rows.append((lv.lift_state(b, s), e, n))
            if c in kept:
                break
        if c in kept:
            continue
        for L, e, n in rows:
            cell = pooled.setdefault(L, {})
            cell[e] = cell.get(e, 0) + n
    return pooled


def _lifted_h_and(ctx: LogicContext, schema: Schema, pooled: Mapping[State, Mapping[Effect, int]]) -> CapabilityModel:
    """The pooled lifted data as a pessimistic model: one block per observed effect
    set (the union over the groundings at each lifted state), MLE on pooled counts."""
    blocks: dict[frozenset[Effect], list[State]] = {}
    for L in sorted(pooled):
        blocks.setdefault(frozenset(pooled[L]), []).append(L)
    rules = []
    for label in sorted(blocks, key=sorted):
        counts: dict[Effect, int] = {}
        for L in blocks[label]:
            for e, n in pooled[L].items():
                counts[e] = counts.get(e, 0) + n
        total = sum(counts.values())
        rules.append(
            Rule.make(Condition.pessimistic(ctx, blocks[label]), ((Fraction(n, total), e) for e, n in counts.items()))
        )
    return CapabilityModel(Capability(schema.name, ()), tuple(rules))


def projected_capability(
    lc: LiftedCapability, binding: tuple[str, ...], ctx: LogicContext, data: TransitionDataset, ground: CapabilityModel
) -> CapabilityModel:
    """The lifted rules of a binding they contradict, projected into its lattice
    interval: each rule keeps only the effects observed for this capability (its
    pooled MLE renormalised over them, i.e. the pooled counts of those effects) and
    leaves out the tried states where it would then predict other successors than
    observed.  What no rule keeps — those states, rules left without an effect, states
    no lifted rule covers — keeps the ground h̃'s rules, which agree with the data
    everywhere.  The rules stay mutually exclusive, so h∧ ⪯ result ⪯ h∨."""
    c = ground.name
    b = ctx.bdd
    seen = {observed_effect(s, s2) for s in data.states_of(c) for s2 in data.successors(s, c)}
    rules: list[Rule] = []
    used = b.false
    for r in ground_capability(lc, binding, ctx).rules:
        keep = {e: p for p, e in r.effects if e in seen}
        if not keep:
            continue
        f = r.condition.bdd
        for s in sorted(data.states_of(c)):
            if b.evaluate(f, s) and {e.apply(s) for e in keep} != set(data.successors(s, c)):
                f = b.conj(f, b.neg(ctx.minterm_bdd(s)))
        if f == b.false:
            continue
        total = sum(keep.values(), Fraction(0))
        rules.append(Rule.make(formula_condition(ctx, f), ((p / total, e) for e, p in keep.items())))
        used = b.disj(used, f)
    rest = b.neg(used)
    for r in ground.rules:
        f = b.conj(r.condition.bdd, rest)
        if f != b.false:
            rules.append(Rule(formula_condition(ctx, f), r.effects))
    return CapabilityModel(ground.capability, tuple(rules))


def lifted_occam_model(
    h_and: CompoundModel,
    data: TransitionDataset,
    rng: np.random.Generator,
    ground: OccamModel,
    minimisers: Mapping[str, Minimiser] = MINIMISERS,
    k: int = 5,
    project: bool = True,
) -> LiftedOccam:
    """h̃ lifted over objects, from the ground h̃ ``ground`` (kept for the groundings
    the lifted rules contradict and for capabilities without a schema)."""
    ctx = h_and.ctx
    vocab = ctx.vocab
    caps = [h_and[c].capability for c in h_and]
    kept: dict[str, str] = {}
    candidates: list[LiftedCapability] = []
    projected: list[str] = []
    lifted: list[LiftedCapability] = []
    replaced: list[CapabilityModel] = []
    choices: dict[str, Choice] = {}
    for schema, bindings in sorted(schemas(caps, vocab).items(), key=lambda sb: sb[0].name):
        lv = lifted_vocabulary(vocab, schema, bindings)
        lctx = LogicContext(lv.vocab, ctx.bdd.name)
        pooled = _pooled(lv, schema, bindings, data, kept)
        if not pooled:
            continue
        tilde, choice = occam_capability(_lifted_h_and(lctx, schema, pooled), rng, minimisers, k)
        choices[schema.name] = choice
        lc = LiftedCapability(
            schema, lctx, lv, tilde.rules, tuple(b for b in bindings if schema.capability(b).name not in kept)
        )
        candidates.append(lc)
        good = []
        for b in bindings:
            name = schema.capability(b).name
            if name in kept:
                continue
            m = ground_capability(lc, b, ctx)
            why = contradiction(m, data)
            if why is None:
                good.append(b)
                replaced.append(m)
            else:
                kept[name] = why
                if project:
                    pm = projected_capability(lc, b, ctx, data, ground.model[name])
                    if contradiction(pm, data) is None:  # by construction; never trust it blindly
                        replaced.append(pm)
                        projected.append(name)
        if good:
            lifted.append(LiftedCapability(schema, lctx, lv, tilde.rules, tuple(good)))
    # The order a lifted file lists them in (each schema's groundings, then the
    # ground capabilities in h∧'s order), so that reading the file back gives the
    # model with its capabilities in the same order.
    grounded = {m.name: m for m in replaced}
    order = [lc.schema.capability(b).name for lc in lifted for b in lc.bindings]
    first = set(order)
    order += [c for c in ground.model if c not in first]
    table = {**dict(ground.model), **grounded}
    return LiftedOccam(
        CompoundModel(ctx, [table[c] for c in order]),
        tuple(lifted),
        kept,
        choices,
        tuple(candidates),
        frozenset(projected),
    )


LIFT_SALT = 13
"""Mixed into a run's seed for the lifted folds (as :data:`capver.engines.occam.RUN_SALT`)."""


def run_lifted_model(h_and: CompoundModel, data: TransitionDataset, seed: int) -> LiftedOccam:
    """Lifted h̃ as ``capver learn`` writes it and ``capver eval`` rebuilds it."""
    return lifted_occam_model(h_and, data, np.random.default_rng([seed, LIFT_SALT]), run_occam_model(h_and, seed))


def lifted_rule_sizes(occ: LiftedOccam) -> list[int]:
    """Literals per rule as the lifted DSL prints the model: each schema's rules once,
    the ground rules of every capability that is not a lifted grounding."""
    names = occ.lifted_names
    sizes = [literals(r.condition) for lc in occ.lifted for r in lc.rules]
    return sizes + [literals(r.condition) for c, m in occ.model.items() if c not in names for r in m.rules]

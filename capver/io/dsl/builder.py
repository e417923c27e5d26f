"""Turns the parse tree of a ``.capm`` file into a compound model h† (paper, section 2:
capabilities, rules ⟨cond(r), {(p_j, η_j)}⟩ with Σ_j p_j = 1, derived formulas and
lifted capabilities grounded per binding), on top of the declarations read by
:mod:`capver.io.dsl.declarations`."""

from __future__ import annotations

from fractions import Fraction

import lark
from pysmt.fnode import FNode

from capver.core.state import Capability, Effect, State
from capver.core.vocabulary import Atom, Literal, Vocabulary, is_subtype
from capver.io.dsl.declarations import Where, _at, _clip, _Declarations, _some
from capver.io.dsl.syntax import MAX_DEPTH, quote
from capver.io.explain import fraction_text, plural
from capver.languages import token as as_token
from capver.languages import tree as as_tree
from capver.logic.condition import Condition, LogicContext
from capver.model.capability_model import CapabilityModel, CompoundModel, Rule


class _Builder(_Declarations):
    """Turns a parse tree into the parts of a :class:`~capver.io.dsl.reader.ParsedModel`
    (its name, compound model and initial state), checking what the grammar cannot."""

    # -- whole file -----------------------------------------------------------------------
    def model(
        self, tree: lark.Tree, ctx: LogicContext | None, bdd: str, ctx_source: str
    ) -> tuple[str, CompoundModel, State | None]:
        model_name = self.name(as_token(tree.children[0]))
        sections = {
            c.data: c
            for c in tree.children[1:]
            if isinstance(c, lark.Tree) and c.data not in ("capability", "lifted_capability", "derived")
        }
        ctx = self.context(tree, sections, ctx, bdd, ctx_source)
        models = self.capabilities(tree, ctx)
        init = None
        if "init" in sections:
            init = 0
            for atom in sections["init"].children:
                init |= 1 << self.index(atom)
        return model_name, CompoundModel(ctx, models), init

    def context(
        self, tree: lark.Tree, sections: dict[str, lark.Tree], ctx: LogicContext | None, bdd: str, ctx_source: str
    ) -> LogicContext:
        """The file's vocabulary from its declarations, and the logic context its
        conditions are built in (``ctx`` when given, whose vocabulary must be the same)."""
        if "types" in sections:
            self.declare_types(sections["types"])
        if "objects" in sections:
            self.declare_objects(sections["objects"])
        self.declare_predicates(sections["predicates"])
        atoms = self.atom_list(sections["atoms"]) if "atoms" in sections else None
        vocab = Vocabulary.build(self.predicates.values(), self.objects, self.types, atoms)
        if ctx is None:
            ctx = LogicContext(vocab, bdd)
        elif ctx.vocab != vocab:
            section, difference = _vocabulary_difference(vocab, ctx.vocab)
            where = sections.get(section, sections["predicates"] if section == "atoms" else tree)
            raise self.error(
                where,
                f"the file's vocabulary differs from that of {ctx_source}: {difference}; "
                f"expected the vocabulary of {ctx_source}",
            )
        self.vocab = ctx.vocab
        return ctx

    def capabilities(self, tree: lark.Tree, ctx: LogicContext) -> list[CapabilityModel]:
        """The capabilities of the file in order (lifted ones grounded), each declared
        once; a ``(:derived ...)`` takes effect where it stands."""
        models: list[CapabilityModel] = []
        first: dict[str, lark.Token] = {}
        for c in tree.children[1:]:
            if isinstance(c, lark.Tree) and c.data == "capability":
                tok = as_token(c.children[0])
                cname = self.name(tok)
                if not cname:
                    raise self.error(tok, "empty capability name; expected a non-empty name")
                if cname in first:
                    raise self.error(
                        tok,
                        f"duplicate capability {quote(cname)} (first declared at {_at(first[cname])}); "
                        "expected each capability to be declared once",
                    )
                first[cname] = tok
                models.append(self.capability(c, ctx, cname))
            elif isinstance(c, lark.Tree) and c.data == "lifted_capability":
                for gtok, cm in self.lifted_capability(c, ctx):
                    if cm.name in first:
                        raise self.error(
                            gtok,
                            f"this grounding is capability {quote(cm.name)}, already declared at "
                            f"{_at(first[cm.name])}; expected each capability to be declared once",
                        )
                    first[cm.name] = gtok
                    models.append(cm)
            elif isinstance(c, lark.Tree) and c.data == "derived":
                self.define(c, ctx)
        return models

    # -- capabilities -----------------------------------------------------------------------
    def capability(self, tree: lark.Tree, ctx: LogicContext, name: str) -> CapabilityModel:
        intent: tuple[Literal, ...] = ()
        rules: list[Rule] = []
        assert self.vocab is not None
        for c in tree.children[1:]:
            if c.data == "intent":
                intent = tuple(
                    Literal(self.vocab.atoms[i], positive) for i, positive, _ in self.literals(c.children[0])
                )
            else:
                rules.append(self.rule(c, ctx))
        return CapabilityModel(Capability(name, intent), tuple(rules))

    def lifted_capability(self, tree: lark.Tree, ctx: LogicContext) -> list[tuple[lark.Token, CapabilityModel]]:
        """The ground capabilities of a ``(:lifted-capability ...)``: per binding, its
        rules with the objects substituted for the parameters (lifting over objects), named by the
        :action pattern (``drive(f1,l1,l2)``) or by the grounded :intent."""
        params = self.parameters(map(as_tree, as_tree(tree.children[1]).children))
        out: list[tuple[lark.Token, CapabilityModel]] = []
        for g in map(as_tree, as_tree(tree.children[3]).children):
            objs = [as_token(x) for x in g.children]
            where: Where = objs[0] if objs else g
            self.binding = self.grounding(params, objs, where)
            try:
                cm = self.grounded(tree, ctx)
            finally:
                self.binding = None
            out.append((where if isinstance(where, lark.Token) else as_token(tree.children[0]), cm))
        return out

    def grounding(self, params: list[tuple[lark.Token, str]], objs: list[lark.Token], where: Where) -> dict[str, str]:
        """parameter → object of one ``:groundings`` entry, checked against the
        parameters' number and types."""
        if len(objs) != len(params):
            raise self.error(
                where,
                f"a grounding of {plural(len(objs), 'object')}; expected one object for "
                f"each of the {plural(len(params), 'parameter')}",
            )
        binding: dict[str, str] = {}
        for (ptok, ptype), otok in zip(params, objs, strict=True):
            o = self.name(otok)
            ot = self.objects.get(o)
            if ot is None:
                raise self.error(otok, f"unknown object {quote(o)}; expected one of: {_some(self.objects)}")
            if not is_subtype(self.types, ot, ptype):
                raise self.error(
                    otok,
                    f"object {quote(o)} has type {quote(ot)}; expected an object of type "
                    f"{quote(ptype)} for {ptok.value}",
                )
            binding[str(ptok.value)] = o
        return binding

    def grounded(self, tree: lark.Tree, ctx: LogicContext) -> CapabilityModel:
        """The lifted capability under the current binding: named by its :action
        pattern or by its grounded :intent, with its rules read under the binding."""
        assert self.vocab is not None
        head = as_tree(tree.children[2])
        if head.data == "action":
            atom = as_tree(head.children[0])
            args = [
                self.parameter(a) if a.type == "VARIABLE" else self.name(a) for a in map(as_token, atom.children[1:])
            ]
            cap = Capability(str(Atom(self.name(as_token(atom.children[0])), tuple(args))), ())
        else:
            intent = tuple(
                Literal(self.vocab.atoms[i], positive) for i, positive, _ in self.literals(as_tree(head.children[0]))
            )
            cap = Capability.for_intent(intent)
        return CapabilityModel(cap, tuple(self.rule(c, ctx) for c in tree.children[4:]))

    def literals(self, conj: lark.Tree) -> list[tuple[int, bool, lark.Tree]]:
        out = []
        for lit in conj.children:
            out.append((self.index(lit.children[0]), lit.data == "literal", lit))
        return out

    def rule(self, tree: lark.Tree, ctx: LogicContext) -> Rule:
        when = [c for c in tree.children if c.data == "when"]
        formula = self.formula(when[0].children[0], ctx, 1) if when else ctx.smt.mgr.TRUE()
        effects_tree = tree.children[-1]
        if effects_tree.data == "probabilistic":
            outcomes = [
                (self.probability(as_token(o.children[0])), as_tree(o.children[1]))
                for o in map(as_tree, effects_tree.children)
            ]
        else:
            outcomes = [(Fraction(1), as_tree(effects_tree.children[0]))]
        seen: dict[Effect, lark.Tree] = {}
        effects: list[tuple[Fraction, Effect]] = []
        for p, conj in outcomes:
            eta = self.effect(conj)
            if eta in seen:
                raise self.error(
                    conj,
                    f"this effect already appears in the rule at {_at(seen[eta])}; "
                    "expected distinct effects (add up their probabilities instead)",
                )
            seen[eta] = conj
            effects.append((p, eta))
        total = sum((p for p, _ in outcomes), Fraction(0))
        if total != 1:
            raise self.error(
                effects_tree, f"effect probabilities sum to {fraction_text(total)}; expected them to sum to 1"
            )
        return Rule.make(Condition.formula(ctx, formula), effects)

    def probability(self, tok: lark.Token) -> Fraction:
        try:
            p = Fraction(str(tok.value))
        except (ValueError, ZeroDivisionError) as exc:
            raise self.error(
                tok, f"malformed probability {_clip(tok.value)} ({_clip(str(exc))}); expected a number such as 1/3"
            ) from None
        if not 0 < p <= 1:
            raise self.error(
                tok, f"probability {_clip(tok.value)} is outside (0, 1]; expected a number greater than 0 and at most 1"
            )
        return p

    def effect(self, conj: lark.Tree) -> Effect:
        add = delete = 0
        for i, positive, lit in self.literals(conj):
            bit = 1 << i
            if (delete if positive else add) & bit:
                assert self.vocab is not None
                raise self.error(
                    lit,
                    f"atom {self.vocab.atoms[i]} is both added and deleted by one effect; "
                    "expected at most one of (p ...) and (not (p ...))",
                )
            if positive:
                add |= bit
            else:
                delete |= bit
        return Effect(add, delete)

    def define(self, tree: lark.Tree, ctx: LogicContext) -> None:
        """A ``(:derived (NAME) FORMULA)``: NAME stands for FORMULA from here on."""
        tok = as_token(tree.children[0])
        name = self.vocab_name(tok, "derived formula")
        if name in self.predicates:
            raise self.error(tok, f"derived formula {quote(name)} has the name of a predicate; expected a new name")
        if name in self.derived:
            raise self.error(
                tok,
                f"derived formula {quote(name)} defined twice (first at {_at(self.derived[name][2])}); "
                "expected a new name",
            )
        self.deepest = 0
        f = self.formula(tree.children[1], ctx, 1)
        self.derived[name] = (f, self.deepest, tok)

    def reference(self, tree: lark.Tree, depth: int) -> FNode | None:
        """The formula a 0-ary atom names when it is a derived formula, else None."""
        if len(tree.children) != 1 or not self.derived:
            return None
        hit = self.derived.get(self.name(as_token(tree.children[0])))
        if hit is None:
            return None
        f, height, _ = hit
        if depth - 1 + height > MAX_DEPTH:
            raise self.error(
                tree,
                f"formula nested more than {MAX_DEPTH} levels deep once this derived formula is expanded; "
                "expected a flatter formula",
            )
        self.deepest = max(self.deepest, depth - 1 + height)
        return f

    def formula(self, node: lark.Tree | lark.Token, ctx: LogicContext, depth: int) -> FNode:
        mgr = ctx.smt.mgr
        tree = as_tree(node)  # every formula is a rule of the grammar (true/false included)
        if depth > MAX_DEPTH:
            raise self.error(tree, f"formula nested more than {MAX_DEPTH} levels deep; expected a flatter formula")
        self.deepest = max(self.deepest, depth)
        kind = tree.data
        if kind == "atom":
            derived = self.reference(tree, depth)
            if derived is not None:
                return derived
            return ctx.smt.cur[self.index(tree)]
        if kind == "f_true":
            return mgr.TRUE()
        if kind == "f_false":
            return mgr.FALSE()
        args = [self.formula(c, ctx, depth + 1) for c in tree.children]
        if kind == "f_not":
            return mgr.Not(args[0])
        if kind == "f_and":
            return mgr.And(args)
        return mgr.Or(args)


def _vocabulary_difference(mine: Vocabulary, theirs: Vocabulary) -> tuple[str, str]:
    """The section where two vocabularies first differ, and how."""
    if dict(mine.types) != dict(theirs.types):
        return "types", f"types {_describe_map(mine.types)} instead of {_describe_map(theirs.types)}"
    if dict(mine.objects) != dict(theirs.objects):
        return "objects", f"objects {_describe_map(mine.objects)} instead of {_describe_map(theirs.objects)}"
    if dict(mine.predicates) != dict(theirs.predicates):
        a = {p.name: p.param_types for p in mine.predicates.values()}
        b = {p.name: p.param_types for p in theirs.predicates.values()}
        return "predicates", f"predicates {_describe_map(a)} instead of {_describe_map(b)}"
    for k, (x, y) in enumerate(zip(mine.atoms, theirs.atoms, strict=False)):
        if x != y:
            return "atoms", f"atom {k} is {x} instead of {y}"
    return "atoms", f"{len(mine.atoms)} atoms instead of {len(theirs.atoms)}"


def _describe_map(m: object) -> str:
    text = str(dict(m))  # type: ignore[call-overload]
    return text if len(text) <= 200 else text[:200] + "...}"

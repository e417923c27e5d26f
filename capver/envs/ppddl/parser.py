"""Parser of PPDDL domain and problem files (pddlgym format) into the immutable AST
of :mod:`capver.envs.ppddl.syntax`.

The files define the environment E of section 2 of the paper for the PDDLGym
experiments (Blocksworld, Tireworld, First Responders, ...).  The concrete syntax is
the lark grammar ``ppddl.lark`` shipped in :mod:`capver.grammars`; this module adds
what a context-free grammar cannot check — declared types, predicates, objects and
variables, arities, argument types, probabilities — and reports every problem as a
:class:`~capver.errors.PDDLSyntaxError` or :class:`~capver.errors.PDDLSemanticError`
naming file, line and column.

pddlgym's *action predicates* are declared by ``(:actions p1 p2 ...)``, which pddlgym
domain files usually write inside a ``;`` comment (pddlgym reads the raw text before
stripping comments); both forms are accepted.  Atoms of action predicates in a
problem's ``:init`` are dropped, as pddlgym does.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from pathlib import Path

import lark
from lark import Token, Tree
from lark.exceptions import (
    UnexpectedInput,
)

from capver.core.vocabulary import ROOT_TYPE, is_subtype, type_cycle
from capver.envs.ppddl.syntax import (
    ActionSchema,
    AndF,
    AtomF,
    Domain,
    EffAnd,
    Effect,
    EffForAll,
    EffLiteral,
    EffProbabilistic,
    EffWhen,
    EqualsF,
    ExistsF,
    ForAllF,
    Formula,
    ImplyF,
    Loc,
    NotF,
    OrF,
    PredicateDecl,
    Problem,
    TypedName,
    is_variable,
)
from capver.errors import PDDLSemanticError, PDDLSyntaxError
from capver.languages import Child as _Child
from capver.languages import caret, describe_syntax_error, grammar_parser
from capver.languages import optional_tree as _opt_tree
from capver.languages import token as _tok
from capver.languages import tree as _tree

GRAMMAR_FILE = "ppddl.lark"

# Readable names for the regex terminals of the grammar (string terminals are shown
# as their quoted text).
_TERMINAL_NAMES = {
    "NAME": "a name",
    "VARIABLE": "a variable (?x)",
    "FLAG": "a requirement flag (:typing)",
    "PROBABILITY": "a probability (0.5 or 1/2)",
    "$END": "end of file",
}


def _grammar_parser() -> lark.Lark:
    # The basic (not contextual) lexer always tokenises whole words, so a misspelt
    # keyword such as ":effects" is reported as itself rather than as ":effect" + "s".
    return grammar_parser(GRAMMAR_FILE, lexer="basic", placeholders=True)


def _syntax_error(exc: UnexpectedInput, text: str, filename: str) -> PDDLSyntaxError:
    p = describe_syntax_error(_grammar_parser(), exc, text, _TERMINAL_NAMES)
    return PDDLSyntaxError(
        p.message, filename=filename, line=p.line, column=p.column, context=p.context, expected=p.expected
    )


def _parse_tree(text: str, filename: str) -> Tree[Token]:
    try:
        tree = _grammar_parser().parse(text)
    except UnexpectedInput as exc:
        raise _syntax_error(exc, text, filename) from None
    return _tree(tree.children[0])


# ------------------------------------------------------------------------ tree nodes
# lark types a child of a Tree[Token] as Token | Tree[Token], and with
# maybe_placeholders an absent optional part ([...] in the grammar) is None.  The
# grammar fixes which of them each position holds; these helpers narrow a child to
# it (failing only if grammar and builder disagree).
# ------------------------------------------------------------------------ comments
_ACTIONS_RE = re.compile(r"\(\s*:actions\b([^()]*)\)", re.IGNORECASE)


def _comment_action_declarations(text: str) -> list[list[tuple[str, int, int]]]:
    """``(:actions ...)`` declarations written inside ``;`` comments, in file order:
    per declaration, its names with their line and column.  PDDL has no string
    literals, so everything after the first ``;`` of a line is comment."""
    found = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        semi = line.find(";")
        if semi < 0:
            continue
        for m in _ACTIONS_RE.finditer(line, semi):
            found.append(
                [(nm.group(0).lower(), lineno, m.start(1) + nm.start() + 1) for nm in re.finditer(r"\S+", m.group(1))]
            )
    return found


# ------------------------------------------------------------------------ builder
class _Builder:
    """Converts a parse tree into the AST, checking it on the way."""

    def __init__(self, text: str, filename: str) -> None:
        self.text = text
        self.filename = filename

    # -- locations / errors ------------------------------------------------------
    def loc(self, node: _Child, fallback: Loc | None = None) -> Loc:
        if isinstance(node, Token) and node.line is not None:
            return Loc(self.filename, node.line, node.column or 1)
        if isinstance(node, Tree) and not node.meta.empty:
            return Loc(self.filename, node.meta.line, node.meta.column)
        return fallback or Loc(self.filename, 1, 1)

    def error(self, message: str, where: _Child | Loc) -> PDDLSemanticError:
        loc = where if isinstance(where, Loc) else self.loc(where)
        return PDDLSemanticError(
            message,
            filename=loc.filename,
            line=loc.line,
            column=loc.column,
            context=caret(self.text, loc.line, loc.column),
        )

    # -- typed lists ---------------------------------------------------------------
    def typed_list(
        self, tree: Tree[Token] | None, types: Mapping[str, str | None] | None
    ) -> list[tuple[Token, str, Token | None]]:
        """(name token, type, type token) triples; untyped names get ``object``."""
        if tree is None:
            return []
        out: list[tuple[Token, str, Token | None]] = []
        pending: list[Token] = []
        for child in tree.children:
            if isinstance(child, Token):
                pending.append(child)
                continue
            type_tok = _tok(child.children[0])
            tname = type_tok.lower()
            if not pending:
                raise self.error(f"'- {tname}' does not follow any name", type_tok)
            if types is not None and tname not in types:
                raise self.error(f"unknown type {tname!r}; declared types: {sorted(types)}", type_tok)
            out.extend((tok, tname, type_tok) for tok in pending)
            pending = []
        out.extend((tok, ROOT_TYPE, None) for tok in pending)
        return out

    def typed_names(
        self, tree: Tree[Token] | None, types: Mapping[str, str | None], what: str
    ) -> tuple[TypedName, ...]:
        seen: set[str] = set()
        out = []
        for tok, t, _ in self.typed_list(tree, types):
            name = tok.lower()
            if name in seen:
                raise self.error(f"duplicate {what} {name!r}", tok)
            seen.add(name)
            out.append(TypedName(name, t, self.loc(tok)))
        return tuple(out)

    # -- domain -----------------------------------------------------------------
    def domain(self, tree: Tree[Token]) -> Domain:
        if tree.data != "domain":
            raise self.error("expected a domain file, found a problem", tree)
        name_tok = _tok(tree.children[0])
        by_kind: dict[str, list[Tree[Token]]] = {}
        for child in tree.children[1:]:
            sec = _tree(child)
            by_kind.setdefault(sec.data, []).append(sec)
        for kind in ("requirements", "types_def", "constants_def", "predicates_def", "actions_decl"):
            if len(by_kind.get(kind, [])) > 1:
                raise self.error(f"duplicate {kind.removesuffix('_def')} section", by_kind[kind][1])

        requirements = tuple(_tok(t).lower() for sec in by_kind.get("requirements", []) for t in sec.children)
        types = self.types(by_kind.get("types_def", [None])[0])
        type_pairs = tuple((t, p) for t, p in types.items() if p is not None)

        constants = self.typed_names(_first_child(by_kind.get("constants_def")), types, "constant")
        predicates = self.predicates(by_kind.get("predicates_def", [None])[0], types)
        action_preds = self.action_predicates(by_kind.get("actions_decl", []), predicates)

        ctx = _Context(
            types=types,
            predicates=predicates,
            objects={c.name: c.type for c in constants},
            action_predicates=frozenset(action_preds),
        )
        actions = []
        seen_actions: set[str] = set()
        for sec in by_kind.get("action_def", []):
            schema = self.action(sec, ctx)
            if schema.name in seen_actions:
                raise self.error(f"duplicate action {schema.name!r}", sec.children[0])
            seen_actions.add(schema.name)
            actions.append(schema)
        return Domain(
            name=name_tok.lower(),
            requirements=requirements,
            types=type_pairs,
            constants=constants,
            predicates=tuple(predicates.values()),
            actions=tuple(actions),
            action_predicates=tuple(action_preds),
            filename=self.filename,
        )

    def types(self, tree: Tree[Token] | None) -> dict[str, str | None]:
        types: dict[str, str | None] = {ROOT_TYPE: None}
        if tree is None:
            return types
        entries = self.typed_list(_tree(tree.children[0]), None)
        declared: dict[str, Token] = {}
        for tok, parent, _ in entries:
            name = tok.lower()
            if name == ROOT_TYPE:
                if parent != ROOT_TYPE:
                    raise self.error(f"the root type {ROOT_TYPE!r} cannot have a parent", tok)
                continue
            if name in declared:
                raise self.error(f"duplicate type {name!r}", tok)
            declared[name] = tok
            types[name] = parent
        # A parent named only after '-' is implicitly a subtype of the root (PDDL).
        for _, parent, _ in entries:
            types.setdefault(parent, ROOT_TYPE)
        cyclic = type_cycle({n: types[n] for n in declared} | {n: p for n, p in types.items() if n not in declared})
        if cyclic is not None:
            raise self.error(f"type hierarchy has a cycle through {cyclic!r}", declared[cyclic])
        return types

    def predicates(self, tree: Tree[Token] | None, types: Mapping[str, str | None]) -> dict[str, PredicateDecl]:
        preds: dict[str, PredicateDecl] = {}
        if tree is None:
            return preds
        for child in tree.children:
            decl = _tree(child)
            name_tok, params_tree = _tok(decl.children[0]), _tree(decl.children[1])
            name = name_tok.lower()
            if name in preds:
                raise self.error(f"duplicate predicate {name!r}", name_tok)
            params = self.typed_names(params_tree, types, "parameter")
            preds[name] = PredicateDecl(name, params, self.loc(name_tok))
        return preds

    def action_predicates(self, sections: list[Tree[Token]], predicates: Mapping[str, PredicateDecl]) -> list[str]:
        entries: list[tuple[str, Loc]] = []
        if sections:
            entries = [(_tok(t).lower(), self.loc(t)) for t in sections[0].children]
        else:
            decls = _comment_action_declarations(self.text)
            if decls:
                # pddlgym reads the first declaration of the file.
                entries = [(n, Loc(self.filename, ln, col)) for n, ln, col in decls[0]]
        out: list[str] = []
        for name, loc in entries:
            if name not in predicates:
                raise self.error(f"action predicate {name!r} is not a declared predicate", loc)
            if name not in out:
                out.append(name)
        return out

    def action(self, tree: Tree[Token], ctx: _Context) -> ActionSchema:
        name_tok = _tok(tree.children[0])
        params_tree, pre_tree, eff_tree = (_tree(c) for c in tree.children[1:])
        name = name_tok.lower()
        params = self.typed_names(_first_child([params_tree]), ctx.types, "parameter")
        scope = {p.name: p.type for p in params}
        pre_node = _opt_tree(pre_tree.children[0])
        precondition = (
            self.formula(pre_node, scope, ctx, allow_action_predicates=True)
            if pre_node is not None
            else AndF((), self.loc(pre_tree))
        )
        eff_node = _opt_tree(eff_tree.children[0])
        effect = self.effect(eff_node, scope, ctx) if eff_node is not None else EffAnd(())
        schema = ActionSchema(name, params, precondition, effect, self.loc(name_tok))
        if ctx.action_predicates and action_literal(schema, ctx.action_predicates) is None:
            raise self.error(
                f"action {name!r} has no action predicate (one of "
                f"{sorted(ctx.action_predicates)}) as a conjunct of its precondition; "
                "pddlgym could never select it",
                name_tok,
            )
        return schema

    # -- formulas ------------------------------------------------------------------
    def term_type(self, tok: Token, scope: Mapping[str, str], ctx: _Context) -> str:
        term = tok.lower()
        if is_variable(term):
            if term not in scope:
                raise self.error(f"unbound variable {term!r}", tok)
            return scope[term]
        if term not in ctx.objects:
            raise self.error(f"unknown object {term!r}; expected one of {sorted(ctx.objects)}", tok)
        return ctx.objects[term]

    def atom(
        self,
        tree: Tree[Token],
        scope: Mapping[str, str],
        ctx: _Context,
        *,
        allow_action_predicates: bool,
    ) -> AtomF:
        name_tok = _tok(tree.children[0])
        terms = [_tok(c) for c in tree.children[1:]]
        name = name_tok.lower()
        pred = ctx.predicates.get(name)
        if pred is None:
            raise self.error(f"unknown predicate {name!r}; expected one of {sorted(ctx.predicates)}", name_tok)
        if name in ctx.action_predicates and not allow_action_predicates:
            raise self.error(f"action predicate {name!r} may only occur in action preconditions", name_tok)
        if len(terms) != pred.arity:
            raise self.error(f"predicate {name!r} takes {pred.arity} argument(s), got {len(terms)}", name_tok)
        for tok, param in zip(terms, pred.parameters):
            t = self.term_type(tok, scope, ctx)
            if not is_subtype(ctx.types, t, param.type):
                raise self.error(
                    f"{tok.lower()!r} has type {t!r}, but argument {param.name} of "
                    f"{name!r} expects type {param.type!r}",
                    tok,
                )
        return AtomF(name, tuple(t.lower() for t in terms), self.loc(tree))

    def quantified(
        self, tree: Tree[Token], scope: Mapping[str, str], ctx: _Context
    ) -> tuple[tuple[TypedName, ...], dict[str, str]]:
        variables = self.typed_names(_tree(tree.children[0]), ctx.types, "variable")
        inner = dict(scope)
        inner.update((v.name, v.type) for v in variables)
        return variables, inner

    def formula(
        self,
        tree: Tree[Token],
        scope: Mapping[str, str],
        ctx: _Context,
        *,
        allow_action_predicates: bool = False,
    ) -> Formula:
        kind = tree.data
        loc = self.loc(tree)
        sub = functools.partial(self.formula, ctx=ctx, allow_action_predicates=allow_action_predicates)
        if kind == "atom":
            return self.atom(tree, scope, ctx, allow_action_predicates=allow_action_predicates)
        if kind == "equality":
            left, right = (_tok(c) for c in tree.children)
            self.term_type(left, scope, ctx)
            self.term_type(right, scope, ctx)
            return EqualsF(left.lower(), right.lower(), loc)
        if kind == "gd_and":
            return AndF(tuple(sub(_tree(c), scope) for c in tree.children), loc)
        if kind == "gd_or":
            return OrF(tuple(sub(_tree(c), scope) for c in tree.children), loc)
        if kind == "gd_not":
            return NotF(sub(_tree(tree.children[0]), scope), loc)
        if kind == "gd_imply":
            return ImplyF(sub(_tree(tree.children[0]), scope), sub(_tree(tree.children[1]), scope), loc)
        if kind in ("gd_exists", "gd_forall"):
            variables, inner = self.quantified(tree, scope, ctx)
            body = sub(_tree(tree.children[1]), inner)
            return (ExistsF if kind == "gd_exists" else ForAllF)(variables, body, loc)
        raise AssertionError(f"unhandled formula node {kind}")  # grammar and builder disagree

    # -- effects -------------------------------------------------------------------
    def effect(self, tree: Tree[Token], scope: Mapping[str, str], ctx: _Context) -> Effect:
        kind = tree.data
        loc = self.loc(tree)
        if kind in ("eff_add", "eff_delete"):
            atom = self.atom(_tree(tree.children[0]), scope, ctx, allow_action_predicates=False)
            return EffLiteral(atom, kind == "eff_add", loc)
        if kind == "eff_and":
            return EffAnd(tuple(self.effect(_tree(c), scope, ctx) for c in tree.children), loc)
        if kind == "eff_forall":
            variables, inner = self.quantified(tree, scope, ctx)
            return EffForAll(variables, self.effect(_tree(tree.children[1]), inner, ctx), loc)
        if kind == "eff_when":
            cond = self.formula(_tree(tree.children[0]), scope, ctx)
            return EffWhen(cond, self.effect(_tree(tree.children[1]), scope, ctx), loc)
        if kind == "eff_probabilistic":
            branches = []
            total = Fraction(0)
            for child in tree.children:
                branch = _tree(child)
                prob_tok, body = _tok(branch.children[0]), _tree(branch.children[1])
                p = self.probability(prob_tok)
                total += p
                branches.append((p, self.effect(body, scope, ctx)))
            if total > 1:
                raise self.error(f"probabilities of a probabilistic effect sum to {total} > 1", tree)
            return EffProbabilistic(tuple(branches), loc)
        raise AssertionError(f"unhandled effect node {kind}")  # grammar and builder disagree

    def probability(self, tok: Token) -> Fraction:
        text = str(tok)
        num, _, den = text.partition("/")
        if den and int(den) == 0:
            raise self.error(f"probability {text} divides by zero", tok)
        p = Fraction(num) / (Fraction(den) if den else 1)
        if p > 1:
            raise self.error(f"probability {text} is greater than 1", tok)
        return p

    # -- problem -------------------------------------------------------------------
    def problem(self, tree: Tree[Token], domain: Domain) -> Problem:
        if tree.data != "problem":
            raise self.error("expected a problem file, found a domain", tree)
        name_tok = _tok(tree.children[0])
        by_kind: dict[str, list[Tree[Token]]] = {}
        for child in tree.children[1:]:
            sec = _tree(child)
            by_kind.setdefault(sec.data, []).append(sec)
        for kind in ("problem_domain", "requirements", "objects_def", "init_def", "goal_def"):
            if len(by_kind.get(kind, [])) > 1:
                raise self.error(f"duplicate {kind.removesuffix('_def')} section", by_kind[kind][1])
        if "problem_domain" in by_kind:
            dom_tok = _tok(by_kind["problem_domain"][0].children[0])
            if dom_tok.lower() != domain.name:
                raise self.error(f"problem is for domain {dom_tok.lower()!r}, expected {domain.name!r}", dom_tok)
        types = domain.type_parents
        objects = self.typed_names(_first_child(by_kind.get("objects_def")), types, "object")
        constants = {c.name: c for c in domain.constants}
        for o in objects:
            if o.name in constants:
                raise self.error(f"object {o.name!r} is already a constant of the domain", o.loc)
        ctx = _Context(
            types=types,
            predicates={p.name: p for p in domain.predicates},
            objects={**{c.name: c.type for c in domain.constants}, **{o.name: o.type for o in objects}},
            action_predicates=frozenset(domain.action_predicates),
        )
        init: list[AtomF] = []
        seen: set[AtomF] = set()
        for sec in by_kind.get("init_def", []):
            for child in sec.children:
                el = _tree(child)
                positive = el.data == "atom"
                atom_tree = el if positive else _tree(el.children[0])
                atom = self.atom(atom_tree, {}, ctx, allow_action_predicates=True)
                # Action-predicate atoms only say which actions exist (pddlgym drops
                # them); negated init atoms restate the closed-world assumption.
                if positive and atom.predicate not in ctx.action_predicates and atom not in seen:
                    seen.add(atom)
                    init.append(atom)
        goal_secs = by_kind.get("goal_def", [])
        goal: Formula = self.formula(_tree(goal_secs[0].children[0]), {}, ctx) if goal_secs else AndF(())
        return Problem(
            name=name_tok.lower(),
            domain_name=domain.name,
            objects=objects,
            init=tuple(init),
            goal=goal,
            filename=self.filename,
        )


class _Context:
    """What formulas may refer to: types, predicates and objects in scope."""

    __slots__ = ("action_predicates", "objects", "predicates", "types")

    def __init__(
        self,
        *,
        types: Mapping[str, str | None],
        predicates: Mapping[str, PredicateDecl],
        objects: Mapping[str, str],
        action_predicates: frozenset[str],
    ) -> None:
        self.types = types
        self.predicates = predicates
        self.objects = objects
        self.action_predicates = action_predicates


def _first_child(trees: Sequence[Tree[Token] | None] | None) -> Tree[Token] | None:
    if not trees or trees[0] is None:
        return None
    return _opt_tree(trees[0].children[0])


def action_literal(schema: ActionSchema, action_predicates: Iterable[str]) -> AtomF | None:
    """The pddlgym action literal of an action schema: the first atom of an action
    predicate among the conjuncts of its precondition (None if it has none)."""
    preds = frozenset(action_predicates)
    stack: list[Formula] = [schema.precondition]
    while stack:
        f = stack.pop(0)
        if isinstance(f, AndF):
            stack[0:0] = list(f.parts)
        elif isinstance(f, AtomF) and f.predicate in preds:
            return f
    return None


# ------------------------------------------------------------------------ public API
def parse_domain(text: str, filename: str = "<domain>") -> Domain:
    """Parse and check a domain; raises PDDLSyntaxError / PDDLSemanticError."""
    builder = _Builder(text, filename)
    return builder.domain(_parse_tree(text, filename))


def parse_problem(text: str, domain: Domain, filename: str = "<problem>") -> Problem:
    """Parse a problem and check it against ``domain``."""
    builder = _Builder(text, filename)
    return builder.problem(_parse_tree(text, filename), domain)


def parse_domain_file(path: str | Path) -> Domain:
    path = Path(path)
    return parse_domain(path.read_text(encoding="utf-8"), str(path))


def parse_problem_file(path: str | Path, domain: Domain) -> Problem:
    path = Path(path)
    return parse_problem(path.read_text(encoding="utf-8"), domain, str(path))

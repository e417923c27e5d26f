"""The declarations of a ``.capm`` file read from its parse tree: names, types,
objects, predicates and ground atoms (the vocabulary of paper section 2), each
checked for what the grammar cannot say, with errors that name the line and column
(:class:`~capver.errors.DSLSemanticError`).  The base of the reader's tree builder
(:mod:`capver.io.dsl.builder`)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

import lark
from pysmt.fnode import FNode

from capver.core.vocabulary import ROOT_TYPE, Atom, Predicate, Vocabulary, is_subtype, type_cycle
from capver.errors import DSLSemanticError
from capver.io.dsl.syntax import _FORBIDDEN_IN_NAMES, _signature, quote
from capver.io.explain import plural
from capver.languages import caret
from capver.languages import token as as_token
from capver.languages import tree as as_tree

Where = lark.Token | lark.Tree


def _position(where: Where) -> tuple[int, int]:
    if isinstance(where, lark.Token):
        return where.line or 1, where.column or 1
    return where.meta.line, where.meta.column


def _at(where: Where) -> str:
    line, column = _position(where)
    return f"line {line}, column {column}"


def _clip(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _some(names: Iterable[str], limit: int = 12) -> str:
    items = sorted(names)
    if not items:
        return "(none declared)"
    shown = ", ".join(items[:limit])
    return shown + (f", ... ({len(items)} in all)" if len(items) > limit else "")


class _Declarations:
    """Reads the names and declarations of one file's parse tree, checking what the
    grammar cannot; the state that later sections consult (the binding of a lifted
    capability's parameters, the derived formulas defined so far) lives here too,
    since atoms are read under it."""

    def __init__(self, text: str, filename: str) -> None:
        self.text = text
        self.filename = filename
        self.types: dict[str, str] = {}
        self.objects: dict[str, str] = {}
        self.predicates: dict[str, Predicate] = {}
        self.vocab: Vocabulary | None = None
        self.binding: dict[str, str] | None = None  # parameter → object, inside a lifted capability
        # Derived formulas defined so far: name -> (formula, height, where defined).
        self.derived: dict[str, tuple[FNode, int, lark.Token]] = {}
        self.deepest = 0  # the deepest formula level reached, derived formulas expanded

    def error(self, where: Where, message: str) -> DSLSemanticError:
        line, column = _position(where)
        return DSLSemanticError(
            message, filename=self.filename, line=line, column=column, context=caret(self.text, line, column)
        )

    # -- names ----------------------------------------------------------------------------
    def name(self, tok: lark.Token) -> str:
        if tok.type != "STRING":
            return str(tok.value)
        try:
            value = json.loads(tok.value)
        except ValueError as exc:
            raise self.error(tok, f"malformed quoted name ({exc.args[0]}); expected a JSON string") from None
        return str(value)

    def vocab_name(self, tok: lark.Token, what: str) -> str:
        n = self.name(tok)
        if not n or _FORBIDDEN_IN_NAMES.search(n):
            raise self.error(
                tok,
                f"{what} name {n!r} is not allowed; expected a non-empty name without whitespace, "
                "parentheses, commas or quotes",
            )
        return n

    # -- vocabulary -----------------------------------------------------------------------
    def typed_items(
        self, items: Sequence[lark.Tree], marker: str, what: str
    ) -> list[tuple[lark.Token, lark.Token | None]]:
        """Pair each name of a PDDL typed list with the token of its type (None: the
        root type)."""
        out: list[tuple[lark.Token, lark.Token | None]] = []
        pending: list[lark.Token] = []
        for it in items:
            tok = as_token(it.children[0])
            if it.data == marker:
                if not pending:
                    raise self.error(
                        it, f"'- {self.name(tok)}' gives no {what} a type; expected {what} names before '-'"
                    )
                out += [(p, tok) for p in pending]
                pending = []
            else:
                pending.append(tok)
        return out + [(p, None) for p in pending]

    def known_type(self, tok: lark.Token | None) -> str:
        if tok is None:
            return ROOT_TYPE
        t = self.name(tok)
        if t != ROOT_TYPE and t not in self.types:
            raise self.error(tok, f"unknown type {quote(t)}; expected one of: {_some([ROOT_TYPE, *self.types])}")
        return t

    def declare_types(self, section: lark.Tree) -> None:
        where: dict[str, lark.Token] = {}
        parents: list[tuple[str, lark.Token | None]] = []
        for tok, parent in self.typed_items(section.children, "item_type", "type"):
            t = self.vocab_name(tok, "type")
            if t == ROOT_TYPE:
                raise self.error(tok, f"'{ROOT_TYPE}' is the built-in root type; expected a new type name")
            if t in where:
                raise self.error(
                    tok, f"type {quote(t)} declared twice (first at {_at(where[t])}); expected a new type name"
                )
            where[t] = tok
            self.types[t] = ROOT_TYPE
            parents.append((t, parent))
        for t, parent in parents:
            self.types[t] = self.known_type(parent)
        cyclic = type_cycle(self.types)
        if cyclic is not None:
            raise self.error(
                where[cyclic], f"type {quote(cyclic)} is its own ancestor; expected an acyclic type hierarchy"
            )

    def declare_objects(self, section: lark.Tree) -> None:
        where: dict[str, lark.Token] = {}
        for tok, t in self.typed_items(section.children, "item_type", "object"):
            o = self.vocab_name(tok, "object")
            if o in where:
                raise self.error(
                    tok, f"object {quote(o)} declared twice (first at {_at(where[o])}); expected a new object name"
                )
            where[o] = tok
            self.objects[o] = self.known_type(t)

    def declare_predicates(self, section: lark.Tree) -> None:
        where: dict[str, lark.Token] = {}
        for decl in map(as_tree, section.children):
            tok = as_token(decl.children[0])
            p = self.vocab_name(tok, "predicate")
            if p in where:
                raise self.error(
                    tok,
                    f"predicate {quote(p)} declared twice (first at {_at(where[p])}); expected a new predicate name",
                )
            where[p] = tok
            params = self.parameters(map(as_tree, decl.children[1:]), f" in {quote(p)}")
            self.predicates[p] = Predicate(p, tuple(t for _, t in params))

    def parameters(self, items: Iterable[lark.Tree], owner: str = "") -> list[tuple[lark.Token, str]]:
        """A typed parameter list ``?x ?y - block ?z``: each parameter's token and type
        (the root type when none is given); ``owner`` (" in NAME") ends the message
        about a repeated parameter."""
        params: list[tuple[lark.Token, str]] = []
        pending: list[lark.Token] = []
        for it in items:
            tok = as_token(it.children[0])
            if it.data == "param_type":
                if not pending:
                    raise self.error(
                        it, f"'- {self.name(tok)}' gives no parameter a type; expected ?parameters before '-'"
                    )
                params += [(q, self.known_type(tok)) for q in pending]
                pending = []
                continue
            if any(str(q.value) == str(tok.value) for q in [*(q for q, _ in params), *pending]):
                raise self.error(tok, f"parameter {tok.value} appears twice{owner}; expected distinct parameter names")
            pending.append(tok)
        return params + [(q, ROOT_TYPE) for q in pending]

    def ground(self, atom: lark.Tree) -> Atom:
        """The atom an ``(p a b)`` tree names, checked against the declarations."""
        ptok, args = as_token(atom.children[0]), [as_token(c) for c in atom.children[1:]]
        p = self.name(ptok)
        pred = self.predicates.get(p)
        if pred is None and p in self.derived:
            what = (
                "takes no arguments"
                if args
                else "is a formula, allowed only in a rule's :when or another (:derived ...)"
            )
            raise self.error(ptok, f"derived formula {quote(p)} {what}; expected an atom of a declared predicate")
        if pred is None:
            raise self.error(ptok, f"unknown predicate {quote(p)}; expected one of: {_some(self.predicates)}")
        if len(args) != pred.arity:
            raise self.error(
                ptok,
                f"predicate {quote(p)} takes {plural(pred.arity, 'argument')}, got {len(args)}; "
                f"expected {_signature(pred)}",
            )
        names = []
        for k, (tok, t) in enumerate(zip(args, pred.param_types, strict=True), 1):
            o = self.parameter(tok) if tok.type == "VARIABLE" else self.name(tok)
            ot = self.objects.get(o)
            if ot is None:
                raise self.error(tok, f"unknown object {quote(o)}; expected one of: {_some(self.objects)}")
            if not is_subtype(self.types, ot, t):
                raise self.error(
                    tok,
                    f"object {quote(o)} has type {quote(ot)}; expected an object of type {quote(t)} "
                    f"as argument {k} of {quote(p)}",
                )
            names.append(o)
        return Atom(p, tuple(names))

    def parameter(self, tok: lark.Token) -> str:
        """The object a parameter stands for under the binding being read."""
        v = str(tok.value)
        if self.binding is None:
            raise self.error(tok, f"parameter {v} outside a (:lifted-capability ...); expected an object name")
        if v not in self.binding:
            raise self.error(tok, f"unknown parameter {v}; expected one of: {_some(self.binding)}")
        return self.binding[v]

    def atom_list(self, section: lark.Tree) -> list[Atom]:
        where: dict[Atom, lark.Tree] = {}
        for t in section.children:
            a = self.ground(t)
            if a in where:
                raise self.error(t, f"atom {a} listed twice (first at {_at(where[a])}); expected each atom once")
            where[a] = t
        return list(where)

    def index(self, atom: lark.Tree) -> int:
        a = self.ground(atom)
        assert self.vocab is not None
        if a not in self.vocab:
            raise self.error(atom, f"atom {a} is not among the (:atoms ...) of this model; expected a listed atom")
        return self.vocab.index(a)

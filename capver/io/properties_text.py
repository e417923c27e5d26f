"""The reader of the property language of ``capver verify``: one property
(``--property``) or a ``.props`` file of them, over a model's vocabulary and
capabilities.  Grammar: ``grammars/properties.lark``; meaning and printer:
:mod:`capver.core.properties`.

    // a .props file: properties end with ';', comments with //
    "safe": A [ G !(dead v1) ];
    "reach": Pmax=? [ F<=10 on(a,b) ] {caps: pick-up-a, stack-a-b};
    Rmin=? [ F handempty ];                // unnamed: called "p3"

Every problem is a :class:`~capver.errors.PropertySyntaxError` (the text does not
follow the grammar; the message says what was found and what was expected) or a
:class:`~capver.errors.PropertySemanticError` (an unknown atom, named with the
reason; an unknown capability, with some the model has; a probability bound
outside [0, 1]; a step bound that is not a whole number; ``P=?``/``R=?`` without
max or min; a reward query over anything but ``F φ``; a duplicate name), located
at file:line:column with a caret under the column.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable
from fractions import Fraction
from pathlib import Path

import lark

from capver.core.properties import (
    And,
    AtomFormula,
    Comparison,
    Const,
    Eventually,
    ExistsPath,
    ForallPath,
    Globally,
    Implies,
    Not,
    Optimum,
    Or,
    PathFormula,
    ProbabilityBound,
    ProbabilityQuery,
    Property,
    Query,
    RewardQuery,
    StateFormula,
    Until,
)
from capver.core.vocabulary import Atom, Vocabulary
from capver.errors import PropertySemanticError, PropertySyntaxError, VocabularyError
from capver.languages import caret, describe_syntax_error, grammar_parser, read_source

__all__ = ["MAX_DEPTH", "parse_properties", "parse_property", "read_properties"]

GRAMMAR = "properties.lark"
MAX_DEPTH = 100
"""Deepest state-formula nesting accepted; deeper input would exhaust Python's stack
in the recursive reader, printer and evaluator."""

_WORDS = {
    "NAME": "a name",
    "STRING": 'a quoted name such as "x-1"',
    "NAME_STRING": 'a property name such as "safe"',
    "NUMBER": "a number",
}
_DIGITS = re.compile(r"[0-9]+")
_SHOWN_CAPABILITIES = 8

Where = lark.Token | lark.Tree


def parse_property(
    text: str, vocab: Vocabulary, capabilities: Iterable[str], *, source: str = "--property"
) -> Property:
    """The one property ``text`` states (a trailing ``;`` is allowed).  ``source``
    names the text in errors, in place of a file name."""
    reader = _Reader(text, source, vocab, capabilities, end="end of the text")
    props = reader.properties()
    if not props:
        line, column = _end_position(text)
        raise reader.error_at(
            line, column, "expected a property such as 'Pmax=? [ F goal ]', got none", PropertySyntaxError
        )
    if len(props) > 1:
        raise reader.error_at(
            props[1].line,
            reader.columns[1],
            "expected one property, got a second one (a .props file holds several)",
            PropertySyntaxError,
        )
    return props[0]


def parse_properties(
    text: str, vocab: Vocabulary, capabilities: Iterable[str], *, filename: str = "<string>"
) -> tuple[Property, ...]:
    """The properties of a ``.props`` text, in order (none for a text of comments)."""
    return _Reader(text, filename, vocab, capabilities, end="end of the file").properties()


def read_properties(path: str | Path, vocab: Vocabulary, capabilities: Iterable[str]) -> tuple[Property, ...]:
    """The properties of the UTF-8 ``.props`` file at ``path``."""
    text = read_source(path, PropertySyntaxError)
    return parse_properties(text, vocab, capabilities, filename=str(path))


def _end_position(text: str) -> tuple[int, int]:
    """Just after the last character of the last line, as syntax errors say it."""
    lines = text.splitlines() or [""]
    return len(lines), len(lines[-1]) + 1


def _position(where: Where) -> tuple[int, int]:
    if isinstance(where, lark.Token):
        return where.line or 1, where.column or 1
    return where.meta.line, where.meta.column


class _Reader:
    """Parses a text and turns its tree into properties, checking what the grammar
    cannot."""

    def __init__(self, text: str, filename: str, vocab: Vocabulary, capabilities: Iterable[str], *, end: str) -> None:
        self.text = text
        self.filename = filename
        self.vocab = vocab
        self.capability_names = frozenset(capabilities)
        self.end = end
        self.columns: list[int] = []  # where each property starts, for parse_property

    # -- errors --------------------------------------------------------------------
    def error_at(
        self, line: int, column: int, message: str, kind: type[PropertySemanticError | PropertySyntaxError]
    ) -> PropertySemanticError | PropertySyntaxError:
        return kind(message, filename=self.filename, line=line, column=column, context=caret(self.text, line, column))

    def error(self, where: Where, message: str) -> PropertySemanticError | PropertySyntaxError:
        return self.error_at(*_position(where), message, PropertySemanticError)

    # -- properties ------------------------------------------------------------------
    def properties(self) -> tuple[Property, ...]:
        parser = grammar_parser(GRAMMAR, placeholders=True)
        try:
            tree = parser.parse(self.text)
        except lark.UnexpectedInput as exc:
            problem = describe_syntax_error(parser, exc, self.text, _WORDS, end=self.end)
            raise PropertySyntaxError(
                problem.message,
                filename=self.filename,
                line=problem.line,
                column=problem.column,
                context=problem.context,
                expected=problem.expected,
            ) from None
        out: list[Property] = []
        first_line: dict[str, tuple[int, bool]] = {}  # name -> (line, was it written)
        for number, node in enumerate(tree.children, start=1):
            assert isinstance(node, lark.Tree)
            prop = self.property(node, number)
            written = node.children[0] is not None
            if prop.name in first_line:
                raise self.duplicate(node, prop.name, number, first_line[prop.name])
            first_line[prop.name] = (prop.line, written)
            self.columns.append(node.meta.column)
            out.append(prop)
        return tuple(out)

    def duplicate(
        self, node: lark.Tree, name: str, number: int, first: tuple[int, bool]
    ) -> PropertySemanticError | PropertySyntaxError:
        line, written = first
        quoted = json.dumps(name, ensure_ascii=False)
        name_token = node.children[0]
        if name_token is None:
            return self.error(
                node,
                f"unnamed property {number} is called {quoted}, but the property on line {line} has that name;"
                " expected a name for one of them",
            )
        earlier = (
            f"the property on line {line} has it" if written else f"the unnamed property on line {line} is called so"
        )
        return self.error(name_token, f"duplicate property name {quoted}: {earlier}; expected a new name")

    def property(self, node: lark.Tree, number: int) -> Property:
        name_token, query_tree, restriction = node.children
        if name_token is None:
            name = f"p{number}"
        else:
            assert isinstance(name_token, lark.Token)
            name = self.string(name_token)
            if not name:
                raise self.error(name_token, 'empty property name; expected a name such as "safe", or none')
        assert isinstance(query_tree, lark.Tree)
        caps = None if restriction is None else self.restriction(restriction)
        text = self.text[node.meta.start_pos : node.meta.end_pos]
        return Property(name, self.query(query_tree), caps, text=text, line=node.meta.line)

    def restriction(self, tree: Where) -> frozenset[str]:
        assert isinstance(tree, lark.Tree)
        names = []
        for tok in tree.children:
            assert isinstance(tok, lark.Token)
            name = self.name(tok)
            if name not in self.capability_names:
                raise self.error(tok, self.unknown_capability(name))
            names.append(name)
        return frozenset(names)

    def unknown_capability(self, name: str) -> str:
        known = sorted(self.capability_names)
        if not known:
            return f"unknown capability {name!r}; the model has no capabilities"
        close = difflib.get_close_matches(name, known, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        shown = ", ".join(known[:_SHOWN_CAPABILITIES])
        more = f", ... ({len(known)} in all)" if len(known) > _SHOWN_CAPABILITIES else ""
        return f"unknown capability {name!r}; {hint}the model has {shown}{more}"

    # -- queries ---------------------------------------------------------------------
    def query(self, tree: lark.Tree) -> Query:
        kind = tree.data
        if kind in ("p_unoptimised", "r_unoptimised"):
            letter = "P" if kind == "p_unoptimised" else "R"
            raise self.error(
                tree,
                f"{letter}=? is not one number: each scheduler has its own; expected {letter}max=? or {letter}min=?",
            )
        path_tree = tree.children[-1]
        assert isinstance(path_tree, lark.Tree)
        if kind in ("rmax", "rmin"):
            return RewardQuery(Optimum.MAX if kind == "rmax" else Optimum.MIN, self.reward_target(kind, path_tree))
        path = self.path(path_tree)
        if kind == "exists":
            return ExistsPath(path)
        if kind == "forall":
            return ForallPath(path)
        if kind in ("pmax", "pmin"):
            return ProbabilityQuery(Optimum.MAX if kind == "pmax" else Optimum.MIN, path)
        assert kind == "p_bound", kind
        comparison, number = tree.children[0], tree.children[1]
        assert isinstance(comparison, lark.Tree) and isinstance(number, lark.Token)
        op = comparison.children[0]
        assert isinstance(op, lark.Token)
        return ProbabilityBound(Comparison(op.value), self.probability(number), path)

    def reward_target(self, kind: str, tree: lark.Tree) -> StateFormula:
        what = f"R{kind[1:]}=? counts capability executions until a state formula holds"
        if tree.data != "eventually":
            raise self.error(tree, f"{what}; expected F φ, got a {'G' if tree.data == 'globally' else 'U'} formula")
        bound, goal = tree.children
        if bound is not None:
            raise self.error(bound, f"{what}, however many it takes; expected F φ without a step bound")
        return self.formula(goal, 0)

    def probability(self, tok: lark.Token) -> Fraction:
        expected = "expected a probability from 0 to 1 such as 0.95 or 2/3"
        try:
            p = Fraction(tok.value)
        except ZeroDivisionError:
            raise self.error(tok, f"probability bound {tok.value} divides by zero; {expected}") from None
        if not 0 <= p <= 1:
            raise self.error(tok, f"probability bound {tok.value} is outside [0, 1]; {expected}")
        return p

    # -- path formulas -----------------------------------------------------------------
    def path(self, tree: lark.Tree) -> PathFormula:
        if tree.data == "until":
            hold, bound, goal = tree.children
            return Until(self.formula(hold, 0), self.formula(goal, 0), self.bound(bound))
        bound, operand = tree.children
        if tree.data == "eventually":
            return Eventually(self.formula(operand, 0), self.bound(bound))
        assert tree.data == "globally", tree.data
        return Globally(self.formula(operand, 0), self.bound(bound))

    def bound(self, tree: Where | None) -> int | None:
        if tree is None:
            return None
        assert isinstance(tree, lark.Tree)
        tok = tree.children[0]
        assert isinstance(tok, lark.Token)
        if not _DIGITS.fullmatch(tok.value):
            sign = "is negative" if tok.value.lstrip().startswith("-") else "is not a whole number"
            raise self.error(
                tok, f"step bound {tok.value} {sign}; expected a number of capability executions: 0, 1, 2, ..."
            )
        return int(tok.value)

    # -- state formulas ----------------------------------------------------------------
    def formula(self, tree: Where | None, depth: int) -> StateFormula:
        assert isinstance(tree, lark.Tree)
        if depth >= MAX_DEPTH:
            raise self.error(tree, f"formula nested more than {MAX_DEPTH} deep; expected a shallower formula")
        kind = tree.data
        if kind == "true":
            return Const(True)
        if kind == "false":
            return Const(False)
        if kind.endswith("_atom"):
            return AtomFormula(self.atom(tree))
        operands = tuple(self.formula(child, depth + 1) for child in tree.children)
        if kind == "not_":
            return Not(operands[0])
        if kind == "and_":
            return And(operands)
        if kind == "or_":
            return Or(operands)
        assert kind == "implies", kind
        return Implies(operands[0], operands[1])

    def atom(self, tree: lark.Tree) -> Atom:
        names = [self.name(tok) for tok in tree.children if tok is not None]
        atom = Atom(names[0], tuple(names[1:]))
        try:
            self.vocab.check_atom(atom)  # names an unknown predicate, object or a wrong arity
        except VocabularyError as exc:
            reason = str(exc).removeprefix(f"{atom}: ")
            raise self.error(tree, f"unknown atom {atom}: {reason}") from None
        try:
            self.vocab.index(atom)
        except VocabularyError:
            raise self.error(
                tree, f"unknown atom {atom}: the vocabulary has only some atoms of {atom.predicate!r}, not this one"
            ) from None
        return atom

    # -- names ---------------------------------------------------------------------------
    def name(self, tok: Where) -> str:
        assert isinstance(tok, lark.Token)
        return self.string(tok) if tok.type == "STRING" else str(tok.value)

    def string(self, tok: lark.Token) -> str:
        try:
            return str(json.loads(tok.value, strict=False))
        except json.JSONDecodeError as exc:
            line, column = _position(tok)
            raise self.error_at(
                line,
                column + exc.pos,
                f"malformed quoted name {tok.value}: {exc.msg}; expected a JSON string",
                PropertySyntaxError,
            ) from None

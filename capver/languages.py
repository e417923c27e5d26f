"""capver's languages: their lark grammars (``grammars/*.lark``, shipped as the
package-data package :mod:`capver.grammars` and loaded from it) and the one way
their syntax errors are described.

A syntax error of any of them names the line and column, what was found (the whole
offending word, not its first character), what the parser would have accepted there
(asked from the parser's state, so that merged LALR states add no spurious
alternatives), and shows the line with a caret under the column.
"""

from __future__ import annotations

import functools
import importlib.resources
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import lark

from capver.errors import SourceError

__all__ = [
    "Child",
    "SyntaxProblem",
    "caret",
    "describe_syntax_error",
    "grammar_parser",
    "optional_tree",
    "read_source",
    "token",
    "tree",
]


Child = lark.Token | lark.Tree[lark.Token] | None
"""A child of a parse tree: a terminal, a rule, or an absent optional part."""


def token(node: Child) -> lark.Token:
    """``node``, a terminal of the grammar."""
    if not isinstance(node, lark.Token):
        raise TypeError(f"expected a token, found {node!r}")  # grammar and builder disagree
    return node


def tree(node: Child) -> lark.Tree[lark.Token]:
    """``node``, a rule of the grammar."""
    if not isinstance(node, lark.Tree):
        raise TypeError(f"expected a tree, found {node!r}")  # grammar and builder disagree
    return node


def optional_tree(node: Child) -> lark.Tree[lark.Token] | None:
    """``node``, an optional rule of the grammar (None if absent)."""
    return None if node is None else tree(node)


@functools.cache
def grammar_parser(name: str, *, lexer: str = "contextual", placeholders: bool = False) -> lark.Lark:
    """The LALR parser of grammar ``name`` (e.g. ``"capmodel.lark"``).  Building the
    tables takes ~0.1 s and a Lark object keeps no state between parses, so one per
    process and grammar is shared."""
    text = importlib.resources.files("capver.grammars").joinpath(name).read_text(encoding="utf-8")
    return lark.Lark(text, parser="lalr", lexer=lexer, propagate_positions=True, maybe_placeholders=placeholders)


@dataclass(frozen=True, slots=True)
class SyntaxProblem:
    """What is wrong at a position of a text: ``message`` reads "unexpected X;
    expected Y"; ``context`` is the source line with a caret."""

    message: str
    line: int
    column: int
    context: str
    expected: tuple[str, ...]


def caret(text: str, line: int, column: int, span: int = 40, longest: int = 100) -> str:
    """The source line with a caret under ``column``; a line longer than
    ``longest`` is cut to ``span`` characters either side of the column."""
    lines = text.split("\n")
    src = lines[line - 1].expandtabs(1) if 0 < line <= len(lines) else ""
    start = max(column - 1 - span, 0) if len(src) > longest else 0
    shown = src[start : column - 1 + span] if len(src) > longest else src
    return shown + "\n" + " " * max(column - 1 - start, 0) + "^\n"


_WORD = re.compile(r"[^\s()]+")


def describe_syntax_error(
    parser: lark.Lark, exc: lark.UnexpectedInput, text: str, words: Mapping[str, str], end: str = "end of the file"
) -> SyntaxProblem:
    """The :class:`SyntaxProblem` of ``exc``; ``words`` names the regex terminals
    (``NAME`` → "a name"), string terminals are shown quoted, and ``end`` is what the
    end of the input is called ("unexpected end of the file"; expected "the end of
    the file")."""
    expected = tuple(sorted({_terminal(parser, n, words, end) for n in _acceptable(exc)}))
    if isinstance(exc, lark.UnexpectedCharacters):
        pos = exc.pos_in_stream or 0  # lark always sets it for unexpected characters
        word = _WORD.match(text, pos)
        if word is not None and len(word.group()) > 1:
            what = f"unexpected {word.group()!r}"
        else:
            what = f"unexpected character {text[pos]!r}"
        line, column = exc.line, exc.column
    else:
        tok = getattr(exc, "token", None)
        if tok is None or tok.type in ("$END", "<EOF>"):
            what = f"unexpected {end}"
            # Just after the last character of the last line (not on the empty
            # "line" after a final newline, which editors do not number).
            lines = text.splitlines() or [""]
            line, column = len(lines), len(lines[-1]) + 1
        else:
            kind = _terminal(parser, tok.type, words, end)
            what = f"unexpected {tok.value!r}" + ("" if kind == f"'{tok.value}'" else f" ({kind})")
            line, column = tok.line or 1, tok.column or 1
    message = f"{what}; expected {_alternatives(expected)}"
    return SyntaxProblem(message, line, column, caret(text, line, column), expected)


def _acceptable(exc: lark.UnexpectedInput) -> Iterable[str]:
    """The terminals the parser could take at the error.  The LALR table's own list
    (``exc.expected``) can hold spurious look-aheads of merged states, so the
    interactive parser is asked when there is one."""
    interactive = getattr(exc, "interactive_parser", None)
    if interactive is not None:
        return interactive.accepts()
    if isinstance(exc, lark.UnexpectedCharacters):
        return exc.allowed or ()
    return getattr(exc, "expected", None) or ()


def _terminal(parser: lark.Lark, name: str, words: Mapping[str, str], end: str) -> str:
    if name in ("$END", "<EOF>"):
        return f"the {end}"
    if name in words:
        return words[name]
    try:
        pattern = parser.get_terminal(name).pattern
    except KeyError:
        return name
    if isinstance(pattern, lark.lexer.PatternStr):
        return f"'{pattern.value}'"
    # Keywords are regexps `word(?!...)` in the grammars; show the word.
    return f"'{pattern.value.split('(?!')[0]}'"


def _alternatives(words: tuple[str, ...]) -> str:
    if not words:
        return "nothing more"
    if len(words) == 1:
        return words[0]
    return ", ".join(words[:-1]) + " or " + words[-1]


def read_source(path: str | Path, error: type[SourceError]) -> str:
    """The text of the UTF-8 file at ``path``; a byte that is not UTF-8 raises
    ``error`` at its line and column."""
    p = Path(path)
    raw = p.read_bytes()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start]
        line = before.count(b"\n") + 1
        column = len(before) - (before.rfind(b"\n") + 1) + 1
        raise error(
            f"byte 0x{raw[exc.start]:02x} is not valid UTF-8; expected a UTF-8 text file",
            filename=str(p),
            line=line,
            column=column,
        ) from None

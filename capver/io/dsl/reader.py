"""The reader of the capability-model language: ``.capm`` text to a compound model h†
(paper, section 2, Definition "capability model"), checked against the grammar
(``grammars/capmodel.lark``) and then against what a grammar cannot say (declared
names, types, arities, probabilities that sum to 1; :mod:`capver.io.dsl.builder`).
Every problem is a :class:`~capver.errors.DSLSyntaxError` or
:class:`~capver.errors.DSLSemanticError` naming file, line, column and what was
expected."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import lark

from capver.core.state import State
from capver.core.vocabulary import Vocabulary
from capver.errors import DSLSyntaxError
from capver.io.dsl.builder import _Builder
from capver.io.dsl.syntax import GRAMMAR
from capver.io.literal_text import parse_state
from capver.languages import describe_syntax_error, grammar_parser, read_source
from capver.logic.condition import LogicContext
from capver.model.capability_model import CompoundModel


@dataclass(frozen=True, slots=True)
class ParsedModel:
    """What a model file denotes: its declared name and the compound model."""

    name: str
    model: CompoundModel
    filename: str = "<string>"
    init: State | None = None  # the file's (:init ...) state, when it has one

    @property
    def ctx(self) -> LogicContext:
        return self.model.ctx

    def initial_state(self, text: str = "", *, what: str = "--init") -> tuple[State, str]:
        """The state a command starts from, and where it came from: the atoms ``text``
        lists when it lists any, else the file's ``(:init ...)``, else the empty state."""
        if text.strip():
            return parse_state(text, self.vocabulary, what=what), what
        if self.init is not None:
            return self.init, f"the (:init ...) of {self.filename}"
        return 0, f"the empty state ({self.filename} has no (:init ...); give {what})"

    @property
    def vocabulary(self) -> Vocabulary:
        return self.model.vocabulary

    def start(self, option: str | None, *, what: str = "--init") -> tuple[State, str]:
        """The state a command starts from for its ``--init`` as given: not given
        (None) is :meth:`initial_state`'s default; ``--init ''`` is the empty state,
        the one spelling of the state where no atom holds."""
        if option is not None and not option.strip():
            return 0, f"{what} '' (the empty state: no atom holds)"
        return self.initial_state(option or "", what=what)


_TERMINAL_WORDS = {
    "NAME": "a name",
    "STRING": 'a quoted name such as "x-1"',
    "VARIABLE": "a parameter such as ?x",
    "PROBABILITY": "a probability such as 1/3",
    "$END": "the end of the file",
}


def _parser() -> lark.Lark:
    return grammar_parser(GRAMMAR)


def parse(
    text: str,
    *,
    filename: str = "<string>",
    ctx: LogicContext | None = None,
    bdd: str = "cudd",
    ctx_source: str = "the given context",
) -> ParsedModel:
    """The model a text denotes.

    Conditions are built in ``ctx`` (whose vocabulary must then equal the file's; a
    mismatch names ``ctx_source``, e.g. "the first model (a.capm)"), or in a new
    :class:`LogicContext` over the file's vocabulary with BDD backend ``bdd``.
    Raises :class:`DSLSyntaxError` or :class:`DSLSemanticError` for bad input."""
    parser = _parser()
    try:
        tree = parser.parse(text)
    except lark.UnexpectedInput as exc:
        raise _syntax_error(parser, exc, text, filename) from None
    name, model, init = _Builder(text, filename).model(tree, ctx, bdd, ctx_source)
    return ParsedModel(name, model, filename, init)


def read(
    path: str | Path, *, ctx: LogicContext | None = None, bdd: str = "cudd", ctx_source: str = "the given context"
) -> ParsedModel:
    """Parse the model file at ``path``."""
    text = read_source(path, DSLSyntaxError)
    return parse(text, filename=str(path), ctx=ctx, bdd=bdd, ctx_source=ctx_source)


def _syntax_error(parser: lark.Lark, exc: lark.UnexpectedInput, text: str, filename: str) -> DSLSyntaxError:
    p = describe_syntax_error(parser, exc, text, _TERMINAL_WORDS)
    return DSLSyntaxError(p.message, filename=filename, line=p.line, column=p.column, context=p.context)

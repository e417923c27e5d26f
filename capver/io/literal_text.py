"""The one reader of atoms, literals, states and goals as users write them
(``--init``, ``--goal``, ``--capability`` and the Python API), over a vocabulary.

Grammar: ``grammars/literals.lark``.  ``on(a,b)``, ``on(a, b)`` and ``(on a b)`` are
one atom; ``~p``, ``not p`` and ``(not p)`` negate it; literals are joined by white
space or ``&``; ``|`` separates alternatives.  Every error names the option (or
argument) the text came from, shows the text with a caret, and says what was
expected; an atom the vocabulary lacks is named with the reason (unknown predicate,
object, arity).
"""

from __future__ import annotations

import json

import lark

from capver.core.state import State
from capver.core.vocabulary import Atom, Literal, Vocabulary
from capver.errors import UsageError, VocabularyError
from capver.languages import caret, describe_syntax_error, grammar_parser

__all__ = ["parse_atoms", "parse_conjunction", "parse_dnf", "parse_state"]

GRAMMAR = "literals.lark"
_WORDS = {"NAME": "a name", "STRING": 'a quoted name such as "x-1"', "_NOT": "'not'", "CALL": "an atom such as on(a,b)"}

Conjunction = tuple[Literal, ...]


def parse_dnf(text: str, vocab: Vocabulary, *, what: str = "goal") -> tuple[Conjunction, ...]:
    """The alternatives of ``text``, each a consistent conjunction of literals over
    ``vocab``.  ``what`` names the source in errors (e.g. ``--goal``)."""
    tree = _tree(text, what)
    if tree.data == "braced":  # a state as capver prints it: one conjunction
        return (_conjunction(tree, text, vocab, what),)
    return tuple(_conjunction(alt, text, vocab, what) for alt in tree.children)


def parse_conjunction(text: str, vocab: Vocabulary, *, what: str = "goal") -> Conjunction:
    """A single conjunction (no ``|``)."""
    alternatives = parse_dnf(text, vocab, what=what)
    if len(alternatives) != 1:
        raise UsageError(f"{what} {text!r}: '|' is not allowed here; expected one conjunction of literals")
    return alternatives[0]


def parse_state(text: str, vocab: Vocabulary, *, what: str = "--init") -> State:
    """The state whose true atoms ``text`` lists (every other atom is false), bare
    (``on(a,b) clear(a)``) or as capver prints states (``{on(a,b), clear(a)}``); the
    empty text and ``{}`` are the empty state."""
    s = 0
    for atom in parse_atoms(text, vocab, what=what):
        s |= 1 << vocab.index(atom)
    return s


def parse_atoms(text: str, vocab: Vocabulary, *, what: str = "--init") -> tuple[Atom, ...]:
    """The atoms ``text`` lists (positive literals only, no ``|``)."""
    if not text.strip():
        return ()
    lits = parse_conjunction(text, vocab, what=what)
    negative = [lit for lit in lits if not lit.positive]
    if negative:
        raise UsageError(
            f"{what} {text!r}: a state lists its true atoms; expected no negation, got not {negative[0].atom}"
        )
    return tuple(lit.atom for lit in lits)


def _tree(text: str, what: str) -> lark.Tree:
    parser = grammar_parser(GRAMMAR)
    try:
        return parser.parse(text)
    except lark.UnexpectedInput as exc:
        problem = describe_syntax_error(parser, exc, text, _WORDS, end="end of the text")
        raise UsageError(
            f"{what} {text!r}: column {problem.column}: {problem.message}\n{problem.context.rstrip()}"
        ) from None


def _conjunction(alt: lark.Tree, text: str, vocab: Vocabulary, what: str) -> Conjunction:
    seen: dict[Atom, bool] = {}
    for lit in alt.children:
        assert isinstance(lit, lark.Tree)
        positive = lit.data != "negated"
        atom_tree = lit.children[0]
        assert isinstance(atom_tree, lark.Tree)
        atom = _atom(atom_tree, text, vocab, what)
        if seen.get(atom, positive) != positive:
            raise UsageError(f"{what} {text!r}: asks for both {atom} and not {atom}; expected consistent literals")
        seen[atom] = positive
    return tuple(Literal(a, p) for a, p in seen.items())


def _atom(tree: lark.Tree, text: str, vocab: Vocabulary, what: str) -> Atom:
    names = [_name(t) for t in tree.children if t is not None]
    atom = Atom(names[0], tuple(names[1:]))
    try:
        vocab.check_atom(atom)  # names an unknown predicate, object or a wrong arity
        vocab.index(atom)
    except VocabularyError as exc:
        line, column = tree.meta.line, tree.meta.column
        raise UsageError(f"{what} {text!r}: column {column}: {exc}\n{caret(text, line, column).rstrip()}") from None
    return atom


def _name(tok: lark.Tree | lark.Token) -> str:
    assert isinstance(tok, lark.Token)
    text = str(tok.value)[:-1] if tok.type == "CALL" else str(tok.value)  # a call's name ends with '('
    return str(json.loads(text)) if text.startswith('"') else text

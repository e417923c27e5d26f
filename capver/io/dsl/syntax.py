"""The capability-model language's names and s-expressions, shared by its writer and
reader (paper, section 2, Definition "capability model"; grammar
``grammars/capmodel.lark``): the reserved words, how a name is quoted, the
s-expression type :data:`Sexp` and the s-expressions of atoms, literals, effects
and cube covers, a predicate's signature and the default atom order."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from capver.core.state import Effect
from capver.core.vocabulary import ROOT_TYPE, Atom, Literal, Predicate, Vocabulary
from capver.logic.bdd import Cube

GRAMMAR = "capmodel.lark"
WIDTH = 88
MAX_DEPTH = 100
"""Deepest formula nesting accepted; deeper input would exhaust Python's stack in
the recursive formula and BDD builders."""

KEYWORDS = frozenset({"define", "capability-model", "probabilistic", "and", "or", "not", "true", "false"})
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")
# These characters would make two different atoms print alike (``p(a,b)``) or make
# an atom's SMT symbol collide with another's next-state symbol (``p'``).
_FORBIDDEN_IN_NAMES = re.compile(r"[\s(),']")

Sexp = str | list["Sexp"]
"""A symbolic expression to print: a token, or a parenthesised list."""


def quote(name: str) -> str:
    """A name as it appears in a model file: bare if it is a plain identifier that is
    not a keyword, else a JSON string."""
    if _PLAIN_NAME.fullmatch(name) and name not in KEYWORDS:
        return name
    return json.dumps(name, ensure_ascii=False)


def flat(e: Sexp) -> str:
    if isinstance(e, str):
        return e
    return "(" + " ".join(flat(x) for x in e) + ")"


def _param_names(k: int) -> list[str]:
    base = ["?x", "?y", "?z", "?u", "?v", "?w"]
    return base[:k] if k <= len(base) else [f"?x{i + 1}" for i in range(k)]


def default_atoms(vocab: Vocabulary) -> tuple[Atom, ...]:
    """The atom order :meth:`Vocabulary.build` chooses when no atoms are given."""
    return tuple(a for p in vocab.predicates for a in vocab.groundings(p))


def _signature(p: Predicate) -> str:
    """``(on ?x - block ?y - block)``; parameters of the root type are left untyped."""
    parts = [quote(p.name)]
    for var, t in zip(_param_names(p.arity), p.param_types, strict=True):
        parts += [var] if t == ROOT_TYPE else [var, "-", quote(t)]
    return "(" + " ".join(parts) + ")"


def _atom_sexp(a: Atom) -> Sexp:
    return [quote(a.predicate), *(quote(x) for x in a.args)]


def _literal_sexp(lit: Literal) -> Sexp:
    return _atom_sexp(lit.atom) if lit.positive else ["not", _atom_sexp(lit.atom)]


def _conjunction_sexp(lits: Sequence[Literal]) -> Sexp:
    if len(lits) == 1:
        return _literal_sexp(lits[0])
    return ["and", *(_literal_sexp(x) for x in lits)]


def _effect_literals(vocab: Vocabulary, eta: Effect) -> list[Literal]:
    lits = []
    for i, a in enumerate(vocab.atoms):
        bit = 1 << i
        if eta.add & bit:
            lits.append(Literal(a, True))
        elif eta.delete & bit:
            lits.append(Literal(a, False))
    return lits


def _cube_literals(vocab: Vocabulary, c: Cube) -> list[Literal]:
    return [Literal(a, bool(c.value >> i & 1)) for i, a in enumerate(vocab.atoms) if c.mask >> i & 1]


def _cover_sexp(vocab: Vocabulary, cover: Sequence[Cube]) -> Sexp:
    if not cover:
        return "false"
    if len(cover) == 1 and cover[0].mask == 0:
        return "true"
    cubes = [_conjunction_sexp(_cube_literals(vocab, c)) for c in cover]
    return cubes[0] if len(cubes) == 1 else ["or", *cubes]

"""First-order formulas over typed objects (section 5 of the model-introspection
paper, 002): terms, literals, ∧, ∨, ¬, ∃, ∀ "of arbitrary construction".

A *term* is a constant (an object name, ``str``) or a typed variable :class:`Var`.
A formula is a tree of :class:`Lit` (a predicate applied to terms), :class:`Equal`
(term identity, needed for schemas such as ``stack(X, Y)`` with X ≠ Y),
:class:`And`, :class:`Or`, :class:`Not`, :class:`Exists`, :class:`Forall` and
:class:`Prev`.

``Prev(f)`` is our addition: the reward and termination signals of the paper are
functions R(s, a, s′) and C(s, a, s′) of a whole transition, and the Bins domain pays
"each time a bin is emptied and closed", i.e. on the transition *into* such a state.
Formulas are evaluated on the next state s′; a ``Prev`` subformula is evaluated on
the previous state s.  Formulas without ``Prev`` are plain state formulas.

States are either ``frozenset[Atom]`` (the paper's "set of true ground literals") or
capver bitsets (``int`` over a :class:`~capver.core.vocabulary.Vocabulary`); the
vocabulary always supplies the typed objects the quantifiers range over ("each
substitution of X with an object in the state s").  :func:`evaluate` interprets a
formula directly; :func:`compile_formula` grounds it once into bit masks for the
planners' inner loops.  Both give the same answer (checked by the tests).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from capver.core.state import State
from capver.core.vocabulary import ROOT_TYPE, Atom, Vocabulary
from capver.errors import IntrospectionError, VocabularyError


@dataclass(frozen=True, slots=True, order=True)
class Var:
    """A typed variable; it ranges over the objects of ``type`` (and its subtypes)."""

    name: str
    type: str = ROOT_TYPE

    def __str__(self) -> str:
        return f"?{self.name}"


Term = Var | str
"""A constant (an object name) or a variable."""


class Formula:
    """Base class of the formula nodes (no behaviour; see the module functions)."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class Lit(Formula):
    """A predicate applied to terms; ground when every term is a constant."""

    predicate: str
    terms: tuple[Term, ...] = ()

    def __str__(self) -> str:
        if not self.terms:
            return self.predicate
        return f"{self.predicate}({','.join(str(t) for t in self.terms)})"


@dataclass(frozen=True, slots=True)
class Equal(Formula):
    """``left = right`` (identity of the objects the terms denote)."""

    left: Term
    right: Term

    def __str__(self) -> str:
        return f"{self.left} = {self.right}"


@dataclass(frozen=True, slots=True)
class And(Formula):
    children: tuple[Formula, ...]

    def __str__(self) -> str:
        return "(" + " and ".join(str(c) for c in self.children) + ")" if self.children else "true"


@dataclass(frozen=True, slots=True)
class Or(Formula):
    children: tuple[Formula, ...]

    def __str__(self) -> str:
        return "(" + " or ".join(str(c) for c in self.children) + ")" if self.children else "false"


@dataclass(frozen=True, slots=True)
class Not(Formula):
    child: Formula

    def __str__(self) -> str:
        return f"not {self.child}"


@dataclass(frozen=True, slots=True)
class Exists(Formula):
    var: Var
    body: Formula

    def __str__(self) -> str:
        return f"exists {self.var}:{self.var.type}. {self.body}"


@dataclass(frozen=True, slots=True)
class Forall(Formula):
    var: Var
    body: Formula

    def __str__(self) -> str:
        return f"forall {self.var}:{self.var.type}. {self.body}"


@dataclass(frozen=True, slots=True)
class Prev(Formula):
    """``body`` evaluated on the previous state s of the transition ⟨s, a, s′⟩
    (nested ``Prev`` reads the same state: only one step of history exists)."""

    body: Formula

    def __str__(self) -> str:
        return f"prev[{self.body}]"


TRUE: Formula = And(())
FALSE: Formula = Or(())


# -- constructors -----------------------------------------------------------------
def lit(predicate: str, *terms: Term) -> Lit:
    return Lit(predicate, tuple(terms))


def conj(*children: Formula) -> Formula:
    return children[0] if len(children) == 1 else And(tuple(children))


def disj(*children: Formula) -> Formula:
    return children[0] if len(children) == 1 else Or(tuple(children))


def neg(child: Formula) -> Formula:
    return Not(child)


def exists(variables: Var | Iterable[Var], body: Formula) -> Formula:
    vs = [variables] if isinstance(variables, Var) else list(variables)
    for v in reversed(vs):
        body = Exists(v, body)
    return body


def forall(variables: Var | Iterable[Var], body: Formula) -> Formula:
    vs = [variables] if isinstance(variables, Var) else list(variables)
    for v in reversed(vs):
        body = Forall(v, body)
    return body


# -- structure --------------------------------------------------------------------
def free_vars(f: Formula) -> frozenset[Var]:
    """Variables of ``f`` not bound by a quantifier above them."""
    if isinstance(f, Lit):
        return frozenset(t for t in f.terms if isinstance(t, Var))
    if isinstance(f, Equal):
        return frozenset(t for t in (f.left, f.right) if isinstance(t, Var))
    if isinstance(f, (And, Or)):
        out: frozenset[Var] = frozenset()
        for c in f.children:
            out |= free_vars(c)
        return out
    if isinstance(f, (Not, Prev)):
        return free_vars(f.child if isinstance(f, Not) else f.body)
    if isinstance(f, (Exists, Forall)):
        return free_vars(f.body) - {f.var}
    raise IntrospectionError(f"not a formula: {f!r}")


def uses_prev(f: Formula) -> bool:
    """Whether ``f`` looks at the previous state anywhere."""
    if isinstance(f, Prev):
        return True
    if isinstance(f, (And, Or)):
        return any(uses_prev(c) for c in f.children)
    if isinstance(f, Not):
        return uses_prev(f.child)
    if isinstance(f, (Exists, Forall)):
        return uses_prev(f.body)
    return False


def substitute(f: Formula, binding: Mapping[Var, str]) -> Formula:
    """Replace free occurrences of the bound variables by their objects."""
    if not binding:
        return f
    if isinstance(f, Lit):
        return Lit(f.predicate, tuple(resolve_term(t, binding) for t in f.terms))
    if isinstance(f, Equal):
        return Equal(resolve_term(f.left, binding), resolve_term(f.right, binding))
    if isinstance(f, And):
        return And(tuple(substitute(c, binding) for c in f.children))
    if isinstance(f, Or):
        return Or(tuple(substitute(c, binding) for c in f.children))
    if isinstance(f, Not):
        return Not(substitute(f.child, binding))
    if isinstance(f, Prev):
        return Prev(substitute(f.body, binding))
    if isinstance(f, (Exists, Forall)):
        # The quantifier shadows an outer binding of the same variable.
        inner = {v: o for v, o in binding.items() if v != f.var}
        return type(f)(f.var, substitute(f.body, inner))
    raise IntrospectionError(f"not a formula: {f!r}")


def resolve_term(t: Term, binding: Mapping[Var, str]) -> Term:
    return binding.get(t, t) if isinstance(t, Var) else t


def check_formula(f: Formula, vocab: Vocabulary, bound: Iterable[Var] = (), where: str = "formula") -> None:
    """Raise :class:`IntrospectionError` unless every predicate, object and variable
    of ``f`` is known, arities match, types fit and no variable is free outside
    ``bound``."""
    _check(f, vocab, {v.name: v for v in bound}, where)


def _check(f: Formula, vocab: Vocabulary, scope: dict[str, Var], where: str) -> None:
    if isinstance(f, Lit):
        pred = vocab.predicates.get(f.predicate)
        if pred is None:
            raise IntrospectionError(
                f"{where}: unknown predicate {f.predicate!r} in {f}; expected one of {sorted(vocab.predicates)}"
            )
        if len(f.terms) != pred.arity:
            raise IntrospectionError(
                f"{where}: {f}: predicate {pred.name!r} takes {pred.arity} argument(s), got {len(f.terms)}"
            )
        for t, want in zip(f.terms, pred.param_types):
            _check_term(t, want, vocab, scope, where, str(f))
        return
    if isinstance(f, Equal):
        for t in (f.left, f.right):
            _check_term(t, ROOT_TYPE, vocab, scope, where, str(f))
        return
    if isinstance(f, (And, Or)):
        for c in f.children:
            _check(c, vocab, scope, where)
        return
    if isinstance(f, Not):
        _check(f.child, vocab, scope, where)
        return
    if isinstance(f, Prev):
        _check(f.body, vocab, scope, where)
        return
    if isinstance(f, (Exists, Forall)):
        if f.var.type not in vocab.types:
            raise IntrospectionError(f"{where}: variable {f.var} has unknown type {f.var.type!r}")
        _check(f.body, vocab, {**scope, f.var.name: f.var}, where)
        return
    raise IntrospectionError(f"{where}: not a formula: {f!r}")


def _check_term(t: Term, want: str, vocab: Vocabulary, scope: dict[str, Var], where: str, ctx: str) -> None:
    if isinstance(t, Var):
        bound = scope.get(t.name)
        if bound is None:
            raise IntrospectionError(f"{where}: {ctx}: variable {t} is not bound by a quantifier or parameter")
        if bound != t:
            raise IntrospectionError(
                f"{where}: {ctx}: variable {t} is used with type {t.type!r}, bound as {bound.type!r}"
            )
        if not (vocab.is_subtype(t.type, want) or vocab.is_subtype(want, t.type)):
            raise IntrospectionError(f"{where}: {ctx}: variable {t} of type {t.type!r} cannot fill a {want!r} argument")
        return
    if not isinstance(t, str):
        raise IntrospectionError(f"{where}: {ctx}: term {t!r} is neither an object name nor a Var")
    if t not in vocab.objects:
        raise IntrospectionError(f"{where}: {ctx}: unknown object {t!r}")
    if not vocab.is_subtype(vocab.objects[t], want):
        raise IntrospectionError(f"{where}: {ctx}: object {t!r} has type {vocab.objects[t]!r}, expected {want!r}")


# -- direct evaluation ------------------------------------------------------------
StateLike = int | frozenset[Atom]


def holds_atom(state: StateLike, atom: Atom, vocab: Vocabulary) -> bool:
    """Whether ``atom`` is true in a set-of-atoms or bitset state."""
    if isinstance(state, int):
        try:
            return bool(state >> vocab.index(atom) & 1)
        except VocabularyError:
            # An atom outside the vocabulary (e.g. an ill-typed grounding) has no
            # bit and is therefore false in every bitset state.
            return False
    return atom in state


def ground_atom(f: Lit, binding: Mapping[Var, str]) -> Atom:
    try:
        return Atom(f.predicate, tuple(binding[t] if isinstance(t, Var) else t for t in f.terms))
    except KeyError as exc:
        raise IntrospectionError(f"{f}: variable {exc.args[0]} is not bound") from None


def evaluate(
    f: Formula,
    state: StateLike,
    vocab: Vocabulary,
    *,
    prev: StateLike | None = None,
    binding: Mapping[Var, str] | None = None,
) -> bool:
    """Truth of ``f`` in ``state`` (the next state s′); ``Prev`` parts are evaluated
    in ``prev`` (required when ``f`` uses them)."""
    return Evaluator(vocab, {}).run(f, state, prev, dict(binding or {}))


@dataclass(frozen=True, slots=True)
class Evaluator:
    """Direct evaluation over one vocabulary, caching the objects of each type."""

    vocab: Vocabulary
    pools: dict[str, list[str]]  # type -> objects, filled on first use

    def objects(self, t: str) -> list[str]:
        pool = self.pools.get(t)
        if pool is None:
            pool = self.pools[t] = self.vocab.objects_of(t)
        return pool

    def run(self, f: Formula, s: StateLike, p: StateLike | None, b: dict[Var, str]) -> bool:
        if isinstance(f, Lit):
            return holds_atom(s, ground_atom(f, b), self.vocab)
        if isinstance(f, And):
            return all(self.run(c, s, p, b) for c in f.children)
        if isinstance(f, Or):
            return any(self.run(c, s, p, b) for c in f.children)
        if isinstance(f, Not):
            return not self.run(f.child, s, p, b)
        if isinstance(f, Exists):
            return any(self.run(f.body, s, p, {**b, f.var: o}) for o in self.objects(f.var.type))
        if isinstance(f, Forall):
            return all(self.run(f.body, s, p, {**b, f.var: o}) for o in self.objects(f.var.type))
        if isinstance(f, Equal):
            return resolve_term(f.left, b) == resolve_term(f.right, b)
        if isinstance(f, Prev):
            if p is None:
                raise IntrospectionError(f"{f}: a previous state is needed to evaluate prev[...]")
            # Only one step of history exists: prev[prev[f]] reads the same state.
            return self.run(f.body, p, p, b)
        raise IntrospectionError(f"not a formula: {f!r}")


# -- grounding and compilation to bit masks ----------------------------------------
@dataclass(frozen=True, slots=True)
class BitFormula:
    """A formula grounded over a vocabulary and compiled to masks, in negation
    normal form.  A node is a conjunction (``is_and``) or disjunction of literal
    leaves, given as masks over the next state (``pos``/``neg``) and the previous
    state (``ppos``/``pneg``), and of sub-nodes ``children``.

    Conjunction holds iff every pos bit is set, no neg bit is set and every child
    holds; disjunction iff some pos bit is set, some neg bit is unset or some child
    holds.  The empty conjunction is true, the empty disjunction false.
    """

    is_and: bool
    pos: int = 0
    neg: int = 0
    ppos: int = 0
    pneg: int = 0
    children: tuple[BitFormula, ...] = ()

    def holds(self, s: State, prev: State = 0) -> bool:
        if self.is_and:
            if (s & self.pos) != self.pos or s & self.neg:
                return False
            if (prev & self.ppos) != self.ppos or prev & self.pneg:
                return False
            # Loops, not all()/any(): a generator per call is slower on this hot path (see logic.bdd._covers).
            for c in self.children:  # noqa: SIM110
                if not c.holds(s, prev):
                    return False
            return True
        if s & self.pos or (s & self.neg) != self.neg:
            return True
        if prev & self.ppos or (prev & self.pneg) != self.pneg:
            return True
        for c in self.children:  # noqa: SIM110
            if c.holds(s, prev):
                return True
        return False

    @property
    def is_true(self) -> bool:
        return self.is_and and not (self.pos | self.neg | self.ppos | self.pneg) and not self.children

    @property
    def is_false(self) -> bool:
        return not self.is_and and not (self.pos | self.neg | self.ppos | self.pneg) and not self.children

    @property
    def conjunction(self) -> tuple[int, int] | None:
        """(pos, neg) masks if this is a conjunction of next-state literals only."""
        if self.is_and and not self.children and not (self.ppos | self.pneg):
            return self.pos, self.neg
        return None


_BF_TRUE = BitFormula(True)
_BF_FALSE = BitFormula(False)


def compile_formula(
    f: Formula,
    vocab: Vocabulary,
    *,
    binding: Mapping[Var, str] | None = None,
    fixed: Mapping[Atom, bool] | None = None,
) -> BitFormula:
    """Ground ``f`` (quantifiers expanded over the vocabulary's objects) and compile
    it to masks.  ``fixed`` gives truth values for atoms known in advance (static
    facts); they are folded into constants.  Atoms outside the vocabulary are false."""
    return _compile(f, True, vocab, dict(binding or {}), fixed or {}, False)


def _compile(
    f: Formula, pol: bool, vocab: Vocabulary, b: dict[Var, str], fixed: Mapping[Atom, bool], prev: bool
) -> BitFormula:
    if isinstance(f, Lit):
        atom = ground_atom(f, b)
        known = fixed.get(atom)
        if known is None and atom not in vocab:
            known = False
        if known is not None:
            return _BF_TRUE if known == pol else _BF_FALSE
        bit = 1 << vocab.index(atom)
        if prev:
            return BitFormula(True, ppos=bit) if pol else BitFormula(True, pneg=bit)
        return BitFormula(True, pos=bit) if pol else BitFormula(True, neg=bit)
    if isinstance(f, Equal):
        same = resolve_term(f.left, b) == resolve_term(f.right, b)
        return _BF_TRUE if same == pol else _BF_FALSE
    if isinstance(f, Not):
        return _compile(f.child, not pol, vocab, b, fixed, prev)
    if isinstance(f, Prev):
        return _compile(f.body, pol, vocab, b, fixed, True)
    if isinstance(f, (And, Or)):
        parts = [_compile(c, pol, vocab, b, fixed, prev) for c in f.children]
        return _combine(isinstance(f, And) == pol, parts)
    if isinstance(f, (Exists, Forall)):
        parts = [_compile(f.body, pol, vocab, {**b, f.var: o}, fixed, prev) for o in vocab.objects_of(f.var.type)]
        return _combine(isinstance(f, Forall) == pol, parts)
    raise IntrospectionError(f"not a formula: {f!r}")


def _combine(is_and: bool, parts: list[BitFormula]) -> BitFormula:
    """Conjunction (or disjunction) of compiled parts, folding constants and merging
    single-literal leaves into the masks."""
    pos = neg = ppos = pneg = 0
    children: list[BitFormula] = []
    for part in parts:
        if (is_and and part.is_false) or (not is_and and part.is_true):
            return part
        if (is_and and part.is_true) or (not is_and and part.is_false):
            continue
        same_kind = part.is_and == is_and
        n_leaves = sum(x.bit_count() for x in (part.pos, part.neg, part.ppos, part.pneg))
        if same_kind or (not part.children and n_leaves == 1):
            # A single literal is both a conjunction and a disjunction of itself.
            pos |= part.pos
            neg |= part.neg
            ppos |= part.ppos
            pneg |= part.pneg
            children.extend(part.children)
        else:
            children.append(part)
    if is_and and (pos & neg or ppos & pneg):
        return _BF_FALSE
    if not is_and and (pos & neg or ppos & pneg):
        return _BF_TRUE
    if not (pos | neg | ppos | pneg) and len(children) == 1:
        return children[0]
    return BitFormula(is_and, pos, neg, ppos, pneg, tuple(children))

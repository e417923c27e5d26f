"""Rule conditions cond(r) kept both as a BDD and as an SMT formula (section 3.1).

A :class:`Condition` is built from one *source* and derives both representations
from it, so they cannot drift apart:

* ``pessimistic`` — pcond(S_φ) = ⋁_{s∈S_φ} ℓ(s), source: the block's states;
* ``optimistic`` — ocond(S_φ) = ¬⋁_{s∈Φ_c∖S_φ} ℓ(s), source: the block's states
  and all states observed for the capability (the other blocks are the difference);
* ``formula`` — any Boolean formula over the atoms, source: a pysmt formula (this is
  how models read from the DSL arrive).

``holds(s)`` never touches the BDD or the solver: it is a set lookup for the two
lattice kinds and a cube test on the BDD's irredundant cover for formulas.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

from pysmt.fnode import FNode

from capver.core.state import State
from capver.core.vocabulary import Vocabulary
from capver.logic.bdd import BDDBackend, Cube, Node, disjoin, isop, isop_of_complement, isop_of_states, make_backend
from capver.logic.smt import SmtContext


class LogicContext:
    """The BDD manager and SMT environment shared by all conditions over one
    vocabulary.  Conditions from different contexts must not be mixed."""

    def __init__(self, vocab: Vocabulary, bdd: str = "cudd") -> None:
        self.vocab = vocab
        self.bdd: BDDBackend = make_backend(len(vocab), bdd)
        self.smt = SmtContext(vocab)
        self._minterms: dict[int, Node] = {}
        self._term_cubes: dict[FNode, Node] = {}  # bdd_of_formula's conjunctions of literals

    def minterm_bdd(self, s: State) -> Node:
        u = self._minterms.get(s)
        if u is None:
            u = self.bdd.minterm(s)
            self._minterms[s] = u
        return u

    def bdd_of_formula(self, f: FNode) -> Node:
        """Compile a pysmt Boolean formula over the atom symbols into a BDD."""
        index = {sym: i for i, sym in enumerate(self.smt.cur)}
        # pysmt hash-conses formulas, so ¬p is one node: a literal is one dict lookup.
        literals = {sym: (i, True) for sym, i in index.items()}
        literals.update({self.smt.mgr.Not(sym): (i, False) for sym, i in index.items()})
        memo: dict[FNode, Node] = {}
        b = self.bdd

        def rec(g: FNode) -> Node:
            hit = memo.get(g)
            if hit is not None:
                return hit
            if g.is_true():
                r = b.true
            elif g.is_false():
                r = b.false
            elif g.is_symbol():
                r = b.var(index[g])
            elif g.is_not():
                r = b.neg(rec(g.arg(0)))
            elif g.is_and():
                # Models read from the DSL are disjunctions of observed states, each a
                # conjunction of one literal per atom: one cube call builds such a term
                # (76 conjunctions apiece on Crafter's vocabulary took 17 s per model).
                # The same observed state recurs in many rules' conditions: kept per context.
                term = self._term_cubes.get(g)
                c = _literal_cube(g, literals) if term is None else None
                if term is not None:
                    r = term
                elif c is not None:
                    r = self._term_cubes[g] = b.cube(c)
                else:
                    r = b.true
                    for a in g.args():
                        r = b.conj(r, rec(a))
            elif g.is_or():
                r = disjoin(b, [rec(a) for a in g.args()])
            elif g.is_implies():
                r = b.disj(b.neg(rec(g.arg(0))), rec(g.arg(1)))
            elif g.is_iff():
                x, y = rec(g.arg(0)), rec(g.arg(1))
                r = b.disj(b.conj(x, y), b.conj(b.neg(x), b.neg(y)))
            elif g.is_ite():
                c, t, e = (rec(a) for a in g.args())
                r = b.disj(b.conj(c, t), b.conj(b.neg(c), e))
            else:
                raise ValueError(f"unsupported connective in condition: {g}")
            memo[g] = r
            return r

        try:
            return rec(f)
        finally:
            memo.clear()  # rec's closure is a cycle: do not let it pin BDD nodes
            rec = None  # type: ignore[assignment]  # empties the closure cell: breaks the cycle


def _literal_cube(g: FNode, literals: dict[FNode, tuple[int, bool]]) -> Cube | None:
    """The cube of a conjunction whose arguments are all literals (``literals`` maps
    each atom and its negation to (bit, positive)), else None (also for p ∧ ¬p,
    which the general case makes false)."""
    mask = value = 0
    for a in g.args():
        hit = literals.get(a)
        if hit is None:
            return None
        i, positive = hit
        bit = 1 << i
        if mask & bit and bool(value & bit) != positive:
            return None
        mask |= bit
        if positive:
            value |= bit
    return Cube(mask, value)


class ConditionKind(StrEnum):
    """How a condition is given: the pessimistic condition of an observed block (it
    holds exactly on the block), the optimistic one (the block plus every state
    outside the capability's tried states), or a formula."""

    PESSIMISTIC = "pessimistic"
    OPTIMISTIC = "optimistic"
    FORMULA = "formula"


class Condition:
    """An immutable rule condition; see the module docstring for the kinds."""

    __slots__ = ("_bdd", "_complement_cover", "_cover", "_smt", "ctx", "kind", "states", "universe")

    def __init__(
        self,
        ctx: LogicContext,
        kind: ConditionKind | str,
        states: frozenset[int] = frozenset(),
        universe: frozenset[int] = frozenset(),
        *,
        bdd: Node | None = None,
        smt: FNode | None = None,
    ) -> None:
        try:
            kind = ConditionKind(kind)
        except ValueError:
            raise ValueError(f"unknown condition kind {kind!r}") from None
        if kind is ConditionKind.FORMULA and smt is None and bdd is None:
            raise ValueError("a formula condition needs its formula or its BDD")
        self.ctx = ctx
        self.kind: ConditionKind = kind
        self.states = states
        self.universe = universe
        self._bdd = bdd
        self._smt = smt
        self._cover: tuple[Cube, ...] | None = None
        self._complement_cover: tuple[Cube, ...] | None = None

    # -- constructors ---------------------------------------------------------------
    @staticmethod
    def pessimistic(ctx: LogicContext, block: Iterable[int], *, bdd: Node | None = None) -> Condition:
        return Condition(ctx, ConditionKind.PESSIMISTIC, frozenset(block), bdd=bdd)

    @staticmethod
    def optimistic(
        ctx: LogicContext, block: Iterable[int], observed: Iterable[int], *, bdd: Node | None = None
    ) -> Condition:
        return Condition(ctx, ConditionKind.OPTIMISTIC, frozenset(block), frozenset(observed), bdd=bdd)

    @staticmethod
    def formula(ctx: LogicContext, f: FNode) -> Condition:
        return Condition(ctx, ConditionKind.FORMULA, smt=f)

    @staticmethod
    def true(ctx: LogicContext) -> Condition:
        return Condition(ctx, ConditionKind.FORMULA, smt=ctx.smt.mgr.TRUE())

    # -- semantics --------------------------------------------------------------------
    def holds(self, s: State) -> bool:
        """s ⊨ cond."""
        if self.kind is ConditionKind.PESSIMISTIC:
            return s in self.states
        if self.kind is ConditionKind.OPTIMISTIC:
            return s in self.states or s not in self.universe
        # A loop, not any(): any() over a generator took 2.5-4.5x as long (timeit, 4 cubes), per state.
        for c in self.cover:  # noqa: SIM110
            if (s & c.mask) == c.value:
                return True
        return False

    @property
    def excluded(self) -> frozenset[int]:
        """For an optimistic condition, Φ_c ∖ S_φ: the states it rules out."""
        return self.universe - self.states

    @property
    def bdd(self) -> Node:
        if self._bdd is None:
            ctx, b = self.ctx, self.ctx.bdd
            if self.kind is ConditionKind.PESSIMISTIC:
                self._bdd = disjoin(b, (ctx.minterm_bdd(s) for s in self.states))
            elif self.kind is ConditionKind.OPTIMISTIC:
                self._bdd = b.neg(disjoin(b, (ctx.minterm_bdd(s) for s in self.excluded)))
            else:
                assert self._smt is not None
                self._bdd = ctx.bdd_of_formula(self._smt)
        return self._bdd

    @property
    def smt(self) -> FNode:
        if self._smt is None:
            smt = self.ctx.smt
            if self.kind is ConditionKind.PESSIMISTIC:
                self._smt = smt.disjunction_of_states(self.states)
            elif self.kind is ConditionKind.FORMULA:
                # Given as a BDD only: the formula is its irredundant cover, built when asked.
                self._smt = smt.cover(self.cover)
            else:
                # ¬⋁_{Φ_c∖S_φ} ℓ(s) ≡ ⋁_{S_φ} ℓ(s) ∨ ¬⋁_{Φ_c} ℓ(s) (blocks are disjoint); the
                # second disjunct is hash-consed once per capability, so h∨'s formulas
                # grow with the states rather than with rules × states.
                self._smt = smt.mgr.Or(
                    smt.disjunction_of_states(self.states),
                    smt.mgr.Not(smt.disjunction_of_states(self.universe)),
                )
        return self._smt

    @property
    def cover(self) -> tuple[Cube, ...]:
        """An irredundant sum-of-products cover of the condition: ``isop`` of its BDD.

        For the two lattice kinds the same cover is computed on the explicit states
        (a pessimistic condition is its block, an optimistic one the complement of the
        states it excludes), which is several times faster than through the BDD."""
        if self._cover is None:
            n = len(self.ctx.vocab)
            if self.kind is ConditionKind.PESSIMISTIC:
                self._cover = tuple(isop_of_states(n, self.states))
            elif self.kind is ConditionKind.OPTIMISTIC:
                self._cover = tuple(isop_of_complement(n, self.excluded))
            else:
                self._cover = tuple(isop(self.ctx.bdd, self.bdd))
        return self._cover

    @property
    def complement_cover(self) -> tuple[Cube, ...]:
        """An irredundant cover of the negation of the condition: ``isop`` of ¬BDD."""
        if self._complement_cover is None:
            n = len(self.ctx.vocab)
            if self.kind is ConditionKind.PESSIMISTIC:
                self._complement_cover = tuple(isop_of_complement(n, self.states))
            elif self.kind is ConditionKind.OPTIMISTIC:
                self._complement_cover = tuple(isop_of_states(n, self.excluded))
            else:
                b = self.ctx.bdd
                self._complement_cover = tuple(isop(b, b.neg(self.bdd)))
        return self._complement_cover

    def equivalent(self, other: Condition) -> bool:
        """Same set of states (BDDs are canonical, so this is node equality)."""
        return bool(self.bdd == other.bdd)

    def is_satisfiable(self) -> bool:
        return bool(self.bdd != self.ctx.bdd.false)

    def __repr__(self) -> str:
        return f"Condition({self.kind}, |S|={len(self.states)}, |U|={len(self.universe)})"


def formula_condition(ctx: LogicContext, f: Node) -> Condition:
    """A FORMULA condition of the BDD ``f`` (SMT from its irredundant cover)."""
    cover = isop(ctx.bdd, f)
    return Condition(ctx, ConditionKind.FORMULA, smt=ctx.smt.cover(cover), bdd=f)


def agreement_counterexample(cond: Condition) -> int | None:
    """None if z3 proves the condition's SMT formula equivalent to its BDD (read back
    as a formula from the BDD graph), else a state where they disagree."""
    smt = cond.ctx.smt
    return smt.equivalent(cond.smt, smt.from_bdd(cond.ctx.bdd, cond.bdd))

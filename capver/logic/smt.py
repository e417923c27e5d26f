"""SMT side of conditions: pysmt formulas over one Boolean symbol per atom, solved
by z3 (section 3.1's conditions, section 3.1's lattice order checked by machine).

Formulas are hash-consed by the formula manager of a pysmt ``Environment`` owned by
the :class:`SmtContext` (one per vocabulary, never pysmt's global environment), so
identical sub-formulas are shared.  Solvers come from the environment's factory.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from pysmt.environment import Environment
from pysmt.fnode import FNode
from pysmt.typing import BOOL

from capver.core.state import State
from capver.core.vocabulary import Vocabulary
from capver.errors import SolverError
from capver.logic.bdd import BDDBackend, Cube, Node

SOLVER = "z3"


class SmtContext:
    """Symbols x_i (current state) and x_i' (next state) for a vocabulary."""

    def __init__(self, vocab: Vocabulary, solver: str = SOLVER) -> None:
        self.env = Environment()
        self.mgr = self.env.formula_manager
        self.solver_name = solver
        self.vocab = vocab
        self.cur = [self.mgr.Symbol(str(a), BOOL) for a in vocab.atoms]
        self.nxt = [self.mgr.Symbol(f"{a}'", BOOL) for a in vocab.atoms]
        self._minterms: dict[int, FNode] = {}

    @property
    def n(self) -> int:
        return len(self.cur)

    # -- building -------------------------------------------------------------------
    def cube(self, c: Cube, symbols: Sequence[FNode] | None = None) -> FNode:
        sym = self.cur if symbols is None else symbols
        lits = []
        m, i = c.mask, 0
        while m:
            if m & 1:
                lits.append(sym[i] if (c.value >> i) & 1 else self.mgr.Not(sym[i]))
            m >>= 1
            i += 1
        return self.mgr.And(lits)

    def minterm(self, s: State) -> FNode:
        """ℓ(s) = ⋀_{p∈s} p ∧ ⋀_{p∉s} ¬p (cached: minterms recur across rebuilds)."""
        f = self._minterms.get(s)
        if f is None:
            f = self.cube(Cube((1 << self.n) - 1, s))
            self._minterms[s] = f
        return f

    def disjunction_of_states(self, states: Iterable[int]) -> FNode:
        return self.mgr.Or([self.minterm(s) for s in sorted(states)])

    def cover(self, cubes: Iterable[Cube]) -> FNode:
        return self.mgr.Or([self.cube(c) for c in cubes])

    def state_assignment(self, s: State, symbols: Sequence[FNode] | None = None) -> dict[FNode, FNode]:
        sym = self.cur if symbols is None else symbols
        return {v: self.mgr.Bool(bool((s >> i) & 1)) for i, v in enumerate(sym)}

    def evaluate(self, f: FNode, s: State) -> bool:
        # FNode.substitute would use pysmt's global environment; ours is private.
        val = self.env.simplifier.simplify(self.env.substituter.substitute(f, self.state_assignment(s)))
        if not val.is_bool_constant():
            raise SolverError(f"formula {f} is not closed over the vocabulary")
        return bool(val.constant_value())

    def from_bdd(self, bdd: BDDBackend, u: Node) -> FNode:
        """The BDD as an if-then-else formula, one shared sub-formula per BDD node.

        Built from the BDD's graph, independently of the source the BDD was built
        from, so that ``equivalent(cond.smt, from_bdd(cond.bdd))`` is a real check
        that both representations agree."""
        memo: dict[Any, FNode] = {}

        def rec(v: Node) -> FNode:
            if v == bdd.true:
                return self.mgr.TRUE()
            if v == bdd.false:
                return self.mgr.FALSE()
            hit = memo.get(v)
            if hit is not None:
                return hit
            i = bdd.top(v)
            assert i is not None
            hi = rec(bdd.cofactor(v, i, True))
            lo = rec(bdd.cofactor(v, i, False))
            f = self.mgr.Ite(self.cur[i], hi, lo)
            memo[v] = f
            return f

        try:
            return rec(u)
        finally:
            memo.clear()  # rec's closure is a cycle: do not let it pin BDD nodes
            rec = None  # type: ignore[assignment]  # empties the closure cell: breaks the cycle

    # -- solving --------------------------------------------------------------------
    def solver(self) -> Any:
        return self.env.factory.Solver(name=self.solver_name)

    def find_model(self, f: FNode) -> dict[FNode, bool] | None:
        """A satisfying assignment of ``f`` (over its free symbols), or None if UNSAT."""
        with self.solver() as solver:
            solver.add_assertion(f)
            res = solver.solve()
            if res is None:
                raise SolverError("solver returned unknown")
            if not res:
                return None
            return {v: bool(solver.get_value(v).constant_value()) for v in f.get_free_variables()}

    @contextmanager
    def satisfiability(self) -> Iterator[Callable[[FNode], bool]]:
        """``sat(f)``: whether ``f`` is satisfiable, for many formulas in a row.

        With z3 they share one solver (each pushed and popped) in a z3 context of its
        own: its converter keeps the z3 terms of the sub-formulas the formulas share,
        which a fresh solver per formula converts again, and nothing it creates
        touches the context :meth:`find_model`'s solvers work in, so the models they
        find do not depend on what was checked here.  Another solver answers each
        formula with :meth:`find_model`."""
        if self.solver_name != "z3":
            yield lambda f: self.find_model(f) is not None
            return
        import z3
        from pysmt.solvers.z3 import Z3Converter

        ctx = z3.Context()
        solver = z3.Solver(ctx=ctx)
        converter = Z3Converter(self.env, z3_ctx=ctx)

        def sat(f: FNode) -> bool:
            solver.push()
            try:
                solver.add(converter.convert(f))
                res = solver.check()
            finally:
                solver.pop()
            if res == z3.unknown:
                raise SolverError(f"solver returned unknown: {solver.reason_unknown()}")
            return bool(res == z3.sat)

        try:
            yield sat
        finally:
            # The converter's terms belong to ctx: release them before it goes.
            converter.memoization.clear()

    def equivalent(self, f: FNode, g: FNode) -> int | None:
        """None if z3 proves f ≡ g (UNSAT of f ⊕ g), else a state where they differ."""
        model = self.find_model(self.mgr.Xor(f, g))
        return None if model is None else self.state_of(model)

    def state_of(self, model: dict[FNode, bool], symbols: Sequence[FNode] | None = None) -> int:
        sym = self.cur if symbols is None else symbols
        s = 0
        for i, v in enumerate(sym):
            if model.get(v, False):
                s |= 1 << i
        return s

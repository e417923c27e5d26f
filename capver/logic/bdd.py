"""Binary decision diagrams for capability conditions (section 3.1: "represented as
a BDD").

:class:`BDDBackend` is the interface every condition needs; :data:`BACKENDS` maps a
name to an implementation.  Both shipped backends wrap the ``dd`` package, whose
``dd.cudd`` (CUDD, compiled, the default) and ``dd.autoref`` (pure Python) share
one API, so :class:`DDBackend` serves both.  Variable i is atom i of the
vocabulary and the variable order is the atom order.

Two measured facts shape this module: CUDD's dynamic reordering makes OR-ing many
minterms ~100x slower, so it is switched off; and in ``dd.autoref`` a minterm built
bottom-up (one ``find_or_add`` per level) is ~60x faster than conjoining literals
top-down.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from capver.errors import CapverError

Node = Any
"""An opaque BDD node of the backend."""


@dataclass(frozen=True, slots=True, order=True)
class Cube:
    """A conjunction of literals: the atoms in ``mask`` must equal their bit in
    ``value`` (``value ⊆ mask``)."""

    mask: int
    value: int

    def holds(self, s: int) -> bool:
        return (s & self.mask) == self.value


class BDDBackend(Protocol):
    """The BDD operations capver uses, over variables 0..n_vars-1."""

    name: str
    n_vars: int

    @property
    def true(self) -> Node: ...
    @property
    def false(self) -> Node: ...
    def var(self, i: int) -> Node: ...
    def conj(self, u: Node, v: Node) -> Node: ...
    def disj(self, u: Node, v: Node) -> Node: ...
    def neg(self, u: Node) -> Node: ...
    def cube(self, c: Cube) -> Node: ...
    def minterm(self, s: int) -> Node: ...
    def evaluate(self, u: Node, s: int) -> bool: ...
    def cofactor(self, u: Node, i: int, value: bool) -> Node: ...
    def top(self, u: Node) -> int | None: ...
    def count(self, u: Node) -> int: ...
    def pick(self, u: Node) -> int | None: ...
    def dag_size(self, u: Node) -> int: ...


class DDBackend:
    """A :class:`BDDBackend` on a ``dd`` module (``dd.cudd`` or ``dd.autoref``)."""

    def __init__(self, module: Any, n_vars: int, name: str) -> None:
        self.name = name
        self.n_vars = n_vars
        self._bdd = module.BDD()
        if name == "cudd":
            self._bdd.configure(reordering=False)
        self._names = [f"x{i}" for i in range(n_vars)]
        if n_vars:
            self._bdd.declare(*self._names)
        self._index = {n: i for i, n in enumerate(self._names)}
        self._vars = [self._bdd.var(n) for n in self._names]
        self._bottom_up = hasattr(self._bdd, "find_or_add") and name != "cudd"

    @property
    def manager(self) -> Any:
        return self._bdd

    @property
    def true(self) -> Node:
        return self._bdd.true

    @property
    def false(self) -> Node:
        return self._bdd.false

    def var(self, i: int) -> Node:
        return self._vars[i]

    def conj(self, u: Node, v: Node) -> Node:
        return u & v

    def disj(self, u: Node, v: Node) -> Node:
        return u | v

    def neg(self, u: Node) -> Node:
        return ~u

    def cube(self, c: Cube) -> Node:
        if not c.mask:
            return self._bdd.true
        if self._bottom_up:
            u = self._bdd.true
            f = self._bdd.false
            for i in range(self.n_vars - 1, -1, -1):
                bit = 1 << i
                if c.mask & bit:
                    u = (
                        self._bdd.find_or_add(self._names[i], f, u)
                        if c.value & bit
                        else self._bdd.find_or_add(self._names[i], u, f)
                    )
            return u
        assignment = {}
        m, i = c.mask, 0
        while m:
            if m & 1:
                assignment[self._names[i]] = bool((c.value >> i) & 1)
            m >>= 1
            i += 1
        return self._bdd.cube(assignment)

    def minterm(self, s: int) -> Node:
        return self.cube(Cube((1 << self.n_vars) - 1, s))

    def evaluate(self, u: Node, s: int) -> bool:
        # dd exposes complemented edges: a node's children are raw, so the value is
        # the terminal reached XOR the parity of complement marks on the path.
        neg = False
        index = self._index
        while u.var is not None:
            if u.negated:
                neg = not neg
            u = u.high if (s >> index[u.var]) & 1 else u.low
        return (u == self._bdd.true) != neg

    def cofactor(self, u: Node, i: int, value: bool) -> Node:
        return self._bdd.let({self._names[i]: value}, u)

    def top(self, u: Node) -> int | None:
        return None if u.var is None else self._index[u.var]

    def count(self, u: Node) -> int:
        return int(self._bdd.count(u, nvars=self.n_vars))

    def pick(self, u: Node) -> int | None:
        if u == self._bdd.false:
            return None
        s = 0
        for i in range(self.n_vars):
            hi = self.cofactor(u, i, True)
            if hi != self._bdd.false:
                s |= 1 << i
                u = hi
            else:
                u = self.cofactor(u, i, False)
        return s

    def dag_size(self, u: Node) -> int:
        return int(u.dag_size)


def _cudd(n_vars: int) -> BDDBackend:
    import dd.cudd

    return DDBackend(dd.cudd, n_vars, "cudd")


def _autoref(n_vars: int) -> BDDBackend:
    import dd.autoref

    return DDBackend(dd.autoref, n_vars, "autoref")


BACKENDS: dict[str, Callable[[int], BDDBackend]] = {"cudd": _cudd, "autoref": _autoref}
"""Registry of BDD backends; the CLI's ``--bdd`` choices come from it."""


def make_backend(n_vars: int, name: str = "cudd") -> BDDBackend:
    """A fresh BDD manager with ``n_vars`` variables.

    Falls back to ``autoref`` only when asked for ``"auto"`` and CUDD is missing.
    """
    if name == "auto":
        try:
            return _cudd(n_vars)
        except ImportError:
            return _autoref(n_vars)
    try:
        factory = BACKENDS[name]
    except KeyError:
        raise CapverError(f"unknown BDD backend {name!r}; expected one of {sorted(BACKENDS)}") from None
    return factory(n_vars)


def disjoin(bdd: BDDBackend, nodes: Iterable[Node]) -> Node:
    """OR of many nodes by balanced pairing, which keeps intermediate BDDs small."""
    layer = list(nodes)
    if not layer:
        return bdd.false
    while len(layer) > 1:
        nxt = [bdd.disj(layer[i], layer[i + 1]) for i in range(0, len(layer) - 1, 2)]
        if len(layer) % 2:
            nxt.append(layer[-1])
        layer = nxt
    return layer[0]


def isop(bdd: BDDBackend, u: Node) -> list[Cube]:
    """An irredundant sum-of-products cover of ``u`` (Minato–Morreale ISOP on the
    interval [u, u]): no cube and no literal of a cube can be dropped."""
    memo: dict[tuple[Node, Node], tuple[list[Cube], Node]] = {}

    def rec(lo: Node, hi: Node) -> tuple[list[Cube], Node]:
        if lo == bdd.false:
            return [], bdd.false
        if hi == bdd.true:
            return [Cube(0, 0)], bdd.true
        key = (lo, hi)
        if key in memo:
            return memo[key]
        tops = [t for t in (bdd.top(lo), bdd.top(hi)) if t is not None]
        i = min(tops)
        l0, l1 = bdd.cofactor(lo, i, False), bdd.cofactor(lo, i, True)
        h0, h1 = bdd.cofactor(hi, i, False), bdd.cofactor(hi, i, True)
        c0, f0 = rec(bdd.conj(l0, bdd.neg(h1)), h0)
        c1, f1 = rec(bdd.conj(l1, bdd.neg(h0)), h1)
        rest_lo = bdd.disj(bdd.conj(l0, bdd.neg(f0)), bdd.conj(l1, bdd.neg(f1)))
        cs, fs = rec(rest_lo, bdd.conj(h0, h1))
        bit = 1 << i
        cover = [Cube(c.mask | bit, c.value) for c in c0]
        cover += [Cube(c.mask | bit, c.value | bit) for c in c1]
        cover += cs
        x = bdd.var(i)
        f = bdd.disj(bdd.disj(bdd.conj(bdd.neg(x), f0), bdd.conj(x, f1)), fs)
        memo[key] = (cover, f)
        return cover, f

    try:
        cover, _ = rec(u, u)
    finally:
        # rec is a self-referencing closure; without this the cycle would pin BDD
        # nodes until the garbage collector runs, possibly after the manager is gone.
        memo.clear()
        rec = None  # type: ignore[assignment]  # empties the closure cell: breaks the cycle
    return sorted(cover)

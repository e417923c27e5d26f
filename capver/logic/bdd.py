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

from bisect import bisect_left
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from capver.core.state import State
from capver.errors import CapverError

Node = Any
"""An opaque BDD node of the backend."""


@dataclass(frozen=True, slots=True, order=True)
class Cube:
    """A conjunction of literals: the atoms in ``mask`` must equal their bit in
    ``value`` (``value ⊆ mask``)."""

    mask: int
    value: int

    def holds(self, s: State) -> bool:
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
    def minterm(self, s: State) -> Node: ...
    def evaluate(self, u: Node, s: State) -> bool: ...
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

    def minterm(self, s: State) -> Node:
        return self.cube(Cube((1 << self.n_vars) - 1, s))

    def evaluate(self, u: Node, s: State) -> bool:
        # dd exposes complemented edges: a node's children are raw, so the value is
        # the terminal reached XOR the parity of complement marks on the path.
        neg = False
        index = self._index
        while u.var is not None:
            if u.negated:
                neg = not neg
            u = u.high if (s >> index[u.var]) & 1 else u.low
        return bool(u == self._bdd.true) != neg

    def cofactor(self, u: Node, i: int, value: bool) -> Node:
        # With the order fixed, a node whose top variable is below i does not depend on
        # i, and at the top variable the cofactor is a child (complemented when the
        # edge is): both avoid ``let``, which costs ~10x more (ISOP calls this most).
        top = u.var
        if top is None:
            return u
        t = self._index[top]
        if t > i:
            return u
        if t == i:
            child = u.high if value else u.low
            return ~child if u.negated else child
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


def isop(bdd: BDDBackend, u: Node, upper: Node | None = None) -> list[Cube]:
    """An irredundant sum-of-products cover of ``u`` (Minato–Morreale ISOP on the
    interval [u, u]): no cube and no literal of a cube can be dropped.

    With ``upper`` (u ⊆ upper) the cover is of some function f with u ⊆ f ⊆ upper:
    the states of upper ∖ u are don't-cares the recursion may use to drop literals."""
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
        cover, _ = rec(u, u if upper is None else upper)
    finally:
        # rec is a self-referencing closure; without this the cycle would pin BDD
        # nodes until the garbage collector runs, possibly after the manager is gone.
        memo.clear()
        rec = None  # type: ignore[assignment]  # empties the closure cell: breaks the cycle
    return sorted(cover)


# -- irredundant covers of explicit state sets ---------------------------------------------
#
# The lattice conditions are a finite set of states S (pessimistic) or the complement of
# one (optimistic), and their text is printed from an ISOP cover (capver.io.dsl).  Run
# through the BDD, `isop` spends most of its time in BDD operations on large
# intermediate functions (a 30-atom Blocksworld h∨ took ~10 s for 505 rules).  The
# functions below run the very same Minato–Morreale recursion on explicit sets of
# states, so they return exactly ``isop(bdd, bdd-of-S)`` and ``isop(bdd, ¬bdd-of-S)``
# (tests/logic/test_bdd.py checks this), only faster.
#
# Two facts make that possible.  (1) Splitting on a variable that neither bound of the
# interval depends on returns the cover of the same interval, so the recursion may
# split on variable i at depth i instead of on the BDD's top variable.  At depth i a set
# holds states with bits < i cleared (the variables cofactored away).  (2) For
# [S, S] every interval met is [finite, finite]; for [¬S, ¬S] the c₀/c₁ intervals are
# [finite L, ¬X] with X a finite projection of S, and only the chain of "rest" calls
# from the root has a general lower bound, which is evaluated point-wise on the few
# states the next step asks about.

_Cb = tuple[int, int]
"""A cube as (mask, value) while a cover is being built; Cube objects come last."""


def _covers(cover: list[_Cb], p: int) -> bool:
    # A loop, not any(): any() over a generator took 2.5-4.5x as long (timeit, 4 cubes), per state.
    for m, v in cover:  # noqa: SIM110
        if p & m == v:
            return True
    return False


def _lift(cover: list[_Cb], bit: int, value: int) -> list[_Cb]:
    """The cubes of a sub-cover with the literal of the split variable added."""
    return [(m | bit, v | value) for m, v in cover]


class _PointIsop:
    """The ISOP recursion over ``n`` variables on explicit state sets."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.memo_finite: dict[tuple[int, frozenset[int], frozenset[int]], list[_Cb]] = {}

    def finite(self, lo: frozenset[int], hi: frozenset[int], i: int) -> list[_Cb]:
        """The cover of the interval [lo, hi] (lo ⊆ hi, both finite) at depth i."""
        if not lo:
            return []
        if len(hi) == 1 << (self.n - i):
            return [(0, 0)]
        if len(lo) == 1:
            (p,) = lo
            return [_single_finite(p, hi, i, self.n)]
        key = (i, lo, hi)
        hit = self.memo_finite.get(key)
        if hit is not None:
            return hit
        bit = 1 << i
        l0 = frozenset(x for x in lo if not x & bit)
        l1 = frozenset(x ^ bit for x in lo if x & bit)
        h0 = frozenset(x for x in hi if not x & bit)
        h1 = frozenset(x ^ bit for x in hi if x & bit)
        c0 = self.finite(l0 - h1, h0, i + 1)
        c1 = self.finite(l1 - h0, h1, i + 1)
        rest = {x for x in l0 if not _covers(c0, x)}
        rest.update(x for x in l1 if not _covers(c1, x))
        out = _lift(c0, bit, 0) + _lift(c1, bit, bit) + self.finite(frozenset(rest), h0 & h1, i + 1)
        self.memo_finite[key] = out
        return out

    def cofinite(self, lo: frozenset[int], x: frozenset[int], i: int) -> list[_Cb]:
        """The cover of [lo, ¬x] (lo nonempty and finite, lo ∩ x = ∅) at depth i."""
        if not x:
            return [(0, 0)]
        # l₀ ∧ ¬h₁ = l₀ ∩ x₁: a state whose other half across variable i is excluded needs
        # the literal of i.  When no state does, the call only drops i and recurses.  A
        # state l first has such a neighbour y at the highest bit of l ^ y (the bits below
        # are dropped by then), so every variable below the lowest such bit is dropped at
        # once; the y sharing the longest high prefix with l is next to l in sorted order.
        if len(lo) == 1:
            (p,) = lo
            return [_single_cofinite(p, x)]
        xs = sorted(x)
        last = len(xs) - 1
        t = self.n + 1  # as a bit length: the lowest bit is t - 1
        for y in lo:
            at = bisect_left(xs, y)
            if at <= last:
                d = (y ^ xs[at]).bit_length()
                t = min(t, d)
            if at:
                d = (y ^ xs[at - 1]).bit_length()
                t = min(t, d)
        t -= 1
        if t > i:
            keep = ~((1 << t) - 1)
            lo = frozenset(y & keep for y in lo)
            x = frozenset(y & keep for y in x)
            i = t
            if len(lo) == 1:
                (p,) = lo
                return [_single_cofinite(p, x)]
        bit = 1 << i
        need0 = frozenset(y for y in lo if not y & bit and y | bit in x)
        need1 = frozenset(y ^ bit for y in lo if y & bit and y ^ bit in x)
        x0 = frozenset(y for y in x if not y & bit)
        x1 = frozenset(y ^ bit for y in x if y & bit)
        c0 = self.cofinite(need0, x0, i + 1) if need0 else []
        c1 = self.cofinite(need1, x1, i + 1) if need1 else []
        # A sub-cover covers the states it was asked for; the others of lo are checked.
        rest: set[int] = set()
        for y in lo:
            if y & bit:
                y1 = y ^ bit  # y in the terms of c1 (bit i dropped)
                if y1 not in need1 and not _covers(c1, y1):
                    rest.add(y1)
            elif y not in need0 and not _covers(c0, y):
                rest.add(y)
        out = _lift(c0, bit, 0) + _lift(c1, bit, bit)
        if rest:
            out += self.cofinite(frozenset(rest), x0 | x1, i + 1)
        return out

    def complement(self, excluded: frozenset[int]) -> list[_Cb]:
        """The cover of [¬E, ¬E] for the finite set E = ``excluded``.

        Step k of the chain of rest calls has the interval [lo_k, ¬X_k], where X_k is E
        projected on the variables ≥ k and lo_k(w) = ∃b: lo_{k-1}(w with bit k-1 = b)
        ∧ w ∉ c_b of step k-1 (lo₀ = ¬E).  Its c₀/c₁ calls need lo_k only on the
        states one flip of bit k away from X_k; those states are evaluated all at once,
        as bit sets over the indices of E, by a search over the values of the bits
        below k."""
        n = self.n
        if not excluded:
            return [(0, 0)]
        points = sorted(excluded)
        everyone = (1 << len(points)) - 1
        # ones[t]: the indices of the states of E with bit t set.
        ones = [0] * n
        for idx, e in enumerate(points):
            flag = 1 << idx
            rest = e
            while rest:
                low = rest & -rest
                ones[low.bit_length() - 1] |= flag
                rest ^= low
        # classes: each state of X_k with the indices of the states of E it projects.
        classes: dict[int, int] = {e: 1 << idx for idx, e in enumerate(points)}
        steps: list[tuple[list[_StepCube], list[_StepCube]]] = []
        out: list[_Cb] = []
        for k in range(n):
            bit = 1 << k
            x0: dict[int, int] = {}
            x1: dict[int, int] = {}
            for y, members in classes.items():
                if y & bit:
                    x1[y ^ bit] = members
                else:
                    x0[y] = members
            ask0 = [y for y in x1 if y not in x0]  # lo_k(y) with bit k = 0 is asked
            ask1 = [y for y in x0 if y not in x1]  # lo_k(y | bit) is asked
            asked = 0
            for y in ask0:
                asked |= x1[y]
            for y in ask1:
                asked |= x0[y]
            # The state asked for a member e of E is e ^ bit (bits < k cleared).
            found = _uncovered(k, asked, steps) if asked else 0
            l0 = frozenset(y for y in ask0 if x1[y] & found)
            l1 = frozenset(y for y in ask1 if x0[y] & found)
            c0 = self.cofinite(l0, frozenset(x0), k + 1) if l0 else []
            c1 = self.cofinite(l1, frozenset(x1), k + 1) if l1 else []
            out += _lift(c0, bit, 0) + _lift(c1, bit, bit)
            steps.append((_step_cubes(c0, k, ones, everyone), _step_cubes(c1, k, ones, everyone)))
            merged = x0
            for y, members in x1.items():
                merged[y] = merged.get(y, 0) | members
            classes = merged
        # At depth n the projection of E is the empty assignment: hi is false there.
        return out


def _single_finite(p: int, hi: frozenset[int], i: int, n: int) -> _Cb:
    """The one-cube cover of [{p}, hi] (p ∈ hi) at depth i, the recursion unrolled:
    variable t is dropped when p's neighbour across t is in hi (which then keeps the
    states whose both halves it holds), else kept (and hi keeps p's half)."""
    kept = 0
    q = p
    for t in range(i, n):
        if len(hi) == 1 << (n - t):
            break
        bit = 1 << t
        if q ^ bit in hi:
            hi = frozenset(y ^ bit for y in hi if y & bit and y ^ bit in hi)
        else:
            kept |= bit
            side = q & bit
            hi = frozenset(y & ~bit for y in hi if y & bit == side)
        q &= ~bit
    return kept, p & kept


def _single_cofinite(p: int, x: frozenset[int]) -> _Cb:
    """The one-cube cover of [{p}, ¬x] (p ∉ x).  Variable t keeps its literal exactly
    when some state of x still agreeing with p on the kept literals differs from p at t
    and at no higher variable, i.e. the difference's highest bit is t: one pass over
    the differences by increasing highest bit."""
    kept = 0
    for d in sorted([y ^ p for y in x], key=int.bit_length):
        if not d & kept:
            kept |= 1 << (d.bit_length() - 1)
    return kept, p & kept


_StepCube = tuple[int, int, list[int]]
"""A cube of a chain step: (mask, value, members[k]), where members[k] are the indices
of E whose state e ^ 2^k agrees with the cube on the variables ≥ k."""


def _step_cubes(cover: list[_Cb], j: int, ones: list[int], everyone: int) -> list[_StepCube]:
    """The cubes found at chain step j, with their members for every later level k
    (computed once here, by one sweep down the variables, instead of at every k)."""
    n = len(ones)
    out = []
    for m, v in cover:
        members = [0] * n
        acc = everyone  # the members agreeing with the cube on the variables > k
        for k in range(n - 1, j, -1):
            bit = 1 << k
            if m & bit:
                agree = ones[k] if v & bit else everyone ^ ones[k]
                members[k] = acc & ~agree  # e ^ 2^k flips bit k
                acc &= agree
            else:
                members[k] = acc
        out.append((m, v, members))
    return out


def _uncovered(k: int, asked: int, steps: list[tuple[list[_StepCube], list[_StepCube]]]) -> int:
    """The members of ``asked`` (indices into E) whose state e ^ 2^k, bits below k
    cleared, lies in lo_k.  A depth-first search over the values z of the bits below k
    (from bit k-1 down), carrying the set of members still undecided: a member
    survives step j when its state with bits [j, k) set to z is not covered by the
    step-j cubes of z's bit j, and reaching depth 0 means a state of the column is
    uncovered (it is not in E: its projection on the bits ≥ k is not in X_k)."""
    bit = 1 << k
    # tables[j][b]: the step-j cubes of bit j = b that can cover an asked state, as
    # (mask, value) on the bits [j+1, k) that z fixes and the members they cover.
    tables: list[tuple[list[tuple[int, int, int]], list[tuple[int, int, int]]]] = []
    for j, (c0, c1) in enumerate(steps):
        middle = (bit - 1) & ~((2 << j) - 1)
        rows = []
        for cover in (c0, c1):
            row = []
            for m, v, members in cover:
                hit = members[k] & asked
                if hit:
                    row.append((m & middle, v & middle, hit))
            rows.append(row)
        tables.append((rows[0], rows[1]))

    def search(j: int, z: int, undecided: int) -> int:
        if j == 0:
            return undecided
        row0, row1 = tables[j - 1]
        covered = 0
        for m, v, members in row0:
            if z & m == v:
                covered |= members
        found = search(j - 1, z, undecided & ~covered) if undecided & ~covered else 0
        left = undecided & ~found
        if left:
            covered = 0
            for m, v, members in row1:
                if z & m == v:
                    covered |= members
            if left & ~covered:
                found |= search(j - 1, z | 1 << (j - 1), left & ~covered)
        return found

    return search(k, 0, asked)


def isop_of_states(n_vars: int, states: Iterable[int]) -> list[Cube]:
    """``isop`` of the function true exactly on ``states``, computed on the set."""
    s = frozenset(states)
    return [Cube(m, v) for m, v in sorted(_PointIsop(n_vars).finite(s, s, 0))]


def isop_of_complement(n_vars: int, states: Iterable[int]) -> list[Cube]:
    """``isop`` of the function false exactly on ``states``, computed on the set."""
    return [Cube(m, v) for m, v in sorted(_PointIsop(n_vars).complement(frozenset(states)))]


def isop_of_interval(n_vars: int, states: Iterable[int], excluded: Iterable[int]) -> list[Cube]:
    """``isop(bdd, bdd-of-states, upper=¬bdd-of-excluded)``, computed on the sets: an
    irredundant cover of some f that holds on every state of ``states`` and on none
    of ``excluded`` (the two must be disjoint), free elsewhere.  This is the shortest
    way the ISOP recursion finds to tell a lattice block from the other states tried
    for its capability (the model writer prints it in the shared model-file form)."""
    lo, x = frozenset(states), frozenset(excluded)
    if lo & x:
        raise ValueError("isop_of_interval: states and excluded states overlap")
    if not lo:
        return []
    return [Cube(m, v) for m, v in sorted(_PointIsop(n_vars).cofinite(lo, x, 0))]

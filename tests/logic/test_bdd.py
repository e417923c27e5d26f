"""Tests of the BDD backends and the ISOP cover (section 3.1: conditions "represented
as a BDD").

One test class runs against every backend in ``capver.logic.bdd.BACKENDS``; each
random Boolean function is a truth table (bit s of the table is f(s)) and is built
into a BDD by Shannon expansion over ``var``/``conj``/``disj``/``neg`` only, so that
every other operation is compared with the table, not with itself.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from capver.errors import CapverError
from capver.logic.bdd import (
    BACKENDS,
    BDDBackend,
    Cube,
    Node,
    disjoin,
    isop,
    isop_of_complement,
    isop_of_states,
    make_backend,
)
from tests.helpers.corpus import BACKEND_NAMES

MAX_VARS = 6


@st.composite
def functions(draw: st.DrawFn, min_vars: int = 0, max_vars: int = MAX_VARS) -> tuple[int, int]:
    """(n, truth table) of a random f: {0,1}^n → {0,1}."""
    n = draw(st.integers(min_vars, max_vars))
    return n, draw(st.integers(0, (1 << (1 << n)) - 1))


@st.composite
def function_pairs(draw: st.DrawFn) -> tuple[int, int, int]:
    n = draw(st.integers(0, MAX_VARS))
    size = (1 << (1 << n)) - 1
    return n, draw(st.integers(0, size)), draw(st.integers(0, size))


def cubes(n: int) -> st.SearchStrategy[Cube]:
    full = (1 << n) - 1
    return st.tuples(st.integers(0, full), st.integers(0, full)).map(lambda mv: Cube(mv[0], mv[1] & mv[0]))


def from_table(b: BDDBackend, n: int, table: int) -> Node:
    """Shannon expansion, bottom-up: layer k holds the cofactors of f for every
    assignment of variables 0..k-1 (a loop, not a recursive closure, so that no
    reference cycle keeps BDD nodes alive past their manager)."""
    layer = [b.true if table >> s & 1 else b.false for s in range(1 << n)]
    for i in range(n - 1, -1, -1):
        x = b.var(i)
        half = 1 << i
        # entry p of the new layer: prefix p over vars 0..i-1; var i is bit i of the old index
        layer = [b.disj(b.conj(x, layer[p | half]), b.conj(b.neg(x), layer[p])) for p in range(half)]
    return layer[0]


def f_at(table: int, s: int) -> bool:
    return bool(table >> s & 1)


def support(n: int, table: int) -> list[int]:
    return [i for i in range(n) if any(f_at(table, s) != f_at(table, s ^ 1 << i) for s in range(1 << n))]


def cover_table(n: int, cover: list[Cube]) -> int:
    return sum(1 << s for s in range(1 << n) if any(c.holds(s) for c in cover))


@pytest.mark.parametrize("name", BACKEND_NAMES)
class TestBackend:
    @given(functions())
    def test_evaluate(self, name: str, fn: tuple[int, int]) -> None:
        n, table = fn
        b = BACKENDS[name](n)
        u = from_table(b, n, table)
        assert [b.evaluate(u, s) for s in range(1 << n)] == [f_at(table, s) for s in range(1 << n)]

    @given(st.integers(1, MAX_VARS), st.data())
    def test_var(self, name: str, n: int, data: st.DataObject) -> None:
        b = BACKENDS[name](n)
        i = data.draw(st.integers(0, n - 1))
        assert [b.evaluate(b.var(i), s) for s in range(1 << n)] == [bool(s >> i & 1) for s in range(1 << n)]
        assert b.top(b.var(i)) == i

    @given(function_pairs())
    def test_connectives_and_canonicity(self, name: str, fg: tuple[int, int, int]) -> None:
        n, f, g = fg
        b = BACKENDS[name](n)
        u, v = from_table(b, n, f), from_table(b, n, g)
        full = (1 << (1 << n)) - 1
        # canonical: the same function built another way is the same node
        assert b.conj(u, v) == from_table(b, n, f & g)
        assert b.disj(u, v) == from_table(b, n, f | g)
        assert b.neg(u) == from_table(b, n, ~f & full)
        assert (u == v) == (f == g)
        for s in range(1 << n):
            assert b.evaluate(b.conj(u, v), s) == (f_at(f, s) and f_at(g, s))
            assert b.evaluate(b.disj(u, v), s) == (f_at(f, s) or f_at(g, s))
            assert b.evaluate(b.neg(u), s) == (not f_at(f, s))

    @given(functions())
    def test_constants(self, name: str, fn: tuple[int, int]) -> None:
        n, _ = fn
        b = BACKENDS[name](n)
        assert b.true != b.false
        assert b.neg(b.true) == b.false
        assert b.count(b.true) == 1 << n and b.count(b.false) == 0
        assert b.top(b.true) is None and b.top(b.false) is None
        assert b.pick(b.false) is None
        assert all(b.evaluate(b.true, s) and not b.evaluate(b.false, s) for s in range(1 << n))

    @given(functions(min_vars=0), st.data())
    def test_minterm(self, name: str, fn: tuple[int, int], data: st.DataObject) -> None:
        n, _ = fn
        b = BACKENDS[name](n)
        s0 = data.draw(st.integers(0, (1 << n) - 1))
        m = b.minterm(s0)
        assert [b.evaluate(m, s) for s in range(1 << n)] == [s == s0 for s in range(1 << n)]
        assert b.count(m) == 1
        assert b.pick(m) == s0

    @given(functions())
    def test_minterms_disjoined_are_the_function(self, name: str, fn: tuple[int, int]) -> None:
        n, table = fn
        b = BACKENDS[name](n)
        u = disjoin(b, (b.minterm(s) for s in range(1 << n) if f_at(table, s)))
        assert u == from_table(b, n, table)

    @given(st.integers(0, MAX_VARS).flatmap(lambda n: st.tuples(st.just(n), cubes(n))))
    def test_cube(self, name: str, nc: tuple[int, Cube]) -> None:
        n, c = nc
        b = BACKENDS[name](n)
        u = b.cube(c)
        assert [b.evaluate(u, s) for s in range(1 << n)] == [c.holds(s) for s in range(1 << n)]
        assert b.count(u) == 1 << (n - c.mask.bit_count())
        assert u == from_table(b, n, sum(1 << s for s in range(1 << n) if (s & c.mask) == c.value))

    @given(functions(min_vars=1), st.data())
    def test_cofactor(self, name: str, fn: tuple[int, int], data: st.DataObject) -> None:
        n, table = fn
        b = BACKENDS[name](n)
        u = from_table(b, n, table)
        i = data.draw(st.integers(0, n - 1))
        for value in (False, True):
            w = b.cofactor(u, i, value)
            fixed = [(s | 1 << i) if value else (s & ~(1 << i)) for s in range(1 << n)]
            assert [b.evaluate(w, s) for s in range(1 << n)] == [f_at(table, x) for x in fixed]
            assert b.top(w) != i

    @given(functions())
    def test_count(self, name: str, fn: tuple[int, int]) -> None:
        n, table = fn
        b = BACKENDS[name](n)
        assert b.count(from_table(b, n, table)) == table.bit_count()

    @given(functions())
    def test_pick(self, name: str, fn: tuple[int, int]) -> None:
        n, table = fn
        b = BACKENDS[name](n)
        s = b.pick(from_table(b, n, table))
        if table == 0:
            assert s is None
        else:
            assert s is not None and 0 <= s < 1 << n and f_at(table, s)

    @given(functions())
    def test_top_is_first_support_variable(self, name: str, fn: tuple[int, int]) -> None:
        n, table = fn
        b = BACKENDS[name](n)
        u = from_table(b, n, table)
        sup = support(n, table)
        assert b.top(u) == (sup[0] if sup else None)
        # one node per support variable at least, plus the terminal
        assert b.dag_size(u) >= len(sup) + 1

    @given(st.lists(functions(min_vars=3, max_vars=3).map(lambda f: f[1]), max_size=6))
    def test_disjoin(self, name: str, tables: list[int]) -> None:
        b = BACKENDS[name](3)
        acc = 0
        for t in tables:
            acc |= t
        assert disjoin(b, [from_table(b, 3, t) for t in tables]) == from_table(b, 3, acc)

    @given(functions())
    def test_isop_is_an_irredundant_cover(self, name: str, fn: tuple[int, int]) -> None:
        n, table = fn
        b = BACKENDS[name](n)
        cover = isop(b, from_table(b, n, table))
        assert cover == sorted(cover)
        assert all(c.value & ~c.mask == 0 for c in cover)
        assert cover_table(n, cover) == table
        for k, c in enumerate(cover):
            # dropping a cube loses some state of f
            assert cover_table(n, cover[:k] + cover[k + 1 :]) != table
            # dropping a literal makes the cube cover some state outside f
            m = c.mask
            while m:
                bit = m & -m
                m ^= bit
                wider = Cube(c.mask & ~bit, c.value & ~bit)
                assert cover_table(n, [*cover[:k], wider, *cover[k + 1 :]]) != table

    def test_isop_of_constants(self, name: str) -> None:
        b = BACKENDS[name](3)
        assert isop(b, b.false) == []
        assert isop(b, b.true) == [Cube(0, 0)]

    def test_large_minterm(self, name: str) -> None:
        # beyond one machine word: 80 variables
        n = 80
        b = BACKENDS[name](n)
        s0 = (1 << 79) | (1 << 64) | 0b1011
        m = b.minterm(s0)
        assert b.evaluate(m, s0)
        assert not any(b.evaluate(m, s0 ^ 1 << i) for i in range(n))
        assert b.count(m) == 1 and b.pick(m) == s0
        assert isop(b, m) == [Cube((1 << n) - 1, s0)]


# -- ISOP on explicit state sets ------------------------------------------------------------
# isop_of_states / isop_of_complement print the lattice conditions (capver.io.dsl); the
# model files are only unchanged if they return exactly what isop returns on the BDD,
# cube for cube, so they are compared with it rather than checked for being some cover.


@given(functions(max_vars=7))
def test_isop_of_a_state_set_is_isop_of_its_bdd(fn: tuple[int, int]) -> None:
    n, table = fn
    b = make_backend(n)
    u = from_table(b, n, table)
    states = [s for s in range(1 << n) if table >> s & 1]
    assert isop_of_states(n, states) == isop(b, u)
    assert isop_of_complement(n, states) == isop(b, b.neg(u))


@st.composite
def sparse_sets(draw: st.DrawFn) -> tuple[int, list[int]]:
    """A few states over up to 14 variables: learned blocks are small next to 2^n, and
    their complements make the long chains of rest calls the complement cover walks."""
    n = draw(st.integers(2, 14))
    near = draw(st.integers(0, (1 << n) - 1))
    # Some states one or two atoms away from a common one, so that neighbours exist.
    flips = st.integers(0, n - 1)
    states = draw(st.lists(st.integers(0, (1 << n) - 1), max_size=25))
    states += [near ^ 1 << i for i in draw(st.lists(flips, max_size=8))]
    states += [near ^ 1 << i ^ 1 << j for i, j in draw(st.lists(st.tuples(flips, flips), max_size=8))]
    return n, states


@given(sparse_sets())
def test_isop_of_a_sparse_state_set_is_isop_of_its_bdd(ns: tuple[int, list[int]]) -> None:
    n, states = ns
    b = make_backend(n)
    u = disjoin(b, [b.minterm(s) for s in states])
    assert isop_of_states(n, states) == isop(b, u)
    assert isop_of_complement(n, states) == isop(b, b.neg(u))


def test_isop_of_state_sets_at_the_edges() -> None:
    assert isop_of_states(0, []) == [] and isop_of_complement(0, []) == [Cube(0, 0)]
    assert isop_of_states(0, [0]) == [Cube(0, 0)] and isop_of_complement(0, [0]) == []
    assert isop_of_states(3, range(8)) == [Cube(0, 0)] and isop_of_complement(3, range(8)) == []
    # One excluded state: everything else is one single-literal cube per atom.
    assert isop_of_complement(3, [0b101]) == [Cube(1, 0), Cube(2, 2), Cube(4, 0)]


def test_make_backend() -> None:
    for name in BACKEND_NAMES:
        b = make_backend(4, name)
        assert b.name == name and b.n_vars == 4
    auto = make_backend(2, "auto")
    assert auto.count(auto.true) == 4
    with pytest.raises(CapverError, match="unknown BDD backend 'nope'"):
        make_backend(3, "nope")


def test_every_registered_backend_is_tested() -> None:
    assert set(BACKEND_NAMES) == set(BACKENDS) and {"cudd", "autoref"} <= set(BACKENDS)

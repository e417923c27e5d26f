"""Instance generators of the introspection benchmark domains (sections 4, 5.4):
deterministic given the generator, the described initial distributions, solvable."""

from __future__ import annotations

import math

import numpy as np
import pytest

from capver.core.vocabulary import Atom
from capver.errors import IntrospectionError
from capver.introspection.domains import DOMAINS, bins, blocks, drawers, grid
from capver.introspection.search import Introspector, simulate

from .helpers import bfs_optimal_length


@pytest.mark.parametrize("name", sorted(DOMAINS))
def test_generators_are_deterministic(name: str) -> None:
    """Same generator seed, same instance: the same initial state, horizon, actions,
    successors and rewards along a walk (and other seeds give other instances)."""

    def walk(problem: object, steps: int = 12) -> list[tuple[object, ...]]:
        pick = np.random.default_rng(5)  # the same walk through both instances
        s, out = problem.initial, []  # type: ignore[attr-defined]
        for _ in range(steps):
            acts = problem.actions(s)  # type: ignore[attr-defined]
            if not acts:
                break
            a = acts[int(pick.integers(len(acts)))]
            s2 = problem.successor(s, a)  # type: ignore[attr-defined]
            out.append((s, problem.format_action(a), problem.reward(s, a, s2), len(acts)))  # type: ignore[attr-defined]
            s = s2
        return out

    gen = DOMAINS[name]
    a = gen(4, np.random.default_rng(11))
    b = gen(4, np.random.default_rng(11))
    assert (a.initial, a.horizon) == (b.initial, b.horizon)
    assert walk(a) == walk(b) and len(walk(a)) > 0
    others = [gen(4, np.random.default_rng(seed)) for seed in range(12, 20)]
    assert any(o.initial != a.initial or walk(o) != walk(a) for o in others)


@pytest.mark.parametrize(
    ("name", "sizes"), [("grid", (1, 3, 6)), ("blocks", (2, 3, 5)), ("drawers", (1, 2, 3)), ("bins", (1, 2, 3))]
)
def test_small_instances_are_solvable_by_bfs(name: str, sizes: tuple[int, ...]) -> None:
    for size in sizes:
        for seed in range(4):
            p = DOMAINS[name](size, np.random.default_rng(seed))
            assert bfs_optimal_length(p) is not None


@pytest.mark.parametrize(("name", "size"), [("grid", 40), ("blocks", 30), ("drawers", 10), ("bins", 12)])
def test_large_instances_are_solvable(name: str, size: int) -> None:
    p = DOMAINS[name](size, np.random.default_rng(5))
    r = Introspector().solve(p, np.random.default_rng(5))
    assert r.success and simulate(p, r.plan).success


def test_grid_start_is_at_distance_d() -> None:
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(200):
        p = grid.generate(3, rng)
        assert abs(p.start[0]) + abs(p.start[1]) == 3
        assert p.horizon == 4
        seen.add(p.start)
    assert len(seen) == 12  # all 4d positions of the diamond occur
    with pytest.raises(IntrospectionError, match="at least 1"):
        grid.generate(0, rng)


def test_blocks_stacks_partition_the_blocks_into_about_sqrt_n_stacks() -> None:
    rng = np.random.default_rng(1)
    n = 25
    counts = []
    for _ in range(300):
        stacks = blocks.random_stacks(n, rng)
        assert sorted(b for st in stacks for b in st) == sorted(blocks.block_names(n))
        assert any(len(st) > 1 for st in stacks)
        counts.append(len(stacks))
    expected = 1 + (n - 1) / math.sqrt(n)  # 5.8
    assert abs(np.mean(counts) - expected) < 0.5
    with pytest.raises(IntrospectionError, match="at least 2 blocks"):
        blocks.random_stacks(1, rng)


def test_blocks_initial_state_encodes_the_stacks() -> None:
    p = blocks.problem_from_stacks([["b0", "b1", "b2"], ["b3"]])
    assert p.format_state(p.initial) == (
        "{on(b1,b0), on(b2,b1), ontable(b0), ontable(b3), clear(b2), clear(b3), handempty}"
    )


def test_drawers_items_have_one_location_and_one_is_misplaced() -> None:
    rng = np.random.default_rng(2)
    for _ in range(50):
        p = drawers.generate(4, rng)
        atoms = p.vocab.atoms_of(p.initial)
        for i in range(4):
            where = [a for a in atoms if a.args[:1] == (f"item{i}",) and a.predicate in ("in", "on_shelf")]
            assert len(where) == 1
            assert Atom("label", (f"item{i}", f"drawer{i}")) in atoms
        misplaced = [i for i in range(4) if Atom("in", (f"item{i}", f"drawer{i}")) not in atoms]
        assert misplaced


def test_bins_start_open_and_non_empty() -> None:
    rng = np.random.default_rng(3)
    p = bins.generate(5, rng)
    atoms = p.vocab.atoms_of(p.initial)
    assert sum(a.predicate == "in" for a in atoms) == 10
    for b in range(5):
        assert Atom("open", (f"bin{b}",)) in atoms
        assert any(a.predicate == "in" and a.args[1] == f"bin{b}" for a in atoms)
    with pytest.raises(IntrospectionError, match="exactly one bin"):
        bins.build([[0], [0]], 1)

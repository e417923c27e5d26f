"""Shared example corpus, hypothesis strategies and brute-force references for
capver's tests (section 2's definitions, section 3.1's lattice).

Everything random is drawn from a hypothesis-chosen seed fed to a
``numpy.random.Generator``, so a failing example is reproduced by its seed.  The
brute-force helpers at the bottom re-derive Pr_h, h ⊨ t and T_h straight from the
paper's definitions, by walking pysmt formulas and Python sets, so that tests can
compare the library's BDD / cover / cache paths against something that shares no
code with them.

Import it from tests as ``from tests.helpers.corpus import ...``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from hypothesis import strategies as st
from pysmt.fnode import FNode

from capver import synthetic
from capver.core.dataset import TransitionDataset
from capver.core.state import Capability, Effect, Transition
from capver.core.vocabulary import ROOT_TYPE, Predicate, Vocabulary
from capver.logic.bdd import BACKENDS
from capver.logic.condition import Condition, LogicContext
from capver.model.capability_model import CapabilityModel, CompoundModel, Rule

BACKEND_NAMES: tuple[str, ...] = tuple(sorted(BACKENDS))

seeds = st.integers(min_value=0, max_value=2**32 - 1)
"""Seeds for ``numpy.random.default_rng``."""


def rng_for(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def all_states(n_atoms: int) -> range:
    """S = 2^atoms, as bitsets."""
    return range(1 << n_atoms)


# -- vocabularies -------------------------------------------------------------------------


def propositional_vocabularies(min_atoms: int = 1, max_atoms: int = 6) -> st.SearchStrategy[Vocabulary]:
    return st.integers(min_atoms, max_atoms).map(synthetic.propositional_vocabulary)


@dataclass(frozen=True, slots=True)
class TypedSpec:
    """The raw material of a typed vocabulary, kept so that tests can recompute
    what the vocabulary should contain without asking it."""

    types: Mapping[str, str]  # type -> parent (never None: the root is implicit)
    objects: Mapping[str, str]
    predicates: tuple[Predicate, ...]

    def build(self) -> Vocabulary:
        return Vocabulary.build(self.predicates, objects=self.objects, types=self.types)

    def ancestors(self, t: str) -> list[str]:
        """t, its parent, …, up to the root type."""
        chain = [t]
        while chain[-1] != ROOT_TYPE:
            chain.append(self.types[chain[-1]])
        return chain


@st.composite
def typed_specs(draw: st.DrawFn, max_types: int = 4, max_objects: int = 5, max_predicates: int = 4) -> TypedSpec:
    """A random type forest under ``object`` (parents are earlier types, so it is
    acyclic), objects of random types and predicates of arity 0–3."""
    n_types = draw(st.integers(0, max_types))
    types: dict[str, str] = {}
    for k in range(n_types):
        types[f"t{k}"] = draw(st.sampled_from([ROOT_TYPE, *types]))
    type_names = [ROOT_TYPE, *types]
    n_objects = draw(st.integers(0, max_objects))
    objects = {f"o{k}": draw(st.sampled_from(type_names)) for k in range(n_objects)}
    n_preds = draw(st.integers(1, max_predicates))
    preds = tuple(
        Predicate(f"q{k}", tuple(draw(st.lists(st.sampled_from(type_names), max_size=3)))) for k in range(n_preds)
    )
    return TypedSpec(types, objects, preds)


def vehicles_vocabulary() -> Vocabulary:
    """A hand-written typed vocabulary with a two-level subtype hierarchy:
    car, truck ⊂ vehicle ⊂ object; location ⊂ object."""
    types = {"vehicle": "object", "car": "vehicle", "truck": "vehicle", "location": "object"}
    objects = {"c1": "car", "c2": "car", "t1": "truck", "home": "location", "depot": "location"}
    preds = [
        Predicate("at", ("vehicle", "location")),
        Predicate("fast", ("car",)),
        Predicate("loaded", ("truck",)),
        Predicate("road", ("location", "location")),
        Predicate("raining", ()),
    ]
    return Vocabulary.build(preds, objects=objects, types=types)


# -- random true models and datasets ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class World:
    """A logic context and a random true model h⋆ over it, from ``seed``."""

    ctx: LogicContext
    truth: CompoundModel
    seed: int
    total: bool = False

    @property
    def vocab(self) -> Vocabulary:
        return self.ctx.vocab

    @property
    def n(self) -> int:
        return len(self.ctx.vocab)

    def rng(self, salt: int = 0) -> np.random.Generator:
        """A generator derived from the world's seed (salted, so that the model and
        the data drawn from it use independent streams)."""
        return np.random.default_rng([self.seed, salt])

    def __repr__(self) -> str:
        # enough to rebuild it: make_world(n_atoms, seed, n_capabilities=…, total=…)
        return f"World(n_atoms={self.n}, n_capabilities={len(self.truth)}, total={self.total}, seed={self.seed})"


def make_world(
    n_atoms: int,
    seed: int,
    *,
    n_capabilities: int = 3,
    max_rules: int = 3,
    max_effects: int = 3,
    total: bool = False,
    bdd: str = "cudd",
) -> World:
    ctx = LogicContext(synthetic.propositional_vocabulary(n_atoms), bdd)
    truth = synthetic.random_model(
        ctx, rng_for(seed), n_capabilities=n_capabilities, max_rules=max_rules, max_effects=max_effects, total=total
    )
    return World(ctx, truth, seed, total)


def worlds(
    min_atoms: int = 2,
    max_atoms: int = 5,
    *,
    max_capabilities: int = 3,
    total: bool = False,
    bdd: str = "cudd",
) -> st.SearchStrategy[World]:
    """Random true models (formula conditions, overlapping rules) via
    :func:`capver.synthetic.random_model`."""
    return st.builds(
        lambda n, k, seed: make_world(n, seed, n_capabilities=k, total=total, bdd=bdd),
        st.integers(min_atoms, max_atoms),
        st.integers(1, max_capabilities),
        seeds,
    )


def sample_stream(world: World, rng: np.random.Generator, length: int, pool_size: int) -> list[Transition]:
    """``length`` executions drawn from h⋆, in order: random capabilities from a pool
    of states, the successor drawn by :func:`capver.synthetic.sample_successor`.

    Unlike :func:`capver.synthetic.sample_dataset` the pool is drawn among the
    pairs (s, c) some rule of h⋆ covers, so sampling always terminates (see the
    xfail test on ``sample_dataset`` for the hang this avoids)."""
    covered = [(s, c) for s in all_states(world.n) for c, m in world.truth.items() if m.covers(s)]
    if not covered:
        return []
    states = sorted({s for s, _ in covered})
    pool = {int(x) for x in rng.choice(states, size=min(pool_size, len(states)), replace=False)}
    pairs = [(s, c) for s, c in covered if s in pool]
    out = []
    for _ in range(length):
        s, c = pairs[int(rng.integers(len(pairs)))]
        s2 = synthetic.sample_successor(world.truth[c], s, rng)
        assert s2 is not None
        out.append(Transition(s, c, s2))
    return out


def sample_data(world: World, rng: np.random.Generator, n_transitions: int, pool_size: int) -> TransitionDataset:
    """A dataset of :func:`sample_stream` executions (all capabilities declared)."""
    data = TransitionDataset(world.vocab, world.truth.capabilities)
    data.extend(sample_stream(world, rng, n_transitions, pool_size))
    return data


@st.composite
def sampled_worlds(
    draw: st.DrawFn, min_atoms: int = 2, max_atoms: int = 5, max_transitions: int = 40
) -> tuple[World, TransitionDataset]:
    """A world and a dataset sampled from its truth.  States come from a small pool
    so that pairs (s, c) recur and several effects get observed per pair."""
    world = draw(worlds(min_atoms, max_atoms))
    n_transitions = draw(st.integers(1, max_transitions))
    pool = draw(st.integers(1, 8))
    return world, sample_data(world, world.rng(1), n_transitions, pool)


def complete_data(world: World, extra_pairs: int = 0) -> TransitionDataset:
    """A transition- and effect-complete dataset for the world's truth."""
    return synthetic.complete_dataset(world.truth, world.rng(2), extra_pairs=extra_pairs)


def exhaustive_data(world: World) -> TransitionDataset:
    """D with T_D = T_h⋆: every transition the truth admits, once."""
    data = TransitionDataset(world.vocab, world.truth.capabilities)
    for c, m in world.truth.items():
        for s in all_states(world.n):
            for s2 in sorted(brute_distribution(m, s)):
                data.add(Transition(s, c, s2))
    return data


# -- formula trees (conditions written independently of pysmt) ---------------------------

Tree = tuple


def formula_trees(n_atoms: int, max_leaves: int = 12) -> st.SearchStrategy[Tree]:
    """Boolean formulas over atoms 0..n-1 as nested tuples, with every connective
    the BDD compiler supports."""
    leaves = st.one_of(
        st.tuples(st.just("var"), st.integers(0, n_atoms - 1)),
        st.sampled_from([("true",), ("false",)]),
    )

    def extend(sub: st.SearchStrategy[Tree]) -> st.SearchStrategy[Tree]:
        return st.one_of(
            st.tuples(st.just("not"), sub),
            st.tuples(st.just("and"), st.lists(sub, min_size=0, max_size=3).map(tuple)),
            st.tuples(st.just("or"), st.lists(sub, min_size=0, max_size=3).map(tuple)),
            st.tuples(st.just("implies"), sub, sub),
            st.tuples(st.just("iff"), sub, sub),
            st.tuples(st.just("ite"), sub, sub, sub),
        )

    return st.recursive(leaves, extend, max_leaves=max_leaves)


def tree_to_smt(ctx: LogicContext, tree: Tree) -> FNode:
    mgr, cur = ctx.smt.mgr, ctx.smt.cur
    op = tree[0]
    if op == "var":
        return cur[tree[1]]
    if op == "true":
        return mgr.TRUE()
    if op == "false":
        return mgr.FALSE()
    if op == "not":
        return mgr.Not(tree_to_smt(ctx, tree[1]))
    if op == "and":
        return mgr.And([tree_to_smt(ctx, t) for t in tree[1]])
    if op == "or":
        return mgr.Or([tree_to_smt(ctx, t) for t in tree[1]])
    if op == "implies":
        return mgr.Implies(tree_to_smt(ctx, tree[1]), tree_to_smt(ctx, tree[2]))
    if op == "iff":
        return mgr.Iff(tree_to_smt(ctx, tree[1]), tree_to_smt(ctx, tree[2]))
    if op == "ite":
        return mgr.Ite(*(tree_to_smt(ctx, t) for t in tree[1:]))
    raise AssertionError(f"unknown tree node {op}")


def eval_tree(tree: Tree, s: int) -> bool:
    op = tree[0]
    if op == "var":
        return bool((s >> tree[1]) & 1)
    if op == "true":
        return True
    if op == "false":
        return False
    if op == "not":
        return not eval_tree(tree[1], s)
    if op == "and":
        return all(eval_tree(t, s) for t in tree[1])
    if op == "or":
        return any(eval_tree(t, s) for t in tree[1])
    if op == "implies":
        return (not eval_tree(tree[1], s)) or eval_tree(tree[2], s)
    if op == "iff":
        return eval_tree(tree[1], s) == eval_tree(tree[2], s)
    if op == "ite":
        return eval_tree(tree[2], s) if eval_tree(tree[1], s) else eval_tree(tree[3], s)
    raise AssertionError(f"unknown tree node {op}")


# -- brute-force references from the definitions -------------------------------------------


def eval_formula(ctx: LogicContext, f: FNode, s: int) -> bool:
    """s ⊨ f for a pysmt formula over the context's current-state symbols, by walking
    the formula (no BDD, no solver, no pysmt substitution)."""
    index = {sym: i for i, sym in enumerate(ctx.smt.cur)}
    memo: dict[FNode, bool] = {}

    def rec(g: FNode) -> bool:
        hit = memo.get(g)
        if hit is not None:
            return hit
        if g.is_true():
            r = True
        elif g.is_false():
            r = False
        elif g.is_symbol():
            r = bool((s >> index[g]) & 1)
        elif g.is_not():
            r = not rec(g.arg(0))
        elif g.is_and():
            r = all(rec(a) for a in g.args())
        elif g.is_or():
            r = any(rec(a) for a in g.args())
        elif g.is_implies():
            r = (not rec(g.arg(0))) or rec(g.arg(1))
        elif g.is_iff():
            r = rec(g.arg(0)) == rec(g.arg(1))
        elif g.is_ite():
            r = rec(g.arg(1)) if rec(g.arg(0)) else rec(g.arg(2))
        else:
            raise AssertionError(f"unexpected connective {g}")
        memo[g] = r
        return r

    return rec(f)


def condition_holds(cond: Condition, s: int) -> bool:
    """s ⊨ cond(r) from the condition's source: its formula (formula kind), or the
    set definitions of pcond / ocond (section 3.1)."""
    if cond.kind == "pessimistic":
        return s in cond.states
    if cond.kind == "optimistic":
        # ocond(S_φ) = ¬⋁_{s'∈Φ_c∖S_φ} ℓ(s'): everything but the other blocks' states.
        return s not in (cond.universe - cond.states)
    return eval_formula(cond.ctx, cond.smt, s)


def apply_effect(s: int, eta: Effect) -> int:
    """apply(s, η) = (s ∖ η⁻) ∪ η⁺ written out on sets of atom indices."""
    atoms = {i for i in range(max(s.bit_length(), eta.add.bit_length(), eta.delete.bit_length())) if s >> i & 1}
    adds = {i for i in range(eta.add.bit_length()) if eta.add >> i & 1}
    dels = {i for i in range(eta.delete.bit_length()) if eta.delete >> i & 1}
    return sum(1 << i for i in (atoms - dels) | adds)


def brute_distribution(model: CapabilityModel, s: int) -> dict[int, Fraction]:
    """Pr_h(· | s, c) = (1/|R_s|) Σ_{r∈R_s} Σ_j p_j 1[s′ = apply(s, η_j)], zero-free."""
    matching = [r for r in model.rules if condition_holds(r.condition, s)]
    out: dict[int, Fraction] = {}
    for r in matching:
        for p, eta in r.effects:
            s2 = apply_effect(s, eta)
            out[s2] = out.get(s2, Fraction(0)) + Fraction(p) / len(matching)
    return out


def brute_admits(model: CapabilityModel, s: int, s2: int) -> bool:
    """h ⊨ ⟨s, c, s′⟩: some rule with s ⊨ cond(r) has an effect with apply = s′."""
    return any(
        condition_holds(r.condition, s) and any(apply_effect(s, eta) == s2 for _, eta in r.effects) for r in model.rules
    )


def brute_transitions(h: CompoundModel, n_atoms: int) -> set[Transition]:
    """T_h by enumerating S × C × S (the successors of s are among apply(s, η_j))."""
    out = set()
    for c, m in h.items():
        for s in all_states(n_atoms):
            for r in m.rules:
                if condition_holds(r.condition, s):
                    out.update(Transition(s, c, apply_effect(s, eta)) for _, eta in r.effects)
    return out


def dataset_transitions(data: TransitionDataset) -> set[Transition]:
    """T_D: the unique transitions of D."""
    return set(data.unique_transitions())


# -- hand-built models ----------------------------------------------------------------------


def formula_rule(ctx: LogicContext, f: FNode, effects: Iterable[tuple[Fraction | int | str, Effect]]) -> Rule:
    return Rule.make(Condition.formula(ctx, f), effects)


def capability_model(name: str, rules: Iterable[Rule]) -> CapabilityModel:
    return CapabilityModel(Capability(name), tuple(rules))

"""The Occam model h̃ inside the lattice h∧ ⪯ h̃ ⪯ h∨ (section 3.1's
pcond/ocond and the order h₁ ⪯ h₂ ⟺ T_{h₁} ⊆ T_{h₂}).

For each capability c the lattice (:mod:`capver.engines.lattice`) partitions the
tried states Φ_c into blocks S_φ by their observed effect sets E_φ and gives each
block one rule with MLE effect probabilities.  h̃ keeps those rules — the effect sets
and their probabilities, taken from h∧'s rules unchanged — and replaces the condition
pcond(S_φ) by a short condition f_φ with

* pcond(S_φ) ⊆ f_φ ⊆ ocond(S_φ): f_φ holds on every state of S_φ and on no other
  tried state of c, so h̃ agrees with the data on every tried state;
* f_φ ∧ f_ψ ≡ ⊥ for φ ≠ ψ: at most one rule applies in any state, so Pr_h̃(·|s,c) is
  one rule's distribution, never a mixture.

Then T_h∧ ⊆ T_h̃ (every block state keeps its rule) and T_h̃ ⊆ T_h∨ (at a tried state
h̃ admits exactly E_φ as h∨ does; at an untried one a subset of what h∨ admits there),
which :func:`capver.engines.verification.relations.refines` proves with z3 for every h̃ capver writes
(:mod:`capver.io.certificate`).

The untried states are don't-cares; a *minimiser* (:data:`MINIMISERS`) decides them.
Minimisers get the blocks of one capability in priority order (most states first: the
most common behaviour claims don't-cares first) and return one BDD per block meeting
the two conditions above.  Per capability the minimiser that predicts held-out tried
states best (k-fold, folds drawn from a passed-in generator) is kept; ties go to the
fewer literals.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from capver.core.state import State
from capver.logic.bdd import Cube, Node, disjoin, isop
from capver.logic.condition import Condition, ConditionKind, LogicContext, formula_condition
from capver.model.capability_model import CapabilityModel, CompoundModel, Rule
from capver.model.occam import Choice, OccamModel

Minimiser = Callable[[LogicContext, Sequence[frozenset[State]]], list[Node] | None]
"""Blocks (priority order) → one BDD per block, or None when the minimiser cannot run
with this BDD backend."""


class OccamError(ValueError):
    """A minimiser returned conditions outside the lattice (a bug, never the data)."""


# ------------------------------------------------------------------------------ minimisers
def _block_bdds(ctx: LogicContext, blocks: Sequence[frozenset[State]]) -> list[Node]:
    return [disjoin(ctx.bdd, (ctx.minterm_bdd(s) for s in sorted(blk))) for blk in blocks]


def _projected_block_bdds(ctx: LogicContext, blocks: Sequence[frozenset[State]]) -> list[Node]:
    """The blocks with the atoms that no tried state varies dropped: every tried state
    lies in the cube of those atoms' common values, so a condition that ignores them
    agrees with the data exactly when it does on that cube.  Both bounds then shrink to
    the varying atoms, and the ISOP recursion (which walks every atom a bound depends
    on) runs over a few dozen atoms instead of hundreds (Tireworld has 256)."""
    states = [s for blk in blocks for s in blk]
    full = (1 << len(ctx.vocab)) - 1
    varying = 0
    for s in states:
        varying |= s ^ states[0]
    b = ctx.bdd
    return (
        [disjoin(b, (b.cube(Cube(varying, s & varying)) for s in sorted(blk))) for blk in blocks]
        if varying != full
        else _block_bdds(ctx, blocks)
    )


def _interval_minimiser(shrink: Callable[[LogicContext, Node, Node], Node | None]) -> Minimiser:
    """Blocks in order, each as small as ``shrink`` makes it within [S_φ, ocond(S_φ) ∖
    the earlier conditions]: excluding what earlier blocks took keeps the conditions
    mutually exclusive, and S_φ is never among it (earlier conditions exclude every
    tried state outside their own block)."""

    def run(ctx: LogicContext, blocks: Sequence[frozenset[State]]) -> list[Node] | None:
        b = ctx.bdd
        lows = _projected_block_bdds(ctx, blocks)
        tried = disjoin(b, lows)
        taken = b.false
        out = []
        for lo in lows:
            hi = b.conj(b.neg(b.conj(tried, b.neg(lo))), b.neg(taken))
            f = shrink(ctx, lo, hi)
            if f is None:
                return None
            taken = b.disj(taken, f)
            out.append(f)
        return out

    return run


def _isop_shrink(ctx: LogicContext, lo: Node, hi: Node) -> Node:
    """Minato–Morreale ISOP of the interval [lo, hi]: an irredundant cover."""
    b = ctx.bdd
    return disjoin(b, (b.cube(c) for c in isop(b, lo, hi)))


def _restrict_shrink(ctx: LogicContext, lo: Node, hi: Node) -> Node | None:
    """Coudert–Madre restrict of lo to the care set lo ∨ ¬hi (CUDD's
    ``Cudd_bddRestrict``): a small BDD equal to lo wherever the value is fixed."""
    if ctx.bdd.name != "cudd":
        return None
    import dd.cudd

    b = ctx.bdd
    return dd.cudd.restrict(lo, b.disj(lo, b.neg(hi)))


def _tree_minimiser(ctx: LogicContext, blocks: Sequence[frozenset[State]]) -> list[Node]:
    """A decision tree over the atoms, grown on the tried states until every leaf is
    one block (splits by least conditional entropy of the block label; ties to the
    lowest atom), turned into a BDD per block.  The leaves partition the state space,
    so the conditions are mutually exclusive and every state gets a prediction."""
    n = len(ctx.vocab)
    states = [s for blk in blocks for s in sorted(blk)]
    labels = np.array([i for i, blk in enumerate(blocks) for _ in blk], dtype=np.int64)
    bits = np.array([[(s >> j) & 1 for j in range(n)] for s in states], dtype=np.int64).reshape(len(states), n)
    onehot = np.eye(len(blocks), dtype=np.int64)[labels]
    leaves: list[list[Cube]] = [[] for _ in blocks]
    stack: list[tuple[np.ndarray, int, int]] = [(np.arange(len(states)), 0, 0)]
    while stack:
        idx, mask, value = stack.pop()
        first = labels[idx[0]]
        if np.all(labels[idx] == first):
            leaves[int(first)].append(Cube(mask, value))
            continue
        j = _best_split(bits[idx], onehot[idx])
        col = bits[idx, j].astype(bool)
        bit = 1 << j
        stack.append((idx[~col], mask | bit, value))
        stack.append((idx[col], mask | bit, value | bit))
    b = ctx.bdd
    return [disjoin(b, (b.cube(c) for c in cubes)) for cubes in leaves]


def _best_split(x: np.ndarray, y: np.ndarray) -> int:
    """The atom whose split leaves the least label entropy, among those that vary."""
    n_rows = x.shape[0]
    ones = x.T @ y  # atoms × labels: label counts where the atom holds
    zeros = y.sum(axis=0)[None, :] - ones

    def entropy(counts: np.ndarray) -> np.ndarray:
        tot = counts.sum(axis=1, keepdims=True)
        p = np.divide(counts, tot, out=np.zeros(counts.shape), where=tot > 0)
        logs = np.log2(p, out=np.zeros(p.shape), where=p > 0)
        return np.asarray(-(p * logs).sum(axis=1) * tot[:, 0])

    score = entropy(ones) + entropy(zeros)
    varying = (x.sum(axis=0) > 0) & (x.sum(axis=0) < n_rows)
    score = np.where(varying, score, np.inf)
    return int(np.argmin(score))


MINIMISERS: dict[str, Minimiser] = {
    "isop": _interval_minimiser(_isop_shrink),
    "restrict": _interval_minimiser(_restrict_shrink),
    "tree": _tree_minimiser,
}
"""Registry of don't-care minimisers: name → function of (context, blocks)."""


# ------------------------------------------------------------------------------ h̃
def literals(cond: Condition) -> int:
    """Literals of the condition's irredundant cover (how the DSL prints it)."""
    return sum(c.mask.bit_count() for c in cond.cover)


def check_conditions(ctx: LogicContext, blocks: Sequence[frozenset[State]], fs: Sequence[Node]) -> None:
    """Raise :class:`OccamError` unless pcond(S_φ) ⊆ f_φ ⊆ ocond(S_φ) and the f_φ are
    pairwise disjoint (on the BDDs; the certificate proves the lattice with z3)."""
    b = ctx.bdd
    lows = _block_bdds(ctx, blocks)
    tried = disjoin(b, lows)
    for i, (lo, f) in enumerate(zip(lows, fs, strict=True)):
        if b.conj(lo, b.neg(f)) != b.false:
            raise OccamError(f"condition {i} misses a state of its block")
        if b.conj(f, b.conj(tried, b.neg(lo))) != b.false:
            raise OccamError(f"condition {i} holds at a tried state of another block")
        for g in fs[i + 1 :]:
            if b.conj(f, g) != b.false:
                raise OccamError(f"condition {i} overlaps a later one")


def _predict(ctx: LogicContext, fs: Sequence[Node], s: State) -> int | None:
    for i, f in enumerate(fs):
        if ctx.bdd.evaluate(f, s):
            return i
    return None


def heldout_accuracy(
    ctx: LogicContext,
    blocks: Sequence[frozenset[State]],
    minimiser: Minimiser,
    folds: Sequence[np.ndarray],
) -> float | None:
    """Share of tried states whose block the minimiser's conditions, fitted on the
    other folds, predict (no rule applying counts as wrong); None when it cannot run."""
    labelled = [(s, i) for i, blk in enumerate(blocks) for s in sorted(blk)]
    right = total = 0
    for fold in folds:
        out = {int(k) for k in fold}
        train = [
            frozenset(s for k, (s, i) in enumerate(labelled) if i == j and k not in out) for j in range(len(blocks))
        ]
        kept = [j for j, blk in enumerate(train) if blk]
        fs = minimiser(ctx, [train[j] for j in kept])
        if fs is None:
            return None
        for k in out:
            s, i = labelled[k]
            p = _predict(ctx, fs, s)
            right += int(p is not None and kept[p] == i)
            total += 1
    return right / total if total else None


def _ordered(m: CapabilityModel) -> list[Rule]:
    """h∧'s rules by priority: most tried states first, then h∧'s own order."""
    return [r for _, r in sorted(enumerate(m.rules), key=lambda ir: (-len(ir[1].condition.states), ir[0]))]


def occam_capability(
    m: CapabilityModel,
    rng: np.random.Generator,
    minimisers: Mapping[str, Minimiser] = MINIMISERS,
    k: int = 5,
) -> tuple[CapabilityModel, Choice]:
    """h̃_c from h∧_c (whose rules are the blocks with their MLE effects)."""
    rules = _ordered(m)
    if not rules:
        return m, Choice(m.name, "", {}, {})
    if any(r.condition.kind is not ConditionKind.PESSIMISTIC for r in rules):
        raise ValueError(f"capability {m.name}: h̃ is built from h∧, whose conditions are pessimistic")
    ctx = rules[0].condition.ctx
    blocks = [r.condition.states for r in rules]
    n_states = sum(len(blk) for blk in blocks)
    folds: list[np.ndarray] = []
    if len(blocks) > 1:
        perm = rng.permutation(n_states)
        folds = [f for f in np.array_split(perm, min(k, n_states)) if len(f)]
    fits: dict[str, list[Condition]] = {}
    accuracy: dict[str, float | None] = {}
    for name, minimiser in minimisers.items():
        fs = minimiser(ctx, blocks)
        if fs is None:
            continue
        check_conditions(ctx, blocks, fs)
        fits[name] = [formula_condition(ctx, f) for f in fs]
        accuracy[name] = heldout_accuracy(ctx, blocks, minimiser, folds) if folds else None
    if not fits:
        raise OccamError(f"capability {m.name}: no minimiser runs with the {ctx.bdd.name} backend")
    sizes = {name: sum(literals(c) for c in conds) for name, conds in fits.items()}
    order = list(fits)
    best = min(order, key=lambda nm: (-(accuracy[nm] or 0.0), sizes[nm], order.index(nm)))
    tilde = tuple(Rule(cond, r.effects) for cond, r in zip(fits[best], rules, strict=True))
    return CapabilityModel(m.capability, tilde), Choice(m.name, best, accuracy, sizes)


def occam_model(
    h_and: CompoundModel,
    rng: np.random.Generator,
    minimisers: Mapping[str, Minimiser] = MINIMISERS,
    k: int = 5,
) -> OccamModel:
    """h̃ for every capability of h∧ (in name order, so the folds drawn from ``rng``
    do not depend on the order capabilities were declared)."""
    models, choices = [], {}
    for name in sorted(h_and):
        cm, choice = occam_capability(h_and[name], rng, minimisers, k)
        models.append(cm)
        choices[name] = choice
    return OccamModel(CompoundModel(h_and.ctx, models), choices)


RUN_SALT = 12
"""Mixed into a run's seed for h̃'s folds: ``capver learn`` and ``capver eval`` build
the same h̃ from the same data, and the learner's own stream is never touched."""


def run_occam_model(h_and: CompoundModel, seed: int) -> OccamModel:
    """h̃ as ``capver learn`` writes it and ``capver eval`` rebuilds it."""
    return occam_model(h_and, np.random.default_rng([seed, RUN_SALT]))


def rule_sizes(model: CompoundModel) -> list[int]:
    """Literals per rule over the whole model (condition size, as printed)."""
    return [literals(r.condition) for m in model.values() for r in m.rules]

"""A vectorised explicit-state engine for the MDP of a capability model (paper,
section 2: in state s the choices are the capabilities c with R_s ≠ ∅, each leading to
s′ with probability Pr_h(s′ | s, c)), and the *exactness step* that turns its
floating-point solution into an exact one.

**Why.**  On the learned models the time of an exact Pmax went into building the MDP,
not into solving it: Storm's PRISM builder evaluates every command's guard (a cube
cover of the observed states, up to ~2 MB of PRISM text) in every state, 6–10 s for
the 1.03 M transitions of First Responders' h∨ after 1,500 steps, against 0.5–0.8 s
for its exact solver; capver's explicit engine
(:mod:`capver.engines.verification.explicit`) asks the rule semantics once per (state,
capability) in Python, 27 s there.  docs/bench/quantitative/ has the measurements.

**Build** (:func:`build`).  Each capability's state space is split into the BDD regions
of one set of matching rules (:meth:`CapabilityModel.regions`, as the PRISM export
does), each region given by its irredundant cube cover and its distribution over
effects (:func:`rule_mixture`) as integer numerators over one denominator.  States are
rows of 64-bit words; a breadth-first search matches a whole frontier against all cubes
of one mask at once (``(s & mask) == value`` by binary search over the cubes' values),
applies each effect η to all matched states at once (apply(s, η) = (s ∖ η⁻) ∪ η⁺),
and merges successors that two effects of one region map to the same state.  A state
where no capability is enabled gets one self-loop, Storm's deadlock fix, so all three
engines solve one MDP.  The tests compare the result with
:func:`capver.engines.verification.explicit.explore` (the rule semantics itself).

**Float solution.**  Pmax / Pmin of F φ and φ U ψ: the graph pre-computation of the
states with value 0 (max: no path to the goal; min: Prob0A, some scheduler avoids it
forever), then policy iteration in doubles, each policy evaluated by a sparse LU solve
(scipy), starting for max from the attractor policy (each state one BFS layer closer
to the goal), which leaves the undecided states with probability 1.

**Exactness step** (:func:`verify_exact`).  The float values are rounded to rationals
(:meth:`Fraction.limit_denominator`, denominators up to :data:`ROUNDING_DENOMINATOR`)
and accepted only when, in exact integer arithmetic over the model's own rational
probabilities,

* x = 1 on the goal and x = 0 on the value-0 states of the graph pre-computation;
* x = T(x) on every other state, T the Bellman operator (max or min over the
  capabilities of Σ_s′ Pr(s′|s,c)·x(s′)); and
* for max, the choices attaining the maximum contain a policy that leaves those
  states with probability 1 (a backward search from the decided states through those
  choices reaches every one of them).

Then x is the value: for max, x is a fixed point of T, hence ≥ the least one, which is
Pmax, and x is the value of that proper policy, hence ≤ Pmax; for min, outside Prob0A
every scheduler leaves the undecided states with probability 1, so T has exactly one
fixed point, Pmin.  When the check fails (a value whose denominator is larger than the
rounding allows, or a float policy that is not optimal) the exact answer comes from
exact policy iteration (:mod:`~capver.engines.verification.explicit`), started from
the float solution's policy.

**Bounded properties** (F<=k, U<=k) are computed exactly: k steps of value iteration
over integers (every value over the common denominator of the step), vectorised on
numpy object arrays.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from capver.core.properties import Globally, PathFormula, StateFormula, Until, holds
from capver.core.state import State
from capver.engines.verification import explicit
from capver.engines.verification.quantitative import EXACT, FLOAT, VERIFIED, Value
from capver.errors import CapverError
from capver.logic.bdd import isop
from capver.model.capability_model import CompoundModel, rule_mixture

if TYPE_CHECKING:
    import scipy.sparse as sp

# scipy is imported by the functions that use it: importing scipy.sparse and its linalg
# took 0.27 s, which every capver command paid (this module is imported with the
# verification engines) whether or not it solved a model here.

ROUNDING_DENOMINATOR = 10**7
"""The exactness step rounds each float value to the nearest fraction with at most this
denominator.  A double from the LU solve is within ~1e-15 of the value, and two
fractions with denominators ≤ 10⁷ differ by more than 1e-14, so a value with such a
denominator is found; larger ones fail the check and fall back to exact arithmetic."""

FLOAT_TOLERANCE = 1e-12
"""Float policy iteration switches a choice only if it is better by more than this."""

Ints = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]
Floats = npt.NDArray[np.float64]


class SparseEngineError(CapverError, RuntimeError):
    """The float solution could not be computed (a singular policy system)."""


# =====================================================================================
# States as rows of 64-bit words
# =====================================================================================


def _words(n_atoms: int) -> int:
    return max(1, (n_atoms + 63) // 64)


def _pack(s: int, w: int) -> npt.NDArray[np.uint64]:
    return np.array([(s >> (64 * i)) & 0xFFFF_FFFF_FFFF_FFFF for i in range(w)], dtype=np.uint64)


def _unpack(row: npt.NDArray[np.uint64]) -> State:
    return sum(int(x) << (64 * i) for i, x in enumerate(row))


def _keys(rows: npt.NDArray[np.uint64]) -> npt.NDArray[Any]:
    """One comparable key per row, for sorting and binary search: the word itself for
    up to 64 atoms (numeric search is several times faster), else the row's bytes."""
    if rows.shape[1] == 1:
        return rows[:, 0]
    rows = np.ascontiguousarray(rows)
    return rows.view(np.dtype((np.void, rows.shape[1] * 8))).ravel()


def _find(sorted_keys: npt.NDArray[Any], keys: npt.NDArray[Any]) -> tuple[Ints, Bools]:
    """Positions of ``keys`` in ``sorted_keys`` and whether each is there."""
    if len(sorted_keys) == 0:
        return np.zeros(len(keys), dtype=np.int64), np.zeros(len(keys), dtype=bool)
    pos = np.minimum(np.searchsorted(sorted_keys, keys), len(sorted_keys) - 1)
    return pos, sorted_keys[pos] == keys


# =====================================================================================
# The sparse MDP
# =====================================================================================


@dataclass(frozen=True, slots=True)
class _Region:
    keep: npt.NDArray[np.uint64]  # (E, W): ~(η⁻ ∖ η⁺), the bits an effect leaves alone
    add: npt.NDArray[np.uint64]  # (E, W): η⁺
    numerators: tuple[int, ...]  # over den, one per effect
    den: int


@dataclass(frozen=True, slots=True)
class _MaskGroup:
    mask: npt.NDArray[np.uint64]  # (W,)
    values: npt.NDArray[Any]  # sorted keys of the cubes' values under this mask
    regions: Ints  # region of each cube, in the order of values


@dataclass(frozen=True, slots=True)
class SparseMDP:
    """The reachable part of a model's MDP in compressed sparse rows; state 0 is the
    initial state.  Row r (a choice) belongs to state ``row_state[r]``, is capability
    ``capabilities[row_cap[r]]`` (-1: the self-loop of a state without capabilities)
    and has the successors ``target[col_start[r]:col_start[r+1]]`` with probabilities
    ``numerator / row_den[r]`` (exact) and ``prob`` (doubles).  The rows of state s
    are ``row_start[s]:row_start[s+1]``, at least one each."""

    rows: npt.NDArray[np.uint64]  # (n, W) the states' bits
    capabilities: tuple[str, ...]
    row_start: Ints
    row_state: Ints
    row_cap: Ints
    row_den: npt.NDArray[Any]  # int64, or object when a denominator exceeds int64
    col_start: Ints
    target: Ints
    numerator: npt.NDArray[Any]
    prob: Floats
    build_seconds: float = 0.0
    _matrix: list[sp.csr_matrix] = field(default_factory=list, repr=False, compare=False)

    def __len__(self) -> int:
        return int(self.rows.shape[0])

    @property
    def nr_choices(self) -> int:
        return int(self.row_state.shape[0])

    @property
    def nr_transitions(self) -> int:
        return int(self.target.shape[0])

    def state(self, i: int) -> State:
        return _unpack(self.rows[i])

    def states(self) -> list[State]:
        return [_unpack(r) for r in self.rows]

    def mask(self, pred: explicit.Target) -> Bools:
        return np.fromiter((bool(pred(s)) for s in self.states()), dtype=bool, count=len(self))

    def matrix(self) -> sp.csr_matrix:
        """The choices × states matrix of probabilities (doubles), built once."""
        import scipy.sparse as sp

        if not self._matrix:
            self._matrix.append(
                sp.csr_matrix((self.prob, self.target, self.col_start), shape=(self.nr_choices, len(self)))
            )
        return self._matrix[0]

    def to_explicit(self) -> explicit.ExplicitMDP:
        """The same MDP as :class:`explicit.ExplicitMDP` (exact Fractions), for the
        explicit engine's exact algorithms."""
        states = tuple(self.states())
        choices: list[tuple[explicit.Choice, ...]] = []
        tgt, num, den, cs = (
            self.target.tolist(),
            self.numerator.tolist(),
            self.row_den.tolist(),
            self.col_start.tolist(),
        )
        caps = self.row_cap.tolist()
        rs = self.row_start.tolist()
        for s in range(len(states)):
            mine = []
            for r in range(rs[s], rs[s + 1]):
                d = den[r]
                succ = tuple((tgt[k], Fraction(num[k], d)) for k in range(cs[r], cs[r + 1]))
                mine.append(explicit.Choice(None if caps[r] < 0 else self.capabilities[caps[r]], succ))
            choices.append(tuple(mine))
        return explicit.ExplicitMDP(states, {s: i for i, s in enumerate(states)}, tuple(choices))


def _tables(model: CompoundModel, w: int) -> tuple[list[list[_MaskGroup]], list[_Region]]:
    """Per capability the cube groups of its regions (by mask), and all regions."""
    b = model.ctx.bdd
    regions: list[_Region] = []
    groups: list[list[_MaskGroup]] = []
    full = (1 << (64 * w)) - 1
    for cm in model.values():
        by_mask: dict[int, list[tuple[int, int]]] = {}
        for node, rules in cm.regions():
            rid = len(regions)
            dist = sorted(rule_mixture(rules).items())
            den = math.lcm(*(p.denominator for _, p in dist))
            regions.append(
                _Region(
                    np.array([_pack(full & ~(eta.delete & ~eta.add), w) for eta, _ in dist], dtype=np.uint64),
                    np.array([_pack(eta.add, w) for eta, _ in dist], dtype=np.uint64),
                    tuple(int(p * den) for _, p in dist),
                    den,
                )
            )
            for c in isop(b, node):
                by_mask.setdefault(c.mask, []).append((c.value, rid))
        mine = []
        for mask, cubes in by_mask.items():
            vals = np.array([_pack(v, w) for v, _ in cubes], dtype=np.uint64)
            keys = _keys(vals)
            order = np.argsort(keys, kind="stable")
            mine.append(_MaskGroup(_pack(mask, w), keys[order], np.array([r for _, r in cubes], dtype=np.int64)[order]))
        groups.append(mine)
    return groups, regions


def build(model: CompoundModel, init: State, limit: int = explicit.DEFAULT_STATE_LIMIT) -> SparseMDP:
    """The states reachable from ``init`` with their choices (see the module
    docstring); :class:`explicit.StateSpaceLimitError` past ``limit`` states."""
    t0 = time.perf_counter()
    vocab = model.vocabulary
    if init < 0 or init >> len(vocab):
        raise ValueError(f"initial state {init!r} is not a bitset over the {len(vocab)} atoms of the model")
    w = _words(len(vocab))
    groups, regions = _tables(model, w)
    rows = [_pack(init, w)[None, :]]
    n = 1
    seen_keys = _keys(rows[0])
    seen_index = np.zeros(1, dtype=np.int64)
    frontier = np.zeros(1, dtype=np.int64)
    frontier_rows = rows[0]
    # Per (state, capability, effect): the source, capability, region, effect, successor row.
    src_parts: list[Ints] = []
    cap_parts: list[Ints] = []
    reg_parts: list[Ints] = []
    eff_parts: list[Ints] = []
    succ_parts: list[npt.NDArray[np.uint64]] = []
    while len(frontier):
        layer_succ: list[npt.NDArray[np.uint64]] = []
        for c, mine in enumerate(groups):
            region_of = np.full(len(frontier), -1, dtype=np.int64)
            for g in mine:
                pos, hit = _find(g.values, _keys(frontier_rows & g.mask))
                region_of[hit] = g.regions[pos[hit]]
            matched = np.nonzero(region_of >= 0)[0]
            if not len(matched):
                continue
            for rid in np.unique(region_of[matched]).tolist():
                sel = matched[region_of[matched] == rid]
                reg = regions[rid]
                srows = frontier_rows[sel]
                for e in range(len(reg.numerators)):
                    succ = (srows & reg.keep[e]) | reg.add[e]
                    src_parts.append(frontier[sel])
                    cap_parts.append(np.full(len(sel), c, dtype=np.int64))
                    reg_parts.append(np.full(len(sel), rid, dtype=np.int64))
                    eff_parts.append(np.full(len(sel), e, dtype=np.int64))
                    succ_parts.append(succ)
                    layer_succ.append(succ)
        if not layer_succ:
            break
        cand = np.concatenate(layer_succ)
        ckeys = _keys(cand)
        _, first = np.unique(ckeys, return_index=True)
        cand, ckeys = cand[first], ckeys[first]
        _, known = _find(seen_keys, ckeys)
        new_rows = cand[~known]
        if n + len(new_rows) > limit:
            raise explicit.StateSpaceLimitError(
                f"more than {limit} states are reachable from {vocab.format_state(init)}"
            )
        frontier = np.arange(n, n + len(new_rows), dtype=np.int64)
        frontier_rows = new_rows
        rows.append(new_rows)
        n += len(new_rows)
        all_keys = np.concatenate([seen_keys, ckeys[~known]])
        all_index = np.concatenate([seen_index, frontier])
        order = np.argsort(all_keys, kind="stable")
        seen_keys, seen_index = all_keys[order], all_index[order]
    states = np.concatenate(rows)
    return _assemble(
        states,
        tuple(model),
        regions,
        seen_keys,
        seen_index,
        src_parts,
        cap_parts,
        reg_parts,
        eff_parts,
        succ_parts,
        time.perf_counter() - t0,
    )


def _assemble(
    states: npt.NDArray[np.uint64],
    capabilities: tuple[str, ...],
    regions: list[_Region],
    seen_keys: npt.NDArray[Any],
    seen_index: Ints,
    src_parts: list[Ints],
    cap_parts: list[Ints],
    reg_parts: list[Ints],
    eff_parts: list[Ints],
    succ_parts: list[npt.NDArray[np.uint64]],
    elapsed: float,
) -> SparseMDP:
    t0 = time.perf_counter()
    n = len(states)
    if src_parts:
        src, cap = np.concatenate(src_parts), np.concatenate(cap_parts)
        reg, eff = np.concatenate(reg_parts), np.concatenate(eff_parts)
        pos, found = _find(seen_keys, _keys(np.concatenate(succ_parts)))
        assert found.all()
        tgt = seen_index[pos]
    else:
        src = cap = reg = eff = tgt = np.zeros(0, dtype=np.int64)
    # States without a capability: one self-loop (Storm's deadlock fix), capability -1.
    has = np.zeros(n, dtype=bool)
    has[src] = True
    dead = np.nonzero(~has)[0]
    src = np.concatenate([src, dead])
    cap = np.concatenate([cap, np.full(len(dead), -1, dtype=np.int64)])
    reg = np.concatenate([reg, np.full(len(dead), -1, dtype=np.int64)])
    eff = np.concatenate([eff, np.zeros(len(dead), dtype=np.int64)])
    tgt = np.concatenate([tgt, dead])
    order = np.lexsort((tgt, cap, src))
    src, cap, reg, eff, tgt = src[order], cap[order], reg[order], eff[order], tgt[order]
    big = max((r.den for r in regions), default=1) >= 2**62
    num_of = [[*r.numerators] for r in regions]
    dens = np.array([r.den for r in regions] + [1], dtype=object if big else np.int64)  # index -1: the self-loop
    flat_num = np.array([x for ns in num_of for x in ns] + [1], dtype=object if big else np.int64)
    offset = np.cumsum([0] + [len(ns) for ns in num_of])
    offset = np.append(offset[:-1], len(flat_num) - 1)
    num = flat_num[offset[reg] + eff]
    # Rows: one per (state, capability); merge successors two effects map to one state.
    new_row = np.ones(len(src), dtype=bool)
    new_row[1:] = (src[1:] != src[:-1]) | (cap[1:] != cap[:-1])
    new_col = new_row.copy()
    new_col[1:] |= tgt[1:] != tgt[:-1]
    col_idx = np.nonzero(new_col)[0]
    num = np.add.reduceat(num, col_idx) if len(col_idx) else num
    tgt = tgt[col_idx]
    row_first = np.nonzero(new_row)[0]
    row_state, row_cap = src[row_first], cap[row_first]
    row_den = dens[reg[row_first]]
    col_start = np.append(np.searchsorted(col_idx, row_first), len(col_idx)).astype(np.int64)
    row_start = np.append(np.searchsorted(row_state, np.arange(n)), len(row_state)).astype(np.int64)
    per_row = np.diff(col_start)
    prob = (
        (num.astype(np.float64) / np.repeat(row_den.astype(np.float64), per_row))
        if len(num)
        else np.zeros(0, dtype=np.float64)
    )
    if big:
        prob = np.array(
            [float(Fraction(int(a), int(d))) for a, d in zip(num, np.repeat(row_den, per_row), strict=True)],
            dtype=np.float64,
        )
    return SparseMDP(
        states,
        capabilities,
        row_start,
        row_state,
        row_cap,
        row_den,
        col_start,
        tgt.astype(np.int64),
        num,
        prob,
        elapsed + time.perf_counter() - t0,
    )


# =====================================================================================
# Graph pre-computation
# =====================================================================================


def _row_successor_graph(mdp: SparseMDP, rows: Bools) -> sp.csr_matrix:
    """Boolean rows × states matrix of the given rows' successors."""
    import scipy.sparse as sp

    keep = np.repeat(rows, np.diff(mdp.col_start))
    data = keep.astype(np.int8)
    return sp.csr_matrix((data, mdp.target, mdp.col_start), shape=(mdp.nr_choices, len(mdp)))


def _backward(mdp: SparseMDP, start: Bools, rows: Bools) -> Bools:
    """States from which ``start`` is reachable through the given rows (every state
    of ``start`` included)."""
    import scipy.sparse as sp
    from scipy.sparse import csgraph

    n = len(mdp)
    m = _row_successor_graph(mdp, rows).tocoo()
    # Edge t -> s for every successor t of a row of s; a super-source n -> start.
    src = np.concatenate([m.col[m.data > 0], np.full(int(start.sum()), n)])
    dst = np.concatenate([mdp.row_state[m.row[m.data > 0]], np.nonzero(start)[0]])
    g = sp.csr_matrix((np.ones(len(src), dtype=np.int8), (src, dst)), shape=(n + 1, n + 1))
    order = csgraph.breadth_first_order(g, n, directed=True, return_predecessors=False)
    out = np.zeros(n + 1, dtype=bool)
    out[order] = True
    return out[:n]


def zero_states(mdp: SparseMDP, goal: Bools, stop: Bools, maximise: bool) -> Bools:
    """The states of value 0 for F goal where the ``stop`` states (not in goal) are
    absorbing: for max, those without a path to goal; for min, Prob0A, those where
    some scheduler avoids goal forever (the complement of the least set containing
    goal and every state all of whose choices can enter it)."""
    live_rows = ~stop[mdp.row_state] & ~goal[mdp.row_state]
    if maximise:
        return ~_backward(mdp, goal, live_rows)
    g = _row_successor_graph(mdp, live_rows)
    inside = goal.copy()
    starts = mdp.row_start[:-1]
    while True:
        row_hit = (g @ inside.astype(np.int8)) > 0
        every = np.logical_and.reduceat(row_hit, starts) & live_rows[starts]
        nxt = inside | every
        if (nxt == inside).all():
            return ~inside
        inside = nxt


def _attractor(mdp: SparseMDP, base: Bools, region: Bools, rows: Bools) -> tuple[Bools, Ints]:
    """From ``base`` backwards through the allowed ``rows`` of ``region`` states: which
    region states are reached and, for each, a row with a successor one layer closer."""
    n = len(mdp)
    done = base.copy()
    choice = np.full(n, -1, dtype=np.int64)
    g = _row_successor_graph(mdp, rows & region[mdp.row_state])
    while True:
        row_hit = (g @ done.astype(np.int8)) > 0
        rs = np.nonzero(row_hit)[0]
        st = mdp.row_state[rs]
        fresh = ~done[st]
        rs, st = rs[fresh], st[fresh]
        if not len(rs):
            return done, choice
        st_u, first = np.unique(st, return_index=True)
        choice[st_u] = rs[first]
        done[st_u] = True


# =====================================================================================
# Float policy iteration
# =====================================================================================


def _evaluate(mdp: SparseMDP, policy: Ints, unknown: Ints, known: Floats) -> Floats:
    """Values of the ``unknown`` states under ``policy`` (a row per state)."""
    import scipy.sparse as sp
    from scipy.sparse.linalg import spsolve

    p = mdp.matrix()[policy[unknown]]
    n = len(mdp)
    pos = np.full(n, -1, dtype=np.int64)
    pos[unknown] = np.arange(len(unknown))
    coo = p.tocoo()
    inner = pos[coo.col] >= 0
    a = sp.csr_matrix((coo.data[inner], (coo.row[inner], pos[coo.col[inner]])), shape=(len(unknown), len(unknown)))
    rhs = np.zeros(len(unknown))
    np.add.at(rhs, coo.row[~inner], coo.data[~inner] * known[coo.col[~inner]])
    system = (sp.identity(len(unknown), format="csc") - a.tocsc()).tocsc()
    x = np.atleast_1d(spsolve(system, rhs))
    if not np.isfinite(x).all():
        raise SparseEngineError("a policy's linear system is singular")
    out = known.copy()
    out[unknown] = x
    return out


def float_reach(
    mdp: SparseMDP, goal: Bools, stop: Bools, maximise: bool, max_iterations: int = 10_000
) -> tuple[Floats, Ints, Bools]:
    """Pmax / Pmin of F goal (``stop`` states absorbing) in every state, in doubles:
    the values, the final policy (a row per undecided state, -1 elsewhere) and the
    value-0 states."""
    zero = zero_states(mdp, goal, stop, maximise)
    undecided = ~zero & ~goal & ~stop
    known = goal.astype(np.float64)
    unknown = np.nonzero(undecided)[0]
    policy = np.full(len(mdp), -1, dtype=np.int64)
    if not len(unknown):
        return known, policy, zero
    all_rows = np.ones(mdp.nr_choices, dtype=bool)
    if maximise:
        _, policy = _attractor(mdp, goal, undecided, all_rows)
    else:
        policy[unknown] = mdp.row_start[unknown]  # after Prob0A every policy is proper
    p = mdp.matrix()
    starts = mdp.row_start[:-1]
    values = known
    for _ in range(max_iterations):
        values = _evaluate(mdp, policy, unknown, known)
        q = p @ values
        best = (np.maximum if maximise else np.minimum).reduceat(q, starts)
        current = q[np.maximum(policy, 0)]
        gain = (best - current) if maximise else (current - best)
        better = undecided & (gain > FLOAT_TOLERANCE * np.maximum(1.0, np.abs(current)))
        if not better.any():
            return values, policy, zero
        # The first row attaining the best value in each improving state.
        hit = (q == best[mdp.row_state]) & better[mdp.row_state]
        rows = np.nonzero(hit)[0]
        st, first = np.unique(mdp.row_state[rows], return_index=True)
        policy[st] = rows[first]
    raise SparseEngineError(f"policy iteration did not converge in {max_iterations} iterations")


# =====================================================================================
# The exactness step
# =====================================================================================


def round_values(values: Floats, denominator: int = ROUNDING_DENOMINATOR) -> list[Fraction]:
    """Each float as the nearest fraction with at most ``denominator`` (0 and 1 exactly)."""
    out = []
    for v in values.tolist():
        out.append(Fraction(0) if v <= 0 else Fraction(1) if v >= 1 else Fraction(v).limit_denominator(denominator))
    return out


def _row_sums(mdp: SparseMDP, scaled: npt.NDArray[Any], rows: Ints) -> npt.NDArray[Any]:
    """Σ_t numerator_t · scaled[t] over the successors of each of ``rows`` (Python
    integers in an object array: exact)."""
    lengths = np.diff(mdp.col_start)[rows]
    idx = np.repeat(mdp.col_start[rows], lengths) + (
        np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    )
    prod = mdp.numerator[idx].astype(object) * scaled[mdp.target[idx]]
    starts = np.cumsum(lengths) - lengths
    return np.add.reduceat(prod, starts) if len(prod) else np.zeros(0, dtype=object)


def verify_exact(mdp: SparseMDP, goal: Bools, stop: Bools, zero: Bools, values: list[Fraction], maximise: bool) -> bool:
    """Whether ``values`` are exactly Pmax (Pmin) of F goal with the ``stop`` states
    absorbing and ``zero`` the value-0 states of :func:`zero_states` (the conditions of
    the module docstring), checked in exact integer arithmetic."""
    n = len(mdp)
    if len(values) != n:
        raise ValueError(f"{len(values)} values for {n} states")
    for i in np.nonzero(goal)[0].tolist():
        if values[i] != 1:
            return False
    for i in np.nonzero(zero | (stop & ~goal))[0].tolist():
        if values[i] != 0:
            return False
    undecided = ~zero & ~goal & ~stop
    if not undecided.any():
        return True
    common = math.lcm(*(v.denominator for v in values))
    scaled = np.array([v.numerator * (common // v.denominator) for v in values], dtype=object)
    rows = np.nonzero(undecided[mdp.row_state])[0]
    lhs = _row_sums(mdp, scaled, rows)
    rhs = scaled[mdp.row_state[rows]] * mdp.row_den[rows].astype(object)
    ok = (lhs <= rhs) if maximise else (lhs >= rhs)
    if not bool(np.all(ok)):
        return False
    tight = np.zeros(mdp.nr_choices, dtype=bool)
    tight[rows[lhs == rhs]] = True
    attained = np.zeros(n, dtype=bool)
    attained[mdp.row_state[tight]] = True
    if not bool(np.all(attained[undecided])):
        return False
    if maximise:
        reached, _ = _attractor(mdp, ~undecided, undecided, tight)
        return bool(np.all(reached[undecided]))
    return True


# =====================================================================================
# Exact bounded reachability over integers
# =====================================================================================


def bounded_reach_exact(mdp: SparseMDP, goal: Bools, stop: Bools, bound: int, maximise: bool) -> list[Fraction]:
    """Pmax / Pmin of F<=bound goal (``stop`` states absorbing) in every state, exact:
    value iteration over integers, each step's values over the common denominator
    (the previous one times the lcm of the choices' denominators)."""
    if bound < 0:
        raise ValueError(f"step bound {bound} is negative")
    # States that cannot reach the goal keep 0: only the others are iterated.
    live = ~goal & ~stop & _backward(mdp, goal, ~stop[mdp.row_state] & ~goal[mdp.row_state])
    rows = np.nonzero(live[mdp.row_state])[0]
    lcm = math.lcm(*(int(d) for d in np.unique(mdp.row_den[rows]).tolist())) if len(rows) else 1
    factor = np.array([lcm // int(d) for d in mdp.row_den[rows].tolist()], dtype=object)
    x = goal.astype(np.int64).astype(object)
    denom = 1
    pick = np.maximum if maximise else np.minimum
    row_states = mdp.row_state[rows]
    live_states, starts = np.unique(row_states, return_index=True)
    for _ in range(bound):
        q = _row_sums(mdp, x, rows) * factor if len(rows) else np.zeros(0, dtype=object)
        nxt = x * lcm
        if len(rows):
            nxt[live_states] = pick.reduceat(q, starts)
        x, denom = nxt, denom * lcm
    return [Fraction(int(v), denom) for v in x.tolist()]


# =====================================================================================
# The answer for one query, with its guarantee
# =====================================================================================

Method = Literal["verified", "exact-fallback", "exact"]


@dataclass(frozen=True, slots=True)
class Solution:
    """Values in every state, exact, and how they were obtained: ``verified`` (the
    float solution rounded and verified), ``exact-fallback`` (the check failed, exact
    policy iteration from the float policy) or ``exact`` (computed in rationals)."""

    values: list[Fraction]
    method: Method
    float_seconds: float = 0.0
    exact_seconds: float = 0.0


def reach(
    mdp: SparseMDP,
    goal: Bools,
    stop: Bools | None = None,
    bound: int | None = None,
    *,
    maximise: bool = True,
    denominator: int = ROUNDING_DENOMINATOR,
) -> Solution:
    """Pmax / Pmin of F goal (F<=bound goal) with the ``stop`` states absorbing (φ U ψ
    is F ψ with the states outside φ ∧ ¬ψ absorbing), exact in every state."""
    if stop is None:
        stop = np.zeros(len(mdp), dtype=bool)
    stop = stop & ~goal
    t0 = time.perf_counter()
    if bound is not None:
        return Solution(
            bounded_reach_exact(mdp, goal, stop, bound, maximise), "exact", exact_seconds=time.perf_counter() - t0
        )
    try:
        values, policy, zero = float_reach(mdp, goal, stop, maximise)
    except SparseEngineError:
        values, policy, zero = None, None, zero_states(mdp, goal, stop, maximise)
    t1 = time.perf_counter()
    if values is not None:
        candidate = round_values(values, denominator)
        if verify_exact(mdp, goal, stop, zero, candidate, maximise):
            return Solution(candidate, "verified", t1 - t0, time.perf_counter() - t1)
    exact_values = _exact_reach(mdp, goal, stop, zero, policy, maximise)
    return Solution(exact_values, "exact-fallback", t1 - t0, time.perf_counter() - t1)


def _exact_reach(
    mdp: SparseMDP, goal: Bools, stop: Bools, zero: Bools, policy: Ints | None, maximise: bool
) -> list[Fraction]:
    """Exact policy iteration (the explicit engine's), from the float policy when it
    leaves the undecided states with probability 1, else from the engine's own start."""
    em = explicit.absorbing(mdp.to_explicit(), (stop | goal).tolist())
    undecided = ~zero & ~goal & ~stop
    unknown = np.nonzero(undecided)[0].tolist()
    known: list[explicit.Value] = [Fraction(1) if g else Fraction(0) for g in goal.tolist()]
    start: dict[int, int] | None = None
    if policy is not None and unknown:
        rows = np.zeros(mdp.nr_choices, dtype=bool)
        rows[policy[undecided]] = True
        reached, _ = _attractor(mdp, ~undecided, undecided, rows)
        if reached[undecided].all():
            start = {s: int(policy[s] - mdp.row_start[s]) for s in unknown}
    if start is None:
        out = explicit.reach_values(em, goal.tolist(), maximise=maximise, exact=True)
        return [Fraction(v) for v in out]
    out = explicit.policy_iteration(em, unknown, start, known, maximise)
    return [Fraction(v) for v in out]


class SparseChecker:
    """The sparse engine as a checker of ``capver verify --engine sparse``: Pmax / Pmin
    of F, U and G, bounded or not, exact in every case (the float solution verified, or
    exact arithmetic where the check fails); Rmin / Rmax by the explicit engine on the
    same MDP.  The built MDP is kept per (model, initial state)."""

    name = "sparse"

    def __init__(self, *, denominator: int = ROUNDING_DENOMINATOR, limit: int = explicit.DEFAULT_STATE_LIMIT) -> None:
        self.denominator = denominator
        self.limit = limit
        self.guarantee = EXACT
        self.last: Solution | None = None
        self._built: dict[tuple[int, State], tuple[CompoundModel, SparseMDP, list[State]]] = {}

    def built(self, model: CompoundModel, init: State) -> SparseMDP:
        """The MDP of ``model`` from ``init`` (built on first use)."""
        return self._entry(model, init)[1]

    def _entry(self, model: CompoundModel, init: State) -> tuple[CompoundModel, SparseMDP, list[State]]:
        key = (id(model), init)
        hit = self._built.get(key)
        if hit is None or hit[0] is not model:
            mdp = build(model, init, self.limit)
            # The model is kept so that its id cannot be reused by another one.
            self._built[key] = hit = (model, mdp, mdp.states())
        return hit

    def _mask(self, model: CompoundModel, init: State, f: StateFormula) -> Bools:
        states, vocab = self._entry(model, init)[2], model.vocabulary
        return np.fromiter((holds(f, s, vocab) for s in states), dtype=bool, count=len(states))

    def probability(self, model: CompoundModel, init: State, path: PathFormula, maximise: bool) -> Value:
        mdp = self.built(model, init)
        if isinstance(path, Globally):
            # Pmax G φ = 1 − Pmin F ¬φ (and Pmin likewise).
            bad = ~self._mask(model, init, path.invariant)
            return 1 - self._solve(mdp, bad, None, path.bound, not maximise)
        goal = self._mask(model, init, path.goal)
        stop = ~self._mask(model, init, path.hold) if isinstance(path, Until) else None
        return self._solve(mdp, goal, stop, path.bound, maximise)

    def _solve(self, mdp: SparseMDP, goal: Bools, stop: Bools | None, bound: int | None, maximise: bool) -> Fraction:
        sol = reach(mdp, goal, stop, bound, maximise=maximise, denominator=self.denominator)
        self.last = sol
        self.guarantee = VERIFIED if sol.method == "verified" else EXACT
        return sol.values[0]

    def executions(self, model: CompoundModel, init: State, target: StateFormula, maximise: bool) -> Value:
        em = self.built(model, init).to_explicit()
        exact = len(em) <= explicit.EXACT_STATE_LIMIT
        v = explicit.executions_values(em, self._mask(model, init, target).tolist(), maximise=maximise, exact=exact)[0]
        self.guarantee = EXACT if exact or math.isinf(v) else FLOAT
        return v


__all__ = [
    "FLOAT_TOLERANCE",
    "ROUNDING_DENOMINATOR",
    "Solution",
    "SparseChecker",
    "SparseEngineError",
    "SparseMDP",
    "bounded_reach_exact",
    "build",
    "float_reach",
    "reach",
    "round_values",
    "verify_exact",
    "zero_states",
]

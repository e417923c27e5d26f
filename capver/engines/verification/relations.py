"""Machine checks over compound models (section 3.1's lattice order).

``h₁ ⪯ h₂ ⟺ T_{h₁} ⊆ T_{h₂}`` is decided by z3, one query per capability: the
transition relation of h_c is encoded over current-state symbols x and next-state
symbols x′ as

    T_c(x, x′) = ⋁_r ( cond_r(x) ∧ ⋁_j x′ = apply(x, η_j) ),

and T_{h₁,c} ∧ ¬T_{h₂,c} is unsatisfiable for every c exactly when h₁ ⪯ h₂.  A
satisfying assignment is a concrete counterexample transition ⟨s, c, s′⟩.
"""

from __future__ import annotations

from dataclasses import dataclass

from pysmt.fnode import FNode

from capver.core.state import Effect, Transition
from capver.errors import SolverError
from capver.logic.bdd import Cube, Node
from capver.logic.condition import LogicContext
from capver.model.capability_model import CapabilityModel, CompoundModel, Rule, rule_mixture


@dataclass(frozen=True, slots=True)
class RelationVerdict:
    """The answer of a relation between two models (⪯, equivalence, the same
    distributions): ``holds`` with a proof (every capability's query was UNSAT), or a
    counterexample transition.  (A verdict about the *agent* is a
    :class:`~capver.engines.verification.agent_verdict.LatticeVerdict`.)"""

    holds: bool
    counterexample: Transition | None = None
    checked: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return self.holds


def apply_formula(ctx: LogicContext, eta: Effect) -> FNode:
    """x′ = apply(x, η) as a formula over x and x′."""
    mgr, cur, nxt = ctx.smt.mgr, ctx.smt.cur, ctx.smt.nxt
    parts = []
    for i in range(len(cur)):
        bit = 1 << i
        if eta.add & bit:
            parts.append(nxt[i])
        elif eta.delete & bit:
            parts.append(mgr.Not(nxt[i]))
        else:
            parts.append(mgr.Iff(nxt[i], cur[i]))
    return mgr.And(parts)


def transition_formula(ctx: LogicContext, model: CapabilityModel | None) -> FNode:
    """T_c(x, x′) of one capability model (False for a missing capability)."""
    mgr = ctx.smt.mgr
    if model is None:
        return mgr.FALSE()
    return mgr.Or(
        [mgr.And(r.condition.smt, mgr.Or([apply_formula(ctx, eta) for _, eta in r.effects])) for r in model.rules]
    )


def refines(h1: CompoundModel, h2: CompoundModel) -> RelationVerdict:
    """h₁ ⪯ h₂ (T_{h₁} ⊆ T_{h₂}), proved or refuted by z3."""
    _same_context(h1, h2)
    ctx = h1.ctx
    smt = ctx.smt
    # One solver for every capability's query (SmtContext.satisfiability): the queries
    # share sub-formulas (minterms of tried states, h∨'s tried sets) that a fresh
    # solver per query converted again - most of the certificate's time on a learned
    # model (Tireworld, 300 steps: 3.5 s of CPU, now 1.4 s).  A counterexample still
    # comes from a fresh solver, as before.
    with smt.satisfiability() as sat:
        for c, m1 in h1.items():
            query = smt.mgr.And(transition_formula(ctx, m1), smt.mgr.Not(transition_formula(ctx, h2.get(c))))
            if not sat(query):
                continue
            model = smt.find_model(query)
            if model is None:
                raise SolverError(f"capability {c}: z3 found the query satisfiable, then unsatisfiable")
            s = smt.state_of(model, smt.cur)
            s2 = smt.state_of(model, smt.nxt)
            return RelationVerdict(False, Transition(s, c, s2), tuple(h1))
    return RelationVerdict(True, None, tuple(h1))


def equivalent(h1: CompoundModel, h2: CompoundModel) -> RelationVerdict:
    """h₁ ≡ h₂ (T_{h₁} = T_{h₂})."""
    v = refines(h1, h2)
    if not v:
        return v
    w = refines(h2, h1)
    return RelationVerdict(w.holds, w.counterexample, tuple(sorted(set(h1) | set(h2))))


def same_distributions(h1: CompoundModel, h2: CompoundModel, max_touched: int = 20) -> RelationVerdict:
    """Pr_{h₁}(·|s,c) = Pr_{h₂}(·|s,c) for every state s and capability c, decided
    exactly on BDD regions.

    Within a pair of regions (one per model) both models average fixed rule sets, so
    they agree everywhere there when their averaged effect distributions are equal.
    When those differ, different effects may still yield the same successor (+p
    and ∅ where p already holds).  Whether they do depends only on s restricted to
    the atoms T the effects touch, so the region is split by the 2^|T| assignments
    to T and one state per non-empty cell is compared by Pr directly.  The
    counterexample ⟨s, c, s⟩ names a state where the distributions differ."""
    _same_context(h1, h2)
    ctx, b = h1.ctx, h1.ctx.bdd
    for c in sorted(set(h1) | set(h2)):
        r1 = h1[c].regions() if c in h1 else []
        r2 = h2[c].regions() if c in h2 else []
        cov1 = _union(ctx, [u for u, _ in r1])
        cov2 = _union(ctx, [u for u, _ in r2])
        diff = b.disj(b.conj(cov1, b.neg(cov2)), b.conj(cov2, b.neg(cov1)))
        if diff != b.false:
            s = b.pick(diff)
            assert s is not None
            return RelationVerdict(False, Transition(s, c, s))
        for u1, rs1 in r1:
            d1 = rule_mixture(rs1)
            for u2, rs2 in r2:
                both = b.conj(u1, u2)
                if both == b.false or rule_mixture(rs2) == d1:
                    continue
                s = _differing_state(h1, h2, c, both, rs1 + rs2, max_touched)
                if s is not None:
                    return RelationVerdict(False, Transition(s, c, s))
    return RelationVerdict(True)


def _differing_state(
    h1: CompoundModel, h2: CompoundModel, c: str, region: Node, rules: tuple[Rule, ...], max_touched: int
) -> int | None:
    b = h1.ctx.bdd
    touched = 0
    for r in rules:
        for _, eta in r.effects:
            touched |= eta.add | eta.delete
    bits = [i for i in range(b.n_vars) if (touched >> i) & 1]
    if len(bits) > max_touched:
        raise ValueError(f"effects touch {len(bits)} atoms; the exact check enumerates at most 2^{max_touched} cells")
    for k in range(1 << len(bits)):
        value = 0
        for j, i in enumerate(bits):
            if (k >> j) & 1:
                value |= 1 << i
        cell = b.conj(region, b.cube(Cube(touched, value)))
        s = b.pick(cell)
        if s is not None and h1[c].distribution(s) != h2[c].distribution(s):
            return s
    return None


def _union(ctx: LogicContext, nodes: list[Node]) -> Node:
    u = ctx.bdd.false
    for v in nodes:
        u = ctx.bdd.disj(u, v)
    return u


def _same_context(h1: CompoundModel, h2: CompoundModel) -> None:
    if h1.ctx is not h2.ctx:
        raise ValueError("models must share one LogicContext to be compared")

"""capver.engines.verification.relations.refines decides every capability's query on one z3 solver
(push/pop, in a z3 context of its own) and takes a counterexample from a fresh
solver: its verdicts must be those of one fresh solver per query, the way it worked
before, and both must agree with enumerating every transition on small
vocabularies, the counterexample a transition of h₁ that h₂ lacks.  (Which
counterexample z3 picks was never fixed: two fresh-solver runs in a row pick
different ones for about a third of these models, since z3's models depend on the
history of its global context.)"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from capver.core.state import Transition
from capver.engines.lattice import build_bounds
from capver.engines.verification import relations
from capver.model.capability_model import CompoundModel
from tests.helpers.corpus import all_states, brute_transitions, sampled_worlds
from tests.helpers.examples import scaled


def fresh_solver_refines(h1: CompoundModel, h2: CompoundModel) -> relations.RelationVerdict:
    """The reference: one fresh solver per capability's query."""
    ctx = h1.ctx
    smt = ctx.smt
    for c, m1 in h1.items():
        query = smt.mgr.And(
            relations.transition_formula(ctx, m1), smt.mgr.Not(relations.transition_formula(ctx, h2.get(c)))
        )
        model = smt.find_model(query)
        if model is not None:
            return relations.RelationVerdict(
                False, Transition(smt.state_of(model, smt.cur), c, smt.state_of(model, smt.nxt)), tuple(h1)
            )
    return relations.RelationVerdict(True, None, tuple(h1))


@settings(max_examples=scaled(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sampled_worlds(max_atoms=4, max_transitions=30))
def test_shared_solver_gives_the_fresh_solvers_verdicts_and_counterexamples(wd) -> None:  # type: ignore[no-untyped-def]
    world, data = wd
    b = build_bounds(world.ctx, data)
    pairs = [
        (b.pessimistic, b.optimistic),
        (b.optimistic, b.pessimistic),
        (world.truth, b.pessimistic),
        (b.pessimistic, world.truth),
        (b.optimistic, world.truth),
    ]
    for h1, h2 in pairs:
        before = fresh_solver_refines(h1, h2)
        got = relations.refines(h1, h2)
        assert (got.holds, got.checked) == (before.holds, before.checked)
        assert (got.counterexample is None) == (before.counterexample is None)
        assert got.counterexample is None or got.counterexample.c == before.counterexample.c  # type: ignore[union-attr]
        # And both are right: T_h1 ⊆ T_h2 by enumeration, the counterexample in T_h1 ∖ T_h2.
        t1, t2 = brute_transitions(h1, world.n), brute_transitions(h2, world.n)
        assert got.holds == (t1 <= t2)
        if not got.holds:
            assert got.counterexample in t1 - t2
    assert all_states(world.n)  # the vocabularies here are small enough to enumerate

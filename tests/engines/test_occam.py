"""Tests of the Occam model h̃ (capver.engines.occam): on random data every minimiser's conditions
lie between pcond and ocond of their block, are mutually exclusive and agree with the
data on every tried state; z3 proves h∧ ⪯ h̃ ⪯ h∨; and where the truth is simple h̃
finds it and predicts untried states that h∧ leaves blank."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capver import synthetic
from capver.core.dataset import TransitionDataset
from capver.core.state import Effect, Transition
from capver.engines.lattice import build_bounds
from capver.engines.occam import MINIMISERS, check_conditions, literals, occam_model, rule_sizes
from capver.engines.verification import relations
from capver.logic.condition import LogicContext, agreement_counterexample
from tests.helpers.corpus import BACKEND_NAMES, all_states, sampled_worlds
from tests.helpers.examples import scaled


@st.composite
def partitions(draw: st.DrawFn) -> tuple[LogicContext, list[frozenset[int]]]:
    """Random tried states over up to 6 atoms, split into up to 4 blocks."""
    n = draw(st.integers(1, 6))
    states = draw(st.sets(st.integers(0, (1 << n) - 1), min_size=1, max_size=1 << n))
    labels = {s: draw(st.integers(0, 3)) for s in sorted(states)}
    blocks = [frozenset(s for s, lab in labels.items() if lab == k) for k in range(4)]
    return LogicContext(synthetic.propositional_vocabulary(n)), [b for b in blocks if b]


@pytest.mark.parametrize("name", sorted(MINIMISERS))
@settings(max_examples=scaled(60), deadline=None)
@given(case=partitions())
def test_every_minimiser_stays_in_the_lattice_and_is_exclusive(
    name: str, case: tuple[LogicContext, list[frozenset[int]]]
) -> None:
    ctx, blocks = case
    fs = MINIMISERS[name](ctx, blocks)
    assert fs is not None
    check_conditions(ctx, blocks, fs)  # the BDD check the builder runs ...
    tried = {s: k for k, blk in enumerate(blocks) for s in blk}
    for s in all_states(len(ctx.vocab)):  # ... and the same by enumeration
        holding = [k for k, f in enumerate(fs) if ctx.bdd.evaluate(f, s)]
        assert len(holding) <= 1
        if s in tried:
            assert holding == [tried[s]]


@settings(max_examples=scaled(40), deadline=None)
@given(case=sampled_worlds(max_atoms=5, max_transitions=60), seed=st.integers(0, 2**16))
def test_h_tilde_agrees_with_the_data_and_lies_between_the_bounds(
    case: tuple[object, TransitionDataset], seed: int
) -> None:
    world, data = case
    bounds = build_bounds(world.ctx, data)  # type: ignore[attr-defined]
    h_and, h_or = bounds.pessimistic, bounds.optimistic
    tilde = occam_model(h_and, np.random.default_rng(seed)).model
    assert set(tilde) == set(h_and)
    for c, m in tilde.items():
        tried = set(data.states_of(c))
        for s in all_states(len(world.ctx.vocab)):  # type: ignore[attr-defined]
            assert len(m.matching(s)) <= 1  # mutually exclusive
            if s in tried:
                # the data's own MLE distribution at every tried state
                assert m.distribution(s) == h_and[c].distribution(s)
        for r in m.rules:
            assert agreement_counterexample(r.condition) is None  # its SMT formula is its BDD
    assert relations.refines(h_and, tilde).holds
    assert relations.refines(tilde, h_or).holds


def _threshold_data(ctx: LogicContext, states: list[int]) -> TransitionDataset:
    """A capability that adds p7 exactly when p0 and not p3 hold (else nothing changes)."""
    data = TransitionDataset(ctx.vocab)
    for s in states:
        works = s & 1 and not s & 8
        data.add(Transition(s, "go", Effect(add=1 << 7).apply(s) if works else s))
    return data


@pytest.mark.parametrize("bdd", BACKEND_NAMES)
def test_h_tilde_recovers_a_short_truth_and_predicts_untried_states(bdd: str) -> None:
    ctx = LogicContext(synthetic.propositional_vocabulary(8), bdd)
    rng = np.random.default_rng(3)
    tried = sorted(int(x) for x in rng.choice(1 << 7, size=40, replace=False))  # p7 false when tried
    data = _threshold_data(ctx, tried)
    bounds = build_bounds(ctx, data)
    occ = occam_model(bounds.pessimistic, np.random.default_rng(0))
    m = occ.model["go"]
    assert max(rule_sizes(occ.model)) <= 2 < min(rule_sizes(bounds.pessimistic))
    untried = [s for s in range(1 << 7) if s not in set(tried)]
    for s in untried:
        works = bool(s & 1 and not s & 8)
        want = Effect(add=1 << 7).apply(s) if works else s
        assert m.distribution(s) == {want: 1}
        assert bounds.pessimistic["go"].distribution(s) == {}
    # restrict needs CUDD; the registry skips it elsewhere
    assert ("restrict" in occ.choices["go"].literals) == (bdd == "cudd")


def test_h_tilde_is_a_function_of_the_data_and_the_seed() -> None:
    ctx = LogicContext(synthetic.propositional_vocabulary(8))
    data = _threshold_data(ctx, list(range(0, 120, 3)))
    h_and = build_bounds(ctx, data).pessimistic
    a = occam_model(h_and, np.random.default_rng(5))
    b = occam_model(h_and, np.random.default_rng(5))
    assert a.choices == b.choices
    assert [literals(r.condition) for r in a.model["go"].rules] == [literals(r.condition) for r in b.model["go"].rules]
    assert all(
        r.condition.equivalent(q.condition) for r, q in zip(a.model["go"].rules, b.model["go"].rules, strict=True)
    )


def test_the_occam_benchmark_smoke_run(tmp_path: Path) -> None:
    from capver.bench.occam import main

    argv = [
        "--quick",
        "--jobs",
        "1",
        "--size-settings",
        "minigrid-rl",
        "--heldout-domains",
        "first_responders",
        "--qace-methods",
        "random",
        "--out",
        str(tmp_path),
    ]
    assert main(argv) == 0
    text = (tmp_path / "table.md").read_text(encoding="utf-8")
    rows = [
        [c.strip() for c in line.strip("|\n").split("|")]
        for line in text.splitlines()
        if line.startswith("| ")
        and not line.startswith("| setting")
        and not line.startswith("| method")
        and not line.startswith("| hidden")
    ]
    size, qace, held = rows[0], rows[1:3], rows[3:]
    assert size[0] == "minigrid-rl" and size[-1] == size[-2] == "proved" and float(size[6]) <= float(size[4])
    for r in qace:  # on tried pairs h̃ is the data's MLE, exactly as h∧ (lifted h̃: the pooled MLE)
        assert r[0] == "random" and r[18] == r[19]
    assert [r[-1] for r in qace] == ["—", "proved"]  # z3 on the lifted h̃ at the last point
    assert all(r[-1] == r[-2] == "proved" and float(r[-3]) == 0.0 for r in held)  # h∧ predicts nothing untried

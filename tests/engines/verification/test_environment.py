"""What the environment settles (capver.engines.verification.environment): exact
verdicts for every agent, checked against known truths (random models, the PPDDL
primitive agent, whose true model is its environment) and against a second
enumeration of the environment (the BDD engine's reachable set), and the commands a
user types on the LAO* Blocksworld agent (the session's small run, read only)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capver import synthetic
from capver.agents.primitive import true_primitive_model
from capver.core.properties import holds
from capver.core.setting_args import SettingArgs
from capver.core.state import State
from capver.engines.lattice import LatticeBuilder
from capver.engines.verification.agent_verdict import (
    AgentVerdict,
    LatticeVerdict,
    Tier,
    decide,
    path_sets,
    violation_goal,
)
from capver.engines.verification.environment import World, explore, restriction, settle
from capver.engines.verification.quantitative import QuantitativeResult
from capver.engines.verification.symbolic import SymbolicEngine
from capver.envs.ppddl import load_task
from capver.io.properties_text import parse_property
from capver.logic.condition import LogicContext
from capver.model.capability_model import CompoundModel
from capver.settings import world_of
from tests.helpers.cli import capver_in_process
from tests.helpers.examples import scaled
from tests.helpers.paths import ROOT

ATOMS = ("p0", "p1", "p2", "p3")
TEMPLATES = ("A [ G {f} ]", "A [ G<=2 {f} ]", "E [ F {f} ]", "E [ p0 | {f} U {f} ]", "E [ G {f} ]", "A [ F {f} ]")


def _formulas() -> st.SearchStrategy[str]:
    literal = st.builds(lambda a, neg: ("!" if neg else "") + a, st.sampled_from(ATOMS), st.booleans())
    return st.one_of(
        literal,
        st.builds(lambda a, b: f"({a} & {b})", literal, literal),
        st.builds(lambda a, b: f"({a} | {b})", literal, literal),
        # A single state: a world with one bad state among many.
        st.builds(lambda *lits: "!(" + " & ".join(lits) + ")", *(st.sampled_from((a, "!" + a)) for a in ATOMS)),
    )


def _successors(model: CompoundModel):  # type: ignore[no-untyped-def]
    return lambda s: (t for c in model for t in model[c].distribution(s))


@settings(max_examples=scaled(100), deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.integers(0, 40),
    st.sampled_from(TEMPLATES),
    _formulas(),
    st.integers(0, 15),
)
def test_what_the_environment_settles_is_the_truth(seed: int, n: int, template: str, formula: str, init: int) -> None:
    """For every random truth (every capability enabled everywhere, so its runs never
    stop, as an agent's) used as both the agent and its environment, every verdict
    the environment settles is the truth's, and an invariant the truth keeps is
    always settled."""
    rng = np.random.default_rng(seed)
    ctx = LogicContext(synthetic.propositional_vocabulary(4))
    truth = synthetic.random_model(ctx, rng, n_capabilities=3, max_rules=2, max_effects=2, total=True)
    prop = parse_property(template.format(f=formula), ctx.vocab, tuple(truth), source="test")
    edges = explore(_successors(truth), init)
    assert edges is not None
    world = World.of(ctx.vocab, init, edges, "the truth")
    data = synthetic.sample_dataset(truth, rng, n_transitions=n) if n else None
    lat = LatticeBuilder(ctx, data if data is not None else synthetic.sample_dataset(truth, rng, 1))
    before = decide(prop, lat.pessimistic, lat.optimistic, data, init)
    after = settle(before, prop, world, init, ctx.vocab)
    expected = SymbolicEngine(truth).check(prop, init).holds
    if after.environment is not None:
        assert after.tier is Tier.OBSERVED and not (before.tier is Tier.OBSERVED and before.witness is not None)
        assert (after.verdict is AgentVerdict.HOLDS) == expected
    else:
        assert after is before
    observed_run = before.tier is Tier.OBSERVED and before.witness is not None
    if template == "A [ G {f} ]" and expected and not observed_run:
        assert after.environment is not None  # nothing breaks it in the environment: settled


def test_a_world_that_starts_elsewhere_settles_nothing() -> None:
    rng = np.random.default_rng(3)
    ctx = LogicContext(synthetic.propositional_vocabulary(4))
    truth = synthetic.random_model(ctx, rng, n_capabilities=3, max_rules=2, max_effects=2, total=True)
    prop = parse_property("A [ G true ]", ctx.vocab, tuple(truth), source="test")
    data = synthetic.sample_dataset(truth, rng, n_transitions=5)
    lat = LatticeBuilder(ctx, data)
    verdict = decide(prop, lat.pessimistic, lat.optimistic, data, 0)
    world = World(ctx.vocab, 1, frozenset({1}), "elsewhere")
    assert settle(verdict, prop, world, State(0), ctx.vocab) is verdict
    assert explore(_successors(truth), 0, limit=1) is None  # more states than the limit: no world


@pytest.mark.parametrize("domain", ["blocks", "first_responders", "tireworld"])
def test_the_ppddl_world_is_the_true_primitive_models_reachable_set(domain: str) -> None:
    """Two enumerations of the environment agree: breadth first over the task's
    actions, and the BDD engine's fixpoint over the primitive agent's true model."""
    world = world_of("primitive", SettingArgs(domain=domain))
    assert world is not None and world.initial == load_task(domain).initial_state
    task = load_task(domain)
    truth = true_primitive_model(task, LogicContext(task.vocabulary))
    engine = SymbolicEngine(truth)
    prop = parse_property("E [ F true ]", task.vocabulary, tuple(truth), source="test")
    assert engine.check(prop, world.initial, counts=True).reachable == len(world.states)
    assert world_of("crafter", SettingArgs()) is None  # an environment capver cannot enumerate


ISSUE_PROPERTIES = ("A [ G !(holding(a) & holding(b)) ]", "A [ G !(on(a,b) & on(b,a)) ]")


def test_the_blocksworld_safety_properties_are_decided_by_capver_verify(small_run_source: Path) -> None:
    args = [a for p in ISSUE_PROPERTIES for a in ("--property", p)]
    r = capver_in_process("verify", str(small_run_source), *args, "--json")
    assert r.returncode == 0, r.stderr
    records = [json.loads(line) for line in r.stdout.splitlines()]
    assert [(x["verdict"], x["tier"], x["environment"]) for x in records] == [
        ("holds", "observed", "the PPDDL task blocks/problem1")
    ] * 2
    assert all("125 states" in x["reason"] for x in records)
    text = capver_in_process("verify", str(small_run_source), *args)
    assert text.stdout.count("HOLDS for every agent (exact: the environment settles it)") == 2
    # From the data alone they are not decided: h∨ still has runs into the bad states.
    alone = capver_in_process("verify", str(small_run_source), *args, "--json", "--ignore-environment")
    assert alone.returncode != 0
    assert all(json.loads(line)["tier"] != "observed" for line in alone.stdout.splitlines())


def test_capver_verify_bounds_the_agent_with_the_environment(
    small_run_source: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The agent's probability bounds are 0 (1 for G, ∞ for Rmin) where no run of the
    environment reaches the goal: two blocks on each other is such a goal, so its
    Pmax is bounded to [0, 0] (from the data alone the untried pairs leave it at 1);
    the environment is enumerated once per command, and --ignore-environment does
    not enumerate it."""
    import capver.settings
    from capver import cli

    calls: list[str] = []
    real = capver.settings.world_of

    def counted(agent: str, args: SettingArgs) -> object:
        calls.append(agent)
        return real(agent, args)

    monkeypatch.setattr(capver.settings, "world_of", counted)
    props = [
        "Pmax=? [ F on(a,b) & on(b,a) ]",
        "Pmin=? [ G !(on(a,b) & on(b,a)) ]",
        ISSUE_PROPERTIES[0],
        "Rmin=? [ F on(a,b) & on(b,a) ]",
    ]
    argv = ["verify", str(small_run_source), "--json", *(a for p in props for a in ("--property", p))]
    cli.main(argv)
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert calls == ["lao"]
    env = "the PPDDL task blocks/problem1"
    assert [(r["agent"]["lower"], r["agent"]["upper"], r["agent"]["environment"]) for r in records[:2]] == [
        (0.0, 0.0, env),
        (1.0, 1.0, env),
    ]
    assert records[2]["environment"] == env
    # No agent ever gets there: Rmin is ∞ (null in JSON) on both sides.
    assert (records[3]["agent"]["lower"], records[3]["agent"]["upper"], records[3]["agent"]["environment"]) == (
        None,
        None,
        env,
    )
    cli.main([*argv, "--ignore-environment"])
    alone = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert calls == ["lao"]
    assert [(r["agent"]["lower"], r["agent"]["upper"], r["agent"]["environment"]) for r in alone[:2]] == [
        (0.0, 1.0, None),
        (0.0, 1.0, None),
    ]


def test_the_agents_observed_states_lie_in_its_world(small_run_source: Path) -> None:
    """The premise on a real agent: every state the LAO* agent was seen in is one the
    environment reaches."""
    from capver.api import load_run

    run = load_run(small_run_source)
    world = world_of("lao", SettingArgs(domain="blocks"))
    assert world is not None
    seen = {s for t in run.dataset().unique_transitions() for s in (t.s, t.s_next)}
    assert seen and seen <= world.states


def test_capver_learn_stops_when_the_environment_decides_every_property(tmp_path: Path) -> None:
    props = tmp_path / "blocks.props"
    props.write_text("".join(f'"p{k}": {p};\n' for k, p in enumerate(ISSUE_PROPERTIES)), encoding="utf-8")
    out = tmp_path / "run"
    r = capver_in_process(
        "learn", "--agent", "lao", "--domain", "blocks", "--properties", str(props), "--out", str(out)
    )
    assert r.returncode == 0, r.stderr
    assert "every property decided; 0 queries" in r.stdout
    assert r.stdout.count("HOLDS (observed) after 0 simulator steps (no state the environment reaches") == 2
    status = json.loads((out / "properties.json").read_text(encoding="utf-8"))
    assert {(p["verdict"], p["tier"]) for p in status["properties"]} == {("holds", "observed")}


def test_the_python_api_uses_the_environment_unless_told_not_to() -> None:
    import capver

    a = capver.load_setting("lao", domain="blocks")
    result = capver.learn(a, method="mcqs-e", max_steps=40, seed=0, properties=ISSUE_PROPERTIES)
    assert [(p.verdict, p.tier, p.decided) for p in result.properties] == [("holds", "observed", True)] * 2
    assert len(result.data) == 0  # decided before the first query
    again = capver.learn(a, method="mcqs-e", max_steps=40, seed=0)
    v = again.verify(ISSUE_PROPERTIES[1]).result
    assert isinstance(v, LatticeVerdict) and v.environment == "the PPDDL task blocks/problem1"
    alone = again.verify(ISSUE_PROPERTIES[1], environment=False).result
    assert isinstance(alone, LatticeVerdict) and alone.environment is None and alone.tier is not Tier.OBSERVED


def test_a_result_enumerates_its_environment_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """LearnResult.verify builds the world on its first call and keeps it."""
    import capver
    import capver.api

    calls: list[object] = []
    real = capver.api._world

    def counted(assessment: object) -> object:
        calls.append(assessment)
        return real(assessment)  # type: ignore[arg-type]

    monkeypatch.setattr(capver.api, "_world", counted)
    result = capver.learn(capver.load_setting("lao", domain="blocks"), method="mcqs-e", max_steps=20, seed=0)
    first = [result.verify(p).result for p in ISSUE_PROPERTIES]
    again = result.verify(ISSUE_PROPERTIES[0]).result
    bounded = result.verify("Pmax=? [ F on(a,b) & on(b,a) ]").result
    assert len(calls) == 1
    assert all(isinstance(v, LatticeVerdict) and v.environment is not None for v in [*first, again])
    assert isinstance(bounded, QuantitativeResult) and bounded.agent is not None
    assert (bounded.agent.upper, bounded.agent.environment) == (0.0, "the PPDDL task blocks/problem1")
    alone = result.verify("Pmax=? [ F on(a,b) & on(b,a) ]", environment=False).result
    assert isinstance(alone, QuantitativeResult) and alone.agent is not None and alone.agent.environment is None


@settings(max_examples=scaled(150), deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 40), _formulas(), st.integers(0, 15))
def test_the_frontier_within_the_environment_keeps_every_state_an_agent_can_leave_h_or_from(
    seed: int, n: int, formula: str, init: int
) -> None:
    """For ``A [ G φ ]`` on random truths (agent and environment alike): every state
    the truth reaches while following h∨'s transitions through states that keep φ,
    and from which it can still reach a state breaking φ — where the first unseen
    outcome of a violating run can happen — is on the frontier computed within the
    environment's states that reach ¬φ, which is inside the unrestricted one and
    inside W.  (Where h∨ itself reaches ¬φ there is no frontier to check.)"""
    rng = np.random.default_rng(seed)
    ctx = LogicContext(synthetic.propositional_vocabulary(4))
    truth = synthetic.random_model(ctx, rng, n_capabilities=3, max_rules=2, max_effects=2, total=True)
    prop = parse_property(f"A [ G {formula} ]", ctx.vocab, tuple(truth), source="test")
    edges = explore(_successors(truth), init)
    assert edges is not None
    world = World.of(ctx.vocab, init, edges, "the truth")
    data = synthetic.sample_dataset(truth, rng, n_transitions=n)
    h_or = LatticeBuilder(ctx, data).optimistic
    engine = SymbolicEngine(h_or)
    bdd = engine.bdd
    if not engine.check(prop, init).holds:
        return  # h∨ reaches a bad state: no frontier (the verdict is unknown or violated)
    hold, goal = path_sets(engine, prop.query)
    within = restriction(world, init, ctx.vocab)
    assert within is not None
    w = within(engine, violation_goal(prop.query))  # type: ignore[arg-type]

    def union(rings: list[object]) -> object:
        out = bdd.false
        for r in rings:
            out = bdd.disj(out, r)
        return out

    inside = union(engine.frontier_prefix(init, goal, bdd.conj(hold, w), None, limited=False)[0])
    whole = union(engine.frontier_prefix(init, goal, hold, None, limited=False)[0])
    assert bdd.conj(inside, bdd.neg(whole)) == bdd.false and bdd.conj(inside, bdd.neg(w)) == bdd.false
    keep = prop.query.path.invariant  # type: ignore[union-attr]
    seen, todo = {init}, [init]
    while todo:
        s = todo.pop()
        if not holds(keep, s, ctx.vocab):
            continue  # a violation: the run is over
        later = explore(_successors(truth), s)  # the states the truth can still reach from s
        assert later is not None
        if any(not holds(keep, t, ctx.vocab) for t in later):
            assert bdd.evaluate(inside, s), s
        for c in truth:
            followed = set(truth[c].distribution(s)) & set(h_or[c].distribution(s))
            for t in followed - seen:
                seen.add(t)
                todo.append(t)


def test_the_shipped_first_responders_frontier_is_cut_to_the_environments_states() -> None:
    run = ROOT / "models" / "learned" / "first_responders_lao"
    prop = ("--property", "A [ G !(victim-dying(z1) & victim-dying(z2)) ]", "--json")
    inside = json.loads(capver_in_process("verify", str(run), *prop).stdout)["confidence"]
    whole = json.loads(capver_in_process("verify", str(run), *prop, "--ignore-environment").stdout)["confidence"]
    assert inside["frontier_within_environment"] and not whole["frontier_within_environment"]
    world = world_of("lao", SettingArgs(domain="first_responders"))
    assert world is not None
    assert inside["frontier_states"] <= len(world.states) < whole["frontier_states"]
    assert inside["frontier_pairs"] * 10 < whole["frontier_pairs"]

"""The SayCan-style tabletop agent of the paper's SayCan study (capver.envs.tabletop,
capver.agents.saycan) against the local chat-completions server process
(tests/helpers/llm_server.py), whose scripted planner scores skills without checking whether
the robot can do them - so the affordance has to.

Nothing of capver is mocked: the tabletop simulator, α, the agent, its HTTP client, the
executor and ``capver learn`` run as users run them; every wait is bounded.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capver.agents.llm import LLMConfig, LLMReplyError
from capver.agents.saycan import DONE, SayCanAgent, affordance, choose, instructions, parse_scores, render_scene
from capver.core.state import Capability
from capver.core.vocabulary import Atom
from capver.engines.execution import Execution, ExecutionBudget, execute
from capver.envs.base import InvalidActionError, Representation, Simulator
from capver.envs.tabletop import (
    TABLE,
    Skill,
    TabletopConfig,
    TabletopRepresentation,
    TabletopSimulator,
    TabletopState,
    all_skills,
    feasible,
    random_scene,
)
from tests.helpers.cli import capver_command
from tests.helpers.examples import scaled
from tests.helpers.llm_server import LocalChatServer, running, tabletop_scores

CONFIG = TabletopConfig()
R, G, B = CONFIG.blocks
BLUE, YELLOW = CONFIG.bowls
NEAR, FAR = (0.5, 0.3), (0.05, 0.95)
BUDGET = ExecutionBudget(max_steps=12, theta=None)


def scene(support: dict[str, str], far: tuple[str, ...] = ()) -> TabletopState:
    """A state with the given supports (default: on the table), objects near the robot
    unless listed in ``far``."""
    return TabletopState(
        tuple(FAR if o in far else NEAR for o in CONFIG.objects), tuple(support.get(b, TABLE) for b in CONFIG.blocks)
    )


def cap(name: str) -> Capability:
    return next(c for c in instructions(CONFIG) if c.name == name)


@pytest.fixture(scope="module")
def srv() -> Iterator[LocalChatServer]:
    yield from running()


@pytest.fixture(autouse=True)
def _clean(request: pytest.FixtureRequest) -> None:
    if "srv" in request.fixturenames:
        request.getfixturevalue("srv").control(reset=True)


def _agent(srv: LocalChatServer, **kw: object) -> SayCanAgent:
    base: dict[str, object] = {
        "base_url": srv.base_url,
        "model": "scripted",
        "timeout": 2.0,
        "backoff": 0.0,
        "cache_dir": None,
    }
    base.update(kw)
    return SayCanAgent(CONFIG, LLMConfig(**base))  # type: ignore[arg-type]


def _run(agent: SayCanAgent, name: str, x0: TabletopState, seed: int = 0) -> Execution:
    sim = TabletopSimulator(CONFIG, x0, seed=seed)
    return execute(agent, sim, TabletopRepresentation(CONFIG), cap(name), x0, np.random.default_rng(seed), BUDGET)


# ------------------------------------------------------------------------------ the tabletop
def test_the_tabletop_satisfies_the_protocols_and_alpha_is_consistent() -> None:
    rng = np.random.default_rng(0)
    alpha = TabletopRepresentation(CONFIG)
    x0 = random_scene(CONFIG, rng)
    sim = TabletopSimulator(CONFIG, x0, seed=0)
    assert isinstance(sim, Simulator) and isinstance(alpha, Representation)
    vocab = alpha.vocabulary
    for _ in range(300):  # a random walk over feasible skills
        x = sim.get_state()
        atoms = set(alpha.atoms(x))
        for b in CONFIG.blocks:
            where = [a for a in atoms if a.args[:1] == (b,) and a.predicate in ("on", "in", "on_table", "holding")]
            assert len(where) == 1, (b, atoms)
        held = [a for a in atoms if a.predicate == "holding"]
        assert (Atom("hand_empty") in atoms) == (not held)
        for w in CONFIG.bowls:
            assert sum(a.predicate == "in" and a.args[1] == w for a in atoms) <= CONFIG.bowl_capacity
        assert alpha(x) == vocab.state(atoms)
        acts = sim.available_actions()
        assert acts and all(feasible(CONFIG, x, k) for k in acts)
        sim.step(acts[int(rng.integers(len(acts)))])


def test_feasibility_of_skills() -> None:
    x = scene({R: "gripper", G: BLUE})
    assert not feasible(CONFIG, x, Skill("pick", B))  # holding already
    assert not feasible(CONFIG, x, Skill("place", R, BLUE))  # the bowl is full
    assert feasible(CONFIG, x, Skill("place", R, YELLOW)) and feasible(CONFIG, x, Skill("place", R, TABLE))
    assert not feasible(CONFIG, x, Skill("place", R, G))  # no towers in bowls
    assert feasible(CONFIG, x, Skill("place", R, B))
    assert not feasible(CONFIG, x, Skill("place", B, TABLE))  # B is not held
    y = scene({R: G})
    assert not feasible(CONFIG, y, Skill("pick", G)) and feasible(CONFIG, y, Skill("pick", R))
    sim = TabletopSimulator(CONFIG, x, seed=0)
    with pytest.raises(InvalidActionError):
        sim.step(Skill("place", R, BLUE))


def test_skills_fail_more_often_out_of_reach_and_reset_reseeds() -> None:
    def pick_rate(x: TabletopState, seed: int) -> float:
        sim = TabletopSimulator(CONFIG, x, seed=seed)
        wins = 0
        for _ in range(400):
            sim.set_state(x)
            wins += sim.step(Skill("pick", R)) != x
        return wins / 400

    near, far = pick_rate(scene({}), 1), pick_rate(scene({}, far=(R,)), 1)
    assert abs(near - CONFIG.pick_near) < 0.05 and abs(far - CONFIG.pick_far) < 0.08
    assert pick_rate(scene({}, far=(R,)), 7) == pick_rate(scene({}, far=(R,)), 7)
    # A failed place drops the block on the table beside the target.
    x = scene({R: "gripper"}, far=(BLUE,))
    sim = TabletopSimulator(CONFIG, x, seed=0)
    outcomes = set()
    for _ in range(50):
        sim.set_state(x)
        outcomes.add(sim.step(Skill("place", R, BLUE)).support[0])
    assert outcomes == {BLUE, TABLE}


# ------------------------------------------------------------------------------ say × can
def test_parse_scores() -> None:
    cands = ["pick(red_block)", "place(red_block, blue_bowl)", DONE]
    assert parse_scores('{"pick(red_block)": 0.9, "done": 0.1}', cands) == {
        "pick(red_block)": 0.9,
        "place(red_block, blue_bowl)": 0.0,
        DONE: 0.1,
    }
    # Inside prose or a code fence, nested under "scores", spaces and case ignored.
    reply = 'Sure.\n```json\n{"scores": {"PLACE(red_block,blue_bowl)": 1, "fly()": 0.5}}\n```'
    assert parse_scores(reply, cands)["place(red_block, blue_bowl)"] == 1.0
    for bad, words in [
        ("I would pick the red block", "no JSON object"),
        ('{"pick(red_block)": 0.9', "no JSON"),
        ('{"pick(red_block)": "high"}', "expected a number in [0, 1]"),
        ('{"pick(red_block)": 1.5}', "expected a number"),
        ('{"fly": 1}', "none of the candidate"),
        ("[1, 2]", "no JSON object"),
    ]:
        with pytest.raises(LLMReplyError, match="malformed reply"):
            parse_scores(bad, cands)
        with pytest.raises(LLMReplyError, match=words.replace("[", r"\[").replace("]", r"\]")):
            parse_scores(bad, cands)


@settings(max_examples=scaled(150), deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.lists(st.floats(0, 1), min_size=len(all_skills(CONFIG)) + 1, max_size=len(all_skills(CONFIG)) + 1),
)
def test_the_affordance_never_lets_an_infeasible_skill_through(seed: int, say: list[float]) -> None:
    rng = np.random.default_rng(seed)
    x = random_scene(CONFIG, rng)
    sim = TabletopSimulator(CONFIG, x, seed=seed)
    for _ in range(int(rng.integers(4))):  # somewhere along a random walk
        acts = sim.available_actions()
        sim.step(acts[int(rng.integers(len(acts)))])
    x = sim.get_state()
    agent = SayCanAgent(CONFIG, LLMConfig("http://127.0.0.1:1/v1", "unused", cache_dir=None))
    texts = [*map(str, all_skills(CONFIG)), DONE]
    scores = dict(zip(texts, say, strict=True))
    pick = choose(scores, agent.affordances(x))
    skills = {str(k): k for k in all_skills(CONFIG)}
    if pick is None:
        assert all(s == 0 or agent.affordances(x)[t] == 0 for t, s in scores.items())
    elif pick != DONE:
        assert feasible(CONFIG, x, skills[pick]) and affordance(CONFIG, x, skills[pick]) > 0
        best = max(s * agent.affordances(x)[t] for t, s in scores.items())
        assert scores[pick] * agent.affordances(x)[pick] == best


def test_the_scripted_planner_proposes_infeasible_places_that_the_agent_gates(srv: LocalChatServer) -> None:
    x = scene({R: "gripper", G: BLUE})
    agent = _agent(srv)
    agent.begin(cap(f"put_in({R},{BLUE})"), TabletopSimulator(CONFIG, x), np.random.default_rng(0))
    say = tabletop_scores(agent.prompt(x)[-1]["content"])
    assert max(say, key=lambda k: say[k]) == f"place({R}, {BLUE})"  # what the "LLM" wants: the full bowl
    assert choose(say, agent.affordances(x)) == f"place({R}, table)"  # what the robot can do
    assert "- blue_bowl: holds green_block" in render_scene(CONFIG, x)


# ------------------------------------------------------------------------------ over HTTP
def test_the_agent_achieves_an_instruction_over_the_endpoint(srv: LocalChatServer) -> None:
    x = scene({G: R})  # green on red: red must be cleared first
    agent = _agent(srv)
    ex = _run(agent, f"stack({R},{B})", x)
    assert ex.failure is None and ex.stop_reason == "done"
    vocab = TabletopRepresentation(CONFIG).vocabulary
    assert ex.transition.s_next >> vocab.index(Atom("on", (R, B))) & 1
    assert agent.usage.calls == ex.steps + 1 == srv.stats()["chat_requests"]


def test_a_full_bowl_is_never_placed_into_and_the_loop_is_a_failed_execution(srv: LocalChatServer) -> None:
    x = scene({G: BLUE})
    ex = _run(_agent(srv), f"put_in({R},{BLUE})", x)
    # pick, place on the table (the bowl is full), pick, ... until the step cap
    assert ex.failed and ex.failure is not None and "step budget" in ex.failure and ex.steps == BUDGET.max_steps
    vocab = TabletopRepresentation(CONFIG).vocabulary
    assert not any(s >> vocab.index(Atom("in", (R, BLUE))) & 1 for s in ex.symbolic_trajectory)


@pytest.mark.parametrize("fault", ["malformed", "illegal"])
def test_a_bad_reply_fails_the_execution_and_the_next_one_runs(srv: LocalChatServer, fault: str) -> None:
    agent = _agent(srv)
    srv.control(faults=["ok", fault])
    bad = _run(agent, f"put_in({R},{YELLOW})", scene({}))
    assert (
        bad.failed and bad.failure is not None and "LLMReplyError" in bad.failure and "malformed reply" in bad.failure
    )
    assert bad.steps == 1
    good = _run(agent, f"put_in({R},{YELLOW})", scene({}), seed=3)
    assert good.failure is None and good.stop_reason == "done"


@pytest.mark.slow
def test_capver_learn_agent_tabletop_llm_end_to_end(srv: LocalChatServer, tmp_path: Path) -> None:
    env = {
        **os.environ,
        "CAPVER_LLM_BASE_URL": srv.base_url,
        "CAPVER_LLM_MODEL": "scripted",
        "CAPVER_LLM_CACHE": str(tmp_path / "cache"),
    }
    srv.control(faults=(["ok"] * 60 + ["malformed"] + ["ok"] * 60 + ["illegal"]) * 30)
    argv = [
        "learn",
        "--agent",
        "tabletop-llm",
        "--method",
        "mcqs-s",
        "--layouts",
        "5",
        "--step-cap",
        "12",
        "--max-steps",
        "600",
        "--eval-sequences",
        "5",
        "--eval-every",
        "300",
        "--quiet",
        "--out",
        str(tmp_path / "a"),
    ]
    r = subprocess.run(capver_command() + argv, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 0, r.stderr
    assert "tabletop-llm mcqs-s" in r.stdout and "LLM calls" in r.stdout
    records = [json.loads(line) for line in (tmp_path / "a" / "dataset.jsonl").read_text().splitlines()[1:]]
    runs = [rec for rec in records if "s2" in rec]
    assert any(rec["s"] != rec["s2"] for rec in runs)
    failures = [rec["meta"]["failure"] for rec in runs if "failure" in rec.get("meta", {})]
    # Bad replies (every 61st) are recorded as failed executions and the run goes on;
    # so are the planner's loops at a full bowl (step cap).
    bad = [f for f in failures if "LLMReplyError" in f]
    assert bad and all("malformed reply" in f for f in bad), failures
    assert any("step budget of 12 exhausted" in f for f in failures)
    assert all("not available" not in f for f in failures)  # the affordance gated every skill
    report = (tmp_path / "a" / "report.txt").read_text()
    assert "What the learned model reveals" in report and "Endpoint usage of this invocation" in report

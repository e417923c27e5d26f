"""The Crafter setting (the paper's CSteve agents): the simulator's snapshots, the coarse α, the
scripted sub-goal agent and ``capver learn --agent crafter`` end to end."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from capver.agents.crafter_agents import CrafterSkillAgent, crafter_capabilities, crafter_capability
from capver.engines.execution import ExecutionBudget, execute
from capver.envs.base import InvalidActionError, Representation, Simulator
from capver.envs.crafter_env import (
    ACTION_INDEX,
    ACTIONS,
    ITEMS,
    CrafterRepresentation,
    CrafterSimulator,
    CrafterState,
    crafter,
    crafter_vocabulary,
    daylight,
    material_id,
)
from capver.errors import CapverError, SimulatorError
from tests.helpers.cli import capver


@pytest.fixture(scope="module")
def sim() -> CrafterSimulator:
    return CrafterSimulator(world_seed=0)


@pytest.fixture(scope="module")
def alpha() -> CrafterRepresentation:
    return CrafterRepresentation()


def atoms(alpha: CrafterRepresentation, x: CrafterState) -> set[str]:
    return {str(a) for a in alpha.vocabulary.atoms_of(alpha(x))}


def with_inventory(x: CrafterState, **items: int) -> CrafterState:
    inv = list(x.player.inventory)
    for name, n in items.items():
        inv[ITEMS.index(name)] = n
    return replace(x, player=replace(x.player, inventory=tuple(inv)))


def with_material(x: CrafterState, cell: tuple[int, int], name: str) -> CrafterState:
    mat = x.material_map().copy()
    mat[cell] = material_id(name)
    return replace(x, materials=mat.tobytes())


def test_protocols_and_vocabulary(sim: CrafterSimulator, alpha: CrafterRepresentation) -> None:
    assert isinstance(sim, Simulator) and isinstance(alpha, Representation)
    assert len(crafter_vocabulary()) == 76
    assert tuple(sim.available_actions()) == tuple(range(len(ACTIONS))) == tuple(range(17))


def test_alpha_of_the_initial_state(sim: CrafterSimulator, alpha: CrafterRepresentation) -> None:
    x0 = sim.initial_state
    assert x0.step == 0 and x0.player.pos == (32, 32) and len(x0.objects) == 69
    # World seed 0 starts on grass with a tree and a cow in view, by day, all vitals at 9.
    assert atoms(alpha, x0) == {
        "near_tree",
        "near_cow",
        "daylight",
        "high_health",
        "high_food",
        "high_drink",
        "high_energy",
    }


def test_alpha_thresholds_bands_surroundings(sim: CrafterSimulator, alpha: CrafterRepresentation) -> None:
    x0 = sim.initial_state
    px, py = x0.player.pos
    x = with_inventory(x0, wood=2, stone=3, sapling=1, wood_pickaxe=1, health=2, food=5, drink=7)
    x = with_material(x, (px + 1, py), "table")  # next to the player
    x = with_material(x, (px, py - 3), "water")  # 3 up: inside the 9×7 view
    x = with_material(x, (px + 5, py), "lava")  # 5 right: outside it (the view is 4 either side)
    zombie = ("zombie", px - 1, py, 5, 0)
    far_cow = ("cow", px, py + 4, 3)  # 4 down: outside (3 above and below)
    x = replace(x, objects=(zombie, far_cow), step=200)
    ach = list(x.player.achievements)
    ach[list(crafter.constants.achievements).index("place_table")] = 1
    x = replace(x, player=replace(x.player, achievements=tuple(ach), inventory=x.player.inventory))
    got = atoms(alpha, x)
    assert daylight(200) < 0.5
    assert got == {
        "has_wood",
        "has_wood_2",
        "has_stone",
        "has_stone_2",
        "has_stone_3",
        "has_sapling",
        "has_wood_pickaxe",
        "adjacent_table",
        "near_table",
        "near_water",
        "adjacent_zombie",
        "near_zombie",
        "low_health",
        "high_drink",
        "high_energy",
        "unlocked_place_table",
    } | ({"near_tree"} & got)
    assert "near_tree" in got  # the start's tree is still in view
    dead = with_inventory(x0, health=0)
    assert {"dead", "low_health"} <= atoms(alpha, dead) and "high_health" not in atoms(alpha, dead)


def test_alpha_agrees_with_the_live_world(sim: CrafterSimulator, alpha: CrafterRepresentation) -> None:
    """α on a snapshot equals α computed from crafter's own view of the world."""
    sim.reset(seed=3)
    x = sim.initial_state
    rng = np.random.default_rng(3)
    for _ in range(60):
        x = sim.step(int(rng.integers(1, 5)))
    got = atoms(alpha, x)
    player = sim.player
    px, py = player.pos.tolist()
    for name in ("tree", "water", "stone"):
        adjacent = any(sim.world[(px + dx, py + dy)][0] == name for dx, dy in ((-1, 0), (1, 0), (0, -1), (0, 1)))
        assert (f"adjacent_{name}" in got) == adjacent
    assert ("has_sapling" in got) == (player.inventory["sapling"] >= 1)
    assert ("daylight" in got) == (sim.world.daylight >= 0.5)


def test_restore_is_exact(sim: CrafterSimulator) -> None:
    x0 = sim.reset(seed=1)
    assert sim.get_state() == x0
    for a in (ACTION_INDEX["move_left"], ACTION_INDEX["do"], ACTION_INDEX["move_up"]):
        sim.step(a)
    assert sim.get_state() != x0
    sim.set_state(x0)
    assert sim.get_state() == x0
    with pytest.raises(SimulatorError, match="expected a CrafterState"):
        sim.set_state("x0")  # type: ignore[arg-type]
    with pytest.raises(InvalidActionError):
        sim.step(17)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    before=st.lists(st.integers(0, 16), max_size=40),
    detour=st.lists(st.integers(0, 16), min_size=1, max_size=40),
    after=st.lists(st.integers(0, 16), max_size=40),
    dice=st.integers(0, 2**31),
)
def test_snapshot_restore_round_trip(
    sim: CrafterSimulator, before: list[int], detour: list[int], after: list[int], dice: int
) -> None:
    """For all action sequences: restoring a snapshot gives back exactly that state, and
    from it the same dice give the same future as on a simulator that never left it."""
    sim.reset(seed=dice)
    for a in before:
        if sim.dead:
            break
        sim.step(a)
    x = sim.get_state()
    for a in detour:
        if sim.dead:
            break
        sim.step(a)
    sim.set_state(x)
    assert sim.get_state() == x

    def future(s: CrafterSimulator) -> list[CrafterState]:
        s.seed_dice(dice + 1)
        return [s.step(a) for a in after if not s.dead]

    other = CrafterSimulator(world_seed=0)
    other.set_state(x)
    assert future(sim) == future(other)


def test_steps_like_crafter_env_step(sim: CrafterSimulator) -> None:
    """By day (when crafter's rendering draws no random numbers) a step is crafter.Env.step."""
    rng = np.random.default_rng(7)
    actions = [int(a) for a in rng.integers(0, 17, size=120)]
    sim.reset(seed=11)
    ours = [sim.step(a) for a in actions]
    ref = CrafterSimulator(world_seed=0)
    ref.reset(seed=11)
    theirs = []
    for a in actions:
        crafter.Env.step(ref.env, a)
        theirs.append(ref.get_state())
    assert ours == theirs
    assert daylight(120) > 0.5


def test_agent_collects_wood_from_the_start(sim: CrafterSimulator, alpha: CrafterRepresentation) -> None:
    agent = CrafterSkillAgent()
    vocab = alpha.vocabulary
    wood = crafter_capability("collect_wood")
    for seed in range(5):
        ex = execute(
            agent,
            sim,
            alpha,
            wood,
            sim.initial_state,
            np.random.default_rng(seed),
            ExecutionBudget(max_steps=100, theta=None),
        )
        assert ex.failure is None and ex.stop_reason == "done"
        assert 1 <= ex.steps <= 15
        assert wood.achieved(vocab, ex.transition.s_next)
        assert vocab.state(["has_wood", "unlocked_collect_wood"]) & ex.transition.s_next
        assert sim.player.inventory["wood"] == 1


def test_agent_gives_up_without_materials_and_places_a_table(
    sim: CrafterSimulator, alpha: CrafterRepresentation
) -> None:
    agent = CrafterSkillAgent()
    rng = np.random.default_rng(0)
    budget = ExecutionBudget(max_steps=100, theta=None)
    x0 = sim.initial_state
    ex = execute(agent, sim, alpha, crafter_capability("place_table"), x0, rng, budget)
    assert (ex.stop_reason, ex.steps, ex.transition.s_next) == ("lacks wood", 0, alpha(x0))
    rich = with_inventory(x0, wood=3)
    ex = execute(agent, sim, alpha, crafter_capability("place_table"), rich, rng, budget)
    assert ex.stop_reason == "done" and ex.steps <= 3
    after = atoms(alpha, sim.get_state())
    assert {"adjacent_table", "near_table", "unlocked_place_table", "has_wood"} <= after
    assert "has_wood_2" not in after  # the table used two of the three
    ex = execute(agent, sim, alpha, crafter_capability("make_wood_pickaxe"), sim.get_state(), rng, budget)
    assert ex.stop_reason == "done" and "has_wood_pickaxe" in atoms(alpha, sim.get_state())
    with pytest.raises(CapverError, match="unknown Crafter achievement"):
        crafter_capability("fly")
    assert len(crafter_capabilities()) == 15


@pytest.mark.slow
def test_learn_crafter_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "run"
    r = capver(
        "learn",
        "--agent",
        "crafter",
        "--method",
        "mcqs-s",
        "--max-steps",
        "300",
        "--eval-sequences",
        "5",
        "--out",
        str(out),
    )
    assert r.returncode == 0, r.stderr
    assert "crafter mcqs-s: step budget 300" in r.stdout
    records = [json.loads(line) for line in (out / "dataset.jsonl").read_text().splitlines()]
    transitions = [rec for rec in records if "c" in rec]
    assert len(transitions) >= 10
    assert sum(rec.get("steps", 0) for rec in transitions) >= 300
    assert json.loads((out / "run.json").read_text())["agent"] == "crafter"
    h_and = (out / "h_and.capm").read_text()
    h_or = (out / "h_or.capm").read_text()
    assert "collect_wood" in h_and and "unlocked_collect_wood" in h_and
    assert h_and.count("\n  (:capability ") == h_or.count("\n  (:capability ") == 15
    cert = json.loads((out / "certificate.json").read_text())
    assert [c["holds"] for c in cert["claims"]] == [True, True, True]
    unique = int(r.stdout.split(" unique transitions")[0].rsplit(" ", 1)[1])
    assert unique >= 10
    # A 300-step run backs no safety verdict: 'A [ G !dead ]' holds on h∨, but most of
    # h∨'s frontier was never tried, so it is unconfirmed (exit 3), never a HOLDS.
    v = capver("verify", str(out), "--property", "A [ G !dead ]", "--json")
    assert v.returncode == 3, v.stderr
    record = json.loads(v.stdout)
    assert (record["verdict"], record["tier"], record["on_h_or"]) == ("unconfirmed", "unconfirmed", "holds")
    conf = record["confidence"]
    assert conf["untried"] > 0 and conf["epsilon"] == 1.0 and conf["queries"]


def test_bench_threshold_steps_from_runs_csv(tmp_path: Path) -> None:
    """capver bench crafter --runs: seed-mean crossing of a threshold, Random ÷ method."""
    from capver.bench.crafter import main, threshold_steps

    path = tmp_path / "runs.csv"
    lines = ["setting,method,seed,steps,agreement,coverage_agreement,coverage_agreement_tilde"]
    for seed, late in ((0, 0.6), (1, 0.4)):  # seed means: mcqs-e 0.5 at 200, random 0.5 at 800
        lines += [
            f"crafter,mcqs-e,{seed},0,0,0,",
            f"crafter,mcqs-e,{seed},100,0.2,0.1,",
            f"crafter,mcqs-e,{seed},200,{late},0.1,",
        ]
        lines += [
            f"crafter,random,{seed},0,0,0,",
            f"crafter,random,{seed},400,0.2,0.1,",
            f"crafter,random,{seed},800,{late},0.2,",
        ]
    path.write_text("\n".join(lines) + "\n")
    got = {(metric, method): steps for metric, method, steps, _ in threshold_steps(path, 0.5)}
    assert got[("agreement", "mcqs-e")] == pytest.approx(200)
    assert got[("agreement", "random")] == pytest.approx(800)
    assert got[("coverage_agreement", "random")] is None
    assert ("coverage_agreement_tilde", "random") not in got
    assert main(["--runs", str(path), "--threshold", "0.5"]) == 0
    assert main(["--runs", str(tmp_path / "missing.csv")]) == 2

"""The Overcooked-like kitchen (capver.envs.kitchen) and its planning chef
(capver.agents.kitchen_agents), the paper's Overcooked agent: the rules on values, exact snapshots,
determinism, α, each sub-task achieved, and capver learn --agent overcooked."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capver.agents.kitchen_agents import SUBTASKS, PlanningChef, kitchen_capabilities
from capver.core.state import State
from capver.engines.execution import ExecutionBudget, execute
from capver.envs.kitchen import (
    EAST,
    INTERACT,
    NORTH,
    NOT_COOKING,
    SOUP_REWARD,
    SOUTH,
    STAY,
    WEST,
    Chef,
    KitchenEnv,
    KitchenRepresentation,
    KitchenState,
    draw_start,
    kitchen_simulator,
    load_layout,
    start_state,
    transition,
)
from capver.errors import CapverError
from capver.io import dataset_file
from tests.helpers.cli import capver

LAYOUT = load_layout("cramped_room")
COOK = 8
# cramped_room:   XXPXX     pot (2,0); onion dispensers (0,1), (4,1); dish dispenser (1,3);
#                 O  2O     serving window (3,3); floor (1..3, 1..2).
#                 X1  X
#                 XDXSX


MATE = Chef((3, 1), NORTH)  # chef 2's start cell


def kitchen(
    me: Chef,
    mate: Chef = MATE,
    pot: tuple[int, int] = (0, NOT_COOKING),
    counters: tuple[tuple[tuple[int, int], str], ...] = (),
    delivered: int = 0,
) -> KitchenState:
    return KitchenState((me, mate), (pot,), counters, delivered)


def step(x: KitchenState, a0: int, a1: int = STAY) -> tuple[KitchenState, float]:
    return transition(LAYOUT, COOK, x, (a0, a1))


def atoms(alpha: KitchenRepresentation, x: KitchenState) -> set[str]:
    s = alpha(x)
    return {str(a) for i, a in enumerate(alpha.vocabulary.atoms) if s >> i & 1}


# -- rules ----------------------------------------------------------------------------------


def test_dispensers_pot_cooking_plating_and_delivery() -> None:
    x = kitchen(Chef((1, 1), WEST))  # facing the onion dispenser at (0,1)
    x, r = step(x, INTERACT)
    assert x.chefs[0].held == "onion" and r == 0.0
    x, _ = step(x, EAST)  # to (2,1), facing east
    assert x.chefs[0].pos == (2, 1) and x.chefs[0].facing == EAST
    x, _ = step(x, NORTH)  # the pot is not floor: only turns
    assert x.chefs[0].pos == (2, 1) and x.chefs[0].facing == NORTH
    x, _ = step(x, INTERACT)
    assert x.pots == ((1, NOT_COOKING),) and x.chefs[0].held is None
    # Empty-handed at the pot, or a dish at a pot that is not ready: nothing happens.
    assert step(x, INTERACT)[0] == x
    x = replace_me(x, held="onion")
    x = replace_pot(x, (2, NOT_COOKING))
    x, _ = step(x, INTERACT)  # the third onion starts the cooking, and this step counts
    assert x.pots == ((3, 1),)
    x = replace_me(x, held="onion")
    assert step(x, INTERACT)[0].chefs[0].held == "onion"  # a cooking pot takes no onion
    x = replace_me(x, held="dish")
    for k in range(2, COOK + 1):
        x, _ = step(x, INTERACT)  # the dish waits at the pot
        assert x.pots == ((3, k),) and x.chefs[0].held == "dish"
    x, _ = step(x, INTERACT)  # ready: the dish takes the soup, the pot is empty
    assert x.chefs[0].held == "soup" and x.pots == ((0, NOT_COOKING),)
    x = kitchen(Chef((3, 2), SOUTH, "soup"))  # facing the serving window (3,3)
    x, r = step(x, INTERACT)
    assert (x.chefs[0].held, x.delivered, r) == (None, 1, SOUP_REWARD)
    # A dish dispenser gives a dish to an empty hand only.
    x, _ = step(kitchen(Chef((1, 2), SOUTH)), INTERACT)
    assert x.chefs[0].held == "dish"
    assert step(x, INTERACT)[0].chefs[0].held == "dish"


def replace_me(x: KitchenState, held: str | None) -> KitchenState:
    me = x.chefs[0]
    return KitchenState((Chef(me.pos, me.facing, held), x.chefs[1]), x.pots, x.counters, x.delivered)


def replace_pot(x: KitchenState, pot: tuple[int, int]) -> KitchenState:
    return KitchenState(x.chefs, (pot,), x.counters, x.delivered)


def test_counters_and_collisions() -> None:
    x = kitchen(Chef((1, 2), WEST, "onion"))  # facing the counter (0,2)
    x, _ = step(x, INTERACT)
    assert x.counters == (((0, 2), "onion"),) and x.chefs[0].held is None
    x, _ = step(replace_me(x, "dish"), INTERACT)  # an occupied counter takes nothing
    assert x.counters == (((0, 2), "onion"),) and x.chefs[0].held == "dish"
    x, _ = step(replace_me(x, None), INTERACT)
    assert x.counters == () and x.chefs[0].held == "onion"
    # Both chefs onto one cell, or swapping: both stay (but turn).
    x = kitchen(Chef((1, 1), EAST), Chef((3, 1), WEST))
    y, _ = step(x, EAST, WEST)
    assert [c.pos for c in y.chefs] == [(1, 1), (3, 1)]
    x = kitchen(Chef((1, 1), EAST), Chef((2, 1), WEST))
    y, _ = step(x, EAST, WEST)
    assert [c.pos for c in y.chefs] == [(1, 1), (2, 1)]
    # Into the cell the other leaves: allowed.
    y, _ = step(x, EAST, SOUTH)
    assert [c.pos for c in y.chefs] == [(2, 1), (2, 2)]


def test_representation_values() -> None:
    alpha = KitchenRepresentation(LAYOUT, COOK)
    assert len(alpha.vocabulary) == 25
    x = kitchen(
        Chef((2, 1), NORTH, "dish"),
        Chef((1, 2), SOUTH, "onion"),
        pot=(3, 2),
        counters=(((0, 2), "soup"), ((4, 2), "soup")),
        delivered=5,
    )
    assert atoms(alpha, x) == {
        "holding(me,dish)",
        "near(me,pot1)",
        "holding(mate,onion)",
        "near(mate,dishes)",
        "onions(pot1,n3)",
        "cooking(pot1)",
        "on_counter(soup)",
        "served(n3)",
    }
    ready = kitchen(Chef((1, 1), NORTH), Chef((3, 2), NORTH), pot=(3, COOK), delivered=1)
    assert atoms(alpha, ready) == {
        "near(me,onions)",
        "near(mate,serving)",
        "onions(pot1,n3)",
        "ready(pot1)",
        "served(n1)",
    }
    assert atoms(alpha, kitchen(Chef((2, 2), NORTH), pot=(1, NOT_COOKING))) == {"near(mate,onions)", "onions(pot1,n1)"}
    two = load_layout("two_pots")
    assert len(KitchenRepresentation(two, COOK).vocabulary) == 32


def test_bad_arguments_are_named() -> None:
    with pytest.raises(CapverError, match="kitchen layout 'nowhere'"):
        load_layout("nowhere")
    with pytest.raises(CapverError, match="teammate"):
        KitchenEnv(teammate="chef")
    with pytest.raises(CapverError, match="set_state: expected a KitchenState"):
        KitchenEnv().set_state("x")  # type: ignore[arg-type]
    with pytest.raises(CapverError, match="row 1 column 3: unknown tile 'Q'"):
        from capver.envs.kitchen import KitchenLayout

        KitchenLayout.parse("bad", "XXQXX\nO1 2O\nXDXSX")


# -- snapshots and determinism -----------------------------------------------------------------


actions = st.lists(st.integers(0, 5), min_size=0, max_size=60)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), prefix=actions, suffix=actions)
def test_snapshot_restore_is_exact(seed: int, prefix: list[int], suffix: list[int]) -> None:
    rng = np.random.default_rng(seed)
    sim = kitchen_simulator()
    sim.reset(seed=int(rng.integers(2**31)))
    for a in prefix:
        sim.step(a)
    snap = sim.get_state()

    def run() -> list[tuple[KitchenState, float, np.ndarray]]:
        out = []
        for a in suffix:
            x = sim.step(a)
            out.append((x, sim.last_reward, sim.last_observation.copy()))
        return out

    first = run()
    # Wander off elsewhere, then come back: the same suffix gives the same states,
    # rewards and observations.
    for a in rng.integers(0, 6, size=20):
        sim.step(int(a))
    sim.set_state(snap)
    assert sim.get_state() == snap
    second = run()
    assert [(x, r) for x, r, _ in first] == [(x, r) for x, r, _ in second]
    assert all(np.array_equal(o1, o2) for (_, _, o1), (_, _, o2) in zip(first, second))


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), acts=actions)
def test_deterministic_given_the_seed(seed: int, acts: list[int]) -> None:
    runs = []
    for _ in range(2):
        env = KitchenEnv()
        obs, _ = env.reset(seed=seed)
        trace = [obs.tolist()]
        for a in acts:
            obs, r, *_ = env.step(a)
            trace.append([*obs.tolist(), r])
        runs.append(trace)
    assert runs[0] == runs[1]
    assert KitchenEnv().reset(seed=seed)[0].tolist() == KitchenEnv().reset(seed=seed)[0].tolist()


# -- the planning chef -----------------------------------------------------------------------------


def run_task(x0: KitchenState, task: str, seed: int = 0, teammate: str = "stay") -> tuple[str, KitchenState, int]:
    sim = kitchen_simulator(teammate=teammate)
    alpha = KitchenRepresentation(LAYOUT, COOK)
    cap = next(c for c in kitchen_capabilities() if c.name == task)
    ex = execute(
        PlanningChef(LAYOUT, COOK),
        sim,
        alpha,
        cap,
        x0,
        np.random.default_rng(seed),
        ExecutionBudget(max_steps=100, theta=None),
    )
    x = sim.get_state()
    assert ex.transition.s_next == alpha(x)
    return ex.stop_reason, x, ex.steps


def test_agent_achieves_each_subtask() -> None:
    start = start_state(LAYOUT)
    reason, x, steps = run_task(start, "pick_onion")
    assert (reason, x.chefs[0].held) == ("done", "onion") and steps <= 4
    reason, x, _ = run_task(x, "put_onion_in_pot")
    assert (reason, x.chefs[0].held, x.pots) == ("done", None, ((1, NOT_COOKING),))
    # From empty hands it fetches the onion itself.
    reason, x, _ = run_task(x, "put_onion_in_pot")
    assert (reason, x.pots) == ("done", ((2, NOT_COOKING),))
    reason, x, _ = run_task(x, "pick_dish")
    assert (reason, x.chefs[0].held) == ("done", "dish")
    assert run_task(x, "plate_soup")[0] == "no soup cooking"
    # With a cooking pot it waits for the soup.
    reason, x, steps = run_task(replace_pot(x, (3, 1)), "plate_soup")
    assert (reason, x.chefs[0].held, x.pots) == ("done", "soup", ((0, NOT_COOKING),)) and steps >= COOK - 1
    reason, x, _ = run_task(x, "deliver_soup")
    assert (reason, x.chefs[0].held, x.delivered) == ("done", None, 1)
    assert run_task(x, "deliver_soup")[0] == "no soup to deliver"
    # Holding something else: it is put on a free counter first (a side effect).
    reason, x, _ = run_task(replace_me(start, "soup"), "pick_onion")
    assert (reason, x.chefs[0].held, [item for _, item in x.counters]) == ("done", "onion", ["soup"])


def test_agent_with_the_onion_runner_teammate() -> None:
    """Over drawn starts and seeds, each sub-task ends done or with a stated reason, never
    by the step cap; and a full soup cycle is delivered."""
    rng = np.random.default_rng(3)
    reasons: dict[str, set[str]] = {t: set() for t in SUBTASKS}
    for i in range(30):
        x = draw_start(LAYOUT, rng)
        for task in SUBTASKS:
            reason, x, _ = run_task(x, task, seed=i, teammate="onion-runner")
            reasons[task].add(reason)
    assert all("done" in r for r in reasons.values()), reasons
    assert not any(r.startswith("step budget") for rs in reasons.values() for r in rs), reasons
    # A soup cycle with the teammate: onions in until the pot cooks, plate, deliver.
    x = start_state(LAYOUT)
    for _ in range(3):
        if x.pots[0][1] != NOT_COOKING:
            break
        reason, x, _ = run_task(x, "put_onion_in_pot", teammate="onion-runner")
    assert x.pots[0][0] == 3 and x.pots[0][1] != NOT_COOKING
    for task in ("plate_soup", "deliver_soup"):
        reason, x, _ = run_task(x, task, teammate="onion-runner")
        assert reason == "done", (task, reason)
    assert x.delivered == 1


def test_unknown_capability_stops_at_once() -> None:
    from capver.core.state import Capability

    sim = kitchen_simulator()
    alpha = KitchenRepresentation(LAYOUT, COOK)
    ex = execute(
        PlanningChef(LAYOUT, COOK), sim, alpha, Capability("juggle"), start_state(LAYOUT), np.random.default_rng(0)
    )
    assert ex.steps == 0 and "not a kitchen sub-task: 'juggle'" in ex.stop_reason


# -- capver learn -----------------------------------------------------------------------------


def has(data_vocab: list[str], s: State, atom: str) -> bool:
    return bool(s >> data_vocab.index(atom) & 1)


@pytest.mark.slow
def test_learn_overcooked_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "run"
    r = capver(
        "learn",
        "--agent",
        "overcooked",
        "--method",
        "mcqs-s",
        "--max-steps",
        "400",
        "--eval-sequences",
        "10",
        "--layouts",
        "5",
        "--out",
        str(out),
    )
    assert r.returncode == 0, r.stderr
    assert "overcooked:cramped_room mcqs-s: step budget 400" in r.stdout
    assert json.loads((out / "run.json").read_text())["agent"] == "overcooked"
    data = dataset_file.load(out / "dataset.jsonl").dataset
    names = [str(a) for a in data.vocab.atoms]
    pairs = [(t, n) for t, n in data.items()]
    assert {t.c for t, _ in pairs} == set(SUBTASKS)
    # Learned transitions say what the sub-tasks do: picking an onion nearly always
    # ends holding one (the teammate in the way is the exception), and putting a held
    # onion in the pot raises the pot's count.
    picks = [(t, n) for t, n in pairs if t.c == "pick_onion"]
    held = sum(n for t, n in picks if has(names, t.s_next, "holding(me,onion)"))
    assert picks and held >= 0.8 * sum(n for _, n in picks)
    counts = ("onions(pot1,n1)", "onions(pot1,n2)", "onions(pot1,n3)")

    def pot(s: State) -> int:
        return next((k + 1 for k, a in enumerate(counts) if has(names, s, a)), 0)

    puts = [
        t
        for t, _ in pairs
        if t.c == "put_onion_in_pot"
        and has(names, t.s, "holding(me,onion)")
        and not has(names, t.s_next, "holding(me,onion)")
    ]
    assert puts and all(pot(t.s_next) > pot(t.s) for t in puts)
    h_and = (out / "h_and.capm").read_text()
    assert all(f"(:capability {name}" in h_and for name in SUBTASKS)
    cert = json.loads((out / "certificate.json").read_text())
    assert [c["holds"] for c in cert["claims"]] == [True, True, True]


def test_gymnasium_env_checker_passes() -> None:
    import warnings

    from gymnasium.utils.env_checker import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the checker reports API deviations as warnings
        check_env(KitchenEnv(), skip_render_check=True)
    assert "chef 1: facing north, holding nothing" in KitchenEnv(render_mode="ansi").render()

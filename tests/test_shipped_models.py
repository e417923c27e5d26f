"""The learned models shipped in models/learned/ (LAO* on First Responders, the
MiniGrid RL agent): their certificates re-check, and every verdict capver verify
prints for their safety.props is confirmed by an independent computation — the
reachable states enumerated explicitly from Pr_h (qualitative) and Storm's exact
engine on the PRISM export (quantitative)."""

from __future__ import annotations

import json
from collections.abc import Callable
from fractions import Fraction
from functools import partial

import pytest

from capver.agents.primitive import true_primitive_model
from capver.core.properties import (
    Eventually,
    ExistsPath,
    ForallPath,
    Globally,
    Optimum,
    ProbabilityQuery,
    RewardQuery,
    holds,
)
from capver.engines.verification import explicit, storm
from capver.engines.verification.prism import storm_expected_executions, storm_reach
from capver.engines.verification.symbolic import formula_bdd
from capver.envs.ppddl import load_task
from capver.io import dsl
from capver.io.properties_text import read_properties
from capver.logic.condition import LogicContext
from tests.helpers.cli import capver_in_process
from tests.helpers.optional_tools import STORMPY_HINT
from tests.helpers.paths import ROOT

LEARNED = ROOT / "models" / "learned"
MINIGRID_INIT = "open(door_e) open(door_s) locked(door_n) locked(door_w) in_room(agent,sw) in_room(key,se)"
RUNS = {"first_responders_lao": [], "minigrid_rl": ["--init", MINIGRID_INIT]}


@pytest.mark.parametrize("name", sorted(RUNS))
def test_the_shipped_certificates_recheck(name: str) -> None:
    res = capver_in_process("certify", str(LEARNED / name))
    assert res.returncode == 0, res.stdout + res.stderr
    assert "h_and.capm ⪯ h_or.capm: proved" in res.stdout


# The tiers the tables of docs/results.md give: these short runs back no confident safety
# verdict; the hospital's invariant is settled by the environment (every agent keeps it).
TIERS = {
    "first_responders_lao": {
        "heals z1": ("holds", "observed"),
        "both victims healthy": ("holds", "observed"),
        "never both dying": ("unconfirmed", "unconfirmed"),
        "the hospital stays": ("holds", "observed"),
    },
    "minigrid_rl": {
        "fetches the key": ("unknown", "unknown"),
        "reaches the north-east room": ("unknown", "unknown"),
        "a door is never open and locked": ("unknown", "unknown"),
        "never unlocks the west door": ("unconfirmed", "unconfirmed"),
    },
}


@pytest.mark.parametrize("name", sorted(RUNS))
def test_every_shipped_verdict_is_confirmed_independently(name: str) -> None:
    run = LEARNED / name
    res = capver_in_process("verify", str(run), "--properties", str(run / "safety.props"), "--json", *RUNS[name])
    assert res.returncode in (0, 3), res.stderr
    records = {r["property"]: r for r in map(json.loads, res.stdout.splitlines())}
    first = dsl.read(run / "h_and.capm")
    models = {"h_and": first.model, "h_or": dsl.read(run / "h_or.capm", ctx=first.ctx).model}
    init, _ = first.initial_state(RUNS[name][1] if RUNS[name] else "")
    vocab = first.vocabulary
    props = read_properties(run / "safety.props", vocab, tuple(first.model))
    assert set(records) == {p.name for p in props}
    # The quantitative verdicts are confirmed by Storm, after every qualitative one.
    by_storm: list[tuple[str, Fraction, Callable[[], Fraction]]] = []
    for prop in props:
        r, q = records[prop.name], prop.query
        if isinstance(q, ExistsPath | ForallPath):
            assert (r["verdict"], r["tier"]) == TIERS[name][prop.name], prop.name
            if "environment" in r:
                # Independently: every state the primitive agent's true model (the PPDDL
                # task's own actions) reaches from the run's initial state keeps it.
                assert isinstance(q, ForallPath) and isinstance(q.path, Globally)
                task = load_task("first_responders")
                truth = true_primitive_model(task, LogicContext(task.vocabulary))
                world = explicit.explore(truth, task.initial_state).states
                assert vocab.format_state(init) == task.vocabulary.format_state(task.initial_state)
                assert len(world) == 576 and all(holds(q.path.invariant, s, task.vocabulary) for s in world)
            for bound in ("h_and", "h_or"):
                reach = explicit.explore(models[bound], init).states
                path = q.path
                if isinstance(q, ExistsPath) and isinstance(path, Eventually) and path.bound is None:
                    expected = any(holds(path.goal, s, vocab) for s in reach)
                elif isinstance(q, ForallPath) and isinstance(path, Globally) and path.bound is None:
                    expected = all(holds(path.invariant, s, vocab) for s in reach)
                else:
                    continue
                assert r[f"on_{bound}"] == ("holds" if expected else "fails"), (prop.name, bound)
        elif isinstance(q, ProbabilityQuery) and isinstance(q.path, Eventually):
            goal = formula_bdd(models["h_and"].ctx, q.path.goal)
            by_storm.append(
                (
                    prop.name,
                    Fraction(r["exact"]),
                    partial(storm_reach, models["h_and"], init, goal, q.path.bound, maximise=q.optimum is Optimum.MAX),
                )
            )
        elif isinstance(q, RewardQuery):
            goal = formula_bdd(models["h_and"].ctx, q.target)
            by_storm.append(
                (
                    prop.name,
                    Fraction(r["exact"]),
                    partial(storm_expected_executions, models["h_and"], init, goal, maximise=q.optimum is Optimum.MAX),
                )
            )
    if by_storm and not storm.available():
        pytest.skip(STORMPY_HINT + f" (to confirm {len(by_storm)} quantitative verdicts)")
    for prop_name, exact, by in by_storm:
        assert exact == by(), prop_name


def test_the_environment_bounds_the_agent_on_the_shipped_first_responders_run() -> None:
    """docs/usage.md: the hospital never burns in the PPDDL task, so every agent keeps
    it with probability 1; from the data alone the untried pairs leave [0, 1]."""
    run = LEARNED / "first_responders_lao"
    prop = "Pmin=? [ G hospital(l2) ]"
    bounds = []
    for flags in ((), ("--ignore-environment",)):
        res = capver_in_process("verify", str(run), "--property", prop, "--json", *flags)
        assert res.returncode == 0, res.stderr
        agent = json.loads(res.stdout)["agent"]
        bounds.append((agent["lower"], agent["upper"], agent["environment"]))
    assert bounds == [(1.0, 1.0, "the PPDDL task first_responders/problem1"), (0.0, 1.0, None)]

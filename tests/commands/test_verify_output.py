"""What ``capver verify`` prints, as a user reads it: every result repeats its
property, witnesses show per step the atoms added and removed, ``--json`` gives
numbers with their exact fractions and witnesses as lists of atoms, ``P>=p`` / ``P<=p``
say which extreme over schedulers they compare, a model without an initial state is
refused, and ``--save`` leaves the verdicts in the run for ``capver report``."""

from __future__ import annotations

import json
import subprocess
from fractions import Fraction
from pathlib import Path

import pytest

from capver.engines.verification import storm
from tests.helpers.cli import capver_in_process
from tests.helpers.optional_tools import STORMPY_HINT
from tests.helpers.paths import ROOT

REPO = ROOT
TOY = REPO / "models" / "toy_blocks.capm"
DOOR_KEY = REPO / "models" / "door_key.capm"
TOY_INIT = "{ontable(a), ontable(b), clear(a), clear(b), handempty}"


@pytest.fixture(scope="module")
def blocks_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A short LAO* run on Blocksworld (deterministic agent: its witnesses are observed)."""
    out = tmp_path_factory.mktemp("verify-output") / "run"
    res = capver_in_process(
        "learn",
        "--agent",
        "lao",
        "--domain",
        "blocks",
        "--method",
        "mcqs-e",
        "--max-steps",
        "60",
        "--out",
        str(out),
        "--quiet",
    )
    assert res.returncode == 0, res.stderr
    return out


def _json(*argv: str) -> list[dict[str, object]]:
    res = capver_in_process("verify", *argv, "--json")
    assert res.returncode in (0, 1, 3), res.stderr
    return [json.loads(line) for line in res.stdout.splitlines()]


def _one_line_error(res: subprocess.CompletedProcess[str]) -> str:
    assert res.returncode == 2, res.stdout
    err = res.stderr.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith("capver verify: error: ")
    return err


# -- the property is echoed -----------------------------------------------------------


def test_a_model_result_echoes_its_property_and_prints_what_each_step_changes() -> None:
    res = capver_in_process("verify", str(TOY), "--property", "E [ F on(a,b) ]", "--property", "A [ G !holding(a) ]")
    assert res.returncode == 1, res.stderr
    assert res.stdout.splitlines() == [
        "p1: E [ F on(a,b) ] — HOLDS on the model (decided after exploring 3 states, engine bdd)",
        f"  witness: {TOY_INIT}",
        "    1. pick-up-a: +holding(a) -ontable(a) -clear(a) -handempty",
        "    2. stack-a-on-b: +on(a,b) +clear(a) +handempty -clear(b) -holding(a)",
        "p2: A [ G !holding(a) ] — FAILS on the model (decided after exploring 2 states, engine bdd)",
        f"  counterexample: {TOY_INIT}",
        "    1. pick-up-a: +holding(a) -ontable(a) -clear(a) -handempty",
    ]


def test_a_named_restricted_property_is_echoed_as_written() -> None:
    res = capver_in_process(
        "verify", str(TOY), "--property", '"safe": A [ G !(holding(a) & holding(b)) ] {caps: put-down, pick-up-a}'
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith(
        "safe: A [ G !(holding(a) & holding(b)) ] {caps: pick-up-a, put-down} — HOLDS on the model"
    )
    record = _json(str(TOY), "--property", '"safe": A [ G !(holding(a) & holding(b)) ] {caps: put-down, pick-up-a}')[0]
    assert record["text"] == '"safe": A [ G !(holding(a) & holding(b)) ] {caps: pick-up-a, put-down}'


def test_a_lasso_says_where_it_loops_back() -> None:
    res = capver_in_process("verify", str(TOY), "--property", "E [ G !on(a,b) ]")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].startswith("p1: E [ G !on(a,b) ] — HOLDS on the model")
    # A grasp that fails changes nothing: the run stays in the initial state forever.
    assert lines[1:] == [
        f"  witness: {TOY_INIT}",
        "    1. pick-up-a: (no change)",
        "    (then back to the initial state, around that cycle forever)",
    ]
    witness = _json(str(TOY), "--property", "E [ G !on(a,b) ]")[0]["witness"]
    assert witness == {
        "initial": ["ontable(a)", "ontable(b)", "clear(a)", "clear(b)", "handempty"],
        "steps": [
            {
                "capability": "pick-up-a",
                "added": [],
                "removed": [],
                "state": ["ontable(a)", "ontable(b)", "clear(a)", "clear(b)", "handempty"],
            }
        ],
        "loop": 0,
    }


def test_agent_results_echo_their_property_and_show_the_run_as_changes(blocks_run: Path) -> None:
    res = capver_in_process(
        "verify", str(blocks_run), "--property", "E [ F on(a,b) ]", "--property", "Pmax=? [ F<=3 on(a,b) ]"
    )
    assert res.returncode in (0, 3), res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].startswith("p1: E [ F on(a,b) ] — HOLDS for the agent (observed) — ")
    assert lines[1] == (
        "  run: {ontable(a), ontable(b), ontable(c), ontable(d), clear(a), clear(b), clear(c), "
        "clear(d), handempty(robot)}"
    )
    # LAO* picks a up, then puts it on b: two executions of the capability on(a,b).
    assert lines[2] == "    1. on(a,b): +handfull(robot) +holding(a) -ontable(a) -clear(a) -handempty(robot)"
    assert lines[3] == "    2. on(a,b): +on(a,b) +clear(a) +handempty(robot) -clear(b) -handfull(robot) -holding(a)"
    assert lines[4].startswith("p2: Pmax=? [ F<=3 on(a,b) ] — Pmax = 1 on h∧ (MLE) (engine ")
    records = _json(str(blocks_run), "--property", "E [ F on(a,b) ]", "--property", "Pmax=? [ F<=3 on(a,b) ]")
    assert [r["text"] for r in records] == ['"p1": E [ F on(a,b) ]', '"p2": Pmax=? [ F<=3 on(a,b) ]']


def test_a_lasso_into_a_later_state_names_the_step() -> None:
    from capver.engines.verification.symbolic import Witness
    from capver.io import dsl

    vocab = dsl.read(TOY).vocabulary
    s0, s1 = vocab.state(["ontable(a)", "handempty"]), vocab.state(["holding(a)"])
    w = Witness(s0, (("pick-up-a", s1), ("put-down", s0), ("pick-up-a", s1)), loop=1)
    assert w.format_changes(vocab).splitlines() == [
        "{ontable(a), handempty}",
        "    1. pick-up-a: +holding(a) -ontable(a) -handempty",
        "    2. put-down: +ontable(a) +handempty -holding(a)",
        "    3. pick-up-a: +holding(a) -ontable(a) -handempty",
        "    (then back to the state after step 1, around that cycle forever)",
    ]
    assert w.to_json(vocab)["loop"] == 1
    assert w.format(vocab).splitlines()[1] == "  --pick-up-a--> {holding(a)}"  # the whole-state form stays


# -- JSON -----------------------------------------------------------------------------


def test_a_json_witness_is_the_initial_state_and_each_step_s_changes_and_state() -> None:
    witness = _json(str(TOY), "--property", "E [ F on(a,b) ]")[0]["witness"]
    assert isinstance(witness, dict)
    assert witness["initial"] == ["ontable(a)", "ontable(b)", "clear(a)", "clear(b)", "handempty"]
    assert witness["loop"] is None
    assert witness["steps"] == [
        {
            "capability": "pick-up-a",
            "added": ["holding(a)"],
            "removed": ["ontable(a)", "clear(a)", "handempty"],
            "state": ["ontable(b)", "clear(b)", "holding(a)"],
        },
        {
            "capability": "stack-a-on-b",
            "added": ["on(a,b)", "clear(a)", "handempty"],
            "removed": ["clear(b)", "holding(a)"],
            "state": ["on(a,b)", "ontable(b)", "clear(a)", "handempty"],
        },
    ]


def test_json_values_are_numbers_with_the_exact_fraction_beside_them() -> None:
    exact = _json(
        str(TOY),
        "--engine",
        "explicit",
        "--property",
        "Rmin=? [ F on(a,b) ]",
        "--property",
        "Pmax=? [ F<=2 on(a,b) ]",
        "--property",
        "Pmax=? [ F on(a,b) ]",
        "--property",
        "Rmin=? [ F on(b,a) ]",
    )
    assert [(r["value"], r.get("exact")) for r in exact[:3]] == [(28 / 9, "28/9"), (0.5625, "9/16"), (1.0, "1")]
    # No capability puts b on a: the expectation is infinite, which JSON has no number for.
    assert exact[3]["value"] is None and exact[3]["infinite"] is True and "exact" not in exact[3]


@pytest.mark.skipif(not storm.available(), reason=STORMPY_HINT)
def test_json_values_on_doubles_have_no_exact_fraction() -> None:
    floats = _json(str(TOY), "--engine", "storm-float", "--property", "Rmin=? [ F on(a,b) ]")
    assert isinstance(floats[0]["value"], float) and "exact" not in floats[0]
    assert floats[0]["value"] == pytest.approx(28 / 9, abs=1e-9)


# -- P>=p and P<=p --------------------------------------------------------------------


def test_probability_bounds_print_the_extreme_over_schedulers_they_compare() -> None:
    res = capver_in_process(
        "verify",
        str(TOY),
        "--engine",
        "explicit",
        "--property",
        "P<=0.9 [ F<=2 on(a,b) ]",
        "--property",
        "P>=0.75 [ F<=3 on(a,b) ]",
        "--property",
        "P>0.5 [ F<=2 on(a,b) ]",
    )
    assert res.returncode == 1, res.stderr
    assert res.stdout.splitlines() == [
        (
            "p1: P<=0.9 [ F<=2 on(a,b) ] — HOLDS on the model: Pmax = 0.5625 ≤ 0.9 (P<=0.9 holds for every scheduler, "
            "so the maximum over schedulers is compared; engine explicit: exact (rational))"
        ),
        # put-down forever never stacks: some scheduler reaches on(a,b) with probability 0
        (
            "p2: P>=0.75 [ F<=3 on(a,b) ] — VIOLATED on the model: Pmin = 0 < 0.75 (P>=0.75 must hold for every "
            "scheduler, so the minimum over schedulers is compared; engine explicit: exact (rational))"
        ),
        (
            "p3: P>0.5 [ F<=2 on(a,b) ] — VIOLATED on the model: Pmin = 0 ≤ 0.5 (P>0.5 must hold for every "
            "scheduler, so the minimum over schedulers is compared; engine explicit: exact (rational))"
        ),
    ]
    record = _json(str(TOY), "--engine", "explicit", "--property", "P<=0.9 [ F<=2 on(a,b) ]")[0]
    assert record["verdict"] == "holds" and record["quantity"] == "Pmax"
    assert (record["value"], record["exact"]) == (0.5625, "9/16")
    threshold = record["threshold"]
    assert threshold == {"comparison": "<=", "value": 0.9, "exact": "9/10"} and isinstance(threshold, dict)
    assert Fraction(str(record["exact"])) <= Fraction(threshold["exact"])


# -- the initial state ----------------------------------------------------------------


def test_a_model_without_an_initial_state_needs_init() -> None:
    err = _one_line_error(capver_in_process("verify", str(DOOR_KEY), "--property", "E [ F door-open ]"))
    assert str(DOOR_KEY) in err and "has no (:init ...)" in err
    assert "give --init ATOMS" in err and "add (:init ...)" in err
    record = _json(str(DOOR_KEY), "--property", "E [ F door-open ]", "--init", "agent-in(nw) key-in(nw)")[0]
    assert record["init"] == "{key-in(nw), agent-in(nw)}" and record["init_from"] == "--init"
    assert record["verdict"] == "holds"


# -- --save and capver report ---------------------------------------------------------


def test_save_writes_the_verdicts_and_report_shows_them(blocks_run: Path, tmp_path: Path) -> None:
    props = ("--property", "E [ F on(a,b) ]", "--property", "P>=0.5 [ F on(a,b) ]")
    res = capver_in_process("verify", str(blocks_run), *props, "--save")
    # P>=0.5 fails on h∧ (Pmin 0), but on a run the exit status is the agent's: the
    # data bound the agent's Pmin only to an interval that straddles 0.5 (undecided).
    assert res.returncode == 3, res.stderr
    saved = blocks_run / "verdicts.json"
    assert res.stdout.splitlines()[-1] == f"saved 2 verdicts to {saved}"
    doc = json.loads(saved.read_text(encoding="utf-8"))
    assert doc["format"] == "capver-verdicts" and doc["version"] == 1
    printed = _json(str(blocks_run), *props)

    def without_time(r: dict[str, object]) -> dict[str, object]:
        return {k: v for k, v in r.items() if k != "seconds"}

    assert [without_time(r) for r in doc["verdicts"]] == [without_time(r) for r in printed]
    assert [r["verdict"] for r in doc["verdicts"]] == ["holds", "violated"]

    page = tmp_path / "report.html"
    res = capver_in_process("report", str(blocks_run), "--out", str(page))
    assert res.returncode == 0, res.stderr
    text = page.read_text(encoding="utf-8")
    assert "<h3>Property verdicts <span class=muted>(verdicts.json)</span></h3>" in text
    assert '<td>p1</td><td><code>E [ F on(a,b) ]</code></td><td><span class="badge good">holds</span></td>' in text
    assert '<td>p2</td><td><code>P&gt;=0.5 [ F on(a,b) ]</code></td><td><span class="badge bad">violated</span>' in text
    assert "Pmin = 0 &lt; 0.5 (P&gt;=0.5 must hold for every scheduler" in text  # the reason
    assert "threshold &gt;= 0.5" in text and "h∧: holds, h∨: holds" in text  # the values
    assert "<code>+on(a,b) +clear(a) +handempty(robot) -clear(b) -handfull(robot) -holding(a)</code>" in text


def test_save_replaces_its_own_file_and_refuses_any_other(blocks_run: Path) -> None:
    saved = blocks_run / "verdicts.json"
    assert capver_in_process("verify", str(blocks_run), "--property", "E [ F on(a,b) ]", "--save").returncode == 0
    res = capver_in_process("verify", str(blocks_run), "--property", "A [ G !on(b,a) ]", "--save", "--json")
    assert res.returncode == 1, res.stderr
    json.loads(res.stdout)  # stdout stays JSON; the "saved" line goes to stderr
    assert "saved 1 verdict to" in res.stderr
    assert [r["text"] for r in json.loads(saved.read_text(encoding="utf-8"))["verdicts"]] == ['"p1": A [ G !on(b,a) ]']
    saved.write_text('{"mine": true}\n', encoding="utf-8")
    err = _one_line_error(capver_in_process("verify", str(blocks_run), "--property", "E [ F on(a,b) ]", "--save"))
    assert f"--save: {saved} exists and capver did not write it" in err
    assert saved.read_text(encoding="utf-8") == '{"mine": true}\n'
    saved.unlink()


def test_save_on_a_model_file_is_refused() -> None:
    err = _one_line_error(capver_in_process("verify", str(TOY), "--property", "E [ F on(a,b) ]", "--save"))
    assert f"--save: {TOY} is one model file" in err and "run directory" in err

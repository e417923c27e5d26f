"""The command line of every ``capver bench NAME`` (its ``--help`` and ``--quick``), and
the quick runs of the benchmarks without an output directory of their own tests
(foundation, agents, minigrid; learning and introspection are run in
tests/bench/test_bench_learning.py and tests/introspection/test_bench.py)."""

from __future__ import annotations

import argparse
import importlib
import json
import re
from pathlib import Path
from types import ModuleType

import pytest

from capver.bench.cli import BenchParser, plain, summary
from capver.commands import bench
from capver.engines.verification import storm
from tests.helpers.optional_tools import STORMPY_HINT

NAMES = sorted(bench.BENCHMARKS)


def _module(name: str) -> ModuleType:
    return importlib.import_module(bench.BENCHMARKS[name])


def _options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if a.option_strings and a.dest != "help"]


@pytest.mark.parametrize("name", NAMES)
def test_help_names_the_command_and_is_plain_text(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        bench.run(argparse.Namespace(name=name, args=["--help"]))
    assert exc.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith(f"usage: capver bench {name} ")
    assert "``" not in text and not re.search(r":[a-z]+:`", text)
    description = _module(name).build_parser().description
    assert description and description.endswith(".") and description[0].isupper()
    # all of it (argparse re-wraps it, also after hyphens)
    assert re.sub(r"\s", "", description) in re.sub(r"\s", "", text)


@pytest.mark.parametrize("name", NAMES)
def test_every_option_has_help_naming_its_default(name: str) -> None:
    parser = _module(name).build_parser()
    assert isinstance(parser, BenchParser)
    options = _options(parser)
    assert [a.dest for a in options if not a.help] == []
    # A default worth naming (not absent, off or empty) is named in the help.
    unnamed = [a.dest for a in options if a.default not in (None, False, []) and "default" not in str(a.help)]
    assert unnamed == []


@pytest.mark.parametrize("name", NAMES)
def test_quick_changes_defaults_only(name: str) -> None:
    parser = _module(name).build_parser()
    quick = parser.quick_defaults
    assert quick, f"{name} has no --quick values"
    full, fast = vars(parser.parse([])), vars(parser.parse(["--quick"]))
    assert not full["quick"] and fast["quick"]
    for dest, value in quick.items():
        assert fast[dest] == value != full[dest]
    assert {k: v for k, v in fast.items() if k not in quick and k != "quick"} == {
        k: v for k, v in full.items() if k not in quick and k != "quick"
    }
    # The quick values are in the help, and an option given explicitly wins over them.
    actions = {a.dest: a for a in _options(parser)}
    for dest in quick:
        assert "--quick:" in str(actions[dest].help)
    dest = min(quick)
    flag = actions[dest].option_strings[0]
    assert vars(parser.parse(["--quick", flag, str(full[dest])]))[dest] == full[dest]


# One count per benchmark that must be at least 1 (the shared argtypes.positive), and
# starting seeds or counts where 0 means "none" (argtypes.non_negative).
BAD_COUNTS: list[tuple[str, list[str], str]] = [
    ("abstraction", ["--seeds", "0"], "argument --seeds: expected a positive integer, got '0'"),
    ("agents", ["--repeat", "0"], "argument --repeat: expected a positive integer, got '0'"),
    ("agents", ["--states", "-1"], "argument --states: expected a non-negative integer, got '-1'"),
    ("crafter", ["--calls", "0"], "argument --calls: expected a positive integer, got '0'"),
    ("decide", ["--jobs", "0"], "argument --jobs: expected a positive integer, got '0'"),
    ("dprime", ["--eval-every", "0"], "argument --eval-every: expected a positive integer, got '0'"),
    ("foundation", ["--atoms", "-1"], "argument --atoms: expected a positive integer, got '-1'"),
    ("introspection", ["--k", "0"], "argument --k: expected a positive integer, got '0'"),
    ("learning", ["--seeds", "0"], "argument --seeds: expected a positive integer, got '0'"),
    ("gym", ["--runs", "0"], "argument --runs: expected a positive integer, got '0'"),
    ("smc", ["--runs", "0"], "argument --runs: expected a positive integer, got '0'"),
    ("learning", ["--tilde", "-1"], "argument --tilde: expected a non-negative integer, got '-1'"),
    ("minigrid", ["--layouts", "0"], "argument --layouts: expected a positive integer, got '0'"),
    ("modelfiles", ["--steps", "0"], "argument --steps: expected a positive integer, got '0'"),
    ("occam", ["--points", "5,0"], "argument --points: expected a positive integer, got '0'"),
    ("overcooked", ["--sequences", "0"], "argument --sequences: expected a positive integer, got '0'"),
    ("quantitative", ["--steps", "-1"], "argument --steps: expected a positive integer, got '-1'"),
    ("speed", ["--iterations", "0"], "argument --iterations: expected a positive integer, got '0'"),
    ("speed", ["--seed", "-1"], "argument --seed: expected a non-negative integer, got '-1'"),
    ("verdicts", ["--seeds", "0"], "argument --seeds: expected a positive integer, got '0'"),
    ("verify", ["--steps", "0"], "argument --steps: expected a positive integer, got '0'"),
]


def test_bad_counts_cover_every_benchmark() -> None:
    assert sorted({name for name, _, _ in BAD_COUNTS}) == NAMES


@pytest.mark.parametrize(("name", "argv", "message"), BAD_COUNTS, ids=[f"{n}{a[0]}" for n, a, _ in BAD_COUNTS])
def test_an_out_of_range_count_is_an_argparse_error(
    name: str, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The parser rejects the value (exit status 2, argparse's message naming the
    option) before the benchmark starts; a valid value of the same option parses."""
    parser = _module(name).build_parser()
    with pytest.raises(SystemExit) as exc:
        parser.parse(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: capver bench {name} ")
    assert f"capver bench {name}: error: {message}" in err
    dest = argv[0].removeprefix("--").replace("-", "_")
    good = "5,7" if name == "occam" else "7"
    assert vars(parser.parse([argv[0], good]))[dest] in (7, [5, 7])


def test_the_full_defaults_are_the_recorded_ones() -> None:
    """The numbers of docs/results.md come from the full defaults; --quick must not move them."""
    expected: dict[str, dict[str, object]] = {
        "foundation": {
            "atoms": 40,
            "transitions": 10_000,
            "capabilities": 20,
            "states": 2_000,
            "incremental_samples": 50,
            "queries": 5_000,
            "unobserved_queries": 1_000,
            "representation_states": 20_000,
        },
        "agents": {"states": 20, "repeat": 5, "domains": ["first_responders", "blocks"]},
        "minigrid": {"layouts": 20, "deepcopy_executions": 10, "calls": 2_000, "max_steps": 200},
        "learning": {
            "eval_sequences": 300,
            "iterations": 100,
            "horizon": 10,
            "qace_budget_steps": 500,
            "max_seconds": 45.0,
            "qace_max_seconds": 60.0,
            "seeds": 3,
        },
        "introspection": {"episodes": 5, "grid_episodes": 20, "timeout": 60.0, "k": 100},
        "dprime": {
            "sequences": 100_000,
            "steps": 300,
            "eval_every": 50,
            "settings": ["lao:first_responders", "lao:blocks"],
        },
    }
    for name, values in expected.items():
        args = vars(_module(name).build_parser().parse([]))
        assert {k: args[k] for k in values} == values, name


def test_plain_drops_restructured_text_markup() -> None:
    text = "Run ``capver x`` via :func:`capver.a.b`, :class:`~capver.c.D`\n   and :ref:`the title <label>`."
    assert plain(text) == "Run capver x via capver.a.b, D and the title."
    assert summary("First line\ngoes on.\n\nSecond paragraph.") == "First line goes on."


# -- quick runs ------------------------------------------------------------------------------


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_foundation_quick(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from capver.bench import foundation

    monkeypatch.chdir(tmp_path)  # anything written relative to the working directory shows up here
    assert foundation.main(["--quick", "--quiet", "--json", "out.json"]) == 0
    assert _files(tmp_path) == ["out.json"]
    assert capsys.readouterr().out.startswith("capver foundation benchmark")
    data = json.loads((tmp_path / "out.json").read_text())
    info = data["info"]
    assert info["setup"] == "20 atoms, 5 capabilities, 1000 transitions, seed 0"
    assert info["mode"].startswith("--quick")
    pooled = re.match(
        r"1000 transitions, (\d+) distinct states, (\d+) distinct \(s,c\), (\d+) blocks", info["D pooled"]
    )
    assert pooled and int(pooled[1]) <= 200 and int(pooled[1]) <= int(pooled[2]) <= 5 * 200
    assert info["D all-distinct"].startswith("1000 transitions, 1000 distinct states, 1000 distinct (s,c)")
    by = {(m["section"], m["metric"]): m for m in data["measures"]}
    for label, backends in (("pooled", ("cudd", "autoref")), ("all-distinct", ("cudd",))):
        for b in backends:
            build = by[(f"build, {label}", f"full h∧/h∨ build, {b}")]
            assert build["wall"] > 0 and build["target"] == {"bound": 5.0, "kind": "max"}
            for kind in ("new state", "repeated state"):
                m = by[(f"incremental, {label}", f"rebuild after 1 transition, {kind}, {b}")]
                assert m["wall"] > 0 and m["note"].startswith("median of 10;")
        for bound in ("h∧", "h∨"):
            for where, k in (("observed", 500), ("unobserved", 200)):
                for temp in ("cold", "warm"):
                    m = by[(f"Pr queries, {label}", f"Pr_{bound}(·|s,c), {where} s, {temp}")]
                    assert m["wall"] > 0 and m["note"] == f"{k} distinct (s,c)"
    (z3,) = [m for m in data["measures"] if m["section"] == "z3, pooled"]
    assert z3["metric"] == "refines(h∧, h∨), 5 capability queries" and z3["note"] == "proved: every query UNSAT"
    agreement = [m for m in data["measures"] if m["section"] == "BDD/SMT agreement, pooled"]
    assert [m["metric"].split(":")[0] for m in agreement[:2]] == ["h∧", "h∨"]
    assert agreement[2]["note"].endswith("all checked agree")
    for n in (20, 40, 200):
        rows = [m for m in data["measures"] if m["section"] == f"state representation, {n} atoms"]
        assert len(rows) == 5 and all(m["wall"] > 0 for m in rows)
        assert f"(2000 × {(n + 7) // 8})" in rows[3]["note"]


def _table(text: str, header: str) -> list[list[str]]:
    """The whitespace-separated cells of the rows below the line starting with
    ``header``, up to a blank line or the closing ``target`` line."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header)) + 1
    rows = []
    for line in lines[start:]:
        if not line.strip() or line.startswith("target"):
            break
        rows.append(line.split())
    return rows


def test_agents_quick(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from capver.bench import agents

    monkeypatch.chdir(tmp_path)
    rc = agents.main(["--quick"])
    assert _files(tmp_path) == []
    text = capsys.readouterr().out
    rows = _table(text, "domain")
    assert [(r[0], r[1]) for r in rows] == [
        ("first_responders", "1"),
        ("first_responders", "inf"),
        ("blocks", "1"),
        ("blocks", "inf"),
    ]
    for domain in ("first_responders", "blocks"):
        one, inf = (r for r in rows if r[0] == domain)
        pairs = int(one[2])
        # every capability from the initial state and 4 random-walk states, under both Θ
        assert pairs == int(inf[2]) and pairs % 5 == 0 and pairs > 0
        assert 0.0 <= float(one[5]) <= 1.0  # Θ = 1: at most one step per execution
        assert float(inf[5]) >= float(one[5])
        for r in (one, inf):
            assert float(r[3]) > 0 and float(r[4]) > 0
            assert 0 < int(r[6]) <= pairs  # at most one LAO* call per cold execution
    met = all(float(r[4]) >= agents.TARGET for r in rows)
    assert rc == (0 if met else 1)
    assert text.rstrip().endswith("met" if met else "NOT met")


def test_minigrid_quick(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from capver.bench import minigrid

    monkeypatch.chdir(tmp_path)
    assert minigrid.main(["--quick"]) == 0
    assert _files(tmp_path) == []
    text = capsys.readouterr().out
    snap = {r[0]: [float(x) for x in r[1:]] for r in _table(text, "codec")}
    assert sorted(snap) == ["deepcopy", "state-api"]
    assert all(x > 0 for row in snap.values() for x in row)
    # the compact state API is orders of magnitude cheaper than a deep copy
    assert snap["state-api"][0] < snap["deepcopy"][0] and snap["state-api"][1] < snap["deepcopy"][1]
    assert "step cap 200, 10 intents" in text
    rows = _table(text, "layouts")
    assert [(r[0], r[1], r[2], int(r[3])) for r in rows] == [
        ("uniform", "minigrid-rl", "state-api", 30),  # 10 intents × 3 layouts
        ("uniform", "minigrid-search", "state-api", 30),
        ("uniform", "minigrid-search", "deepcopy", 2),
        ("training", "minigrid-rl", "state-api", 30),
        ("training", "minigrid-search", "state-api", 30),
    ]
    for r in rows:
        rate, steps, achieved = map(float, r[4:])
        assert rate > 0 and 0 < steps <= 200 and 0.0 <= achieved <= 1.0


def test_verify_quick(capsys: pytest.CaptureFixture[str]) -> None:
    from capver.bench import verify

    assert verify.main(["--quick"]) in (0, 1)
    out = capsys.readouterr().out
    assert "reachable states from the initial state" in out
    assert "BDD E [ F victim-healthy(z1) & victim-at(z1,l2) ]" in out and "holds" in out
    assert "targets (" in out
    # one row per quantitative checker, and their values agree (Storm on doubles within 1e-9)
    values = {line.split()[1]: float(line.split()[-3]) for line in out.splitlines() if line.startswith("--engine ")}
    if not storm.available():  # Storm's rows need stormpy; the explicit engine's is always there
        assert set(values) == {"explicit"}
        pytest.skip(STORMPY_HINT + " (Storm's rows compared with the explicit engine's)")
    assert set(values) == {"storm", "storm-float", "explicit"}
    assert values["storm"] == values["explicit"] and abs(values["storm-float"] - values["storm"]) <= 1e-9


# Numbers and lists (the shared argtypes): (benchmark, bad argv, message, a good value, what it parses to).
BAD_NUMBERS: list[tuple[str, list[str], str, str, object]] = [
    ("speed", ["--converge", "-1"], "expected a non-negative number of seconds (0: off), got '-1'", "0", 0.0),
    (
        "speed",
        ["--converge-seeds", "1,-2"],
        "expected comma-separated non-negative integers, got '1,-2'",
        "1,2",
        [1, 2],
    ),
    ("learning", ["--budget-scale", "0"], "expected a positive number, got '0'", "0.5", 0.5),
    ("learning", ["--random-factor", "-1"], "expected a positive number, got '-1'", "8", 8.0),
    ("learning", ["--max-seconds", "-5"], "expected a non-negative number of seconds (0: off), got '-5'", "0", 0.0),
    ("learning", ["--qace-threshold", "nan"], "expected a positive number, got 'nan'", "0.01", 0.01),
    ("crafter", ["--threshold", "1.5"], "expected a number in [0, 1], got '1.5'", "0.25", 0.25),
]


@pytest.mark.parametrize(
    ("name", "argv", "message", "good", "value"), BAD_NUMBERS, ids=[f"{n}{a[0]}" for n, a, *_ in BAD_NUMBERS]
)
def test_an_out_of_range_number_is_an_argparse_error(
    name: str, argv: list[str], message: str, good: str, value: object, capsys: pytest.CaptureFixture[str]
) -> None:
    parser = _module(name).build_parser()
    with pytest.raises(SystemExit) as exc:
        parser.parse(argv)
    assert exc.value.code == 2
    assert f"capver bench {name}: error: argument {argv[0]}: {message}" in capsys.readouterr().err
    dest = argv[0].removeprefix("--").replace("-", "_")
    assert vars(parser.parse([argv[0], good]))[dest] == value

"""``capver bench decide``: the quick run writes a table whose columns, counts, steps
and ratios are those of its runs.csv (recomputed here), every run has a row for each
of its setting's properties, and no verdict on a random truth is wrong; the ratio
helper counts an undecided pair as a lower bound."""

from __future__ import annotations

import csv
import re
import statistics
from pathlib import Path

import pytest

from capver.bench.decide import (
    DIRECTED,
    LABELS,
    METHODS,
    QUICK,
    QUICK_BUDGETS,
    RANDOM_TRUTHS,
    SETTINGS,
    Outcome,
    build_problem,
    main,
    ratios,
)
from tests.bench.test_bench_learning import _tables  # the markdown tables of a text as (header, rows)

MAIN_HEADER = [
    "setting",
    "method",
    "seeds",
    "properties",
    "decided (mean)",
    "observed (mean)",
    "confident (mean)",
    "median steps to decide",
    "mean steps to decide",
    "median queries to decide",
    "steps ÷ directed (both decided)",
    "steps ÷ directed (lower bound)",
    "decided only by this method",
    "steps run (mean)",
    "learn s (mean)",
    "CPU s (mean)",
    "verdicts checked",
    "wrong observed",
    "wrong confident",
]
CSV_HEADER = [
    "setting",
    "method",
    "seed",
    "budget",
    "name",
    "text",
    "kind",
    "decided_steps",
    "decided_queries",
    "verdict",
    "tier",
    "run_steps",
    "run_queries",
    "run_stop",
    "run_seconds",
    "run_cpu_seconds",
    "truth_holds",
    "wrong",
    "bound",
    "truth_violation",
]
RATIO = re.compile(r"^(—|(>?)(\d+\.\d)× \((\d+)\))$")
Row = dict[str, str]


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[Row], Path]:
    out = tmp_path_factory.mktemp("decide")
    assert main(["--quick", "--jobs", "1", "--out", str(out)]) == 0
    with (out / "runs.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    return (out / "table.md").read_text(), rows, out


def _runs(rows: list[Row]) -> dict[tuple[str, str, str], list[Row]]:
    runs: dict[tuple[str, str, str], list[Row]] = {}
    for r in rows:
        runs.setdefault((r["setting"], r["method"], r["seed"]), []).append(r)
    return runs


def test_every_run_has_a_row_per_property_and_the_counts_add_up(quick: tuple[str, list[Row], Path]) -> None:
    _, rows, out = quick
    with (out / "runs.csv").open(newline="") as f:
        assert next(csv.reader(f)) == CSV_HEADER
    runs = _runs(rows)
    names = {s: [p.name for p in build_problem(s, 0).properties] for s in SETTINGS}
    seeds = {s: int(str(QUICK["truth_seeds" if s == RANDOM_TRUTHS else "seeds"])) for s in SETTINGS}
    assert len(runs) == sum(seeds[s] * len(METHODS) for s in SETTINGS)
    for (setting, _, _), props in runs.items():
        assert [r["name"] for r in props] == names[setting]
        budget = int(props[0]["budget"])
        assert budget == QUICK_BUDGETS[setting]
        for r in props:
            # One run: its numbers repeat on each of its properties.
            assert (r["run_steps"], r["run_queries"], r["run_stop"]) == (
                props[0]["run_steps"],
                props[0]["run_queries"],
                props[0]["run_stop"],
            )
            decided = r["decided_steps"] != ""
            assert decided == (r["tier"] in ("observed", "confident"))
            assert (r["decided_queries"] != "") == decided
            if decided:
                assert 0 <= int(r["decided_steps"]) <= int(r["run_steps"])
                assert 0 <= int(r["decided_queries"]) <= int(r["run_queries"])
                assert r["verdict"] in ("holds", "violated")
        # A run ends at its budget (an execution may overrun it) or once all are decided.
        if props[0]["run_stop"] == "every property decided":
            assert all(r["decided_steps"] != "" for r in props)
        else:
            assert props[0]["run_stop"] == f"step budget {budget}" and int(props[0]["run_steps"]) >= budget
    assert (out / "decided.png").stat().st_size > 0


def _median(xs: list[float], fmt: str = ".0f") -> str:
    return format(statistics.median(xs), fmt) if xs else "—"


def test_the_table_is_recomputed_from_runs_csv(quick: tuple[str, list[Row], Path]) -> None:
    text, rows, _ = quick
    (header, table), (_, per_property) = _tables(text)
    assert header == MAIN_HEADER
    assert [(r["setting"], r["method"]) for r in table] == [(s, LABELS[m]) for s in SETTINGS for m in METHODS]
    for t in table:
        method = next(m for m in METHODS if LABELS[m] == t["method"])
        mine = [r for r in rows if r["setting"] == t["setting"] and r["method"] == method]
        seeds = sorted({r["seed"] for r in mine})
        decided = [r for r in mine if r["decided_steps"] != ""]
        steps = [float(r["decided_steps"]) for r in decided]
        assert int(t["seeds"]) == len(seeds)
        assert int(t["properties"]) * len(seeds) == len(mine)
        assert float(t["decided (mean)"]) == pytest.approx(len(decided) / len(seeds), abs=0.005)
        observed = sum(r["tier"] == "observed" for r in decided) / len(seeds)
        confident = sum(r["tier"] == "confident" for r in decided) / len(seeds)
        assert float(t["observed (mean)"]) == pytest.approx(observed, abs=0.005)
        assert float(t["confident (mean)"]) == pytest.approx(confident, abs=0.005)
        assert float(t["decided (mean)"]) == pytest.approx(observed + confident, abs=0.011)
        assert t["median steps to decide"] == _median(steps)
        assert t["mean steps to decide"] == (f"{statistics.fmean(steps):.1f}" if steps else "—")
        assert t["median queries to decide"] == _median([float(r["decided_queries"]) for r in decided])
        runs = {r["seed"]: r for r in mine}
        assert t["steps run (mean)"] == f"{statistics.fmean(float(r['run_steps']) for r in runs.values()):.0f}"
        if method == DIRECTED:
            assert t["steps ÷ directed (both decided)"] == t["steps ÷ directed (lower bound)"] == ""
            continue
        directed = {(r["seed"], r["name"]): r for r in rows if r["setting"] == t["setting"] and r["method"] == DIRECTED}
        other = {(r["seed"], r["name"]): r for r in mine}

        def steps_of(r: Row) -> int:
            return int(r["decided_steps"] or r["run_steps"])

        both = [k for k in directed if directed[k]["decided_steps"] != "" and other[k]["decided_steps"] != ""]
        by_d = [k for k in directed if directed[k]["decided_steps"] != ""]
        for cell, keys in ((t["steps ÷ directed (both decided)"], both), (t["steps ÷ directed (lower bound)"], by_d)):
            m = RATIO.match(cell)
            assert m, cell
            den = sum(steps_of(directed[k]) for k in keys)
            if den == 0:
                assert cell == "—"
                continue
            assert float(m.group(3)) == pytest.approx(sum(steps_of(other[k]) for k in keys) / den, abs=0.051)
            assert int(m.group(4)) == len(keys)
            lower = keys is by_d and any(other[k]["decided_steps"] == "" for k in keys)
            assert (m.group(2) == ">") == lower
        only = sum(other[k]["decided_steps"] != "" and directed[k]["decided_steps"] == "" for k in directed)
        assert int(t["decided only by this method"]) == only
    # Per property: "decided/seeds" for each method.
    for p in per_property:
        name = p["property"].split(":", 1)[0]
        for method in METHODS:
            same = [r for r in rows if r["setting"] == p["setting"] and r["name"] == name and r["method"] == method]
            n = sum(r["decided_steps"] != "" for r in same)
            assert p[LABELS[method]].startswith(f"{n}/{len(same)}")


def test_no_verdict_on_a_random_truth_is_wrong(quick: tuple[str, list[Row], Path]) -> None:
    text, rows, _ = quick
    truths = [r for r in rows if r["setting"] == RANDOM_TRUTHS]
    assert truths and all(r["truth_holds"] in ("0", "1") for r in truths)
    for r in truths:
        decided = r["decided_steps"] != ""
        assert (r["wrong"] != "") == decided
        assert r["wrong"] in ("", "0"), r
        if decided and r["tier"] == "observed":
            assert (r["verdict"] == "holds") == (r["truth_holds"] == "1")
        if r["tier"] == "confident":
            assert float(r["truth_violation"]) <= float(r["bound"])
    for r in rows:
        if r["setting"] != RANDOM_TRUTHS:
            assert r["truth_holds"] == r["wrong"] == ""
    assert "verdicts wrong of" in text and re.search(
        r"0 observed and 0 confident verdicts wrong of \d+ checked — met", text
    )


def _outcome(method: str, seed: int, name: str, steps: int | None, run: int = 100) -> Outcome:
    return Outcome(
        "s",
        method,
        seed,
        run,
        name,
        "",
        "reach",
        steps,
        None if steps is None else 1,
        "",
        "",
        run,
        1,
        "",
        0.0,
        0.0,
        None,
        None,
        float("nan"),
        float("nan"),
    )


def test_ratios_match_pairs_and_bound_the_undecided() -> None:
    directed = [_outcome(DIRECTED, 0, "a", 10), _outcome(DIRECTED, 0, "b", 20), _outcome(DIRECTED, 1, "a", None)]
    other = [_outcome("mcqs-e", 0, "a", 30), _outcome("mcqs-e", 0, "b", None, run=100), _outcome("mcqs-e", 1, "a", 5)]
    both, bound, only = ratios(other, directed)
    assert (both.value, both.pairs, both.lower) == (3.0, 1, False)
    assert (bound.value, bound.pairs, bound.lower) == ((30 + 100) / 30, 2, True)
    assert str(bound) == ">4.3× (2)"
    assert only == 1
    zero = ratios([_outcome("random", 0, "a", 0)], [_outcome(DIRECTED, 0, "a", 0)])[0]
    assert zero.value is None and str(zero) == "—"

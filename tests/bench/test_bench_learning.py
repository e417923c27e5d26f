"""Smoke test of ``capver bench learning`` (section 4.2's E1/E4 comparison and the
QACE-style primitive-action comparison): a tiny run writes a table whose rows,
columns and numbers agree with the raw curves, and the curve helpers compute what
their docstrings say."""

from __future__ import annotations

import csv
import itertools
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from capver.bench.learning.analysis import first_crossing, mean_curve, steps_to_reach
from capver.bench.learning.cli import main
from capver.bench.learning.runs import Job, RunSpec, run_job, run_jobs
from capver.bench.learning.settings import DEFAULT_SETTINGS, QACE_SETTING, build_setting, collect_eval_set
from tests.helpers.traced_once import traced_once

SETTING = "lao:first_responders"
ARGS = [
    "--quick",
    "--jobs",
    "1",
    "--settings",
    SETTING,
    "--methods",
    "mcqs-s,random",
    "--seeds",
    "2",
    "--ablation-methods",
    "mcqs-s",
    "--qace-methods",
    "mcqs-s",
    "--qace-every",
    "4",
    "--random-factor",
    "4",
]
MAIN_HEADER = [
    "setting",
    "method",
    "seeds",
    "budget",
    "steps",
    "time-capped",
    "agr→90%",
    "agr→99%",
    "cov→90%",
    "cov→99%",
    "R÷M agr 90%",
    "R÷M agr 99%",
    "R÷M cov 90%",
    "R÷M cov 99%",
    "R÷M @final cov",
    "cov@budget",
    "final agr",
    "final cov",
    "exact VD",
    "learn s",
    "wall s",
    "final cov h̃",
    "exact VD h̃",
    "R÷M @final cov h̃",
]
QACE_HEADER = [
    "method",
    "seeds",
    "reached ≤0.009",
    "steps at threshold",
    "executions at threshold",
    "learn s at threshold",
    "best MAE",
    "steps at best",
    "learn s at best",
    "final MAE on tried (s,c)",
    "final MAE on applicable (s,c)",
    "final (s,c) coverage",
    "steps run",
    "h̃ reached ≤0.009",
    "h̃ steps at threshold",
    "h̃ executions at threshold",
    "h̃ s at threshold",
    "h̃ best MAE",
    "h̃ final MAE",
    "h̃ final MAE on applicable (s,c)",
    "h̃ final MAE on tried (s,c)",
]
Tables = list[tuple[list[str], list[dict[str, str]]]]
RATIO = re.compile(r"^(>?\d+\.\d×|—)$")


def _tables(text: str) -> list[tuple[list[str], list[dict[str, str]]]]:
    """The markdown tables of ``text`` as (header, rows as {column: cell})."""
    raw: list[list[list[str]]] = []
    previous = False
    for line in text.splitlines():
        is_row = line.startswith("|")
        if is_row and not previous:
            raw.append([])
        if is_row and not line.startswith("|---"):
            raw[-1].append([c.strip() for c in line.strip().strip("|").split("|")])
        previous = is_row
    return [(t[0], [dict(zip(t[0], row)) for row in t[1:]]) for t in raw]


def _mean_pm(cell: str) -> float:
    mean, _, std = cell.partition(" ± ")
    assert 0.0 <= float(std) <= 1.0
    return float(mean)


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("bench-learning")
    # Each xdist worker makes this run (about 26 s traced, 10 s not); coverage measures
    # it in one of them (tests/helpers/traced_once.py), and this module still measured
    # the same 6755 lines of capver (2026-12-06).
    with traced_once(tmp_path_factory, "bench-learning-out"):
        assert main([*ARGS, "--out", str(d)]) == 0
    return d


@pytest.fixture(scope="module")
def tables(out: Path) -> Tables:
    return _tables((out / "table.md").read_text())


@pytest.fixture(scope="module")
def runs(out: Path) -> list[dict[str, str]]:
    with open(out / "runs.csv", newline="") as f:
        return list(csv.DictReader(f))


def test_main_table_rows_columns_and_ranges(tables: Tables) -> None:
    (main_header, rows), (qace_header, _) = tables
    assert main_header == MAIN_HEADER
    assert sorted(r["method"] for r in rows) == ["mcqs-s", "mcqs-s ξ=0", "random"]
    for r in rows:
        assert r["setting"] == SETTING and r["seeds"] == "2" and r["budget"] == "40"
        capped = int(r["time-capped"].split("/")[0])
        budget = 160 if r["method"] == "random" else 40  # Random gets 4× the budget
        assert float(r["steps"]) >= budget or capped > 0
        for col in ("final agr", "final cov"):
            assert 0.0 <= _mean_pm(r[col]) <= 1.0
        assert 0.0 <= float(r["cov@budget"]) <= 1.0
        assert r["exact VD"] == "—"  # the LAO* setting has no known true model
        assert 0.0 <= _mean_pm(r["final cov h̃"]) <= 1.0 and r["exact VD h̃"] == "—"
        # Seconds are compared as relations between recorded numbers, never against zero: a
        # 40-step quick run may learn in well under a millisecond on a fast machine.
        assert float(r["wall s"]) >= float(r["learn s"]) >= 0.0
        ratios = [r[c] for c in MAIN_HEADER if c.startswith("R÷M")]
        if r["method"] == "random":
            assert ratios == [""] * 6
        else:
            assert all(RATIO.match(x) for x in ratios), ratios
    assert qace_header == QACE_HEADER


def test_steps_to_threshold_agree_with_the_curves(tables: Tables, runs: list[dict[str, str]]) -> None:
    for row in tables[0][1]:
        for metric, short in (("agreement", "agr"), ("coverage_agreement", "cov")):
            for thr in (0.9, 0.99):
                hits = []
                for seed in ("0", "1"):
                    pts = [
                        r
                        for r in runs
                        if r["method"] == row["method"] and r["seed"] == seed and r["setting"] == SETTING
                    ]
                    hit = next((float(r["steps"]) for r in pts[1:] if float(r[metric]) >= thr), None)
                    if hit is not None:
                        hits.append(hit)
                want = f"{np.mean(hits):.0f} ({len(hits)}/2)" if hits else "— (0/2)"
                assert row[f"{short}→{thr:.0%}"] == want


def _crossing(points: list[tuple[float, float]], target: float) -> float | None:
    """Linear interpolation between checkpoints, written out independently of the bench."""
    if points[0][1] >= target - 1e-12:
        return points[0][0]
    for (x0, y0), (x1, y1) in itertools.pairwise(points):
        if y1 >= target - 1e-12:
            return min(x1, x0 + (target - y0) * (x1 - x0) / (y1 - y0))
    return None


@pytest.mark.parametrize(
    ("column", "metric", "final"),
    [
        ("R÷M @final cov", "coverage_agreement", "final cov"),
        ("R÷M @final cov h̃", "coverage_agreement_tilde", "final cov h̃"),
    ],
)
def test_random_over_mcqs_at_the_final_level_follows_the_seed_mean_curves(
    tables: Tables, runs: list[dict[str, str]], column: str, metric: str, final: str
) -> None:
    """Random's steps ÷ MCQS's steps to MCQS's final h∧ / h̃ coverage agreement,
    recomputed from runs.csv (seed means on the union of checkpoints)."""

    def mean_points(method: str) -> list[tuple[float, float]]:
        per_seed = [
            [
                (float(r["steps"]), float(r[metric]))
                for r in runs
                if r["method"] == method and r["seed"] == seed and r["setting"] == SETTING and r[metric] != ""
            ]
            for seed in ("0", "1")
        ]
        grid = sorted({x for pts in per_seed for x, _ in pts})
        return [
            (x, float(np.mean([np.interp(x, [p for p, _ in pts], [v for _, v in pts]) for pts in per_seed])))
            for x in grid
        ]

    row = next(r for r in tables[0][1] if r["method"] == "mcqs-s")
    mine, theirs = mean_points("mcqs-s"), mean_points("random")
    # The table rounds the target to 3 decimals; recompute it from the runs to stay exact.
    finals = [
        float([r for r in runs if r["method"] == "mcqs-s" and r["seed"] == seed and r[metric] != ""][-1][metric])
        for seed in ("0", "1")
    ]
    target = float(np.mean(finals))
    assert abs(target - float(row[final].partition(" ± ")[0])) < 6e-4
    m, r = _crossing(mine, target), _crossing(theirs, target)
    if m is None or m <= 0:
        assert row[column] == "—"
    elif r is None:
        assert row[column] == f">{theirs[-1][0] / m:.1f}×"
    else:
        assert row[column] == f"{r / m:.1f}×"


def test_curves_start_from_an_empty_model(runs: list[dict[str, str]]) -> None:
    d_eval = collect_eval_set(SETTING, 20)
    n_sc: dict[tuple[int, str], int] = {}
    for s, c, _, n in d_eval.counts:
        n_sc[(s, c)] = n_sc.get((s, c), 0) + n
    # A model that predicts nothing is charged each transition's empirical probability.
    empty_cov = 1.0 - sum(n * n / n_sc[(s, c)] for s, c, _, n in d_eval.counts) / d_eval.size
    curves: dict[tuple[str, str], list[dict[str, str]]] = {}
    for r in runs:
        if r["setting"] == SETTING:
            curves.setdefault((r["method"], r["seed"]), []).append(r)
    assert sorted(curves) == [(m, s) for m in ("mcqs-s", "mcqs-s ξ=0", "random") for s in ("0", "1")]
    for rows in curves.values():
        steps = [int(r["steps"]) for r in rows]
        assert steps[0] == 0 and steps == sorted(steps) and len(rows) >= 3
        assert float(rows[0]["agreement"]) == 0.0  # c_T = 0: agreement is defined as 0
        assert float(rows[0]["coverage_agreement"]) == pytest.approx(empty_cov, abs=1e-6)
        assert float(rows[-1]["coverage_agreement"]) > float(rows[0]["coverage_agreement"])
        assert all(0.0 <= float(r["agreement"]) <= 1.0 for r in rows)


def test_qace_section(tables: Tables, runs: list[dict[str, str]]) -> None:
    (row,) = tables[1][1]
    assert row["method"] == "mcqs-s" and row["seeds"] == "2"
    assert re.fullmatch(r"[0-2]/2", row["reached ≤0.009"])
    assert 0.0 <= float(row["best MAE"]) <= 1.0
    assert 0.0 < float(row["final (s,c) coverage"]) <= 1.0
    assert 0 < float(row["steps run"]) <= 20
    # Before any observation h∧ predicts nothing, so the error is the mean of the true
    # probabilities: (number of (s, c) pairs) / (number of true transitions).
    a = build_setting("primitive:first_responders")
    assert a.truth is not None and a.reachable is not None
    n_pairs = n_trans = 0
    for s in a.reachable:
        for m in a.truth.values():
            dist = m.distribution(s)
            assert sum(dist.values(), Fraction(0)) == 1
            n_pairs += 1
            n_trans += len(dist)
    qace = [r for r in runs if r["setting"] == "primitive:first_responders"]
    firsts = [r for r in qace if r["steps"] == "0" and r["queries"] == "0"]
    assert len(firsts) == 2
    for r in firsts:
        assert float(r["mae"]) == pytest.approx(n_pairs / n_trans, abs=1e-6)
    assert all(0.0 <= float(r["mae"]) <= 1.0 for r in qace)
    # Restricted to the pairs where the action changes the state, the error before any
    # observation is again (pairs) / (transitions), over those pairs only.
    eff_pairs = eff_trans = 0
    for s in a.reachable:
        for m in a.truth.values():
            dist = m.distribution(s)
            if dist != {s: 1}:
                eff_pairs += 1
                eff_trans += len(dist)
    assert 0 < eff_pairs < n_pairs
    for r in firsts:
        assert float(r["mae_effective"]) == pytest.approx(eff_pairs / eff_trans, abs=1e-6)
    # h̃ agrees with the data on every tried state, so on the tried pairs its error is
    # h∧'s; before any observation it is h∧ (no rules).
    for r in qace:
        assert r["mae_tilde_tried"] == r["mae_tried"]
    for r in firsts:
        assert r["mae_tilde"] == r["mae"]
    assert 0.0 <= float(row["h̃ best MAE"]) <= 1.0 and re.fullmatch(r"[0-2]/2", row["h̃ reached ≤0.009"])


def test_plots_are_written(out: Path) -> None:
    for name in (
        "lao_first_responders_agreement.png",
        "lao_first_responders_coverage_agreement.png",
        "primitive_first_responders_mae.png",
    ):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_the_quick_run_a_user_types(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``capver bench learning --quick`` unchanged (every setting, method and part, on
    the default 2 processes), not the reduced run the fixtures above share."""
    monkeypatch.chdir(tmp_path)  # nothing may be written outside --out
    assert main(["--quick", "--out", "out"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    text = (tmp_path / "out" / "table.md").read_text()
    assert capsys.readouterr().out == text
    assert "Seeds 2; step budgets " + ", ".join(f"{s} 40" for s in DEFAULT_SETTINGS) in text
    assert "time cap 10.0 s per run; MCTS 20 iterations, horizon 5;" in text
    assert "D′ (20 sequences): " in text and "step budget 20, learning-time cap 10.0 s" in text
    (header, rows), (qace_header, qace_rows) = _tables(text)
    assert header == MAIN_HEADER and qace_header == QACE_HEADER
    want = [(s, m) for s in DEFAULT_SETTINGS for m in ("mcqs-e", "mcqs-s", "random")]
    want += [(s, f"{m} ξ=0") for s in DEFAULT_SETTINGS if s.startswith("lao:") for m in ("mcqs-s", "mcqs-e")]
    assert sorted((r["setting"], r["method"]) for r in rows) == sorted(want)
    for r in rows:
        assert r["seeds"] == "2" and r["budget"] == "40"
        budget = 320 if r["method"] == "random" else 40  # Random gets 8× the budget
        assert float(r["steps"]) >= budget or int(r["time-capped"].split("/")[0]) > 0
        assert 0.0 <= _mean_pm(r["final agr"]) <= 1.0 and 0.0 <= _mean_pm(r["final cov"]) <= 1.0
        assert float(r["wall s"]) >= float(r["learn s"]) >= 0.0
    assert sorted(r["method"] for r in qace_rows) == ["mcqs-e", "mcqs-s", "random"]
    for r in qace_rows:
        assert r["seeds"] == "2" and 0 < float(r["steps run"]) <= 20 and 0.0 <= float(r["best MAE"]) <= 1.0
    with open(tmp_path / "out" / "runs.csv", newline="") as f:
        settings = {r["setting"] for r in csv.DictReader(f)}
    assert settings == {*DEFAULT_SETTINGS, QACE_SETTING}
    for s in DEFAULT_SETTINGS:
        assert (tmp_path / "out" / f"{s.replace(':', '_')}_coverage_agreement.png").is_file()


def test_a_pool_run_equals_an_in_process_run() -> None:
    jobs = [
        Job(RunSpec(SETTING, method, 0, 15, 5, iterations=10, horizon=4), collect_eval_set(SETTING, 5))
        for method in ("mcqs-s", "random")
    ]

    def strip(rows: tuple[dict[str, object], ...]) -> list[dict[str, object]]:
        return [{k: v for k, v in r.items() if k not in ("learn_seconds", "tilde_seconds")} for r in rows]

    pooled = run_jobs(jobs, 2, lambda _: None)
    assert [r.spec for r in pooled] == [j.spec for j in jobs]
    for job, r in zip(jobs, pooled):
        assert strip(r.rows) == strip(run_job(job).rows)  # type: ignore[arg-type]


def test_bad_arguments_exit_with_a_message(capsys: pytest.CaptureFixture[str]) -> None:
    for argv, needle in (
        (["--settings", "lao"], "lao:DOMAIN"),
        (["--methods", "mcqs-x"], "unknown method"),
        (["--settings", SETTING, "--budget-steps", "lao:blocks=5"], "not one of --settings"),
    ):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2
        assert needle in capsys.readouterr().err


def test_steps_to_reach() -> None:
    pts = [(0.0, 0.0), (10.0, 0.95), (20.0, 0.85), (30.0, 0.92), (40.0, 0.995)]
    assert steps_to_reach(pts, 0.9) == 10.0
    assert steps_to_reach(pts, 0.9, sustained=True) == 30.0
    assert steps_to_reach(pts, 0.99) == 40.0
    assert steps_to_reach(pts, 0.999) is None
    # The initial checkpoint never counts, even when it is already above.
    assert steps_to_reach([(0.0, 1.0), (5.0, 1.0)], 0.9) == 5.0


def test_mean_curve_holds_the_last_value_of_a_short_run() -> None:
    grid, values = mean_curve([[(0.0, 0.0), (10.0, 1.0)], [(0.0, 0.0), (5.0, 0.5), (20.0, 0.5)]])
    assert grid.tolist() == [0.0, 5.0, 10.0, 20.0]
    assert values.tolist() == pytest.approx([0.0, 0.5, 0.75, 0.75])


def test_first_crossing_stays_on_the_grid_when_the_target_is_reached_within_tolerance() -> None:
    assert first_crossing(np.array([0.0, 10.0]), np.array([0.0, 0.5]), 0.5 + 5e-13) == 10.0


@given(
    st.lists(st.floats(0.0, 1.0), min_size=2, max_size=8),
    st.lists(st.integers(1, 50), min_size=7, max_size=7),
    st.floats(0.0, 1.0),
)
def test_first_crossing_is_where_the_curve_first_reaches_the_target(
    ys: list[float], gaps: list[int], target: float
) -> None:
    grid = np.cumsum([0, *gaps[: len(ys) - 1]]).astype(float)
    values = np.array(ys)
    x = first_crossing(grid, values, target)
    if values.max() < target - 1e-12:
        assert x is None
        return
    assert x is not None and grid[0] <= x <= grid[-1]
    assert np.interp(x, grid, values) == pytest.approx(target, abs=1e-9) or (x == grid[0] and values[0] >= target)
    before = grid < x
    assert not np.any(values[before] >= target - 1e-12)

"""``capver bench quantitative --quick``: every engine checks Pmax and Pmin of First
Responders' h∧ after 200 steps in a fresh process, the exact engines agree, the table
and the CSV say which engine answered with which guarantee, and the target line is
there.  A check that runs out of time is recorded, not fatal."""

from __future__ import annotations

import csv
from fractions import Fraction
from pathlib import Path

import pytest

from capver.bench import quantitative
from capver.engines.verification import storm
from capver.errors import RunFileError
from tests.helpers.paths import ROOT


def test_quick_run_records_every_engine_and_they_agree(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert quantitative.main(["--quick", "--out", str(tmp_path)]) == 0
    rows = list(csv.DictReader((tmp_path / "checks.csv").open(encoding="utf-8")))
    engines = ["explicit", "sparse", *(["storm", "storm-float"] if storm.available() else []), "auto"]
    assert [(r["query"], r["engine"]) for r in rows] == [(q, e) for q in ("Pmax", "Pmin") for e in engines]
    assert {r["setting"] for r in rows} == {"first_responders"} and {r["model"] for r in rows} == {"h∧"}
    for q in ("Pmax", "Pmin"):
        mine = [r for r in rows if r["query"] == q]
        assert all(r["seconds"] for r in mine), mine  # none timed out or failed
        exact = {Fraction(r["value"]) for r in mine if r["guarantee"].startswith("exact")}
        assert len(exact) == 1
        for r in mine:
            assert abs(float(r["value"]) - float(next(iter(exact)))) <= 1e-12
            assert float(r["load"]) >= 0
    by = {(r["query"], r["engine"]): r for r in rows}
    assert by[("Pmax", "sparse")]["answered_by"] == "sparse"
    assert by[("Pmax", "sparse")]["guarantee"] in (
        "exact (rational)",
        "exact: floating result rounded and verified in rationals",
    )
    assert by[("Pmax", "sparse")]["breakdown"].startswith("build ")
    assert by[("Pmax", "auto")]["answered_by"] in ("explicit", "sparse")
    if storm.available():
        assert by[("Pmax", "storm-float")]["guarantee"] == "sound, |error| ≤ 1e-12"
        assert "parse+build" in by[("Pmax", "storm")]["breakdown"]
    table = (tmp_path / "table.md").read_text(encoding="utf-8")
    assert "Every exact engine gave the same fraction" in table
    assert "target (exact Pmax on First Responders' h∧ ≤ 5 s, --engine auto)" in table
    assert table.count("| first_responders | h∧ |") == len(rows)
    assert "Command: `capver bench quantitative --quick --out" in table
    assert "target" in capsys.readouterr().out


def test_a_check_that_runs_out_of_time_is_reported() -> None:
    from capver.io import dsl

    first = dsl.read(ROOT / "models" / "toy_blocks.capm")
    init, _ = first.initial_state("")
    assert quantitative.timed_check(first.model, init, "Pmax=? [ F on(a,b) ]", "explicit", 0.0)[0] in ("timeout", "ok")
    out = quantitative.timed_check(first.model, init, "Pmax=? [ F on(a,b) ]", "explicit", 60.0)
    assert out[0] == "ok" and out[3] == "1" and out[4] == "exact (rational)"
    bad = quantitative.timed_check(first.model, init, "Pmax=? [ F nosuchatom ]", "explicit", 60.0)
    assert bad[0] == "error" and "nosuchatom" in str(bad[1])


def test_recorded_runs_are_read_as_run_directories(tmp_path: Path) -> None:
    """``--runs DIR``: DIR/<setting> is a run directory (read through capver's one
    run reader), its models in one logic context and its initial state the run's."""
    import shutil

    shutil.copytree(ROOT / "models" / "learned" / "first_responders_lao", tmp_path / "first_responders")
    models, init, how = quantitative._models(quantitative.SETTINGS["first_responders"], None, 0, tmp_path)
    h_and, h_or = models["and"], models["or"]
    assert how == f"read from {tmp_path / 'first_responders'}"
    assert h_and.ctx is h_or.ctx and set(h_and) == set(h_or)  # type: ignore[attr-defined]
    assert h_and.vocabulary.format_state(init).startswith("{")  # type: ignore[attr-defined]
    # A directory that is not a run says which file is missing.
    (tmp_path / "first_responders" / "h_or.capm").unlink()
    with pytest.raises(RunFileError, match=r"h_or.capm: missing"):
        quantitative._models(quantitative.SETTINGS["first_responders"], None, 0, tmp_path)

"""``capver bench introspection`` (Figures 2 and 4 of the introspection paper) on a
tiny configuration: the CSV tables, the plots and the argument checks."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from capver.bench.introspection import QUICK_SIZES, growth_exponent, main


def test_tiny_benchmark_writes_tables_and_plots(tmp_path, capsys) -> None:
    out = tmp_path / "bench"
    rc = main(
        [
            "--domains",
            "grid",
            "blocks",
            "--sizes",
            "grid=2,3",
            "--sizes",
            "blocks=2,4",
            "--episodes",
            "2",
            "--grid-episodes",
            "2",
            "--timeout",
            "20",
            "--k",
            "5",
            "--out",
            str(out),
        ]
    )
    assert rc == 0
    with (out / "runs.csv").open() as fh:
        runs = list(csv.DictReader(fh))
    # grid: 2 sizes x 6 planners x 2 episodes; blocks: 2 sizes x 2 planners x 2 episodes
    assert len(runs) == 24 + 8
    for r in runs:
        if r["planner"] in ("introspector", "greedy"):
            assert r["solved"] == "True"
        if r["domain"] == "grid" and r["planner"] in ("introspector", "greedy"):
            assert int(r["plan_len"]) == int(r["size"])
            assert float(r["score"]) == 1.0
    with (out / "summary.csv").open() as fh:
        summary = list(csv.DictReader(fh))
    assert {(s["domain"], s["planner"]) for s in summary} == {
        ("grid", "introspector"),
        ("grid", "greedy"),
        ("grid", "random"),
        ("grid", "beam"),
        ("grid", "mcts"),
        ("grid", "mcts-u"),
        ("blocks", "introspector"),
        ("blocks", "greedy"),
    }
    for name in ("introspection_grid.png", "introspection_blocks.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = capsys.readouterr().out
    assert "BEAM[5]" in text and "RANDOM[5]" in text and "MCTS[5]" in text and "MCTS-U[5]" in text
    assert "largest size GREEDY solves in every episode: 4" in (out / "targets.txt").read_text()


def test_bad_arguments_are_reported(tmp_path, capsys) -> None:
    assert main(["--sizes", "mazes=3", "--out", str(tmp_path)]) == 2
    assert "expected DOMAIN=N,N" in capsys.readouterr().err
    assert main(["--sizes", "blocks=0", "--out", str(tmp_path)]) == 2
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        main(["--timeout", "0", "--out", str(tmp_path)])
    assert exc.value.code == 2
    assert "argument --timeout: expected a positive number of seconds, got '0'" in capsys.readouterr().err


def test_growth_exponent_recovers_a_power_law() -> None:
    sizes = [4, 8, 16, 32]
    assert abs(growth_exponent(sizes, [0.001 * n**2 for n in sizes]) - 2.0) < 1e-9


@pytest.mark.slow
def test_quick_run_covers_every_domain_and_cuts_greedy_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--quick`` as a user runs it: every domain and planner, the quick sizes, and
    GREEDY's blow-up cut off by the 2 s timeout instead of 60 s per episode."""
    monkeypatch.chdir(tmp_path)  # nothing may be written outside --out
    assert main(["--quick", "--out", "out"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["runs.csv", "summary.csv", "targets.txt"]
        + [f"introspection_{d}.png" for d in ("bins", "blocks", "drawers", "grid")]
    )
    with (out / "runs.csv").open() as fh:
        runs = list(csv.DictReader(fh))
    sizes = {d: sorted({int(r["size"]) for r in runs if r["domain"] == d}) for d in QUICK_SIZES}
    assert sizes == {d: list(ns) for d, ns in QUICK_SIZES.items()}
    planners = {d: {r["planner"] for r in runs if r["domain"] == d} for d in QUICK_SIZES}
    assert planners["grid"] == {"introspector", "greedy", "random", "beam", "mcts", "mcts-u"}
    assert all(planners[d] == {"introspector", "greedy"} for d in ("blocks", "drawers", "bins"))
    for domain, size in {(r["domain"], r["size"]) for r in runs}:
        # 3 episodes on the grid, 2 elsewhere, for each planner that ran at this size
        per = [r for r in runs if (r["domain"], r["size"]) == (domain, size)]
        eps = 3 if domain == "grid" else 2
        assert all(sum(r["planner"] == p for r in per) == eps for p in {r["planner"] for r in per})
    for r in runs:
        # Not the default 60 s timeout, under which a timed-out episode runs ≥ 60 s.  How
        # far past the quick 2 s an episode runs is the machine's load, not tested.
        assert float(r["solve_s"]) < 60.0
        if r["planner"] == "introspector":
            assert r["solved"] == "True" and r["timed_out"] == "False"
        if r["domain"] == "grid" and r["planner"] in ("introspector", "greedy"):
            assert int(r["plan_len"]) == int(r["size"]) and float(r["score"]) == 1.0
    # GREEDY times out on 20 blocks in every episode, so it is not run on 40
    greedy_blocks = {int(r["size"]): r for r in runs if r["domain"] == "blocks" and r["planner"] == "greedy"}
    assert max(greedy_blocks) == 20
    assert all(
        r["timed_out"] == "True"
        for r in runs
        if r["domain"] == "blocks" and r["planner"] == "greedy" and r["size"] == "20"
    )
    targets = (out / "targets.txt").read_text()
    assert "blocks: introspector at size 40:" in targets and "solved 2/2" in targets
    assert "target 'blocks-40 under 10 s on one core':" in targets
    assert capsys.readouterr().out.rstrip().endswith("introspection_<domain>.png")

"""``capver bench introspection`` (Figures 2 and 4 of the introspection paper) on a
tiny configuration: the CSV tables, the plots and the argument checks."""

from __future__ import annotations

import csv

from capver.bench.introspection import growth_exponent, main


def test_tiny_benchmark_writes_tables_and_plots(tmp_path, capsys) -> None:
    out = tmp_path / "bench"
    rc = main(
        [
            "--domains", "grid", "blocks",
            "--sizes", "grid=2,3", "--sizes", "blocks=2,4",
            "--episodes", "2", "--grid-episodes", "2",
            "--timeout", "20", "--k", "5", "--out", str(out),
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
        ("grid", "introspector"), ("grid", "greedy"), ("grid", "random"), ("grid", "beam"),
        ("grid", "mcts"), ("grid", "mcts-u"), ("blocks", "introspector"), ("blocks", "greedy"),
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
    assert main(["--timeout", "0", "--out", str(tmp_path)]) == 2
    assert "--timeout must be positive" in capsys.readouterr().err


def test_growth_exponent_recovers_a_power_law() -> None:
    sizes = [4, 8, 16, 32]
    assert abs(growth_exponent(sizes, [0.001 * n**2 for n in sizes]) - 2.0) < 1e-9

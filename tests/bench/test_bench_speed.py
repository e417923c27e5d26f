"""``capver bench speed`` (learning speed): CPU per simulator step per method and phase."""

from __future__ import annotations

import csv
from pathlib import Path

from capver.bench.speed import DEFAULT_METHODS, PHASES
from tests.helpers.cli import capver


def test_speed_quick_times_every_method_and_phase(tmp_path: Path) -> None:
    out = tmp_path / "speed"
    proc = capver("bench", "speed", "--quick", "--out", str(out), timeout=120)
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.DictReader((out / "speed.csv").open()))
    assert {(r["method"], r["variant"]) for r in rows} == {
        *((m, "default") for m in DEFAULT_METHODS),
        ("mcqs-e", "all-iterations"),
    }
    for r in rows:
        total = float(r["cpu_seconds"])
        phases = [float(r[f"{p}_seconds"]) for p in PHASES]
        assert min(phases) >= 0 and total > 0
        assert abs(sum(phases) - total) <= 1e-3 + 1e-3 * total, r  # the phases make up the total
        assert int(r["steps"]) >= 120 and int(r["queries"]) > 0 and int(r["transitions"]) > 0
        if r["method"] != "random":
            assert float(r["planning_seconds"]) > 0
    # The synthesis of Random queries is a draw of 30 names, a small part of its time.
    random = next(r for r in rows if r["method"] == "random")
    assert float(random["planning_seconds"]) < 0.5 * float(random["cpu_seconds"])
    table = (out / "table.md").read_text()
    assert table == proc.stdout
    assert all(f"{p} ms/step" in table for p in PHASES)
    assert table.count("\n| mcqs-") == 3 and "\n| random | default | " in table


def test_speed_converge_runs_to_the_rule_or_the_cpu_cap(tmp_path: Path) -> None:
    proc = capver(
        "bench",
        "speed",
        "--methods",
        "mcqs-e",
        "--steps",
        "20",
        "--converge",
        "1",
        "--eval-sequences",
        "20",
        "--out",
        str(tmp_path),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    rows = [line.strip("|").split("|") for line in proc.stdout.splitlines() if line.startswith("| mcqs-e | 0 |")]
    assert len(rows) == 1
    _, _, stop, cpu, _, steps, queries, executions, transitions, coverage, agreement = (c.strip() for c in rows[0])
    assert stop in ("converged", "CPU cap 1 s")
    assert stop == "converged" or float(cpu) >= 1.0
    assert 0 < int(transitions) <= int(executions) and int(queries) > 0 and int(steps) > 0
    assert 0.0 <= float(coverage) <= 1.0 and 0.0 <= float(agreement) <= 1.0


def test_reachable_closure_model_free_finds_a_subset_of_the_exact_one(tmp_path: Path) -> None:
    """``--reachable K`` as docs/results.md runs it (with fewer executions per pair): the
    model-free closure can only miss what the exact closure over the agent's policy
    and the domain's outcomes reaches."""
    proc = capver(
        "bench",
        "speed",
        "--methods",
        "random",
        "--steps",
        "20",
        "--reachable",
        "2",
        "--out",
        str(tmp_path / "speed"),
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    rows = {}
    for line in proc.stdout.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0].startswith(("2 executions per pair", "exact")):
            rows[cells[0].split()[0]] = [int(c) for c in cells[1:7]]
    free, exact = rows["2"], rows["exact"]
    assert all(0 < f <= e for f, e in zip(free, exact, strict=True) if e) and free[1] == exact[1]
    states, _, pairs, transitions, stochastic, still = exact
    assert pairs == states * exact[1]  # every capability is tried in every reachable state
    assert pairs <= transitions and stochastic <= pairs and still <= pairs

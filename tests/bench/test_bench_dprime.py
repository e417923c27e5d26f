"""``capver bench dprime``: D′'s statistics and the printed 1 − VD_s against coverage
agreement, on a quick run whose output files are read back."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.cli import capver_in_process


def test_quick_run_reports_dprime_and_both_metrics(tmp_path: Path) -> None:
    out = tmp_path / "dprime"
    res = capver_in_process("bench", "dprime", "--quick", "--out", str(out))
    assert res.returncode == 0, res.stderr
    data = json.loads((out / "results.json").read_text())
    stats = {s["setting"]: s for s in data["d_prime"]}
    assert set(stats) == {"lao:first_responders", "lao:blocks"}
    for s in stats.values():
        assert s["sequences"] == 300
        # 10–30 capabilities per sequence, and a pair is counted once however often it was seen.
        assert 10 * 300 <= s["executions"] <= 30 * 300
        assert 0 < s["pairs"] <= s["executions"]
        assert 0 <= s["stochastic_pairs"] <= s["pairs"]
    rows = data["methods"]
    assert {(r["setting"], r["method"]) for r in rows} == {
        (s, m) for s in stats for m in ("mcqs-e", "mcqs-s", "random")
    }
    for r in rows:
        assert 0 < r["first_steps"] <= r["final_steps"]
        assert r["min_printed"] <= r["first_printed"]
        # The point of the benchmark: the printed metric is near 1 while coverage is not.
        assert r["min_printed"] >= 0.95
        assert 0 <= r["final_coverage"] < r["final_printed"]
    assert "pairs with > 1 outcome" in (out / "table.md").read_text()


def test_out_that_exists_is_refused_and_left_alone(tmp_path: Path) -> None:
    keep = tmp_path / "keep.txt"
    keep.write_text("mine")
    res = capver_in_process("bench", "dprime", "--quick", "--out", str(tmp_path))
    assert res.returncode == 2
    assert "already exists" in res.stderr
    assert keep.read_text() == "mine"

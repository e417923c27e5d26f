"""Smoke test of ``capver bench learning``: a tiny run yields well-formed curves and a
table whose numbers are in range."""

from __future__ import annotations

from capver.bench.learning import Job, run_job, steps_to, summarize


def test_tiny_learning_run_and_table() -> None:
    rows = []
    for method in ("mcqs-s", "random"):
        rows += run_job(Job("lao:blocks", method, 0, budget=60, eval_sequences=10, eval_every=20))
    assert {r["method"] for r in rows} == {"mcqs-s", "random"}
    for r in rows:
        assert 0.0 <= float(r["coverage_agreement"]) <= 1.0 and 0.0 <= float(r["agreement"]) <= 1.0
    by_method = {m: [r for r in rows if r["method"] == m] for m in ("mcqs-s", "random")}
    for rs in by_method.values():
        steps = [int(r["steps"]) for r in rs]
        assert steps == sorted(steps) and steps[0] == 0 and steps[-1] >= 60
        # The learner starts knowing nothing: coverage agreement starts at 0 and grows.
        assert float(rs[0]["coverage_agreement"]) == 0.0 < float(rs[-1]["coverage_agreement"])
    assert steps_to(by_method["random"], "coverage_agreement", 0.0) == 0.0
    assert steps_to(by_method["random"], "coverage_agreement", 1.1) is None
    table = summarize(rows)
    assert "#### lao:blocks" in table and table.count("\n| mcqs-s |") == 1 and table.count("\n| random |") == 1

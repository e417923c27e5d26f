"""``capver bench smc``: a plan's sampled interval against the exact value the
benchmark computes from gymnasium's ``env.unwrapped.P`` (FrozenLake) — the table agrees
with results.json, and the interval holds the value."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from capver.bench import smc


def test_quick_frozenlake_intervals_hold_the_exact_value(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "smc"
    assert smc.main(["--quick", "--worlds", "frozenlake4", "--out", str(out)]) == 0
    rows = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert len(rows) == 2 and {r["world"] for r in rows} == {"frozenlake4"}
    for r in rows:
        assert 0 < r["truth"] < 1  # slippery: neither sure nor hopeless
        assert r["lower"] <= r["truth"] <= r["upper"] and r["covered"]
        assert r["upper"] - r["lower"] <= 0.1 and r["runs"] <= 1000
    table = (out / "table.md").read_text(encoding="utf-8")
    assert "| frozenlake4 | 2 |" in table and "| 2 / 2 | 2 / 2 |" in table
    assert "inside" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        smc.main(["--quick", "--worlds", "frozenlake4", "--out", str(out)])  # never overwritten


def test_the_exact_value_reads_runs_as_the_sampler_does() -> None:
    """plan_value on a two-state chain by hand: F succeeds on arrival, a failed
    execution (missing mass) ends the run where it was, G holds on an undecided end."""
    from capver import synthetic
    from capver.core.properties import Eventually, Globally
    from capver.io.properties_text import parse_property

    vocab = synthetic.propositional_vocabulary(1)
    steps = {(0, "c"): {1: 0.5, 0: 0.25}, (1, "c"): {1: 1.0}}  # 0.25 of executions from 0 fail
    f = parse_property("Pmin=? [ F p0 ]", vocab, ("c",)).query.path  # type: ignore[union-attr]
    g = parse_property("Pmin=? [ G !p0 ]", vocab, ("c",)).query.path  # type: ignore[union-attr]
    step = lambda s, c: steps[(s, c)]  # noqa: E731
    assert isinstance(f, Eventually) and isinstance(g, Globally)
    # Two executions: reach p0 at the first (0.5), or stay (0.25) and reach it at the second (0.125).
    assert smc.plan_value(step, lambda s: s, 0, ["c", "c"], f, vocab) == pytest.approx(0.625)
    assert smc.plan_value(step, lambda s: s, 0, ["c", "c"], g, vocab) == pytest.approx(0.375)

"""``capver bench crafter`` / ``capver bench overcooked`` (capver.bench.environment):
the D′ profile's tables agree with each other on a quick run."""

from __future__ import annotations

import re

import pytest

from tests.helpers.cli import capver


def _rows(text: str, header: str) -> list[list[str]]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows


def _num(cell: str) -> float:
    return float(cell.replace(",", ""))


@pytest.mark.parametrize("name", ["overcooked", "crafter"])
def test_quick_profile_tables_add_up(name: str) -> None:
    res = capver("bench", name, "--quick", timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    out = res.stdout
    [(execs, steps_per, *_)] = _rows(out, "| executions | steps/exec")
    per_cap = _rows(out, "| capability | executions | achieved")
    assert sum(_num(r[1]) for r in per_cap) == _num(execs)  # every execution counted once
    for _cap, n, achieved, rest in per_cap:
        others = sum(int(m) for m in re.findall(r" (\d+)(?:,|$)", rest))
        assert round(_num(n) * (1 - _num(achieved))) == others  # the rest ended for a stated reason
    assert _num(steps_per) > 0
    for _what, sym, env, mean, median, biggest in _rows(out, "| states | symbolic states"):
        assert _num(env) >= _num(sym) > 0
        assert abs(_num(mean) - _num(env) / _num(sym)) <= 0.05 + 1e-9
        assert 1 <= _num(median) <= _num(biggest)

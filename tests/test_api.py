"""The notebook API (capver.api): the Occam model of a learned result sits between
the lattice bounds (z3) and is the one ``capver learn`` writes for the same seed."""

from __future__ import annotations

from pathlib import Path

import capver as cv
from capver.engines.verification.relations import refines
from capver.io import dsl
from tests.helpers.cli import capver


def test_h_tilde_is_certified_between_the_bounds_and_matches_capver_learn(tmp_path: Path) -> None:
    a = cv.load_setting("lao", domain="blocks")
    result = cv.learn(a, method="mcqs-s", max_steps=120, seed=3)
    h_tilde = result.model("h_tilde")
    assert refines(result.h_and, h_tilde).holds and refines(h_tilde, result.h_or).holds
    assert result.h_tilde is h_tilde  # built once
    res = capver(
        "learn",
        "--agent",
        "lao",
        "--domain",
        "blocks",
        "--method",
        "mcqs-s",
        "--max-steps",
        "120",
        "--seed",
        "3",
        "--eval-sequences",
        "5",
        "--out",
        str(tmp_path / "run"),
        "--quiet",
    )
    assert res.returncode == 0, res.stderr
    written = dsl.read(tmp_path / "run" / "h_tilde.capm", ctx=result.h_and.ctx).model
    assert dsl.emit(written, name="occam") == dsl.emit(h_tilde, name="occam")

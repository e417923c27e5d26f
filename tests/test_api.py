"""The notebook API (capver.api): the Occam model of a learned result sits between
the lattice bounds (z3) and is the one ``capver learn`` writes for the same seed."""

from __future__ import annotations

from pathlib import Path

import pytest

import capver as cv
from capver.engines.verification.relations import equivalent, refines
from capver.errors import RunFileError
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


def test_a_saved_result_is_a_run_the_commands_and_load_run_accept(tmp_path: Path) -> None:
    """LearnResult.save writes the run directory capver learn writes: capver certify
    re-checks its certificate, load_run gives back the same models, data and
    properties, and a directory capver did not write is refused untouched."""
    a = cv.load_setting("lao", domain="blocks")
    result = cv.learn(a, method="mcqs-s", max_steps=60, seed=1, properties=['"ab": E [ F on(a,b) ]'])
    run = result.save(tmp_path / "run")
    assert sorted(p.name for p in run.path.iterdir()) == [
        "certificate.json",
        "dataset.jsonl",
        "h_and.capm",
        "h_or.capm",
        "h_tilde.capm",
        "properties.props",
        "run.json",
    ]
    res = capver("certify", str(run.path))
    assert res.returncode == 0, res.stdout + res.stderr
    loaded = cv.load_run(run.path)
    for which in ("h_and", "h_or"):
        written = dsl.read(run.path / f"{which}.capm", ctx=result.h_and.ctx).model
        assert equivalent(written, result.model(which)).holds, which
    assert loaded.h_and.vocabulary == result.h_and.vocabulary and list(loaded.h_or) == list(result.h_or)
    assert dict(loaded.dataset().items()) == dict(result.data.items())
    assert [p.name for p in loaded.properties] == ["ab"]
    assert loaded.manifest.method == "mcqs-s"
    # Saving again over capver's own run is allowed; over someone else's files it is not.
    assert cv.load_run(result.save(run.path).path).manifest == loaded.manifest
    other = tmp_path / "notes"
    other.mkdir()
    (other / "todo.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(RunFileError, match="capver does not overwrite files it did not create"):
        result.save(other)
    assert sorted(p.name for p in other.iterdir()) == ["todo.txt"]


def test_every_public_name_is_importable_from_the_package() -> None:
    """``capver.__all__`` is what ``from capver import *`` gives: each name resolves to the
    object its home module defines, and nothing else is promised."""
    import importlib

    from capver import _HOMES

    assert sorted(cv.__all__) == sorted([*_HOMES, "__version__"])
    for name, home in _HOMES.items():
        assert getattr(cv, name) is getattr(importlib.import_module(home), name)
    assert cv.Projection.of_atoms.__qualname__ == "Projection.of_atoms"
    with pytest.raises(AttributeError, match="no attribute 'Abstractions'"):
        _ = cv.Abstractions  # type: ignore[attr-defined]

"""The wheel ships every subpackage, every data folder and the grammars (pyproject's
explicit list), and builds without setuptools' warnings about them."""

from __future__ import annotations

import importlib.resources
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

from tests.helpers.paths import ROOT


def test_every_subpackage_is_listed_in_pyproject() -> None:
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {
        ".".join(p.parent.relative_to(ROOT).parts)
        for p in (ROOT / "capver").rglob("__init__.py")
        if "__pycache__" not in p.parts
    }
    found.add("capver.grammars")
    data = {".".join(d.relative_to(ROOT).parts) for d in (ROOT / "capver" / "data").rglob("*") if d.is_dir()}
    found |= {d for d in data if "__pycache__" not in d}
    assert found == listed


def test_the_wheel_builds_without_warnings_and_ships_the_data(tmp_path: Path) -> None:
    # From a copy of what the wheel is built from: setuptools writes build/ into the source tree.
    src = tmp_path / "src"
    for folder in ("capver", "grammars"):
        shutil.copytree(ROOT / folder, src / folder, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    r = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "-w", str(tmp_path / "dist")],
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    log = r.stdout + r.stderr
    assert "absent from the `packages` configuration" not in log and "deprecated" not in log, log
    (wheel,) = (tmp_path / "dist").glob("capver-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {
        "capver/data/domains/blocks/domain.pddl",
        "capver/data/truths/asymmetry.capm",
        "capver/data/minigrid/rl_policy.json",
        "capver/grammars/capmodel.lark",
        "capver/py.typed",
    }
    assert expected <= names


def test_grammars_load_from_the_package() -> None:
    names = {f.name for f in importlib.resources.files("capver.grammars").iterdir()}
    assert {"capmodel.lark", "ppddl.lark"} <= names

"""The wheel ships every subpackage and the grammars (pyproject's explicit list)."""

from __future__ import annotations

import importlib.resources
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_subpackage_is_listed_in_pyproject() -> None:
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {
        ".".join(p.parent.relative_to(ROOT).parts)
        for p in (ROOT / "capver").rglob("__init__.py")
        if "__pycache__" not in p.parts
    }
    found.add("capver.grammars")
    assert found == listed


def test_grammars_load_from_the_package() -> None:
    names = {f.name for f in importlib.resources.files("capver.grammars").iterdir()}
    assert {"capmodel.lark", "ppddl.lark"} <= names

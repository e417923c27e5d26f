"""The repository's folders, wherever a test module sits in the tests' tree."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
"""The repository root (``pyproject.toml``, ``models/``, ``docs/``)."""

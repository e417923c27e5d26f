"""Whole-file writes that a kill cannot tear: the text goes to a sibling temporary
file that then replaces the target, so a reader sees the old file or the new one."""

from __future__ import annotations

import os
from pathlib import Path


def replace_text(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    # newline="": the CSV writer's \r\n and JSON's \n reach the file unchanged.
    tmp.write_text(text, encoding="utf-8", newline="")
    os.replace(tmp, path)

"""The README is kept true: its Python block runs as written."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.DOTALL)


def test_the_readme_has_a_python_block() -> None:
    assert python_blocks(), "README.md lost its 'Use from Python' block"


@pytest.mark.parametrize("block", python_blocks())
def test_the_python_block_runs(block: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "readme_block.py"
    script.write_text(block, encoding="utf-8")
    runpy.run_path(str(script), run_name="readme")
    out = capsys.readouterr().out
    assert "; Capability model pessimistic" in out
    assert "'agreement': 1.0" in out  # the LAO* agent on Blocksworld is deterministic
    assert "executions; step budget 300" in out and "'domain.pddl'" in out

"""``capver ARGV`` in a subprocess, exactly as a user types it: the installed console
script (the module when the script is not installed).  Import it from tests as
``from tests.helpers.cli import capver``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(sys.executable).with_name("capver")


def capver_command() -> list[str]:
    """The argv prefix that runs capver."""
    return [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "capver"]


def capver(*argv: str, cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        capver_command() + list(argv), capture_output=True, text=True, timeout=timeout, check=False, cwd=cwd
    )

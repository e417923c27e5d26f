"""``capver ARGV`` from the tests, two ways, both returning a ``CompletedProcess``:

* :func:`capver`: in a subprocess, exactly as a user types it: the installed console
  script (the module when the script is not installed).  For what only a process shows:
  the console script itself, signals, exit on a closed pipe, the environment, a command
  that starts services (ray).
* :func:`capver_in_process`: ``capver.cli.main(argv)`` in the test's own process, with
  stdout and stderr captured and the interpreter's default warning filters, so a
  warning the user would see lands on stderr as it would there.  It saves the start of
  a fresh interpreter and capver's imports (about 1.5 s a call on the 2-core machine),
  so the command tests use it.

Import them from tests as ``from tests.helpers.cli import capver, capver_in_process``."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
import traceback
import warnings
from pathlib import Path

SCRIPT = Path(sys.executable).with_name("capver")


def capver_command() -> list[str]:
    """The argv prefix that runs capver."""
    return [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "capver"]


def capver(*argv: str, cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        capver_command() + list(argv), capture_output=True, text=True, timeout=timeout, check=False, cwd=cwd
    )


def _default_warning_filters() -> None:
    """The filters of a fresh interpreter started without -W (Python 3.11): what a user
    running ``capver`` sees.  Inserted last-first, as each goes to the front."""
    warnings.resetwarnings()
    for category in (ResourceWarning, ImportWarning, PendingDeprecationWarning, DeprecationWarning):
        warnings.filterwarnings("ignore", category=category)
    warnings.filterwarnings("default", category=DeprecationWarning, module="__main__")


def capver_in_process(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``capver ARGV`` run by ``capver.cli.main`` in this process (see the module
    docstring): its exit status, or 1 and the traceback on stderr for an exception that
    escapes ``main`` (what the interpreter would print), ``SystemExit`` as the process
    would exit (argparse's usage errors: 2)."""
    from capver.cli import main

    out, err = io.StringIO(), io.StringIO()
    with (
        contextlib.chdir(cwd if cwd is not None else Path.cwd()),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
        warnings.catch_warnings(record=True) as caught,
    ):
        _default_warning_filters()
        try:
            code = main(list(argv))
        except SystemExit as exc:
            if exc.code is None or isinstance(exc.code, int):
                code = exc.code or 0
            else:
                print(exc.code, file=sys.stderr)
                code = 1
        except Exception:  # noqa: BLE001 -- the interpreter's own report of an escaping exception
            traceback.print_exc()
            code = 1
        for w in caught:
            err.write(warnings.formatwarning(w.message, w.category, w.filename, w.lineno, w.line))
    return subprocess.CompletedProcess([*capver_command(), *argv], code, out.getvalue(), err.getvalue())

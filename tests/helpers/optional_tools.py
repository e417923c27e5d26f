"""The optional tools some tests need, the skip markers that name how to install them,
and running the tests as on a machine without them: ``CAPVER_HIDE_TOOLS``.

``CAPVER_HIDE_TOOLS=yosys-abc,chromium,chromedriver,stormpy python -m pytest ...`` runs
the suite as a new contributor's machine without Debian's ``yosys`` and ``chromium``
packages and without stormpy would: every test that needs one of them must skip (with
an install hint), none may fail.  :func:`hide` does it for this process and every process
it starts (xdist workers, ``capver`` subprocesses):

* executables: each directory of ``PATH`` that holds a hidden name is replaced by a
  temporary directory of symlinks to everything else in it (the other directories stay
  as they are, so a virtualenv's ``bin`` keeps finding its ``pyvenv.cfg``);
* Python packages: a meta-path finder refuses to import a hidden top-level package, and
  a ``sitecustomize`` module put first on ``PYTHONPATH`` installs the same finder in
  every Python subprocess.

``tests/conftest.py`` calls :func:`hide` when the variable is set;
``tests/test_optional_tools.py`` runs the tests that touch the tools that way.
"""

from __future__ import annotations

import atexit
import importlib.abc
import importlib.machinery
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

VARIABLE = "CAPVER_HIDE_TOOLS"
OPTIONAL_TOOLS = ("yosys-abc", "chromium", "chromedriver", "stormpy")
"""What the suite uses but a contributor may lack: ABC (Debian's ``yosys``), Chromium and
its driver (Debian's ``chromium chromium-driver``), and Storm's Python binding."""

STORMPY_HINT = "stormpy is not installed: pip install 'stormpy>=2.0'"
ABC_HINT = "ABC is not installed: apt-get install yosys"
CHROMIUM_HINT = "needs Debian's chromium and chromium-driver: apt-get install -y chromium chromium-driver"

_SITECUSTOMIZE = '''\
"""Written by tests/helpers/optional_tools.py: hides the packages named in CAPVER_HIDE_TOOLS."""
import importlib.abc, os, sys


class _Hidden(importlib.abc.MetaPathFinder):
    def __init__(self, names):
        self.names = frozenset(names)

    def find_spec(self, fullname, path=None, target=None):
        if fullname.partition(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {fullname!r} ({os.environ.get('CAPVER_HIDE_TOOLS')} hidden)", name=fullname)
        return None


sys.meta_path.insert(0, _Hidden(n.strip() for n in os.environ.get("CAPVER_HIDE_TOOLS", "").split(",") if n.strip()))
'''


class HiddenPackages(importlib.abc.MetaPathFinder):
    """Refuses to import the named top-level packages (and their submodules), as if they
    were not installed."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = frozenset(names)

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname.partition(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {fullname!r} ({VARIABLE} hides it)", name=fullname)
        return None


def names_from_environment() -> list[str]:
    return [n.strip() for n in os.environ.get(VARIABLE, "").split(",") if n.strip()]


def _shadow(directory: Path, hidden: frozenset[str], root: Path) -> Path:
    """A directory of symlinks to every entry of ``directory`` but the hidden ones."""
    farm = Path(tempfile.mkdtemp(prefix="path-", dir=root))
    for entry in directory.iterdir():
        if entry.name not in hidden:
            (farm / entry.name).symlink_to(entry)
    return farm


def hide(names: Sequence[str]) -> None:
    """Hide the named executables and Python packages from this process and the
    processes it starts (see the module docstring).  Idempotent: a worker that inherits
    a hidden ``PATH`` finds nothing left to hide on it."""
    hidden = frozenset(names)
    if not any(isinstance(f, HiddenPackages) for f in sys.meta_path):
        sys.meta_path.insert(0, HiddenPackages(sorted(hidden)))
        for module in [m for m in sys.modules if m.partition(".")[0] in hidden]:
            del sys.modules[module]
    dirs = [Path(d) for d in os.environ.get("PATH", "").split(os.pathsep) if d]
    if not any((d / name).exists() for d in dirs for name in hidden) and "_CAPVER_HIDE_ROOT" in os.environ:
        return
    root = Path(tempfile.mkdtemp(prefix="capver-hidden-tools-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    new_path = [
        str(_shadow(d, hidden, root)) if d.is_dir() and any((d / name).exists() for name in hidden) else str(d)
        for d in dirs
    ]
    os.environ["PATH"] = os.pathsep.join(new_path)
    site = root / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(_SITECUSTOMIZE, encoding="utf-8")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])])
    os.environ["_CAPVER_HIDE_ROOT"] = str(root)

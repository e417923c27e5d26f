"""capver: learn interpretable probabilistic capability models of black-box AI agents
by active query synthesis, and check them by machine.

The public API (:mod:`capver.api`) is importable from here: :func:`load_setting`,
:func:`gym_setting`, :func:`learn`, :class:`LearnResult` (``.save(dir)`` writes a run
directory) and :func:`load_run` (a run directory as a :class:`Run`).  They are loaded on
first use, so that ``import capver`` (and ``capver --help``) stays fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["LearnResult", "Run", "__version__", "gym_setting", "learn", "load_run", "load_setting"]

if TYPE_CHECKING:
    from capver.api import LearnResult, Run, gym_setting, learn, load_run, load_setting


def __getattr__(name: str) -> Any:
    if name in __all__ and name != "__version__":
        return getattr(importlib.import_module("capver.api"), name)
    raise AttributeError(f"module 'capver' has no attribute {name!r}")

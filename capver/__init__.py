"""capver: learn interpretable probabilistic capability models of black-box AI agents
by active query synthesis, and check them by machine.

The public API (:mod:`capver.api`) is importable from here: :func:`load_setting`,
:func:`gym_setting`, :func:`learn`, :class:`LearnResult` (``.save(dir)`` writes a run
directory), :class:`Verdict` (what ``result.verify`` returns; the verification
entry point itself is :func:`capver.engines.verification.verify`) and
:func:`load_run` (a run directory as a :class:`Run`); and what you need to plug in
your own agent (docs/your_agent.md): :class:`Agent`, :class:`Stop`,
:class:`Capability`, :class:`Atom`, :class:`Literal`, :class:`Predicate`,
:class:`Vocabulary` and :class:`GymSimulator`; and the abstractions verdicts may pool
under (``abstraction=`` of ``result.verify`` and :func:`learn`): :class:`Projection`
and :class:`Partition`.  They are loaded on first use, so
that ``import capver`` (and ``capver --help``) stays fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# Each public name and the module that defines it.
_HOMES = {
    "LearnResult": "capver.api",
    "Run": "capver.api",
    "Verdict": "capver.engines.verification.verdict",
    "gym_setting": "capver.api",
    "learn": "capver.api",
    "load_run": "capver.api",
    "load_setting": "capver.api",
    "Agent": "capver.agents.base",
    "Stop": "capver.agents.base",
    "Capability": "capver.core.state",
    "Atom": "capver.core.vocabulary",
    "Literal": "capver.core.vocabulary",
    "Predicate": "capver.core.vocabulary",
    "Vocabulary": "capver.core.vocabulary",
    "GymSimulator": "capver.envs.gym_adapter",
    "Partition": "capver.model.abstraction",
    "Projection": "capver.model.abstraction",
}

__all__ = [
    "Agent",
    "Atom",
    "Capability",
    "GymSimulator",
    "LearnResult",
    "Literal",
    "Partition",
    "Predicate",
    "Projection",
    "Run",
    "Stop",
    "Verdict",
    "Vocabulary",
    "__version__",
    "gym_setting",
    "learn",
    "load_run",
    "load_setting",
]

if TYPE_CHECKING:
    from capver.agents.base import Agent, Stop
    from capver.api import LearnResult, Run, gym_setting, learn, load_run, load_setting
    from capver.core.state import Capability
    from capver.core.vocabulary import Atom, Literal, Predicate, Vocabulary
    from capver.engines.verification.verdict import Verdict
    from capver.envs.gym_adapter import GymSimulator
    from capver.model.abstraction import Partition, Projection


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is not None:
        return getattr(importlib.import_module(home), name)
    raise AttributeError(f"module 'capver' has no attribute {name!r}")

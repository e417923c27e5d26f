"""The arguments that name an assessment setting (section 4.1's settings: the agent's
domain and problem, a model file, the initial state, the capability horizon Θ, the
step cap of one execution, MiniGrid's layouts and the seed).  Plain data: ``run.json``
stores them (:mod:`capver.io.run_file`) and :mod:`capver.settings` builds the setting
they name."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SettingArgs"]


@dataclass(frozen=True, slots=True)
class SettingArgs:
    """The options that name an assessment setting (``capver.settings`` builds it)."""

    domain: str = "first_responders"
    problem: str = "problem1"
    model: str | None = None
    init: str = ""
    theta: int | None = 1
    step_cap: int = 200  # simulator steps one capability execution may take
    layouts: int = 20
    seed: int = 0

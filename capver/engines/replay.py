"""Replaying a witness with the agent itself (``capver verify --replay``,
:meth:`capver.LearnResult.replay`).

A witness of a verdict is a run of h∧: a start state and the capabilities it
executes.  Replaying it executes those capabilities with the real agent in the real
simulator, from an environment state whose α is the witness's start, and counts the
runs whose symbolic trajectory reaches the goal of the property's path (for
``A [ G φ ]`` the violation ¬φ).  It checks a model's answer against the agent, not
the other way round: the tiers of a verdict never rest on it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from capver.core.properties import Globally, PathFormula, holds
from capver.core.state import Capability, State
from capver.core.vocabulary import Vocabulary
from capver.engines.execution import execute
from capver.engines.learning import Setting
from capver.engines.verification.symbolic import Witness
from capver.errors import UsageError


@dataclass(frozen=True, slots=True)
class Replay:
    """``reached`` of ``runs`` replays of ``witness`` reached the path's goal."""

    witness: Witness
    runs: int
    reached: int

    def __str__(self) -> str:
        return f"replayed on the agent: the goal was reached in {self.reached} of {self.runs} runs"


def path_goal(path: PathFormula, vocab: Vocabulary) -> Callable[[State], bool]:
    """The states a replay looks for: ¬φ for ``G φ``, the goal otherwise."""
    if isinstance(path, Globally):
        invariant = path.invariant
        return lambda s: not holds(invariant, s, vocab)
    goal = path.goal
    return lambda s: holds(goal, s, vocab)


def replay(
    setting: Setting,
    vocab: Vocabulary,
    path: PathFormula,
    witness: Witness,
    runs: int,
    rng: np.random.Generator,
    capabilities: Mapping[str, Capability],
) -> Replay:
    """Execute ``witness``'s capabilities ``runs`` times from the setting's first
    initial state whose α is the witness's start; ``capabilities`` are the run's
    (the dataset's table: the setting's and those discovered while learning)."""
    unknown = sorted(set(witness.capability_names) - set(capabilities))
    if unknown:
        raise UsageError(f"replay: the witness executes {unknown[0]!r}, which the run never declared")
    starts = [x for x in setting.initial_states if setting.alpha(x) == witness.initial]
    if not starts:
        raise UsageError(f"replay: no initial state of the setting is {vocab.format_state(witness.initial)}")
    goal = path_goal(path, vocab)
    reached = 0
    for _ in range(runs):
        x = starts[0]
        hit = goal(setting.alpha(x))
        for c in witness.capability_names:
            if hit:
                break
            ex = execute(setting.agent, setting.sim, setting.alpha, capabilities[c], x, rng, setting.budget)
            x = setting.sim.get_state()
            hit = any(goal(s) for s in ex.symbolic_trajectory)
        reached += hit
    return Replay(witness, runs, reached)

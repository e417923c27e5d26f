"""Queries ⟨x₀, π, n⟩ (section 3.2, Definition "query") and the interface every
query-synthesis method implements.

A query policy is consulted after every capability execution with the symbolic
state actually observed, so its execution adapts to outcomes (section 3.3);
``surprised`` tells it that the last execution produced a transition that was not
in D before, i.e. h∧/h∨ have changed and a plan made on the old models is stale.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from capver.core.dataset import TransitionDataset
from capver.core.state import State
from capver.engines.mcqs.focus import Focus
from capver.engines.mcqs.tilde import Uncertainty
from capver.engines.mcts import Backup, MCTSConfig
from capver.model.capability_model import CompoundModel


@dataclass(frozen=True, slots=True)
class SynthesisInput:
    """Everything a synthesizer may look at when it builds or revises a query."""

    h_and: CompoundModel
    h_or: CompoundModel
    data: TransitionDataset
    capability_names: tuple[str, ...]
    xi: float
    # The h̃-uncertainty term of the reward (``--reward tilde``; capver.engines.mcqs.tilde);
    # None: the paper's disagreement reward alone.
    uncertainty: Uncertainty | None = None
    # The property focus (capver.engines.mcqs.focus); None: the whole lattice.
    focus: Focus | None = None


class QueryPolicy(Protocol):
    """π: S → C for one query; None ends the execution."""

    def next(self, s: State, step: int, surprised: bool, current: SynthesisInput) -> str | None: ...


class QuerySynthesizer(Protocol):
    name: str

    def synthesize(self, s0: State, inp: SynthesisInput, rng: np.random.Generator) -> QueryPolicy: ...


@dataclass(frozen=True, slots=True)
class SynthesisConfig:
    """Hyper-parameters shared by the MCQS variants."""

    mcts: MCTSConfig = MCTSConfig(iterations=100, horizon=10, exploration=1.0, backup=Backup.MAX, discount=0.95)
    random_length: int = 30  # Random Query baseline: 30-capability sequences
    # MCQS-E values a new leaf by its own δ_TV instead of a random rollout below it
    # (see capver.engines.mcqs.mcqs_e for why and what it measured).
    exact_rollouts: bool = False
    # MCQS-E ends a search once the root is expanded and worth 1: δ_TV ≤ 1 and γ ≤ 1,
    # so no query can be worth more (the early end of a search; see capver.engines.mcqs.mcqs_e for
    # what it measured).  False runs every iteration, as before.
    stop_at_full_disagreement: bool = True


class SequencePolicy:
    """A fixed capability sequence (the Random Query baseline)."""

    def __init__(self, seq: Sequence[str]) -> None:
        self.seq = tuple(seq)

    def next(self, s: State, step: int, surprised: bool, current: SynthesisInput) -> str | None:
        return self.seq[step] if step < len(self.seq) else None

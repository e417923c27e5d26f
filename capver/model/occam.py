"""The Occam model h̃ as data (section 3.1: h∧ ⪯ h̃ ⪯ h∨): the compound model and,
per capability, which minimiser chose its conditions and why.  The minimisers and
the k-fold choice that build it are :mod:`capver.engines.occam`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from capver.model.capability_model import CompoundModel


@dataclass(frozen=True, slots=True)
class Choice:
    """How one capability's conditions were chosen: the minimiser kept, and per
    minimiser tried the held-out accuracy (None: fewer than two blocks, nothing to
    predict) and the literals of its conditions on all the data."""

    capability: str
    minimiser: str
    accuracy: Mapping[str, float | None]
    literals: Mapping[str, int]


@dataclass(frozen=True, slots=True)
class OccamModel:
    """h̃ and the choices that made it."""

    model: CompoundModel
    choices: Mapping[str, Choice]

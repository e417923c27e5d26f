"""The Random Query ablation of section 4.2: π = (c₁, …, c₃₀), c_i ~ Uniform(C),
with every other component of the loop unchanged."""

from __future__ import annotations

import numpy as np

from capver.core.state import State
from capver.engines.mcqs.base import SequencePolicy, SynthesisConfig, SynthesisInput


class RandomQuery:
    name = "random"

    def __init__(self, config: SynthesisConfig = SynthesisConfig()) -> None:
        self.config = config

    def synthesize(self, s0: State, inp: SynthesisInput, rng: np.random.Generator) -> SequencePolicy:
        caps = inp.capability_names
        idx = rng.integers(len(caps), size=self.config.random_length)
        return SequencePolicy([caps[int(i)] for i in idx])

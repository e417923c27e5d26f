"""The infinite empty grid of section 4 of the introspection paper.

The state is the player's position (x, y) ∈ ℤ²; four actions add the unit vectors
UP (0, 1), DOWN (0, −1), LEFT (−1, 0), RIGHT (1, 0).  Every step costs −1, except the
step that arrives at the origin, which pays ``goal_reward``.

Readings we chose: the text says "episodes terminate after a fixed number of steps"
and also speaks of an "optimal d-step solution"; we end the episode successfully on
arrival at the origin (otherwise the optimum would be to oscillate through the
origin) and unsuccessfully after the horizon.  The horizon is the paper's
H = 2(d − 1), raised to d when that is shorter (d = 1), so that the origin is always
reachable.  ``goal_reward`` defaults to H, so reaching the origin always beats not
reaching it.

The milestone g = (0, 0) and the Manhattan-distance heuristic are the hand-derived
introspection of section 4 (not computed by state mutation).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from capver.errors import IntrospectionError
from capver.introspection.search.problem import REWARD, Milestones

Pos = tuple[int, int]

MOVES: tuple[tuple[str, Pos], ...] = (("UP", (0, 1)), ("DOWN", (0, -1)), ("LEFT", (-1, 0)), ("RIGHT", (1, 0)))
ORIGIN: Pos = (0, 0)


@dataclass(frozen=True, slots=True)
class OriginGoal:
    """The milestone (0, 0); distance = Manhattan (L1) distance."""

    def distance(self, s: Pos) -> int:
        return abs(s[0]) + abs(s[1])

    def describe(self) -> str:
        return "(0, 0)"


@dataclass(frozen=True, slots=True)
class GridProblem:
    start: Pos
    horizon: int
    goal_reward: float
    step_penalty: float = -1.0
    name: str = "grid"

    @property
    def initial(self) -> Pos:
        return self.start

    @property
    def distance(self) -> int:
        """d = |x₀| + |y₀|."""
        return abs(self.start[0]) + abs(self.start[1])

    def actions(self, s: Pos) -> Sequence[int]:
        return (0, 1, 2, 3)

    def successor(self, s: Pos, a: int) -> Pos:
        dx, dy = MOVES[a][1]
        return (s[0] + dx, s[1] + dy)

    def reward(self, s: Pos, a: int, s_next: Pos) -> float:
        return self.goal_reward if s_next == ORIGIN else self.step_penalty

    def termination(self, s: Pos, a: int, s_next: Pos) -> int:
        return 1 if s_next == ORIGIN else 0

    def format_action(self, a: int) -> str:
        return MOVES[a][0]

    def milestones(self, s: Pos) -> Milestones[Pos] | None:
        return Milestones(REWARD, self.goal_reward, (OriginGoal(),))

    # -- score normalisation of section 4 ------------------------------------------
    @property
    def optimal_return(self) -> float:
        d = self.distance
        return self.step_penalty * (d - 1) + self.goal_reward

    @property
    def worst_return(self) -> float:
        return self.step_penalty * self.horizon

    def normalized_score(self, ret: float) -> float:
        """0 = worst possible episode, 1 = an optimal plan."""
        return (ret - self.worst_return) / (self.optimal_return - self.worst_return)


def generate(size: int, rng: np.random.Generator) -> GridProblem:
    """A start position at Manhattan distance ``size`` from the origin, uniform over
    the 4·size such positions."""
    if size < 1:
        raise IntrospectionError(f"grid: the distance d must be at least 1, got {size}")
    k = int(rng.integers(4 * size))
    quadrant, step = divmod(k, size)
    # Walk the diamond |x| + |y| = d: each quadrant contributes d distinct points.
    x = size - step
    y = step
    sx, sy = ((1, 1), (-1, 1), (-1, -1), (1, -1))[quadrant]
    pos = (sx * x, sy * y) if quadrant % 2 == 0 else (sx * y, sy * x)
    horizon = max(2 * (size - 1), size)
    return GridProblem(pos, horizon, float(horizon))

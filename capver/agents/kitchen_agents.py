"""A planning-based cooperative chef for the Overcooked-like kitchen (the paper's
Overcooked agent; :mod:`capver.envs.kitchen`).

The assessed agent is chef 0 (``me``); chef 1 is the kitchen's scripted teammate.
The agent is asked for one kitchen sub-task at a time - the capabilities
:data:`SUBTASKS`, named by the sub-task, each with the intent (over
:func:`~capver.envs.kitchen.kitchen_vocabulary`) that says it is done:

=====================  =========================  ====================================
capability             intent                     what the chef does
=====================  =========================  ====================================
``pick_onion``         ``holding(me,onion)``      takes an onion from the nearest
                                                  dispenser or counter
``pick_dish``          ``holding(me,dish)``       the same for a dish
``put_onion_in_pot``   ``~holding(me,onion)``     fetches an onion if empty-handed,
                                                  puts it into the nearest pot that
                                                  takes one
``plate_soup``         ``holding(me,soup)``       fetches a dish if needed, waits at a
                                                  cooking pot, takes the soup
``deliver_soup``       ``~holding(me,soup)``      takes a soup from a counter if its
                                                  hands are empty, brings it to the
                                                  serving window
=====================  =========================  ====================================

Each step it re-plans by breadth-first search over the floor with the teammate's
cell blocked (:func:`~capver.envs.kitchen.first_moves`), choosing among equally
short first moves with the execution's generator, so its routes - and, through the
teammate, its outcomes - vary between executions.  Holding something the sub-task
has no use for, it first puts it on the nearest free counter - a side effect no
intent asks for.  It stops ("no pot takes an onion", "no soup cooking", "no soup to
deliver") when the sub-task cannot start from the state it is in, and gives up after ``patience`` steps without a route
(the teammate in the way).  It reads only simulator snapshots, never α.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from capver.agents.base import Stop
from capver.core.state import Capability
from capver.core.vocabulary import Atom, Literal
from capver.envs.base import Action, Simulator
from capver.envs.kitchen import (
    STAY,
    KitchenLayout,
    KitchenState,
    first_moves,
    free_counters,
    item_sources,
)
from capver.errors import SimulatorError

SUBTASKS: Mapping[str, tuple[Literal, ...]] = {
    "pick_onion": (Literal(Atom("holding", ("me", "onion"))),),
    "pick_dish": (Literal(Atom("holding", ("me", "dish"))),),
    "put_onion_in_pot": (Literal(Atom("holding", ("me", "onion")), False),),
    "plate_soup": (Literal(Atom("holding", ("me", "soup"))),),
    "deliver_soup": (Literal(Atom("holding", ("me", "soup")), False),),
}


def kitchen_capabilities() -> tuple[Capability, ...]:
    """The sub-tasks as capabilities, in :data:`SUBTASKS` order."""
    return tuple(Capability(name, intent) for name, intent in SUBTASKS.items())


class PlanningChef:
    """Chef 0 pursuing one sub-task by breadth-first search (module docstring)."""

    name = "kitchen-planner"

    def __init__(self, layout: KitchenLayout, cook_time: int, patience: int = 12) -> None:
        self.layout = layout
        self.cook_time = cook_time
        self.patience = patience
        self._task: str | None = None
        self._why = "begin() was not called"
        self._carried = False  # held the sub-task's item at some point of this execution
        self._waited = 0
        # Its cells before the last two moves, to notice that it makes no progress.
        self._recent: tuple[tuple[int, int], ...] = ()

    def begin(self, capability: Capability, sim: Simulator[Any], rng: np.random.Generator) -> None:
        known = capability.name in SUBTASKS
        self._task = capability.name if known else None
        self._why = "" if known else f"not a kitchen sub-task: {capability.name!r}; expected one of {list(SUBTASKS)}"
        self._carried = False
        self._waited = 0
        self._recent = ()

    def act(self, sim: Simulator[Any], rng: np.random.Generator) -> Action | Stop:
        if self._task is None:
            return Stop(self._why)
        x = sim.get_state()
        if not isinstance(x, KitchenState):
            raise SimulatorError(f"PlanningChef: expected a kitchen simulator, got a {type(x).__name__} state")
        decision = _POLICIES[self._task](self, x)
        if isinstance(decision, Stop):
            return decision
        return self._go(x, decision, rng)

    # -- sub-tasks: each returns the tiles to work at, or Stop -------------------------------
    def _put_down(self, x: KitchenState) -> Sequence[tuple[int, int]] | Stop:
        """Free the hands on the nearest free counter (a side effect no intent asks for)."""
        return free_counters(self.layout, x) or Stop("hands full and no free counter")

    def _pick(self, x: KitchenState, item: str) -> Sequence[tuple[int, int]] | Stop:
        held = x.chefs[0].held
        if held == item:
            return Stop("done")
        if held is not None:
            return self._put_down(x)
        return item_sources(self.layout, x, item)

    def _pick_onion(self, x: KitchenState) -> Sequence[tuple[int, int]] | Stop:
        return self._pick(x, "onion")

    def _pick_dish(self, x: KitchenState) -> Sequence[tuple[int, int]] | Stop:
        return self._pick(x, "dish")

    def _put_onion(self, x: KitchenState) -> Sequence[tuple[int, int]] | Stop:
        held = x.chefs[0].held
        if held == "onion":
            self._carried = True
        elif self._carried and held is None:
            return Stop("done")  # it interacts only with pots while carrying the onion
        pots = [p for i, p in enumerate(self.layout.pots) if x.pot_takes_onion(i)]
        if not pots:
            return Stop("no pot takes an onion")
        if held not in (None, "onion"):
            return self._put_down(x)
        return pots if held == "onion" else item_sources(self.layout, x, "onion")

    def _plate(self, x: KitchenState) -> Sequence[tuple[int, int]] | Stop:
        held = x.chefs[0].held
        if held == "soup":
            return Stop("done")
        ready = [p for i, p in enumerate(self.layout.pots) if x.pot_ready(i, self.cook_time)]
        cooking = [self.layout.pots[i] for i, (_, c) in enumerate(x.pots) if 0 <= c < self.cook_time]
        if not ready and not cooking:
            return Stop("no soup cooking")
        if held is None:
            return item_sources(self.layout, x, "dish")
        if held != "dish":
            return self._put_down(x)
        # Waiting at a cooking pot: interacting there with a dish does nothing until it is ready.
        return ready or cooking

    def _deliver(self, x: KitchenState) -> Sequence[tuple[int, int]] | Stop:
        held = x.chefs[0].held
        if held == "soup":
            self._carried = True
            return self.layout.serving
        if self._carried and held is None:
            return Stop("done")
        if held is None and item_sources(self.layout, x, "soup"):
            return item_sources(self.layout, x, "soup")
        return Stop("no soup to deliver")

    def _go(self, x: KitchenState, targets: Sequence[tuple[int, int]], rng: np.random.Generator) -> Action | Stop:
        _, moves = first_moves(self.layout, x, 0, targets)
        if not moves:
            self._waited += 1
            if self._waited > self.patience:
                return Stop("no route: the teammate is in the way")
            return STAY
        self._waited = 0
        pos = x.chefs[0].pos
        stuck = pos in self._recent
        self._recent = (*self._recent, pos)[-2:]
        if stuck and rng.random() < 0.5:
            # Back where it was one or two steps ago: a move collided with the teammate's,
            # or both chefs dodged each other in step.  The teammate is deterministic and
            # would repeat its moves, so waiting half of the time breaks the dance.
            self._recent = ()
            return STAY
        return moves[int(rng.integers(len(moves)))] if len(moves) > 1 else moves[0]


_POLICIES = {
    "pick_onion": PlanningChef._pick_onion,
    "pick_dish": PlanningChef._pick_dish,
    "put_onion_in_pot": PlanningChef._put_onion,
    "plate_soup": PlanningChef._plate,
    "deliver_soup": PlanningChef._deliver,
}

"""A DoorKey-like MiniGrid world split into four quadrant rooms (section 4.2, MiniGrid).

The grid (``minigrid`` 3.x) is divided by one vertical and one horizontal wall into
the rooms ``nw``, ``ne``, ``sw`` and ``se``; each of the four wall segments holds one
door (``door_n`` between nw|ne, ``door_s`` between sw|se, ``door_w`` between nw/sw,
``door_e`` between ne/se) that is open, closed or locked.  A single yellow key opens
the (yellow) locked doors.  There is no goal square: agents are given intents.

This module provides

* :class:`Layout` and :func:`generate_layout` - random initial configurations drawn
  from a :class:`LayoutDistribution` with a passed-in ``numpy.random.Generator``
  (the skewed distributions are how section 4.2's "superstitious" RL agent is made);
* :class:`QuadrantDoorKeyEnv` - the gymnasium environment, with its own compact
  state API (``get_state``/``set_state`` on :class:`MiniGridState`) so that the
  gymnasium adapter never has to deep-copy a grid, and a cheap fully observed
  observation (updated incrementally instead of re-rendering the agent's view);
* :func:`minigrid_vocabulary` and :class:`MiniGridRepresentation` - the
  representation function α : X → S of section 2 over typed objects
  (agent, key, doors, rooms) and the atoms ``holding(key)``, ``open(d)``,
  ``closed(d)``, ``locked(d)``, ``in_room(agent, r)`` and ``in_room(key, r)``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces
from minigrid.core.actions import Actions
from minigrid.core.constants import COLOR_TO_IDX, OBJECT_TO_IDX
from minigrid.core.grid import Grid
from minigrid.core.mission import MissionSpace
from minigrid.core.world_object import Door, Key
from minigrid.minigrid_env import MiniGridEnv

from capver.core.state import State
from capver.core.vocabulary import Atom, Predicate, Vocabulary
from capver.envs.gym_adapter import DeepcopySnapshot, GymSimulator, StateApiCodec
from capver.errors import SimulatorError

ROOMS: tuple[str, ...] = ("nw", "ne", "sw", "se")
DOORS: tuple[str, ...] = ("door_n", "door_s", "door_w", "door_e")
DOOR_ROOMS: Mapping[str, tuple[str, str]] = {
    "door_n": ("nw", "ne"),
    "door_s": ("sw", "se"),
    "door_w": ("nw", "sw"),
    "door_e": ("ne", "se"),
}
DOOR_STATES: tuple[str, ...] = ("open", "closed", "locked")
KEY_COLOR = "yellow"
# Unlocked doors get distinct colours so that renderings tell them apart; a locked
# door must share the key's colour or MiniGrid would never let the key open it.
_DOOR_COLORS: Mapping[str, str] = {
    "door_n": "red",
    "door_s": "green",
    "door_w": "blue",
    "door_e": "purple",
}

# The primitive actions capver agents use; ``done`` is a no-op in this world.
PRIMITIVE_ACTIONS: tuple[int, ...] = (
    int(Actions.left),
    int(Actions.right),
    int(Actions.forward),
    int(Actions.pickup),
    int(Actions.drop),
    int(Actions.toggle),
)

Cell = tuple[int, int]


# -- geometry ---------------------------------------------------------------------


def grid_size(room_size: int) -> int:
    """Width (= height) of the grid: two rooms, two outer walls, one middle wall."""
    return 2 * room_size + 3


def room_bounds(room: str, room_size: int) -> tuple[int, int, int, int]:
    """Inclusive (x0, y0, x1, y1) of a room's interior."""
    m = room_size + 1
    lo_x, hi_x = (1, m - 1) if room[1] == "w" else (m + 1, 2 * m - 1)
    lo_y, hi_y = (1, m - 1) if room[0] == "n" else (m + 1, 2 * m - 1)
    return lo_x, lo_y, hi_x, hi_y


def room_cells(room: str, room_size: int) -> list[Cell]:
    x0, y0, x1, y1 = room_bounds(room, room_size)
    return [(x, y) for y in range(y0, y1 + 1) for x in range(x0, x1 + 1)]


def room_of(cell: Cell, room_size: int) -> str | None:
    """The room whose interior contains ``cell``; None for walls and doorways."""
    x, y = cell
    m = room_size + 1
    if not (0 < x < 2 * m and 0 < y < 2 * m) or x == m or y == m:
        return None
    return ("n" if y < m else "s") + ("w" if x < m else "e")


def door_slots(door: str, room_size: int) -> list[Cell]:
    """Cells of the wall segment that may hold ``door``."""
    m = room_size + 1
    inner = range(1, m) if door in ("door_n", "door_w") else range(m + 1, 2 * m)
    if door in ("door_n", "door_s"):
        return [(m, y) for y in inner]
    return [(x, m) for x in inner]


def reachable_rooms(start: str, door_states: Mapping[str, str], passable: frozenset[str]) -> set[str]:
    """Rooms connected to ``start`` through doors whose state is in ``passable``."""
    seen = {start}
    frontier = [start]
    while frontier:
        room = frontier.pop()
        for door, (a, b) in DOOR_ROOMS.items():
            if door_states[door] not in passable:
                continue
            other = b if room == a else a if room == b else None
            if other is not None and other not in seen:
                seen.add(other)
                frontier.append(other)
    return seen


# -- layouts ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Layout:
    """An initial configuration; doors and door states are in :data:`DOORS` order."""

    room_size: int
    door_cells: tuple[Cell, ...]
    door_states: tuple[str, ...]
    key_pos: Cell
    agent_pos: Cell
    agent_dir: int

    def __post_init__(self) -> None:
        if self.room_size < 2:
            raise SimulatorError(f"Layout.room_size: expected an integer >= 2, got {self.room_size}")
        if len(self.door_cells) != len(DOORS) or len(self.door_states) != len(DOORS):
            raise SimulatorError(f"Layout: expected one cell and one state per door {DOORS}")
        for door, cell, st in zip(DOORS, self.door_cells, self.door_states):
            if cell not in door_slots(door, self.room_size):
                raise SimulatorError(f"Layout: {door} at {cell} is not on its wall segment")
            if st not in DOOR_STATES:
                raise SimulatorError(f"Layout: {door} state {st!r}, expected one of {DOOR_STATES}")
        if room_of(self.key_pos, self.room_size) is None:
            raise SimulatorError(f"Layout.key_pos {self.key_pos}: expected a cell inside a room")
        if room_of(self.agent_pos, self.room_size) is None or self.agent_pos == self.key_pos:
            raise SimulatorError(f"Layout.agent_pos {self.agent_pos}: expected a free cell inside a room")
        if self.agent_dir not in range(4):
            raise SimulatorError(f"Layout.agent_dir: expected 0..3, got {self.agent_dir}")

    @property
    def key_room(self) -> str:
        room = room_of(self.key_pos, self.room_size)
        assert room is not None  # checked in __post_init__
        return room

    @property
    def agent_room(self) -> str:
        room = room_of(self.agent_pos, self.room_size)
        assert room is not None  # checked in __post_init__
        return room

    def door_state(self, door: str) -> str:
        return self.door_states[DOORS.index(door)]


_Probs = tuple[float, float, float]


def _check_probs(name: str, probs: Sequence[float]) -> None:
    if len(probs) != 3 or any(p < 0 for p in probs) or abs(sum(probs) - 1.0) > 1e-9:
        raise SimulatorError(
            f"LayoutDistribution.{name}: expected three non-negative probabilities "
            f"(open, closed, locked) summing to 1, got {tuple(probs)}"
        )


@dataclass(frozen=True, slots=True)
class LayoutDistribution:
    """How :func:`generate_layout` draws layouts.

    ``key_rooms`` - rooms the key may be in (uniformly).  ``p_agent_in_key_room`` -
    probability that the agent starts in the key's room (otherwise in one of the other
    three, uniformly); None means every room uniformly.  ``key_room_doors`` /
    ``other_doors`` - (open, closed, locked) probabilities for the two doors of the
    key's room and for the other two.  ``require_key_reachable`` - redraw until the
    agent can reach the key without passing a locked door.
    """

    key_rooms: tuple[str, ...] = ROOMS
    p_agent_in_key_room: float | None = None
    key_room_doors: _Probs = (1 / 3, 1 / 3, 1 / 3)
    other_doors: _Probs = (1 / 3, 1 / 3, 1 / 3)
    require_key_reachable: bool = False

    def __post_init__(self) -> None:
        if not self.key_rooms or any(r not in ROOMS for r in self.key_rooms):
            raise SimulatorError(
                f"LayoutDistribution.key_rooms: expected a non-empty subset of {ROOMS}, got {self.key_rooms}"
            )
        p = self.p_agent_in_key_room
        if p is not None and not 0.0 <= p <= 1.0:
            raise SimulatorError(f"LayoutDistribution.p_agent_in_key_room: expected 0..1, got {p}")
        _check_probs("key_room_doors", self.key_room_doors)
        _check_probs("other_doors", self.other_doors)


UNIFORM_LAYOUTS = LayoutDistribution()
"""Every key room, agent room and door state equally likely."""

TRAINING_LAYOUTS = LayoutDistribution(
    key_rooms=("nw", "sw"),
    p_agent_in_key_room=0.1,
    key_room_doors=(0.1, 0.75, 0.15),
    other_doors=(0.8, 0.2, 0.0),
    require_key_reachable=True,
)
"""The skewed distribution the tabular RL agent is trained on: the key is only ever
in nw or sw, and is usually behind a closed door of its room (section 4.2's spurious
correlation)."""


def generate_layout(
    rng: np.random.Generator,
    distribution: LayoutDistribution = UNIFORM_LAYOUTS,
    room_size: int = 3,
    max_tries: int = 1000,
) -> Layout:
    """Draw a layout; every random choice comes from ``rng``."""
    if room_size < 2:
        raise SimulatorError(f"argument 'room_size': expected an integer >= 2, got {room_size}")
    for _ in range(max_tries):
        layout = _draw_layout(rng, distribution, room_size)
        if not distribution.require_key_reachable or layout.key_room in reachable_rooms(
            layout.agent_room, dict(zip(DOORS, layout.door_states)), frozenset({"open", "closed"})
        ):
            return layout
    raise SimulatorError(f"generate_layout: no layout with a reachable key in {max_tries} draws from {distribution}")


def _draw_layout(rng: np.random.Generator, dist: LayoutDistribution, room_size: int) -> Layout:
    doors = []
    for door in DOORS:
        slots = door_slots(door, room_size)
        doors.append(slots[int(rng.integers(len(slots)))])
    key_room = dist.key_rooms[int(rng.integers(len(dist.key_rooms)))]
    if dist.p_agent_in_key_room is None:
        agent_room = ROOMS[int(rng.integers(len(ROOMS)))]
    elif rng.random() < dist.p_agent_in_key_room:
        agent_room = key_room
    else:
        others = [r for r in ROOMS if r != key_room]
        agent_room = others[int(rng.integers(len(others)))]
    states = []
    for door in DOORS:
        probs = dist.key_room_doors if key_room in DOOR_ROOMS[door] else dist.other_doors
        u = rng.random()
        states.append("open" if u < probs[0] else "closed" if u < probs[0] + probs[1] else "locked")
    key_cells = room_cells(key_room, room_size)
    key_pos = key_cells[int(rng.integers(len(key_cells)))]
    agent_cells = [c for c in room_cells(agent_room, room_size) if c != key_pos]
    agent_pos = agent_cells[int(rng.integers(len(agent_cells)))]
    return Layout(room_size, tuple(doors), tuple(states), key_pos, agent_pos, int(rng.integers(4)))


# -- environment state -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MiniGridState:
    """A compact, hashable snapshot x ∈ X: the layout (walls, door cells) plus
    everything that steps change.  ``key_pos`` is None while the key is carried.
    The environment's step counter is deliberately not part of the state."""

    layout: Layout
    agent_pos: Cell
    agent_dir: int
    key_pos: Cell | None
    door_open: tuple[bool, ...]
    door_locked: tuple[bool, ...]

    @property
    def holding_key(self) -> bool:
        return self.key_pos is None

    def door_state(self, i: int) -> str:
        if self.door_open[i]:
            return "open"
        return "locked" if self.door_locked[i] else "closed"

    @staticmethod
    def initial(layout: Layout) -> MiniGridState:
        return MiniGridState(
            layout,
            layout.agent_pos,
            layout.agent_dir,
            layout.key_pos,
            tuple(s == "open" for s in layout.door_states),
            tuple(s == "locked" for s in layout.door_states),
        )


class QuadrantDoorKeyEnv(MiniGridEnv):
    """Four rooms, four doors, one key (see the module docstring).

    ``reset(seed=..., options={"layout": layout})`` starts from a given layout; without
    one a layout is drawn from ``distribution`` with the environment's seeded
    generator.  Observations are the fully observed grid encoding (as MiniGrid's
    ``FullyObsWrapper`` produces it), maintained cell by cell.
    """

    def __init__(
        self,
        room_size: int = 3,
        distribution: LayoutDistribution = UNIFORM_LAYOUTS,
        max_steps: int = 1 << 30,
        **kwargs: Any,
    ) -> None:
        if room_size < 2:
            raise SimulatorError(f"argument 'room_size': expected an integer >= 2, got {room_size}")
        self.room_size = room_size
        self.distribution = distribution
        self._pending: Layout | None = None
        self._layout: Layout | None = None
        self._doors: list[Door] = []
        self._key = Key(KEY_COLOR)
        size = grid_size(room_size)
        mission_space = MissionSpace(mission_func=_mission)
        super().__init__(mission_space=mission_space, grid_size=size, max_steps=max_steps, **kwargs)
        self.observation_space = spaces.Dict(
            {
                "image": spaces.Box(0, 255, (size, size, 3), dtype=np.uint8),
                "direction": spaces.Discrete(4),
                "mission": mission_space,
            }
        )
        # Walls everywhere except room interiors: the part of the encoding that no
        # layout or step changes, so a full re-encode only adds doors, key and agent.
        self._base_image = np.zeros((size, size, 3), dtype=np.uint8)
        self._base_image[:, :] = (OBJECT_TO_IDX["wall"], COLOR_TO_IDX["grey"], 0)
        for room in ROOMS:
            for x, y in room_cells(room, room_size):
                self._base_image[x, y] = (OBJECT_TO_IDX["empty"], 0, 0)
        self._image = self._base_image.copy()
        self._dirty: list[Cell] | None = None  # None: re-encode the whole grid

    # -- layout ---------------------------------------------------------------------
    @property
    def layout(self) -> Layout:
        if self._layout is None:
            raise SimulatorError("QuadrantDoorKeyEnv: call reset() before using the environment")
        return self._layout

    # minigrid annotates MiniGridEnv.reset and .step with gymnasium's ObsType, but
    # MiniGridEnv subclasses the unparameterised gym.Env, so there ObsType is a free
    # type variable: the signatures claim to return whatever observation type the
    # caller wants, which no override returning an actual observation can match.
    def reset(  # type: ignore[override]
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        layout = (options or {}).get("layout")
        if layout is not None and not isinstance(layout, Layout):
            raise SimulatorError(f"reset option 'layout': expected a Layout, got {type(layout).__name__}")
        if layout is not None and layout.room_size != self.room_size:
            raise SimulatorError(
                f"reset option 'layout': room_size {layout.room_size} != environment room_size {self.room_size}"
            )
        self._pending = layout
        return super().reset(seed=seed)

    def _gen_grid(self, width: int, height: int) -> None:
        layout = self._pending or generate_layout(self.np_random, self.distribution, self.room_size)
        self._pending = None
        self._build(layout)
        self.mission = _mission()

    def _build(self, layout: Layout) -> None:
        size = grid_size(layout.room_size)
        m = layout.room_size + 1
        grid = Grid(size, size)
        grid.wall_rect(0, 0, size, size)
        grid.vert_wall(m, 0)
        grid.horz_wall(0, m)
        self._doors = []
        for door, cell, st in zip(DOORS, layout.door_cells, layout.door_states):
            color = KEY_COLOR if st == "locked" else _DOOR_COLORS[door]
            obj = Door(color, is_open=st == "open", is_locked=st == "locked")
            grid.set(cell[0], cell[1], obj)
            obj.init_pos = obj.cur_pos = cell
            self._doors.append(obj)
        self.grid = grid
        self._layout = layout
        self._place_key(layout.key_pos)
        self.agent_pos = layout.agent_pos
        self.agent_dir = layout.agent_dir
        self._dirty = None

    def _place_key(self, pos: Cell | None) -> None:
        if self.carrying is not None:
            self.carrying = None
        else:
            cur = self._key.cur_pos
            if cur is not None and self.grid.get(int(cur[0]), int(cur[1])) is self._key:
                self.grid.set(int(cur[0]), int(cur[1]), None)
        if pos is None:
            # minigrid declares ``carrying`` by ``self.carrying = None`` (inferred type:
            # None) and WorldObj.cur_pos as ``tuple[int, int] | None``, yet its own step
            # stores the picked-up object and marks it with np.array([-1, -1]) exactly so.
            self.carrying = self._key  # type: ignore[assignment]
            self._key.cur_pos = np.array([-1, -1])  # type: ignore[assignment]
        else:
            self.grid.set(pos[0], pos[1], self._key)
            self._key.cur_pos = pos

    # -- state API (used by GymSimulator through StateApiCodec) -------------------------
    def get_state(self) -> MiniGridState:
        pos = self.agent_pos
        key = None if self.carrying is not None else self._key.cur_pos
        return MiniGridState(
            self.layout,
            (int(pos[0]), int(pos[1])),
            int(self.agent_dir),
            None if key is None else (int(key[0]), int(key[1])),
            tuple(d.is_open for d in self._doors),
            tuple(d.is_locked for d in self._doors),
        )

    def set_state(self, x: MiniGridState) -> None:
        if not isinstance(x, MiniGridState):
            raise SimulatorError(f"set_state: expected a MiniGridState, got {type(x).__name__}")
        if x.layout is not self._layout and x.layout != self._layout:
            if x.layout.room_size != self.room_size:
                raise SimulatorError(
                    f"set_state: snapshot room_size {x.layout.room_size} != environment room_size {self.room_size}"
                )
            self._build(x.layout)
        self._place_key(x.key_pos)
        for door, is_open, is_locked in zip(self._doors, x.door_open, x.door_locked):
            door.is_open = is_open
            door.is_locked = is_locked
        self.agent_pos = x.agent_pos
        self.agent_dir = x.agent_dir
        self._dirty = None

    # -- cheap fully observed observation --------------------------------------------------
    # (the override is ignored for the reason given at reset)
    def step(self, action: Any) -> tuple[dict[str, Any], Any, bool, bool, dict[str, Any]]:  # type: ignore[override]
        if self._dirty is not None:
            # Only the agent's cell and the cell it faces can change in one step.
            pos, front = self.agent_pos, self.front_pos
            self._dirty = [(int(pos[0]), int(pos[1])), (int(front[0]), int(front[1]))]
        return super().step(action)

    def gen_obs(self) -> dict[str, Any]:
        if self._dirty is None:
            self._image = self._base_image.copy()
            for door in self._doors:
                door_pos = door.cur_pos
                assert door_pos is not None  # _build placed every door
                self._image[door_pos[0], door_pos[1]] = door.encode()
            if self.carrying is None:
                key_pos = self._key.cur_pos
                assert key_pos is not None  # not carried: on the grid
                self._image[int(key_pos[0]), int(key_pos[1])] = self._key.encode()
        else:
            for x, y in self._dirty:
                obj = self.grid.get(x, y)
                self._image[x, y] = obj.encode() if obj is not None else (OBJECT_TO_IDX["empty"], 0, 0)
        ax, ay = int(self.agent_pos[0]), int(self.agent_pos[1])
        self._image[ax, ay] = (OBJECT_TO_IDX["agent"], COLOR_TO_IDX["red"], self.agent_dir)
        self._dirty = []
        return {"image": self._image.copy(), "direction": self.agent_dir, "mission": self.mission}


def _mission() -> str:
    return "achieve the instructed intent"


def world_view(x: MiniGridState | DeepcopySnapshot) -> MiniGridState:
    """The compact state behind a snapshot of either codec, so that α and the agents
    also work on a deep-copy simulator (used to compare the two)."""
    if isinstance(x, MiniGridState):
        return x
    if isinstance(x, DeepcopySnapshot) and isinstance(x.env.unwrapped, QuadrantDoorKeyEnv):
        return x.env.unwrapped.get_state()
    raise SimulatorError(f"expected a snapshot of a QuadrantDoorKeyEnv, got {type(x).__name__}")


def minigrid_simulator(
    room_size: int = 3, distribution: LayoutDistribution = UNIFORM_LAYOUTS
) -> GymSimulator[MiniGridState]:
    """A :class:`GymSimulator` over :class:`QuadrantDoorKeyEnv` with compact snapshots.
    ``reset(seed)`` draws a layout from ``distribution``; :meth:`start` begins from a
    given layout."""
    env = QuadrantDoorKeyEnv(room_size=room_size, distribution=distribution)
    sim: GymSimulator[MiniGridState] = GymSimulator(env, StateApiCodec(), actions=PRIMITIVE_ACTIONS)
    sim.reset(seed=0)
    return sim


def start_state(layout: Layout) -> MiniGridState:
    """The snapshot of ``layout``'s initial configuration (for ``execute(x0=...)``)."""
    return MiniGridState.initial(layout)


# -- representation function α -----------------------------------------------------------


def minigrid_vocabulary() -> Vocabulary:
    """Typed objects agent, key, door_* and rooms; 21 ground atoms."""
    types = {"locatable": "object", "agent": "locatable", "key": "locatable", "door": "object", "room": "object"}
    objects = {"agent": "agent", "key": "key", **dict.fromkeys(DOORS, "door"), **dict.fromkeys(ROOMS, "room")}
    predicates = [
        Predicate("holding", ("key",)),
        Predicate("open", ("door",)),
        Predicate("closed", ("door",)),
        Predicate("locked", ("door",)),
        Predicate("in_room", ("locatable", "room")),
    ]
    return Vocabulary.build(predicates, objects=objects, types=types)


class MiniGridRepresentation:
    """α : X → S for :class:`MiniGridState` (a :class:`~capver.envs.base.Representation`).

    ``closed(d)`` means closed and unlocked, so exactly one of open/closed/locked holds
    per door; an agent standing in a doorway is in no room; a carried key is in no room.
    """

    def __init__(self, vocabulary: Vocabulary | None = None) -> None:
        vocab = vocabulary if vocabulary is not None else minigrid_vocabulary()
        self._vocab = vocab
        bit = vocab.index
        self._holding = 1 << bit(Atom("holding", ("key",)))
        self._door_bits = [{st: 1 << bit(Atom(st, (d,))) for st in DOOR_STATES} for d in DOORS]
        self._agent_in = {r: 1 << bit(Atom("in_room", ("agent", r))) for r in ROOMS}
        self._key_in = {r: 1 << bit(Atom("in_room", ("key", r))) for r in ROOMS}

    @property
    def vocabulary(self) -> Vocabulary:
        return self._vocab

    def __call__(self, x: MiniGridState | DeepcopySnapshot) -> State:
        x = world_view(x)
        size = x.layout.room_size
        s = 0
        for i, bits in enumerate(self._door_bits):
            s |= bits[x.door_state(i)]
        room = room_of(x.agent_pos, size)
        if room is not None:
            s |= self._agent_in[room]
        if x.key_pos is None:
            s |= self._holding
        else:
            key_room = room_of(x.key_pos, size)
            if key_room is not None:
                s |= self._key_in[key_room]
        return s


def iter_layouts(
    rng: np.random.Generator, n: int, distribution: LayoutDistribution = UNIFORM_LAYOUTS, room_size: int = 3
) -> Iterator[Layout]:
    """``n`` layouts drawn one after another from ``rng``."""
    for _ in range(n):
        yield generate_layout(rng, distribution, room_size)

"""A compact Overcooked-like kitchen behind the gymnasium API (for the
paper's HDDLGym Overcooked agent).

Why not an existing package (measured on Python 3.11, numpy 2.4, gymnasium 1.4):
``overcooked-ai`` 1.1.0 depends on the unmaintained ``gym`` 0.26, omits its ``scipy``
dependency, and its environment module fails at import on numpy 2 (``np.Inf``);
``overcooked`` 0.2.1 installs, but its environment is not a gymnasium one, its
``set_state`` raises ``NotImplementedError`` and its ``step`` raises ``IndexError`` (in
the shaping potential) after 91-226 random steps on ``cramped_room``.

The kitchen follows Overcooked's rules on a character grid (:data:`LAYOUTS`;
``cramped_room`` is Overcooked's layout of that name):

* tiles ``X`` counter, ``O`` onion dispenser, ``D`` dish dispenser, ``P`` pot, ``S``
  serving window, space floor, ``1``/``2`` the chefs' start cells (floor);
* two chefs; actions :data:`NORTH`, :data:`SOUTH`, :data:`EAST`, :data:`WEST`,
  :data:`STAY`, :data:`INTERACT`.  A move turns the chef; it also moves it when the
  cell ahead is floor.  Moves that would put both chefs on one cell or swap them are
  all undone (Overcooked's collision rule).  Interactions (with the tile faced) are
  resolved before moves, chef 0 first;
* interacting: empty-handed at a dispenser takes an onion or a dish; an onion goes
  into a pot holding fewer than 3 onions that is not cooking, and the third starts
  the cooking; a dish at a ready pot takes the soup (the pot is empty again); a soup
  at the serving window is delivered (reward :data:`SOUP_REWARD`); a counter takes
  whatever is held when it is empty and gives back what lies on it to an empty hand;
* a cooking pot is ready ``cook_time`` steps after its third onion (the step of the
  third onion counts).

The gymnasium agent is chef 0.  Chef 1 is the environment's scripted teammate
(:data:`TEAMMATES`): ``onion-runner`` (the default) keeps the pots supplied -
it fetches an onion (from a counter or a dispenser, whichever is nearer) while a
pot still needs onions that nobody holds, puts it in, and puts a surplus onion on
the nearest free counter; otherwise it waits on a floor cell next to no station
(:func:`parking_cells`; its start cell if there is none).  ``stay``
never moves.  Both are deterministic, so the whole kitchen is: ``reset(seed)`` draws
the start (:func:`draw_start`) from the environment's generator and nothing after
that is random.

A state x is an immutable :class:`KitchenState` (chefs, counters, pots, soups
delivered; the step counter is not part of it), so ``get_state`` / ``set_state`` of
the gymnasium adapter's state API hand over a reference: a snapshot costs one
attribute read and a restore one assignment (``capver bench`` numbers in
``docs/bench/overcooked/``).

The representation function α (:class:`KitchenRepresentation`) maps x to atoms over
the chefs ``me`` (chef 0) and ``mate`` (chef 1), the items ``onion``, ``dish``,
``soup``, the stations ``onions`` (the onion dispensers), ``dishes`` (the dish
dispensers), ``serving`` and one ``potK`` per pot, and the counts ``n1``-``n3``:

* ``holding(chef, item)`` - what each chef holds;
* ``near(chef, station)`` - the chef stands next to (4-neighbourhood) such a tile;
  where a chef is, up to which stations are at hand, is all α keeps of positions;
* ``onions(pot, n)`` - the pot holds n onions (none true: empty);
  ``cooking(pot)`` / ``ready(pot)`` - it has 3 onions and is cooking / done;
* ``on_counter(item)`` - at least one counter holds that item (which counter, and
  how many, are abstracted away);
* ``served(n)`` - soups delivered since the start: ``n1``, ``n2``, ``n3`` = 3 or more.

It drops facings, exact cells, which counter holds what, and cooking progress; the
aggregation this causes is measured in ``docs/bench/overcooked/`` (distinct
environment states per symbolic state on D′).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, cast

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from capver.core.state import State
from capver.core.vocabulary import Atom, Predicate, Vocabulary
from capver.envs.gym_adapter import GymSimulator, StateApiCodec
from capver.errors import SimulatorError

Cell = tuple[int, int]

NORTH, SOUTH, EAST, WEST, STAY, INTERACT = range(6)
ACTIONS: tuple[int, ...] = (NORTH, SOUTH, EAST, WEST, STAY, INTERACT)
MOVES: tuple[int, ...] = (NORTH, SOUTH, EAST, WEST)
ACTION_NAMES: tuple[str, ...] = ("north", "south", "east", "west", "stay", "interact")
DIRECTIONS: tuple[Cell, ...] = ((0, -1), (0, 1), (1, 0), (-1, 0))  # by move action
ITEMS: tuple[str, ...] = ("onion", "dish", "soup")
ITEM_CODE: Mapping[str | None, int] = {None: 0, "onion": 1, "dish": 2, "soup": 3}
SOUP_REWARD = 20.0
MAX_ONIONS = 3
NOT_COOKING = -1

LAYOUTS: Mapping[str, str] = {
    # Overcooked's cramped_room.
    "cramped_room": "XXPXX\nO  2O\nX1  X\nXDXSX",
    # Two pots, more counter space: for tests of layouts beyond one pot.
    "two_pots": "XXPXPXX\nO  2  O\nX1    X\nXXDXSXX",
}


# -- layout ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class KitchenLayout:
    """A parsed grid: tile positions by kind, the floor, and the chefs' start cells."""

    name: str
    width: int
    height: int
    floor: frozenset[Cell]
    counters: tuple[Cell, ...]
    onion_dispensers: tuple[Cell, ...]
    dish_dispensers: tuple[Cell, ...]
    pots: tuple[Cell, ...]
    serving: tuple[Cell, ...]
    starts: tuple[Cell, Cell]
    tile: Mapping[Cell, str] = field(compare=False, hash=False, repr=False)

    @staticmethod
    def parse(name: str, text: str) -> KitchenLayout:
        rows = text.split("\n")
        width = len(rows[0]) if rows else 0
        if not rows or any(len(r) != width for r in rows):
            raise SimulatorError(f"layout {name!r}: expected equally long rows, got {[len(r) for r in rows]}")
        tile: dict[Cell, str] = {}
        starts: dict[str, Cell] = {}
        for y, row in enumerate(rows):
            for x, ch in enumerate(row):
                if ch in "12":
                    starts[ch] = (x, y)  # a start cell is floor
                elif ch not in "XODPS ":
                    raise SimulatorError(
                        f"layout {name!r}: row {y + 1} column {x + 1}: unknown tile {ch!r}; "
                        "expected one of X O D P S 1 2 or space"
                    )
                tile[(x, y)] = " " if ch in "12" else ch
        if set(starts) != {"1", "2"}:
            raise SimulatorError(f"layout {name!r}: expected one start cell '1' and one '2'")
        for (x, y), ch in tile.items():
            if ch == " " and (x in (0, width - 1) or y in (0, len(rows) - 1)):
                raise SimulatorError(
                    f"layout {name!r}: floor cell {(x, y)} on the border; expected tiles around the floor"
                )

        def cells(ch: str) -> tuple[Cell, ...]:
            return tuple(sorted((c for c, t in tile.items() if t == ch), key=lambda c: (c[1], c[0])))

        layout = KitchenLayout(
            name,
            width,
            len(rows),
            frozenset(cells(" ")),
            cells("X"),
            cells("O"),
            cells("D"),
            cells("P"),
            cells("S"),
            (starts["1"], starts["2"]),
            tile,
        )
        for kind, found in (
            ("pot", layout.pots),
            ("onion dispenser", layout.onion_dispensers),
            ("dish dispenser", layout.dish_dispensers),
            ("serving window", layout.serving),
        ):
            if not found:
                raise SimulatorError(f"layout {name!r}: expected at least one {kind}")
        return layout

    def neighbours(self, cell: Cell) -> Iterator[tuple[int, Cell]]:
        """(move action, cell) for the four neighbours of ``cell``."""
        x, y = cell
        for action, (dx, dy) in enumerate(DIRECTIONS):
            yield action, (x + dx, y + dy)


def load_layout(name: str) -> KitchenLayout:
    try:
        text = LAYOUTS[name]
    except KeyError:
        raise SimulatorError(f"kitchen layout {name!r}: expected one of {sorted(LAYOUTS)}") from None
    return KitchenLayout.parse(name, text)


# -- state -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Chef:
    pos: Cell
    facing: int  # index into DIRECTIONS
    held: str | None = None

    @property
    def front(self) -> Cell:
        dx, dy = DIRECTIONS[self.facing]
        return self.pos[0] + dx, self.pos[1] + dy


@dataclass(frozen=True, slots=True)
class KitchenState:
    """x ∈ X.  ``counters`` lists the occupied counters (sorted); each pot is
    (onions, cooked steps), cooked steps :data:`NOT_COOKING` until the third onion."""

    chefs: tuple[Chef, Chef]
    pots: tuple[tuple[int, int], ...]
    counters: tuple[tuple[Cell, str], ...] = ()
    delivered: int = 0

    def counter_item(self, cell: Cell) -> str | None:
        for c, item in self.counters:
            if c == cell:
                return item
        return None

    def pot_ready(self, i: int, cook_time: int) -> bool:
        return self.pots[i][1] >= cook_time

    def pot_takes_onion(self, i: int) -> bool:
        onions, cooked = self.pots[i]
        return onions < MAX_ONIONS and cooked == NOT_COOKING


def start_state(layout: KitchenLayout) -> KitchenState:
    """The layout's own start: chefs on ``1``/``2`` facing north, empty hands, pots and
    counters."""
    return KitchenState(
        (Chef(layout.starts[0], NORTH), Chef(layout.starts[1], NORTH)), tuple((0, NOT_COOKING) for _ in layout.pots)
    )


def draw_start(layout: KitchenLayout, rng: np.random.Generator) -> KitchenState:
    """A start drawn from ``rng``: two distinct floor cells, facings, and 0-2 onions
    already in each pot (hands and counters empty, nothing delivered)."""
    floor = sorted(layout.floor)
    i, j = rng.choice(len(floor), size=2, replace=False)
    chefs = (Chef(floor[int(i)], int(rng.integers(4))), Chef(floor[int(j)], int(rng.integers(4))))
    pots = tuple((int(rng.integers(MAX_ONIONS)), NOT_COOKING) for _ in layout.pots)
    return KitchenState(chefs, pots)


def _interact(layout: KitchenLayout, cook_time: int, x: KitchenState, who: int) -> tuple[KitchenState, float]:
    chef = x.chefs[who]
    front = chef.front
    kind = layout.tile.get(front, "X")
    held = chef.held
    new_held = held
    pots, counters, delivered, reward = x.pots, x.counters, x.delivered, 0.0
    if kind == "O" and held is None:
        new_held = "onion"
    elif kind == "D" and held is None:
        new_held = "dish"
    elif kind == "P":
        i = layout.pots.index(front)
        onions, _cooked = pots[i]
        if held == "onion" and x.pot_takes_onion(i):
            onions += 1
            pots = (*pots[:i], (onions, 0 if onions == MAX_ONIONS else NOT_COOKING), *pots[i + 1 :])
            new_held = None
        elif held == "dish" and x.pot_ready(i, cook_time):
            pots = (*pots[:i], (0, NOT_COOKING), *pots[i + 1 :])
            new_held = "soup"
    elif kind == "S" and held == "soup":
        new_held, delivered, reward = None, delivered + 1, SOUP_REWARD
    elif kind == "X" and front in layout.tile:
        on = x.counter_item(front)
        if held is not None and on is None:
            counters = tuple(sorted((*counters, (front, held))))
            new_held = None
        elif held is None and on is not None:
            counters = tuple(c for c in counters if c[0] != front)
            new_held = on
    if new_held == held and pots is x.pots and counters is x.counters:
        return x, 0.0
    chefs = list(x.chefs)
    chefs[who] = replace(chef, held=new_held)
    return KitchenState((chefs[0], chefs[1]), pots, counters, delivered), reward


def transition(
    layout: KitchenLayout, cook_time: int, x: KitchenState, actions: tuple[int, int]
) -> tuple[KitchenState, float]:
    """One joint step (the module docstring's rules); returns x′ and the reward."""
    reward = 0.0
    for who in (0, 1):
        if actions[who] == INTERACT:
            x, r = _interact(layout, cook_time, x, who)
            reward += r
    targets: list[Cell] = []
    facings: list[int] = []
    for chef, a in zip(x.chefs, actions):
        if a in MOVES:
            dx, dy = DIRECTIONS[a]
            ahead = (chef.pos[0] + dx, chef.pos[1] + dy)
            targets.append(ahead if ahead in layout.floor else chef.pos)
            facings.append(a)
        else:
            targets.append(chef.pos)
            facings.append(chef.facing)
    c0, c1 = x.chefs
    if targets[0] == targets[1] or (targets[0] == c1.pos and targets[1] == c0.pos):
        targets = [c0.pos, c1.pos]
    chefs = (
        c0 if (targets[0], facings[0]) == (c0.pos, c0.facing) else Chef(targets[0], facings[0], c0.held),
        c1 if (targets[1], facings[1]) == (c1.pos, c1.facing) else Chef(targets[1], facings[1], c1.held),
    )
    pots = tuple((n, c + 1) if NOT_COOKING < c < cook_time else (n, c) for n, c in x.pots)
    if chefs != x.chefs or pots != x.pots:
        x = KitchenState(chefs, pots, x.counters, x.delivered)
    return x, reward


# -- grid planning (shared by the teammate and capver.agents.kitchen_agents) -----------------


def first_moves(layout: KitchenLayout, x: KitchenState, who: int, targets: Sequence[Cell]) -> tuple[int, list[int]]:
    """Breadth-first search for chef ``who`` towards a floor cell next to one of the
    ``targets`` tiles, the other chef's cell blocked.  Returns (distance, the first
    actions of every shortest route); at distance 0 the actions turn to face a target
    (a move towards a tile only turns) or interact when one is already faced;
    (-1, []) when no target is reachable."""
    chef = x.chefs[who]
    goal = set(targets)
    if not goal:
        return -1, []
    if chef.front in goal:
        return 0, [INTERACT]
    faces = [a for a, c in layout.neighbours(chef.pos) if c in goal]
    if faces:
        return 0, faces
    return route(layout, x, who, {c for t in goal for _, c in layout.neighbours(t)})


def route(
    layout: KitchenLayout, x: KitchenState, who: int, cells: set[Cell] | frozenset[Cell]
) -> tuple[int, list[int]]:
    """(distance, first moves of every shortest path) of chef ``who`` onto one of the
    floor ``cells``, the other chef's cell blocked; (0, []) when already on one,
    (-1, []) when none is reachable."""
    pos, other = x.chefs[who].pos, x.chefs[1 - who].pos
    if pos in cells:
        return 0, []
    # Distances back from the goal cells, then the shortest first steps from the chef.
    dist = {c: 0 for c in cells if c in layout.floor and c != other}
    frontier = deque(dist)
    while frontier:
        c = frontier.popleft()
        for _, n in layout.neighbours(c):
            if n in layout.floor and n != other and n not in dist:
                dist[n] = dist[c] + 1
                frontier.append(n)
    best = min((dist[c] for _, c in layout.neighbours(pos) if c in dist), default=None)
    if best is None:
        return -1, []
    return best + 1, [a for a, c in layout.neighbours(pos) if dist.get(c) == best]


def item_sources(layout: KitchenLayout, x: KitchenState, item: str) -> list[Cell]:
    """Tiles an empty hand can take ``item`` from: its dispensers and the counters
    holding one (soup comes only from counters; ready pots are the caller's concern)."""
    dispensers = {"onion": layout.onion_dispensers, "dish": layout.dish_dispensers}.get(item, ())
    return [*dispensers, *(c for c, it in x.counters if it == item)]


def parking_cells(layout: KitchenLayout) -> list[Cell]:
    """Floor cells next to no station (only counters or floor around them)."""
    return sorted(c for c in layout.floor if all(layout.tile.get(n, "X") in " X" for _, n in layout.neighbours(c)))


def free_counters(layout: KitchenLayout, x: KitchenState) -> list[Cell]:
    taken = {c for c, _ in x.counters}
    return [c for c in layout.counters if c not in taken]


# -- the scripted teammate (chef 1) ---------------------------------------------------------

Teammate = Callable[[KitchenLayout, int, KitchenState], int]


def _stay(layout: KitchenLayout, cook_time: int, x: KitchenState) -> int:
    return STAY


def _onion_runner(layout: KitchenLayout, cook_time: int, x: KitchenState) -> int:
    me = x.chefs[1]
    # Onions a pot still needs, less those either chef already carries.
    need = sum(MAX_ONIONS - n for i, (n, _) in enumerate(x.pots) if x.pot_takes_onion(i))
    need -= sum(c.held == "onion" for c in x.chefs)
    if me.held == "onion":
        pots = [p for i, p in enumerate(layout.pots) if x.pot_takes_onion(i)]
        targets = pots or free_counters(layout, x)
    elif me.held is None and need > 0:
        targets = item_sources(layout, x, "onion")
    elif me.held is None:
        # Idle: out of every station's way.  A fixed target: one that depended on where
        # chef 0 stands made both chefs dodge each other in step, forever.
        _, moves = route(layout, x, 1, set(parking_cells(layout)) or {layout.starts[1]})
        return moves[0] if moves else STAY
    else:
        return STAY  # it never picks up anything but onions
    _, moves = first_moves(layout, x, 1, targets)
    return moves[0] if moves else STAY


TEAMMATES: dict[str, Teammate] = {"onion-runner": _onion_runner, "stay": _stay}


# -- gymnasium environment ---------------------------------------------------------------------


class KitchenEnv(gym.Env[np.ndarray, int]):
    """The kitchen as a single-agent gymnasium environment: the agent is chef 0, chef 1
    is ``teammate`` (module docstring).  ``reset(seed=s)`` starts from
    :func:`draw_start` with the environment's generator; ``options={"state": x}``
    starts from ``x``.  ``get_state``/``set_state`` are the snapshot API.
    Observations are a flat int vector: per chef x, y, facing, held item code; per
    pot onions and cooked steps; per counter its item code; soups delivered."""

    metadata = {"render_modes": ["ansi"]}  # noqa: RUF012 - gymnasium declares it per instance

    def __init__(
        self,
        layout: str = "cramped_room",
        cook_time: int = 8,
        teammate: str = "onion-runner",
        horizon: int | None = None,
        render_mode: str | None = None,
    ) -> None:
        if cook_time < 1:
            raise SimulatorError(f"argument 'cook_time': expected an integer >= 1, got {cook_time}")
        if teammate not in TEAMMATES:
            raise SimulatorError(f"argument 'teammate': expected one of {sorted(TEAMMATES)}, got {teammate!r}")
        if horizon is not None and horizon < 1:
            raise SimulatorError(f"argument 'horizon': expected a positive integer or None, got {horizon}")
        self.layout = load_layout(layout)
        self.cook_time = cook_time
        self.teammate_name = teammate
        self._teammate = TEAMMATES[teammate]
        self.horizon = horizon
        self.render_mode = render_mode
        # Discrete samples numpy integers, which step accepts as ints.
        self.action_space = cast(spaces.Space[int], spaces.Discrete(len(ACTIONS)))
        n = 8 + 2 * len(self.layout.pots) + len(self.layout.counters) + 1
        self.observation_space = spaces.Box(-1, np.iinfo(np.int32).max, (n,), dtype=np.int64)
        self._counter_index = {c: i for i, c in enumerate(self.layout.counters)}
        self._x = start_state(self.layout)
        self._t = 0

    # -- state API (capver's gymnasium adapter uses it through StateApiCodec) ------------
    def get_state(self) -> KitchenState:
        return self._x

    def set_state(self, x: KitchenState) -> None:
        if not isinstance(x, KitchenState):
            raise SimulatorError(f"set_state: expected a KitchenState, got {type(x).__name__}")
        if len(x.pots) != len(self.layout.pots):
            raise SimulatorError(
                f"set_state: snapshot has {len(x.pots)} pots, layout {self.layout.name!r} has {len(self.layout.pots)}"
            )
        self._x = x

    # -- gymnasium -------------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        x = (options or {}).get("state")
        if x is None:
            self._x = draw_start(self.layout, self.np_random)
        else:
            self.set_state(x)
        self._t = 0
        return self._observation(), {"delivered": self._x.delivered}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if action not in ACTIONS:
            raise SimulatorError(f"step: expected an action in 0..{len(ACTIONS) - 1}, got {action!r}")
        mate = self._teammate(self.layout, self.cook_time, self._x)
        self._x, reward = transition(self.layout, self.cook_time, self._x, (int(action), mate))
        self._t += 1
        truncated = self.horizon is not None and self._t >= self.horizon
        return self._observation(), reward, False, truncated, {"teammate_action": mate, "delivered": self._x.delivered}

    def render(self) -> str:
        return render(self.layout, self._x, self.cook_time)

    def _observation(self) -> np.ndarray:
        x = self._x
        obs = [v for c in x.chefs for v in (c.pos[0], c.pos[1], c.facing, ITEM_CODE[c.held])]
        obs += [v for pot in x.pots for v in pot]
        counters = [0] * len(self.layout.counters)
        for cell, item in x.counters:
            counters[self._counter_index[cell]] = ITEM_CODE[item]
        return np.array(obs + counters + [x.delivered], dtype=np.int64)


def render(layout: KitchenLayout, x: KitchenState, cook_time: int) -> str:
    """The grid as text: chefs ``1``/``2`` (lower case when empty-handed is not
    distinguished: what they hold is listed below), items on counters ``o``/``d``/``s``,
    and one line per pot."""
    grid = [[layout.tile.get((cx, cy), "X") for cx in range(layout.width)] for cy in range(layout.height)]
    for cell, item in x.counters:
        grid[cell[1]][cell[0]] = item[0]
    for i, chef in enumerate(x.chefs):
        grid[chef.pos[1]][chef.pos[0]] = str(i + 1)
    lines = ["".join(r) for r in grid]
    for i, chef in enumerate(x.chefs):
        lines.append(f"chef {i + 1}: facing {ACTION_NAMES[chef.facing]}, holding {chef.held or 'nothing'}")
    for cell, (n, c) in zip(layout.pots, x.pots):
        status = "ready" if c >= cook_time else f"cooking {c}/{cook_time}" if c > NOT_COOKING else "not cooking"
        lines.append(f"pot at {cell}: {n} onion(s), {status}")
    lines.append(f"delivered: {x.delivered}")
    return "\n".join(lines)


def kitchen_simulator(
    layout: str = "cramped_room", cook_time: int = 8, teammate: str = "onion-runner"
) -> GymSimulator[KitchenState]:
    """A :class:`GymSimulator` over :class:`KitchenEnv` with reference snapshots."""
    env = KitchenEnv(layout, cook_time, teammate)
    sim: GymSimulator[KitchenState] = GymSimulator(env, StateApiCodec(), actions=ACTIONS)
    sim.reset(seed=0)
    return sim


# -- representation function α ---------------------------------------------------------------

CHEFS: tuple[str, str] = ("me", "mate")
COUNTS: tuple[str, ...] = ("n1", "n2", "n3")


def pot_names(layout: KitchenLayout) -> tuple[str, ...]:
    return tuple(f"pot{i + 1}" for i in range(len(layout.pots)))


def kitchen_vocabulary(layout: KitchenLayout) -> Vocabulary:
    """The atoms of the module docstring: 25 for one pot, 32 for two."""
    types = {"chef": "object", "item": "object", "station": "object", "pot": "station", "count": "object"}
    objects = {
        **dict.fromkeys(CHEFS, "chef"),
        **dict.fromkeys(ITEMS, "item"),
        **dict.fromkeys(("onions", "dishes", "serving"), "station"),
        **dict.fromkeys(pot_names(layout), "pot"),
        **dict.fromkeys(COUNTS, "count"),
    }
    predicates = [
        Predicate("holding", ("chef", "item")),
        Predicate("near", ("chef", "station")),
        Predicate("onions", ("pot", "count")),
        Predicate("cooking", ("pot",)),
        Predicate("ready", ("pot",)),
        Predicate("on_counter", ("item",)),
        Predicate("served", ("count",)),
    ]
    return Vocabulary.build(predicates, objects=objects, types=types)


class KitchenRepresentation:
    """α : X → S for :class:`KitchenState` (module docstring); bit masks precomputed
    per chef and floor cell, so α is a few dictionary reads."""

    def __init__(self, layout: KitchenLayout, cook_time: int, vocabulary: Vocabulary | None = None) -> None:
        self.layout = layout
        self.cook_time = cook_time
        vocab = vocabulary if vocabulary is not None else kitchen_vocabulary(layout)
        self._vocab = vocab

        def bit(pred: str, *args: str) -> int:
            return 1 << vocab.index(Atom(pred, args))

        stations: dict[Cell, str] = {}
        for cells, name in (
            (layout.onion_dispensers, "onions"),
            (layout.dish_dispensers, "dishes"),
            (layout.serving, "serving"),
        ):
            stations.update((c, name) for c in cells)
        stations.update(zip(layout.pots, pot_names(layout)))
        self._near: list[dict[Cell, int]] = []
        self._holding: list[dict[str | None, int]] = []
        for chef in CHEFS:
            near = {}
            for cell in layout.floor:
                mask = 0
                for _, n in layout.neighbours(cell):
                    if n in stations:
                        mask |= bit("near", chef, stations[n])
                near[cell] = mask
            self._near.append(near)
            self._holding.append({None: 0, **{i: bit("holding", chef, i) for i in ITEMS}})
        self._pot_count = [[0, *(bit("onions", p, n) for n in COUNTS)] for p in pot_names(layout)]
        self._cooking = [bit("cooking", p) for p in pot_names(layout)]
        self._ready = [bit("ready", p) for p in pot_names(layout)]
        self._counter = {i: bit("on_counter", i) for i in ITEMS}
        self._served = [0, *(bit("served", n) for n in COUNTS)]

    @property
    def vocabulary(self) -> Vocabulary:
        return self._vocab

    def __call__(self, x: KitchenState) -> State:
        s = 0
        for i, chef in enumerate(x.chefs):
            s |= self._near[i][chef.pos] | self._holding[i][chef.held]
        for i, (n, cooked) in enumerate(x.pots):
            s |= self._pot_count[i][n]
            if cooked >= self.cook_time:
                s |= self._ready[i]
            elif cooked > NOT_COOKING:
                s |= self._cooking[i]
        for _, item in x.counters:
            s |= self._counter[item]
        return s | self._served[min(x.delivered, len(COUNTS))]


def start_states(layout: KitchenLayout, rng: np.random.Generator, n: int) -> list[KitchenState]:
    """The layout's own start followed by ``n - 1`` drawn ones (:func:`draw_start`)."""
    if n < 1:
        raise SimulatorError(f"argument 'n': expected a positive number of start states, got {n}")
    return [start_state(layout), *(draw_start(layout, rng) for _ in range(n - 1))]

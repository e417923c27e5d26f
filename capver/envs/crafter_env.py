"""Crafter (Hafner 2022) behind capver's simulator protocol, with a coarse α
(section 4.2 of the MCQS paper assesses CSteve agents in Crafter).

The game is the ``crafter`` package's own: its world generator, materials, creatures
and balancing (:class:`crafter.Env`, :mod:`crafter.objects`).  :class:`CrafterSimulator`
drives one ``crafter.Env`` whose world is generated once from a fixed seed
(``SettingArgs.seed``), and steps it exactly as ``crafter.Env.step`` does except that
it renders no image and builds no ``info`` dict (90% of the package's step time, and
nothing capver looks at).  Two deliberate differences, both about reproducibility:

* crafter picks the creature to despawn by index into a ``set`` of objects, whose
  order follows memory addresses; :class:`_Env` orders the candidates by position, so
  the same dice give the same world (the choice stays uniform);
* a snapshot (:class:`CrafterState`) is the *world* — the material map, every object,
  the player, the step counter — not the dice.  The world's random generator is the
  simulator's own stream (seeded at construction, re-seeded by ``reset(seed)`` and
  :meth:`CrafterSimulator.seed_dice`), so executions from one x₀ differ the way
  repeated plays from one position do (cows wander, saplings drop with p = 0.1,
  zombies spawn), like the PPDDL simulator's outcome sampling.

Snapshots are compact and hashable: the material map as 4 kB of ``bytes``, each
object as a small tuple.  Taking one costs tens of µs and restoring one a few hundred
(every object is rebuilt, and the object list comes back compacted); a deep copy of
the ``crafter.Env`` takes milliseconds (``capver bench crafter`` measures both).

The representation α (:class:`CrafterRepresentation`, 76 nullary atoms) is coarse on
purpose, as in the paper ("Crafter's coarse representation function aggregates
grounded states sharing the same symbolic state"):

* inventory thresholds: ``has_I`` (at least one I) for every item (sapling, wood,
  stone, coal, iron, diamond, the three pickaxes and swords), and ``has_wood_2``,
  ``has_wood_3``, ``has_stone_2``, ``has_stone_3``, ``has_sapling_2``;
* what is around: ``adjacent_T`` (in one of the four cells next to the player) and
  ``near_T`` (anywhere in the player's 9×7 view) for T in tree, water, stone, coal,
  iron, diamond, lava, table, furnace, cow, zombie, skeleton and plant;
* ``daylight`` (crafter's daylight ≥ 0.5; the day lasts 300 steps), ``sleeping``, ``dead``;
* bands of the vital statistics: ``low_V`` (≤ 3) and ``high_V`` (≥ 7) for V in health,
  food, drink and energy;
* ``unlocked_A`` for each of crafter's 22 achievements A (its counter is > 0).

Positions, exact counts, which tree and where the cows are all vanish, so many
environment states share one symbolic state; ``capver bench crafter`` measures how
many on D′.
"""

from __future__ import annotations

import collections
import contextlib
import io
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from capver.core.state import State
from capver.core.vocabulary import Atom, Predicate, Vocabulary
from capver.envs.base import InvalidActionError
from capver.errors import SimulatorError


def _import_crafter() -> Any:
    """``import crafter`` without gym: crafter imports the unmaintained ``gym`` only
    for its spaces and registration (falling back to namedtuples), and importing gym
    prints a deprecation notice to stderr that would end up in capver's output."""
    if "crafter" in sys.modules:
        return sys.modules["crafter"]
    hide = "gym" not in sys.modules
    if hide:
        sys.modules["gym"] = None  # type: ignore[assignment]  # makes ``import gym`` raise ImportError
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            import crafter  # type: ignore[import-untyped]
    finally:
        if hide:
            del sys.modules["gym"]
    return crafter


crafter: Any = _import_crafter()
_constants: Any = crafter.constants
_objects: Any = crafter.objects

AREA = (64, 64)
VIEW = (9, 9)
# The player sees a 9×7 window (crafter's 9×9 view minus two rows of inventory).
VIEW_HALF = (4, 3)
ACTIONS: tuple[str, ...] = tuple(_constants.actions)
ACTION_INDEX: dict[str, int] = {a: i for i, a in enumerate(ACTIONS)}
ITEMS: tuple[str, ...] = tuple(_constants.items)
ACHIEVEMENTS: tuple[str, ...] = tuple(_constants.achievements)
WALKABLE: frozenset[str] = frozenset(_constants.walkable)
# Objects are updated only within this Manhattan distance of the player (crafter.Env.step).
UPDATE_RADIUS = 2 * max(VIEW)


# -- snapshots ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PlayerState:
    pos: tuple[int, int]
    facing: tuple[int, int]
    inventory: tuple[int, ...]  # in ITEMS order
    achievements: tuple[int, ...]  # in ACHIEVEMENTS order
    sleeping: bool
    last_health: int
    hunger: float
    thirst: float
    fatigue: float
    recover: float

    def item(self, name: str) -> int:
        return self.inventory[ITEMS.index(name)]


ObjectRecord = tuple[Any, ...]
"""(kind, x, y, health, extra...) of a non-player object; see :func:`_record`."""


@dataclass(frozen=True, slots=True)
class CrafterState:
    """A snapshot x ∈ X: everything a step reads except the dice.

    ``objects`` lists the non-player objects in update order (the player is always
    first); ``chunks`` the keys of crafter's chunk table in insertion order, which is
    the order creatures are balanced in."""

    step: int
    area: tuple[int, int]
    materials: bytes
    player: PlayerState
    objects: tuple[ObjectRecord, ...]
    chunks: tuple[tuple[int, int, int, int], ...]

    def material_map(self) -> np.ndarray:
        """The material ids (crafter's, see :func:`material_id`) as a read-only array."""
        return np.frombuffer(self.materials, dtype=np.uint8).reshape(self.area)

    @property
    def daylight(self) -> float:
        return daylight(self.step)


def daylight(step: int) -> float:
    """crafter.Env._update_time's daylight after ``step`` steps."""
    progress = (step / 300) % 1 + 0.3
    return 1 - abs(math.cos(math.pi * progress)) ** 3


_KIND: dict[type, str] = {
    _objects.Cow: "cow",
    _objects.Zombie: "zombie",
    _objects.Skeleton: "skeleton",
    _objects.Arrow: "arrow",
    _objects.Plant: "plant",
    _objects.Fence: "fence",
}


def _record(obj: Any) -> ObjectRecord:
    x, y = obj.pos.tolist()
    kind = _KIND[type(obj)]
    health = obj.inventory["health"]
    if kind == "zombie":
        return (kind, x, y, health, obj.cooldown)
    if kind == "skeleton":
        return (kind, x, y, health, obj.reload)
    if kind == "arrow":
        fx, fy = (int(v) for v in obj.facing)
        return (kind, x, y, health, fx, fy)
    if kind == "plant":
        return (kind, x, y, health, obj.grown)
    return (kind, x, y, health)


class _Env(crafter.Env):  # type: ignore[misc,unused-ignore]  # crafter.Env is Any (untyped package)
    """crafter.Env with a reproducible despawn choice (see the module docstring).

    Within one balancing round (one step) the material masks are computed once per
    (chunk, material), since spawning creatures does not change materials."""

    _masks: dict[tuple[Any, str], Any] = {}  # noqa: RUF012 - replaced, never mutated, per instance
    _masks_step = -1

    def balance(self) -> None:
        """crafter's every-10-steps round of spawning and despawning creatures."""
        for chunk, objs in self._world.chunks.items():
            self._balance_chunk(chunk, objs)

    def _balance_object(
        self,
        chunk: Any,
        objs: Any,
        cls: Any,
        material: Any,
        span_dist: Any,
        despan_dist: Any,
        spawn_prob: Any,
        despawn_prob: Any,
        ctor: Any,
        target_fn: Any,
    ) -> None:
        # crafter 1.8.3's body; the victim of a despawn is drawn from the creatures
        # sorted by position instead of in set order.
        xmin, xmax, ymin, ymax = chunk
        random = self._world.random
        creatures = [obj for obj in objs if isinstance(obj, cls)]
        if self._masks_step != self._step:
            self._masks, self._masks_step = {}, self._step
        key = (chunk, material)
        if key not in self._masks:
            mask = self._world.mask(*chunk, material)
            self._masks[key] = (mask, mask.sum())
        mask, space = self._masks[key]
        target_min, target_max = target_fn(len(creatures), space)
        if len(creatures) < int(target_min) and random.uniform() < spawn_prob:
            xs = np.tile(np.arange(xmin, xmax)[:, None], [1, ymax - ymin])
            ys = np.tile(np.arange(ymin, ymax)[None, :], [xmax - xmin, 1])
            xs, ys = xs[mask], ys[mask]
            i = random.randint(0, len(xs))
            pos = np.array((xs[i], ys[i]))
            empty = self._world[pos][1] is None
            away = self._player.distance(pos) >= span_dist
            if empty and away:
                self._world.add(ctor(pos))
        elif len(creatures) > int(target_max) and random.uniform() < despawn_prob:
            creatures.sort(key=lambda o: tuple(o.pos.tolist()))
            obj = creatures[random.randint(0, len(creatures))]
            away = self._player.distance(obj.pos) >= despan_dist
            if away:
                self._world.remove(obj)


@lru_cache(maxsize=4)
def _generated_world(seed: int, area: tuple[int, int]) -> CrafterState:
    """The initial world of ``seed`` (generation takes about a second, so every
    setting built in one process from the same seed shares it)."""
    sim = CrafterSimulator.__new__(CrafterSimulator)
    sim._setup(seed, area)
    sim._env.reset()
    return sim.get_state()


class CrafterSimulator:
    """A :class:`~capver.envs.base.Simulator` over one crafter world.

    Actions are crafter's action indices (0–16, :data:`ACTIONS`).  The world is
    generated from ``world_seed``; ``dice_seed`` seeds the stream of randomness the
    dynamics draw from (defaults to ``world_seed``).  Once the player is dead no
    action is available."""

    def __init__(self, world_seed: int = 0, dice_seed: int | None = None, area: tuple[int, int] = AREA) -> None:
        if world_seed < 0:
            raise SimulatorError(f"argument 'world_seed': expected an integer >= 0, got {world_seed}")
        self._setup(world_seed, area)
        self._initial = _generated_world(world_seed, tuple(area))
        self.set_state(self._initial)
        self.seed_dice(world_seed if dice_seed is None else dice_seed)

    def _setup(self, seed: int, area: tuple[int, int]) -> None:
        self.world_seed = seed
        self._env = _Env(area=area, view=VIEW, size=(64, 64), reward=False, length=0, seed=seed)
        self._env._episode = 0
        self._env._unlocked = set()
        self._chunk_keys: tuple[tuple[int, int, int, int], ...] = ()
        self._actions = tuple(range(len(ACTIONS)))
        # The snapshot of the current world while nothing has stepped it since: the
        # learner reads the state after an execution and then reverts to it for the
        # next one, which then costs nothing.
        self._current: CrafterState | None = None

    # -- what agents may read (the live game) --------------------------------------
    @property
    def env(self) -> Any:
        """The underlying ``crafter.Env``, to drive it directly: the next
        :meth:`get_state` takes a fresh snapshot.  (:attr:`world` and :attr:`player` are
        for reading.)"""
        self._current = None
        return self._env

    @property
    def world(self) -> Any:
        """The live ``crafter.engine.World``."""
        return self._env._world

    @property
    def player(self) -> Any:
        """The live ``crafter.objects.Player``."""
        return self._env._player

    @property
    def initial_state(self) -> CrafterState:
        """x₀: the generated world before the first step."""
        return self._initial

    @property
    def dead(self) -> bool:
        return bool(self._env._player.health <= 0)

    # -- the simulator protocol ----------------------------------------------------------
    def reset(self, seed: int | None = None) -> CrafterState:
        """Back to x₀ (the world is fixed by ``world_seed``); ``seed`` re-seeds the dice."""
        if seed is not None:
            self.seed_dice(seed)
        self.set_state(self._initial)
        return self._initial

    def seed_dice(self, seed: int) -> None:
        # In place: every crafter object keeps a reference to the world's generator.
        self._env._world.random.seed(seed % (2**32))

    def get_state(self) -> CrafterState:
        if self._current is None:
            self._current = self.capture()
        return self._current

    def capture(self) -> CrafterState:
        """A fresh snapshot of the world (what :meth:`get_state` returns after a step)."""
        env = self._env
        world = env._world
        player = env._player
        chunks = world._chunks
        if len(chunks) != len(self._chunk_keys):  # keys are only ever added
            self._chunk_keys = tuple(chunks)
        x, y = player.pos.tolist()
        p = PlayerState(
            (x, y),
            (int(player.facing[0]), int(player.facing[1])),
            tuple(player.inventory.values()),
            tuple(player.achievements.values()),
            bool(player.sleeping),
            player._last_health,
            player._hunger,
            player._thirst,
            player._fatigue,
            player._recover,
        )
        objs = tuple(_record(o) for o in world._objects if o is not None and o is not player)
        return CrafterState(env._step, tuple(world.area), world._mat_map.tobytes(), p, objs, self._chunk_keys)

    def set_state(self, x: CrafterState) -> None:
        if not isinstance(x, CrafterState):
            raise SimulatorError(f"set_state: expected a CrafterState, got {type(x).__name__}")
        if x is self._current:
            return
        env = self._env
        world = env._world
        if tuple(world.area) != x.area:
            raise SimulatorError(f"set_state: snapshot area {x.area} != simulator area {tuple(world.area)}")
        world._mat_map[...] = x.material_map()
        world._obj_map.fill(0)
        world._chunks = collections.defaultdict(set)
        for key in x.chunks:
            world._chunks[key]  # creates the key, in the recorded order
        self._chunk_keys = x.chunks
        player = env._player
        if player is None:
            player = env._player = _objects.Player(world, x.player.pos)
        p = x.player
        player.pos = np.array(p.pos)
        player.facing = p.facing
        player.inventory = dict(zip(ITEMS, p.inventory))
        player.achievements = dict(zip(ACHIEVEMENTS, p.achievements))
        player.sleeping = p.sleeping
        player._last_health = p.last_health
        player._hunger, player._thirst, player._fatigue, player._recover = p.hunger, p.thirst, p.fatigue, p.recover
        player.removed = False
        player.random = world.random
        player.action = "noop"
        world._objects = [None]
        world.add(player)
        for rec in x.objects:
            world.add(_rebuild(world, player, rec))
        env._step = x.step
        env._last_health = player.health  # read by crafter.Env.step's reward only
        env._update_time()
        self._current = x

    def step(self, action: int) -> CrafterState:
        if self.dead or not isinstance(action, int) or not 0 <= action < len(ACTIONS):
            raise InvalidActionError(action)
        self.advance(action)
        return self.get_state()

    def advance(self, action: int) -> None:
        """One step of crafter.Env.step without the observation, reward and info."""
        self._current = None
        env = self._env
        world = env._world
        player = env._player
        env._step += 1
        env._update_time()
        player.action = ACTIONS[action]
        px, py = player.pos.tolist()
        for obj in world.objects:  # a copy, as in crafter: updates may add or remove
            if obj is player:
                obj.update()
                px, py = player.pos.tolist()
                continue
            ox, oy = obj.pos.tolist()
            if abs(ox - px) + abs(oy - py) < UPDATE_RADIUS:
                obj.update()
        if env._step % 10 == 0:
            env.balance()

    def available_actions(self) -> Sequence[int]:
        return () if self.dead else self._actions


def _rebuild(world: Any, player: Any, rec: ObjectRecord) -> Any:
    kind, x, y, health = rec[:4]
    pos = (x, y)
    obj: Any
    if kind == "cow":
        obj = _objects.Cow(world, pos)
    elif kind == "zombie":
        obj = _objects.Zombie(world, pos, player)
        obj.cooldown = rec[4]
    elif kind == "skeleton":
        obj = _objects.Skeleton(world, pos, player)
        obj.reload = rec[4]
    elif kind == "arrow":
        obj = _objects.Arrow(world, pos, np.array((rec[4], rec[5])))
    elif kind == "plant":
        obj = _objects.Plant(world, pos)
        obj.grown = rec[4]
    elif kind == "fence":
        obj = _objects.Fence(world, pos)
    else:
        raise SimulatorError(f"set_state: unknown object kind {kind!r} in the snapshot")
    obj.inventory["health"] = health
    return obj


def material_id(name: str) -> int:
    """crafter's id of a material in the material map (0 is 'none')."""
    return (None, *_constants.materials).index(name)


MATERIAL_NAMES: tuple[str | None, ...] = (None, *_constants.materials)


# -- representation function α ----------------------------------------------------------

THING_MATERIALS: tuple[str, ...] = ("tree", "water", "stone", "coal", "iron", "diamond", "lava", "table", "furnace")
THING_CREATURES: tuple[str, ...] = ("cow", "zombie", "skeleton", "plant")
THINGS: tuple[str, ...] = THING_MATERIALS + THING_CREATURES
THRESHOLDS: tuple[tuple[str, int], ...] = (
    *((item, 1) for item in ITEMS if item not in ("health", "food", "drink", "energy")),
    ("wood", 2),
    ("wood", 3),
    ("stone", 2),
    ("stone", 3),
    ("sapling", 2),
)
VITALS: tuple[str, ...] = ("health", "food", "drink", "energy")
LOW, HIGH = 3, 7


def has_atom(item: str, n: int = 1) -> Atom:
    return Atom(f"has_{item}" if n == 1 else f"has_{item}_{n}")


def unlocked_atom(achievement: str) -> Atom:
    return Atom(f"unlocked_{achievement}")


def crafter_vocabulary() -> Vocabulary:
    """The 76 nullary atoms of α (see the module docstring)."""
    atoms = [has_atom(item, n) for item, n in THRESHOLDS]
    atoms += [Atom(f"adjacent_{t}") for t in THINGS] + [Atom(f"near_{t}") for t in THINGS]
    atoms += [Atom("daylight"), Atom("sleeping"), Atom("dead")]
    atoms += [Atom(f"{band}_{v}") for v in VITALS for band in ("low", "high")]
    atoms += [unlocked_atom(a) for a in ACHIEVEMENTS]
    return Vocabulary.build([Predicate(a.predicate) for a in atoms], atoms=atoms)


class CrafterRepresentation:
    """α : X → S for :class:`CrafterState` (a :class:`~capver.envs.base.Representation`)."""

    def __init__(self, vocabulary: Vocabulary | None = None) -> None:
        vocab = vocabulary if vocabulary is not None else crafter_vocabulary()
        self._vocab = vocab
        bit = vocab.index
        self._has = tuple((ITEMS.index(item), n, 1 << bit(has_atom(item, n))) for item, n in THRESHOLDS)
        self._vitals = tuple((ITEMS.index(v), 1 << bit(Atom(f"low_{v}")), 1 << bit(Atom(f"high_{v}"))) for v in VITALS)
        self._unlocked = tuple(1 << bit(unlocked_atom(a)) for a in ACHIEVEMENTS)
        # Per material id: the bit of near_T / adjacent_T (0 for materials α ignores).
        self._near_mat = [0] * 256
        self._adj_mat = [0] * 256
        for t in THING_MATERIALS:
            self._near_mat[material_id(t)] = 1 << bit(Atom(f"near_{t}"))
            self._adj_mat[material_id(t)] = 1 << bit(Atom(f"adjacent_{t}"))
        self._near_obj = {t: 1 << bit(Atom(f"near_{t}")) for t in THING_CREATURES}
        self._adj_obj = {t: 1 << bit(Atom(f"adjacent_{t}")) for t in THING_CREATURES}
        self._daylight = 1 << bit(Atom("daylight"))
        self._sleeping = 1 << bit(Atom("sleeping"))
        self._dead = 1 << bit(Atom("dead"))

    @property
    def vocabulary(self) -> Vocabulary:
        return self._vocab

    def __call__(self, x: CrafterState) -> State:
        if not isinstance(x, CrafterState):
            raise SimulatorError(f"α: expected a CrafterState, got {type(x).__name__}")
        p = x.player
        inv = p.inventory
        s = 0
        for i, n, b in self._has:
            if inv[i] >= n:
                s |= b
        for i, low, high in self._vitals:
            if inv[i] <= LOW:
                s |= low
            elif inv[i] >= HIGH:
                s |= high
        for count, b in zip(p.achievements, self._unlocked):
            if count > 0:
                s |= b
        if x.daylight >= 0.5:
            s |= self._daylight
        if p.sleeping:
            s |= self._sleeping
        if inv[0] <= 0:  # ITEMS[0] is health
            s |= self._dead
        px, py = p.pos
        w, h = x.area
        (hx, hy) = VIEW_HALF
        mat = x.material_map()
        window = mat[max(0, px - hx) : px + hx + 1, max(0, py - hy) : py + hy + 1]
        for m in set(window.ravel().tolist()):
            s |= self._near_mat[m]
        for dx, dy in ((-1, 0), (1, 0), (0, -1), (0, 1)):
            ax, ay = px + dx, py + dy
            if 0 <= ax < w and 0 <= ay < h:
                s |= self._adj_mat[mat[ax, ay]]
        for rec in x.objects:
            near = self._near_obj.get(rec[0])
            if near is None:
                continue
            dx, dy = abs(rec[1] - px), abs(rec[2] - py)
            if dx <= hx and dy <= hy:
                s |= near
                if dx + dy == 1:
                    s |= self._adj_obj[rec[0]]
        return s

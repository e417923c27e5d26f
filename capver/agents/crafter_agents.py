"""A scripted sub-goal agent for Crafter (section 4.2: the paper assesses CSteve agents,
which take one instruction such as "collect wood" at a time).

:class:`CrafterSkillAgent` is asked for an achievement — the intent is the literal
``unlocked_A`` of :func:`~capver.envs.crafter_env.crafter_vocabulary` — and performs
A's event once more: collect one more wood, place a table, eat a cow.  It plays from
the live game like a player that sees only its 9×7 view:

* it gives up at once (``Stop``) when the inventory lacks what the recipe uses, or,
  for ``make_*``, when no table (furnace) is in view;
* otherwise it breadth-first searches its view for the nearest free cell next to the
  target (a tree, water, stone, a cow; for ``make_*`` a cell within one of the
  table), walks the first step of that path, faces the target and acts (``do``,
  ``place_*``, ``make_*``, ``sleep``), re-planning every step because creatures move;
* when nothing suitable is in view it explores: straight lines in random directions
  (from the passed-in generator), never onto lava;
* whatever the sub-goal, it first hits back at a zombie standing next to it;
* it stops when A's counter has gone up (``done``), when the player is dead, or after
  ``patience`` steps (``gave up``).

Success is the achievement's counter, not the intent literal: once ``unlocked_A``
holds, asking for A again still makes the agent do A again, so repeated requests
gather more wood (the inventory thresholds of α show it).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from capver.agents.base import Stop
from capver.core.state import Capability
from capver.core.vocabulary import Literal
from capver.envs.base import Action, Simulator
from capver.envs.crafter_env import (
    ACHIEVEMENTS,
    ACTION_INDEX,
    MATERIAL_NAMES,
    VIEW_HALF,
    WALKABLE,
    CrafterSimulator,
    unlocked_atom,
)
from capver.envs.crafter_env import crafter as _crafter
from capver.errors import CapverError

_C = _crafter.constants
DIRECTIONS: tuple[tuple[int, int], ...] = ((-1, 0), (1, 0), (0, -1), (0, 1))
MOVE: dict[tuple[int, int], int] = {
    (-1, 0): ACTION_INDEX["move_left"],
    (1, 0): ACTION_INDEX["move_right"],
    (0, -1): ACTION_INDEX["move_up"],
    (0, 1): ACTION_INDEX["move_down"],
}
DO = ACTION_INDEX["do"]
SLEEP = ACTION_INDEX["sleep"]
NOOP = ACTION_INDEX["noop"]
_WALKABLE_IDS = frozenset(i for i, m in enumerate(MATERIAL_NAMES) if m in WALKABLE)
_CREATURE = {"cow": _crafter.objects.Cow, "zombie": _crafter.objects.Zombie, "skeleton": _crafter.objects.Skeleton}


@dataclass(frozen=True, slots=True)
class Skill:
    """How the agent pursues one achievement: ``kind`` is collect / place / make /
    attack / sleep; ``target`` the material, item or creature; ``needs`` the
    inventory the recipe uses; ``near`` what must be within one cell (make)."""

    achievement: str
    kind: str
    target: str
    needs: tuple[tuple[str, int], ...] = ()
    near: tuple[str, ...] = ()


def _skills() -> dict[str, Skill]:
    """Every skill, with requirements read from crafter's own recipe table."""
    out: dict[str, Skill] = {}
    for material, info in _C.collect.items():
        for item in info["receive"]:
            out[f"collect_{item}"] = Skill(f"collect_{item}", "collect", material, tuple(info["require"].items()))
    for item, info in _C.place.items():
        out[f"place_{item}"] = Skill(f"place_{item}", "place", item, tuple(info["uses"].items()))
    for item, info in _C.make.items():
        out[f"make_{item}"] = Skill(f"make_{item}", "make", item, tuple(info["uses"].items()), tuple(info["nearby"]))
    out["eat_cow"] = Skill("eat_cow", "attack", "cow")
    out["defeat_zombie"] = Skill("defeat_zombie", "attack", "zombie")
    out["defeat_skeleton"] = Skill("defeat_skeleton", "attack", "skeleton")
    out["wake_up"] = Skill("wake_up", "sleep", "energy")
    return out


SKILLS: dict[str, Skill] = _skills()

DEFAULT_CAPABILITIES: tuple[str, ...] = (
    "collect_wood",
    "collect_sapling",
    "collect_drink",
    "collect_stone",
    "collect_coal",
    "place_table",
    "place_plant",
    "place_stone",
    "place_furnace",
    "make_wood_pickaxe",
    "make_wood_sword",
    "make_stone_pickaxe",
    "eat_cow",
    "defeat_zombie",
    "wake_up",
)
"""The sub-goals ``capver learn --agent crafter`` assesses: the achievements within a
few steps' reach of the start (iron and diamond need a furnace, coal and a stone
pickaxe first; ripe plants take 300 steps to grow)."""


def crafter_capability(achievement: str) -> Capability:
    """The capability named ``achievement`` whose intent is ``unlocked_<achievement>``."""
    if achievement not in ACHIEVEMENTS or achievement not in SKILLS:
        raise CapverError(f"unknown Crafter achievement {achievement!r}; expected one of {sorted(SKILLS)}")
    return Capability(achievement, (Literal(unlocked_atom(achievement)),))


def crafter_capabilities(names: tuple[str, ...] = DEFAULT_CAPABILITIES) -> tuple[Capability, ...]:
    return tuple(crafter_capability(n) for n in names)


class CrafterSkillAgent:
    """The scripted sub-goal agent of the module docstring (an :class:`~capver.agents.base.Agent`)."""

    name = "crafter-skill"

    def __init__(self, patience: int = 100, stride: int = 6) -> None:
        if patience < 1 or stride < 1:
            raise CapverError(f"CrafterSkillAgent: patience and stride must be >= 1, got {patience}, {stride}")
        self.patience = patience
        self.stride = stride  # explore: cells walked in one direction before turning
        self._skill: Skill | None = None
        self._start = 0
        self._steps = 0
        self._heading: tuple[int, int] | None = None
        self._walked = 0

    def begin(self, capability: Capability, sim: Simulator[Any], rng: np.random.Generator) -> None:
        game = _game(sim)
        self._skill = None
        if len(capability.intent) == 1 and capability.intent[0].positive:
            name = capability.intent[0].atom.predicate.removeprefix("unlocked_")
            self._skill = SKILLS.get(name)
        self._start = game.player.achievements[self._skill.achievement] if self._skill else 0
        self._steps = 0
        self._heading = None
        self._walked = 0

    def act(self, sim: Simulator[Any], rng: np.random.Generator) -> Action | Stop:
        game = _game(sim)
        skill = self._skill
        if skill is None:
            return Stop("unknown intent")
        player = game.player
        if game.dead:
            return Stop("dead")
        if player.achievements[skill.achievement] > self._start:
            return Stop("done")
        if self._steps >= self.patience:
            return Stop("gave up")
        for item, amount in skill.needs:
            if player.inventory[item] < amount:
                return Stop(f"lacks {item}")
        view = _View(game)
        action = self._defend(view) if skill.kind != "attack" else None
        if action is None:
            action = _POLICIES[skill.kind](self, skill, view, rng)
        if isinstance(action, int):
            self._steps += 1
        return action

    # -- sub-policies -------------------------------------------------------------------
    def _defend(self, view: _View) -> Action | None:
        """Hit back at a zombie next to the player, whatever the sub-goal: a zombie
        keeps attacking every few steps and would otherwise end most episodes."""
        px, py = view.pos
        around = {(px + dx, py + dy) for dx, dy in DIRECTIONS} & view.creature_cells(_CREATURE["zombie"])
        if not around:
            return None
        if view.front in around:
            return DO
        c = min(around)
        return MOVE[(c[0] - px, c[1] - py)]

    def _collect(self, skill: Skill, view: _View, rng: np.random.Generator) -> Action | Stop:
        if skill.target in WALKABLE:  # grass (saplings): face a free grass cell
            return self._face(view, lambda c: view.material(c) == skill.target and view.free(c), DO, rng)
        return self._reach(view, view.material_cells(skill.target), DO, rng)

    def _place(self, skill: Skill, view: _View, rng: np.random.Generator) -> Action | Stop:
        where = frozenset(_C.place[skill.target]["where"])
        action = ACTION_INDEX[f"place_{skill.target}"]
        return self._face(view, lambda c: view.material(c) in where and view.object_at(c) is None, action, rng)

    def _make(self, skill: Skill, view: _View, rng: np.random.Generator) -> Action | Stop:
        needed = frozenset(skill.near)
        if view.around(view.pos) >= needed:
            return ACTION_INDEX[f"make_{skill.target}"]
        goals: set[tuple[int, int]] | None = None
        for name in needed:  # cells within one of every needed material
            near = {(x + dx, y + dy) for x, y in view.material_cells(name) for dx in (-1, 0, 1) for dy in (-1, 0, 1)}
            goals = near if goals is None else goals & near
        step = view.path_to(goals or set())
        if step is None:
            return Stop(f"no {' and '.join(sorted(needed))} in view")
        return MOVE[step]

    def _attack(self, skill: Skill, view: _View, rng: np.random.Generator) -> Action | Stop:
        return self._reach(view, view.creature_cells(_CREATURE[skill.target]), DO, rng)

    def _sleep(self, skill: Skill, view: _View, rng: np.random.Generator) -> Action | Stop:
        player = view.game.player
        if not player.sleeping and player.inventory["energy"] >= _C.items["energy"]["max"]:
            return Stop("not tired")
        return SLEEP

    # -- movement ------------------------------------------------------------------------
    def _reach(self, view: _View, targets: set[tuple[int, int]], action: int, rng: np.random.Generator) -> Action:
        """Face an adjacent target cell and act, or walk towards the nearest one in view."""
        px, py = view.pos
        if view.front in targets:
            return action
        for d in DIRECTIONS:
            if (px + d[0], py + d[1]) in targets:
                return MOVE[d]  # the target blocks the way, so the move only turns
        step = view.path_to({(x + dx, y + dy) for x, y in targets for dx, dy in DIRECTIONS})
        return MOVE[step] if step is not None else self._explore(view, rng)

    def _face(
        self, view: _View, ok: Callable[[tuple[int, int]], bool], action: int, rng: np.random.Generator
    ) -> Action:
        """Act on the cell in front once ``ok`` holds there.  A move into a free cell
        also moves the player, so to face a free cell it steps towards one that has
        another suitable cell behind it."""
        px, py = view.pos
        if ok(view.front):
            return action
        dirs = [DIRECTIONS[i] for i in rng.permutation(4)]
        for dx, dy in dirs:
            c = (px + dx, py + dy)
            if ok(c) and not view.free(c):
                return MOVE[(dx, dy)]
        for dx, dy in dirs:
            if view.free((px + dx, py + dy)) and ok((px + 2 * dx, py + 2 * dy)):
                return MOVE[(dx, dy)]
        return self._explore(view, rng)

    def _explore(self, view: _View, rng: np.random.Generator) -> Action:
        px, py = view.pos
        h = self._heading
        if h is None or self._walked >= self.stride or not view.free((px + h[0], py + h[1])):
            options = [d for d in DIRECTIONS if view.free((px + d[0], py + d[1]))]
            if not options:
                return NOOP
            h = options[int(rng.integers(len(options)))]
            self._heading, self._walked = h, 0
        self._walked += 1
        return MOVE[h]


_POLICIES: dict[str, Callable[[CrafterSkillAgent, Skill, _View, np.random.Generator], Action | Stop]] = {
    "collect": CrafterSkillAgent._collect,
    "place": CrafterSkillAgent._place,
    "make": CrafterSkillAgent._make,
    "attack": CrafterSkillAgent._attack,
    "sleep": CrafterSkillAgent._sleep,
}


def _game(sim: Simulator[Any]) -> CrafterSimulator:
    if not isinstance(sim, CrafterSimulator):
        raise CapverError(f"the Crafter agent needs a CrafterSimulator, got {type(sim).__name__}")
    return sim


class _View:
    """The player's 9×7 window of the live world, read once per step."""

    __slots__ = ("_hi", "_lo", "_mat", "_obj", "free_cells", "front", "game", "pos", "world")

    def __init__(self, game: CrafterSimulator) -> None:
        self.game = game
        self.world = game.world
        player = game.player
        px, py = player.pos.tolist()
        self.pos = (px, py)
        self.front = (px + int(player.facing[0]), py + int(player.facing[1]))
        hx, hy = VIEW_HALF
        w, h = self.world.area
        self._lo = (max(0, px - hx), max(0, py - hy))
        self._hi = (min(w, px + hx + 1), min(h, py + hy + 1))
        self._mat: list[list[int]] = self.world._mat_map[self._lo[0] : self._hi[0], self._lo[1] : self._hi[1]].tolist()
        self._obj: list[list[int]] = self.world._obj_map[self._lo[0] : self._hi[0], self._lo[1] : self._hi[1]].tolist()
        x0, y0 = self._lo
        # Walkable (never lava) and empty: where the player may step.
        self.free_cells = {
            (x0 + i, y0 + j)
            for i, (mats, objs) in enumerate(zip(self._mat, self._obj))
            for j, (m, o) in enumerate(zip(mats, objs))
            if o == 0 and m in _WALKABLE_IDS
        }

    def inside(self, c: tuple[int, int]) -> bool:
        return self._lo[0] <= c[0] < self._hi[0] and self._lo[1] <= c[1] < self._hi[1]

    def material(self, c: tuple[int, int]) -> str | None:
        if not self.inside(c):
            return None
        return MATERIAL_NAMES[self._mat[c[0] - self._lo[0]][c[1] - self._lo[1]]]

    def object_at(self, c: tuple[int, int]) -> Any:
        if not self.inside(c):
            return None
        i = self._obj[c[0] - self._lo[0]][c[1] - self._lo[1]]
        return self.world._objects[i] if i else None

    def free(self, c: tuple[int, int]) -> bool:
        return c in self.free_cells

    def material_cells(self, name: str) -> set[tuple[int, int]]:
        mid = MATERIAL_NAMES.index(name)
        x0, y0 = self._lo
        return {(x0 + i, y0 + j) for i, mats in enumerate(self._mat) for j, m in enumerate(mats) if m == mid}

    def creature_cells(self, cls: type) -> set[tuple[int, int]]:
        x0, y0 = self._lo
        objects = self.world._objects
        return {
            (x0 + i, y0 + j)
            for i, objs in enumerate(self._obj)
            for j, o in enumerate(objs)
            if o and isinstance(objects[o], cls)
        }

    def around(self, c: tuple[int, int]) -> frozenset[str]:
        """Materials within one cell of ``c`` (crafter's ``nearby(pos, 1)``)."""
        x, y = c
        region = self.world._mat_map[max(0, x - 1) : x + 2, max(0, y - 1) : y + 2]
        return frozenset(MATERIAL_NAMES[m] for m in set(region.ravel().tolist()) if m)

    def path_to(self, goals: set[tuple[int, int]]) -> tuple[int, int] | None:
        """The first move of a shortest path through free cells in view to a cell of
        ``goals`` (None: none is reachable in view)."""
        goals = goals & self.free_cells
        if not goals:
            return None
        start = self.pos
        first: dict[tuple[int, int], tuple[int, int] | None] = {start: None}
        frontier = deque([start])
        free = self.free_cells
        while frontier:
            c = frontier.popleft()
            for d in DIRECTIONS:
                n = (c[0] + d[0], c[1] + d[1])
                if n in first or n not in free:
                    continue
                first[n] = first[c] or d
                if n in goals:
                    return first[n]
                frontier.append(n)
        return None

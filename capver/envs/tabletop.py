"""A symbolic-geometric tabletop of coloured blocks and bowls for the SayCan-style LLM
agent (the paper's SayCan study), behind capver's simulator protocol.

The table is the unit square seen from above with the robot's base at (0.5, 0); every
object has a position on it.  A block is on the table, in a bowl, on another block or
in the gripper; a bowl holds at most :attr:`TabletopConfig.bowl_capacity` blocks.  The
low-level actions are SayCan's primitive robot *skills*:

* ``pick(b)`` - grasp block ``b``; possible when the gripper is empty and nothing is
  on ``b``;
* ``place(b, t)`` - put the held block ``b`` on ``t``: the table, a bowl with room
  left, or a clear block that is not in a bowl (no towers inside bowls).

:func:`feasible` is that physics (the simulator refuses anything else:
:meth:`TabletopSimulator.available_actions` lists exactly the feasible skills).  A
feasible skill still fails stochastically, more often out of the arm's comfortable
reach (:func:`success_probability`; the draw comes from the simulator's generator,
seeded by ``reset(seed)``): a failed pick leaves everything as it was, a failed place
drops the block onto the table beside the target.

α (:class:`TabletopRepresentation`) gives the ground atoms ``on(b, b′)``,
``in(b, bowl)``, ``on_table(b)``, ``holding(b)``, ``clear(b)``, ``hand_empty`` and
``far(o)`` (the object lies beyond the arm's reach radius) - positions are otherwise
abstracted away, so the reach-dependent failures are what makes a learned model
probabilistic.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from capver.core.state import State
from capver.core.vocabulary import Atom, Predicate, Vocabulary
from capver.envs.base import InvalidActionError

TABLE = "table"
GRIPPER = "gripper"
ROBOT_BASE = (0.5, 0.0)

Position = tuple[float, float]


@dataclass(frozen=True, slots=True)
class TabletopConfig:
    """The objects on the table and the robot's physics."""

    block_colours: tuple[str, ...] = ("red", "green", "blue")
    bowl_colours: tuple[str, ...] = ("blue", "yellow")
    bowl_capacity: int = 1
    reach: float = 0.75  # beyond this distance from the base an object is far(o)
    pick_near: float = 0.95  # success probabilities of feasible skills
    pick_far: float = 0.5
    place_near: float = 0.95
    place_far: float = 0.6
    stack_factor: float = 0.8  # placing on a block is harder than into a bowl

    def __post_init__(self) -> None:
        if not self.block_colours or len(set(self.block_colours)) != len(self.block_colours):
            raise ValueError(f"block_colours: expected distinct colours, got {self.block_colours}")
        if len(set(self.bowl_colours)) != len(self.bowl_colours) or self.bowl_capacity < 1:
            raise ValueError(
                f"bowl_colours must be distinct and bowl_capacity >= 1; got {self.bowl_colours}, {self.bowl_capacity}"
            )

    @property
    def blocks(self) -> tuple[str, ...]:
        return tuple(f"{c}_block" for c in self.block_colours)

    @property
    def bowls(self) -> tuple[str, ...]:
        return tuple(f"{c}_bowl" for c in self.bowl_colours)

    @property
    def objects(self) -> tuple[str, ...]:
        return self.blocks + self.bowls


@dataclass(frozen=True, slots=True)
class TabletopState:
    """A snapshot: the position of every object (``config.objects`` order) and what
    each block rests on (``config.blocks`` order): ``table``, a bowl, a block or
    ``gripper``.  Immutable, so get/set_state cost nothing."""

    positions: tuple[Position, ...]
    support: tuple[str, ...]


@dataclass(frozen=True, slots=True, order=True)
class Skill:
    """``pick(obj)`` or ``place(obj, target)``; ``str`` is the text the LLM scores."""

    verb: str
    obj: str
    target: str = ""

    def __str__(self) -> str:
        return f"{self.verb}({self.obj})" if not self.target else f"{self.verb}({self.obj}, {self.target})"


class Scene:
    """Questions about one state under one configuration."""

    def __init__(self, config: TabletopConfig, x: TabletopState) -> None:
        self.config, self.x = config, x
        self._support = dict(zip(config.blocks, x.support, strict=True))
        self._pos = dict(zip(config.objects, x.positions, strict=True))

    def support(self, block: str) -> str:
        return self._support[block]

    def position(self, obj: str) -> Position:
        return self._pos[obj]

    def held(self) -> str | None:
        return next((b for b, s in self._support.items() if s == GRIPPER), None)

    def on_top_of(self, obj: str) -> str | None:
        return next((b for b, s in self._support.items() if s == obj), None)

    def clear(self, block: str) -> bool:
        return self.on_top_of(block) is None and self._support[block] != GRIPPER

    def in_bowl(self, bowl: str) -> list[str]:
        return [b for b, s in self._support.items() if s == bowl]

    def far(self, obj: str) -> bool:
        (x, y), (bx, by) = self._pos[obj], ROBOT_BASE
        return math.hypot(x - bx, y - by) > self.config.reach


def feasible(config: TabletopConfig, x: TabletopState, skill: Skill) -> bool:
    """Whether the robot can attempt ``skill`` in ``x`` (module docstring)."""
    sc = Scene(config, x)
    if skill.obj not in config.blocks:
        return False
    if skill.verb == "pick":
        return not skill.target and sc.held() is None and sc.clear(skill.obj)
    if skill.verb != "place" or sc.held() != skill.obj:
        return False
    t = skill.target
    if t == TABLE:
        return True
    if t in config.bowls:
        return len(sc.in_bowl(t)) < config.bowl_capacity
    return t in config.blocks and t != skill.obj and sc.clear(t) and sc.support(t) not in config.bowls


def all_skills(config: TabletopConfig) -> tuple[Skill, ...]:
    """Every skill text there is, feasible or not (what SayCan's LLM scores)."""
    picks = [Skill("pick", b) for b in config.blocks]
    places = [Skill("place", b, t) for b in config.blocks for t in (*config.bowls, *config.blocks, TABLE) if t != b]
    return tuple(picks + places)


def success_probability(config: TabletopConfig, x: TabletopState, skill: Skill) -> float:
    """The chance that a feasible ``skill`` works: lower out of reach (of the block to
    pick, or of the place target), and for stacking."""
    sc = Scene(config, x)
    if skill.verb == "pick":
        return config.pick_far if sc.far(skill.obj) else config.pick_near
    if skill.target == TABLE:
        return 1.0
    p = config.place_far if sc.far(skill.target) else config.place_near
    return p * config.stack_factor if skill.target in config.blocks else p


def _moved(config: TabletopConfig, x: TabletopState, block: str, support: str, position: Position) -> TabletopState:
    i = config.blocks.index(block)
    objs = config.objects
    positions = list(x.positions)
    positions[objs.index(block)] = position
    supports = list(x.support)
    supports[i] = support
    return TabletopState(tuple(positions), tuple(supports))


def apply_skill(config: TabletopConfig, x: TabletopState, skill: Skill, rng: np.random.Generator) -> TabletopState:
    """The state after attempting a feasible ``skill`` (success drawn from ``rng``)."""
    sc = Scene(config, x)
    works = rng.random() < success_probability(config, x, skill)
    if skill.verb == "pick":
        return _moved(config, x, skill.obj, GRIPPER, sc.position(skill.obj)) if works else x
    target = sc.position(skill.obj) if skill.target == TABLE else sc.position(skill.target)
    if skill.target == TABLE:
        return _moved(config, x, skill.obj, TABLE, target)
    if works:
        return _moved(config, x, skill.obj, skill.target, target)
    # Dropped beside the target: still on the table, a little nearer the robot.
    beside = (target[0], max(0.02, target[1] - 0.08))
    return _moved(config, x, skill.obj, TABLE, beside)


def random_scene(config: TabletopConfig, rng: np.random.Generator) -> TabletopState:
    """A start state: objects at uniform positions on the table, each block on the
    table, in a bowl with room (probability 1/4) or on a clear block on the table
    (probability 1/4) - so that assessments see stacks and full bowls from the start."""
    positions = [(float(rng.uniform(0.05, 0.95)), float(rng.uniform(0.1, 0.95))) for _ in config.objects]
    x = TabletopState(tuple(positions), tuple(TABLE for _ in config.blocks))
    for b in config.blocks:
        sc = Scene(config, x)
        u = rng.random()
        if u < 0.25 and sc.clear(b):
            bowls = [w for w in config.bowls if len(sc.in_bowl(w)) < config.bowl_capacity]
            if bowls:
                w = bowls[int(rng.integers(len(bowls)))]
                x = _moved(config, x, b, w, sc.position(w))
        elif u < 0.5 and sc.clear(b):
            under = [c for c in config.blocks if c != b and sc.support(c) == TABLE and sc.clear(c)]
            if under:
                c = under[int(rng.integers(len(under)))]
                x = _moved(config, x, b, c, sc.position(c))
    return x


class TabletopSimulator:
    """S_E of the tabletop: skills are the low-level actions (capver's Simulator protocol)."""

    def __init__(self, config: TabletopConfig, initial_state: TabletopState, seed: int | None = None) -> None:
        self.config = config
        self.initial_state = initial_state
        self._skills = all_skills(config)
        self._rng = np.random.default_rng(seed)
        self._state = initial_state

    def reset(self, seed: int | None = None) -> TabletopState:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._state = self.initial_state
        return self._state

    def get_state(self) -> TabletopState:
        return self._state

    def set_state(self, x: TabletopState) -> None:
        if not isinstance(x, TabletopState) or len(x.support) != len(self.config.blocks):
            raise ValueError(f"state: expected a TabletopState of {len(self.config.blocks)} blocks, got {x!r}")
        self._state = x

    def step(self, action: Skill) -> TabletopState:
        if not isinstance(action, Skill) or not feasible(self.config, self._state, action):
            raise InvalidActionError(action)
        self._state = apply_skill(self.config, self._state, action, self._rng)
        return self._state

    def available_actions(self) -> Sequence[Skill]:
        return [k for k in self._skills if feasible(self.config, self._state, k)]


def tabletop_vocabulary(config: TabletopConfig) -> Vocabulary:
    """Typed blocks and bowls; on/in/on_table/holding/clear/hand_empty/far."""
    blocks, bowls = config.blocks, config.bowls
    types = {"thing": "object", "block": "thing", "bowl": "thing"}
    objects = {**dict.fromkeys(blocks, "block"), **dict.fromkeys(bowls, "bowl")}
    predicates = [
        Predicate("on", ("block", "block")),
        Predicate("in", ("block", "bowl")),
        Predicate("on_table", ("block",)),
        Predicate("holding", ("block",)),
        Predicate("clear", ("block",)),
        Predicate("hand_empty"),
        Predicate("far", ("thing",)),
    ]
    atoms = [Atom("on", (a, b)) for a in blocks for b in blocks if a != b]
    atoms += [Atom("in", (b, w)) for b in blocks for w in bowls]
    atoms += [Atom(p, (b,)) for p in ("on_table", "holding", "clear") for b in blocks]
    atoms += [Atom("hand_empty"), *(Atom("far", (o,)) for o in config.objects)]
    return Vocabulary.build(predicates, objects=objects, types=types, atoms=atoms)


class TabletopRepresentation:
    """α : TabletopState → S (module docstring)."""

    def __init__(self, config: TabletopConfig) -> None:
        self.config = config
        self._vocab = tabletop_vocabulary(config)

    @property
    def vocabulary(self) -> Vocabulary:
        return self._vocab

    def atoms(self, x: TabletopState) -> list[Atom]:
        c, sc = self.config, Scene(self.config, x)
        out: list[Atom] = []
        for b in c.blocks:
            s = sc.support(b)
            if s == TABLE:
                out.append(Atom("on_table", (b,)))
            elif s == GRIPPER:
                out.append(Atom("holding", (b,)))
            elif s in c.bowls:
                out.append(Atom("in", (b, s)))
            else:
                out.append(Atom("on", (b, s)))
            if sc.clear(b):
                out.append(Atom("clear", (b,)))
        if sc.held() is None:
            out.append(Atom("hand_empty"))
        out += [Atom("far", (o,)) for o in c.objects if sc.far(o)]
        return out

    def __call__(self, x: TabletopState) -> State:
        return self._vocab.state(self.atoms(x))


def with_position(x: TabletopState, config: TabletopConfig, obj: str, position: Position) -> TabletopState:
    """``x`` with one object moved (blocks resting on it stay where they were; tests
    and examples use it to put things out of reach)."""
    positions = list(x.positions)
    positions[config.objects.index(obj)] = position
    return replace(x, positions=tuple(positions))

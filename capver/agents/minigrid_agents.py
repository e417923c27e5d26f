"""Two black-box agents for the quadrant DoorKey world (section 4.2, MiniGrid).

* :class:`TabularRLAgent` - a goal-conditioned tabular Q-learning agent.  It picks
  among options (open a door, pick up the key, drop it, go to a room) by SMDP
  Q-values over a compact abstract state φ = (intent, where the key is, the states
  of the doors around the rooms the intent concerns, the previous option and
  whether it succeeded).  φ deliberately omits the agent's own position: trained on
  :data:`~capver.envs.minigrid_env.TRAINING_LAYOUTS`, where the key is nearly
  always behind a closed door of its room, the learned policy for ``holding(key)``
  opens that door first even when the key is within reach - the "superstitious"
  behaviour of section 1 - and, never having been asked to fetch a key lying in ne
  or se, it has no action there and stops (section 4.2: it "can retrieve a key from
  NW or SW, but not from other quadrants").  It is trained on the intents
  ``holding(key)``, ``not holding(key)``, ``open(d)`` and ``in_room(agent, r)``; for
  any other intent it stops at once.  The policy is loaded from the shipped file
  ``capver/data/minigrid/rl_policy.json`` written by ``scripts/train_minigrid_rl.py``.
* :class:`SearchAgent` - A* over the true environment through simulator snapshots,
  charging every change to an object (door toggled, key picked up or dropped) far
  more than a move, so it reaches every achievable intent with the fewest side
  effects; the reference the RL agent's quirks are measured against.

Both see only what the simulator gives them (snapshots of the world); neither uses
capver's representation function.  Intents are conjunctions of literals over
:func:`~capver.envs.minigrid_env.minigrid_vocabulary`.
"""

from __future__ import annotations

import heapq
import importlib.resources
import itertools
import json
import math
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from minigrid.core.actions import Actions

from capver.agents.base import Stop
from capver.core.state import Capability
from capver.core.vocabulary import Atom, Literal
from capver.envs.base import Action, Simulator
from capver.envs.minigrid_env import (
    DOOR_ROOMS,
    DOOR_STATES,
    DOORS,
    ROOMS,
    TRAINING_LAYOUTS,
    Cell,
    LayoutDistribution,
    MiniGridState,
    generate_layout,
    minigrid_simulator,
    room_bounds,
    room_cells,
    room_of,
    start_state,
    world_view,
)
from capver.errors import PolicyFileError

LEFT, RIGHT, FORWARD = int(Actions.left), int(Actions.right), int(Actions.forward)
PICKUP, DROP, TOGGLE = int(Actions.pickup), int(Actions.drop), int(Actions.toggle)
_DIR_VEC: tuple[Cell, ...] = ((1, 0), (0, 1), (-1, 0), (0, -1))


# -- intents --------------------------------------------------------------------------


def intent_key(intent: Sequence[Literal]) -> str:
    """Canonical text of a conjunction (order-independent), the goal part of φ."""
    return "&".join(sorted(lit.short for lit in intent))


def _literal_holds(atom: Atom, x: MiniGridState) -> bool:
    p, args = atom.predicate, atom.args
    if p == "holding":
        return x.key_pos is None
    if p in DOOR_STATES:
        return x.door_state(DOORS.index(args[0])) == p
    # in_room
    if args[0] == "agent":
        return room_of(x.agent_pos, x.layout.room_size) == args[1]
    return x.key_pos is not None and room_of(x.key_pos, x.layout.room_size) == args[1]


def _understood(atom: Atom) -> bool:
    p, args = atom.predicate, atom.args
    if p == "holding":
        return args == ("key",)
    if p in DOOR_STATES:
        return len(args) == 1 and args[0] in DOORS
    if p == "in_room":
        return len(args) == 2 and args[0] in ("agent", "key") and args[1] in ROOMS
    return False


@dataclass(frozen=True, slots=True)
class Goal:
    """An intent as the agents read it."""

    literals: tuple[Literal, ...]

    @staticmethod
    def of(capability: Capability) -> Goal | str:
        """The goal, or the reason it is not understood."""
        for lit in capability.intent:
            if not _understood(lit.atom):
                return f"intent not understood: {lit.atom}"
        return Goal(tuple(capability.intent))

    def holds(self, x: MiniGridState) -> bool:
        return all(_literal_holds(lit.atom, x) == lit.positive for lit in self.literals)

    def impossible(self, x: MiniGridState) -> str | None:
        """A reason the goal cannot be reached from ``x`` (contradictory literals, or
        a door that would have to be locked again), else None."""
        pos: dict[str, set[str]] = {}
        neg: dict[str, set[str]] = {}
        for lit in self.literals:
            a = lit.atom
            if a.predicate in DOOR_STATES:
                subject, value = a.args[0], a.predicate
            elif a.predicate == "holding":
                subject, value = "key", "held"
            else:
                subject, value = a.args[0], a.args[1]
            (pos if lit.positive else neg).setdefault(subject, set()).add(value)
        for subject in set(pos) | set(neg):
            p, n = pos.get(subject, set()), neg.get(subject, set())
            if len(p) > 1 or p & n:
                return f"contradictory literals about {subject}"
            if subject in DOORS:
                if n >= set(DOOR_STATES):
                    return f"{subject} must be open, closed or locked"
                if "locked" in p and x.door_state(DOORS.index(subject)) != "locked":
                    return f"{subject} cannot be locked again"
            elif subject == "key" and n >= set(ROOMS) | {"held"}:
                return "the key is always held or in a room"
        return None


# -- navigation on a snapshot (shared by the RL agent's options) ----------------------------


def _passable_cells(x: MiniGridState) -> set[Cell]:
    """Floor cells without the key, plus the cells of open doors."""
    cells = {c for r in ROOMS for c in room_cells(r, x.layout.room_size)}
    if x.key_pos is not None:
        cells.discard(x.key_pos)
    cells.update(c for c, is_open in zip(x.layout.door_cells, x.door_open) if is_open)
    return cells


def plan_pose(
    x: MiniGridState, *, facing: Cell | None = None, cells: frozenset[Cell] | set[Cell] = frozenset()
) -> list[int] | None:
    """Shortest left/right/forward sequence to a pose that faces ``facing`` or stands
    on one of ``cells``; None if unreachable.  Moves only through floor and open doors."""
    passable = _passable_cells(x)
    if facing is not None:
        # Poses facing the target: one step back from it in each direction.
        goal = {(facing[0] - dx, facing[1] - dy, d) for d, (dx, dy) in enumerate(_DIR_VEC)}
    else:
        goal = {(c[0], c[1], d) for c in cells for d in range(4)}
    goal = {g for g in goal if (g[0], g[1]) in passable or (g[0], g[1]) == x.agent_pos}
    start = (x.agent_pos[0], x.agent_pos[1], x.agent_dir)
    if start in goal:
        return []
    if not goal or not _cells_connected(passable, x.agent_pos, {(g[0], g[1]) for g in goal}):
        return None
    parent: dict[tuple[int, int, int], tuple[tuple[int, int, int], int]] = {start: (start, -1)}
    queue = deque([start])
    while queue:
        pose = queue.popleft()
        px, py, d = pose
        dx, dy = _DIR_VEC[d]
        succ = [(px, py, (d - 1) % 4, LEFT), (px, py, (d + 1) % 4, RIGHT)]
        if (px + dx, py + dy) in passable:
            succ.append((px + dx, py + dy, d, FORWARD))
        for nx, ny, nd, action in succ:
            nxt = (nx, ny, nd)
            if nxt in parent:
                continue
            parent[nxt] = (pose, action)
            if nxt in goal:
                plan = []
                while nxt != start:
                    nxt, a = parent[nxt]
                    plan.append(a)
                return plan[::-1]
            queue.append(nxt)
    return None


def _cells_connected(passable: set[Cell], start: Cell, targets: set[Cell]) -> bool:
    # A cell-level flood fill is four times cheaper than the pose search it guards,
    # and options that cannot start are common.
    if start in targets:
        return True
    seen = {start}
    stack = [start]
    while stack:
        cx, cy = stack.pop()
        for nxt in ((cx + 1, cy), (cx - 1, cy), (cx, cy + 1), (cx, cy - 1)):
            if nxt in passable and nxt not in seen:
                if nxt in targets:
                    return True
                seen.add(nxt)
                stack.append(nxt)
    return False


# -- options of the RL agent --------------------------------------------------------------------

OPTIONS: tuple[str, ...] = (
    "pickup(key)",
    "drop(key)",
    *(f"open({d})" for d in DOORS),
    *(f"goto({r})" for r in ROOMS),
)


def compile_option(option: str, x: MiniGridState) -> list[int] | None:
    """The primitive actions that carry out ``option`` from ``x``; None when the option
    cannot start (nothing to do, or no path)."""
    size = x.layout.room_size
    if option == "pickup(key)":
        if x.key_pos is None:
            return None
        plan = plan_pose(x, facing=x.key_pos)
        return None if plan is None else [*plan, PICKUP]
    if option == "drop(key)":
        if x.key_pos is not None:
            return None
        if room_of(x.agent_pos, size) is None:
            return None  # in a doorway: step into a room first
        # Drop on the first free floor cell around the agent, after the fewest turns.
        for turns in ((), (LEFT,), (RIGHT,), (LEFT, LEFT)):
            d = (x.agent_dir + sum(-1 if t == LEFT else 1 for t in turns)) % 4
            ahead = (x.agent_pos[0] + _DIR_VEC[d][0], x.agent_pos[1] + _DIR_VEC[d][1])
            if room_of(ahead, size) is not None:
                return [*turns, DROP]
        return None
    name, arg = option[:-1].split("(")
    if name == "open":
        i = DOORS.index(arg)
        if x.door_open[i] or (x.door_locked[i] and x.key_pos is not None):
            return None
        plan = plan_pose(x, facing=x.layout.door_cells[i])
        return None if plan is None else [*plan, TOGGLE]
    # goto(room)
    if room_of(x.agent_pos, size) == arg:
        return None
    plan = plan_pose(x, cells=set(room_cells(arg, size)))
    return plan or None


def option_succeeded(option: str, x: MiniGridState) -> bool:
    """Whether ``option``'s own sub-goal holds in ``x`` (checked when it ends)."""
    if option == "pickup(key)":
        return x.key_pos is None
    if option == "drop(key)":
        return x.key_pos is not None
    name, arg = option[:-1].split("(")
    if name == "open":
        return x.door_open[DOORS.index(arg)]
    return room_of(x.agent_pos, x.layout.room_size) == arg


def relevant_doors(goal: Goal, x: MiniGridState) -> frozenset[int]:
    """Indices of the doors φ shows: those of the rooms the intent is about (the goal
    room; the key's room while the key is still to be fetched) and doors it names."""
    rooms: set[str] = set()
    doors: set[int] = set()
    need_key = False
    for lit in goal.literals:
        a = lit.atom
        if a.predicate == "holding" or a.args[0] == "key":
            need_key = True
            if a.predicate == "in_room":
                rooms.add(a.args[1])
        elif a.predicate in DOOR_STATES:
            i = DOORS.index(a.args[0])
            doors.add(i)
            need_key = need_key or x.door_locked[i]
        else:
            rooms.add(a.args[1])
    if need_key and x.key_pos is not None:
        key_room = room_of(x.key_pos, x.layout.room_size)
        if key_room is not None:
            rooms.add(key_room)
    doors.update(i for i, d in enumerate(DOORS) if set(DOOR_ROOMS[d]) & rooms)
    return frozenset(doors)


def abstract_state(intent: str, goal: Goal, x: MiniGridState, last: str | None) -> str:
    """φ(x, intent) as the policy-table key ``intent|key|doors|last``: where the key is
    (``held`` or its room), the state of each relevant door (``o``/``c``/``l``, ``.``
    for doors φ does not show) and the previous option with its outcome
    (``open(door_n)+``/``pickup(key)-``).  The agent's own position is not part of φ
    (see the module docstring)."""
    key = "held" if x.key_pos is None else room_of(x.key_pos, x.layout.room_size) or "?"
    shown = relevant_doors(goal, x)
    doors = "".join(x.door_state(i)[0] if i in shown else "." for i in range(len(DOORS)))
    return f"{intent}|{key}|{doors}|{last or '-'}"


# -- the learned policy ---------------------------------------------------------------------------

POLICY_FORMAT = "capver-minigrid-q/1"


@dataclass(frozen=True, slots=True)
class QPolicy:
    """Q-values of tried options per abstract state (None: option never tried there)."""

    options: tuple[str, ...]
    q: Mapping[str, tuple[float | None, ...]]
    temperature: float = 1.0
    meta: Mapping[str, Any] = field(default_factory=dict)

    def row(self, phi: str) -> tuple[float | None, ...] | None:
        return self.q.get(phi)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": POLICY_FORMAT,
            "options": list(self.options),
            "temperature": self.temperature,
            "meta": dict(self.meta),
            "q": {phi: list(row) for phi, row in sorted(self.q.items())},
        }

    @staticmethod
    def from_json(data: Mapping[str, Any], source: str = "<policy>") -> QPolicy:
        if data.get("format") != POLICY_FORMAT:
            raise PolicyFileError(f"{source}: format {data.get('format')!r}, expected {POLICY_FORMAT!r}")
        try:
            options = tuple(str(o) for o in data["options"])
            q: dict[str, tuple[float | None, ...]] = {}
            for phi, row in dict(data["q"]).items():
                if len(row) != len(options):
                    raise PolicyFileError(f"{source}: entry {phi!r} has {len(row)} values, expected {len(options)}")
                q[str(phi)] = tuple(None if v is None else float(v) for v in row)
            temperature = float(data.get("temperature", 1.0))
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, PolicyFileError):
                raise
            raise PolicyFileError(f"{source}: malformed policy: {exc}") from None
        if set(options) - set(OPTIONS):
            raise PolicyFileError(f"{source}: unknown options {sorted(set(options) - set(OPTIONS))}")
        return QPolicy(options, q, temperature, dict(data.get("meta", {})))

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), separators=(",", ":")) + "\n")


def default_policy_path() -> Path:
    return Path(str(importlib.resources.files("capver") / "data" / "minigrid" / "rl_policy.json"))


def load_rl_policy(path: str | Path | None = None) -> QPolicy:
    """Load a policy written by ``scripts/train_minigrid_rl.py`` (default: the shipped one)."""
    p = Path(path) if path is not None else default_policy_path()
    try:
        text = p.read_text()
    except OSError as exc:
        raise PolicyFileError(f"{p}: cannot read policy file: {exc.strerror}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PolicyFileError(f"{p}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None
    if not isinstance(data, dict):
        raise PolicyFileError(f"{p}: expected a JSON object")
    return QPolicy.from_json(data, str(p))


def boltzmann_choice(row: Sequence[float | None], temperature: float, rng: np.random.Generator) -> int:
    """Index of an option drawn with probability ∝ exp(Q/τ) among tried options
    (τ = 0: the best, ties broken by ``rng``)."""
    idx = [i for i, v in enumerate(row) if v is not None]
    values = np.array([row[i] for i in idx], dtype=float)
    if temperature <= 0:
        best = np.flatnonzero(values == values.max())
        return idx[int(best[int(rng.integers(len(best)))])]
    w = np.exp((values - values.max()) / temperature)
    return idx[int(rng.choice(len(idx), p=w / w.sum()))]


# -- the RL agent -----------------------------------------------------------------------------------


class TabularRLAgent:
    """Goal-conditioned tabular Q-learning agent over options (module docstring).

    Termination β: the intent holds (stop "done"), the situation φ never occurred in
    training (stop "unfamiliar situation"), or ``max_options`` options were tried
    (stop "gave up")."""

    name = "minigrid-rl"

    def __init__(self, policy: QPolicy | None = None, temperature: float | None = None, max_options: int = 8) -> None:
        self.policy = policy if policy is not None else load_rl_policy()
        self.temperature = self.policy.temperature if temperature is None else temperature
        self.max_options = max_options
        self._option_index = {o: i for i, o in enumerate(self.policy.options)}
        self._goal: Goal | None = None
        self._why = ""
        self._intent = ""
        self._queue: deque[int] = deque()
        self._current: str | None = None
        self._last: str | None = None
        self._n_options = 0

    def begin(self, capability: Capability, sim: Simulator[Any], rng: np.random.Generator) -> None:
        goal = Goal.of(capability)
        self._goal, self._why = (goal, "") if isinstance(goal, Goal) else (None, goal)
        self._intent = intent_key(capability.intent)
        self._queue.clear()
        self._current = None
        self._last = None
        self._n_options = 0

    def act(self, sim: Simulator[Any], rng: np.random.Generator) -> Action | Stop:
        if self._goal is None:
            return Stop(self._why or "begin() was not called")
        if self._queue:
            return self._queue.popleft()
        x = world_view(sim.get_state())
        if self._current is not None:
            self._last = self._current + ("+" if option_succeeded(self._current, x) else "-")
            self._current = None
        while True:
            if self._goal.holds(x):
                return Stop("done")
            if self._n_options >= self.max_options:
                return Stop("gave up")
            row = self.policy.row(abstract_state(self._intent, self._goal, x, self._last))
            if row is None:
                return Stop("unfamiliar situation")
            option = self.policy.options[boltzmann_choice(row, self.temperature, rng)]
            self._n_options += 1
            plan = compile_option(option, x)
            if plan is None:
                self._last = option + "-"
                continue
            self._current = option
            self._queue.extend(plan[1:])
            return plan[0]


# -- training (used by scripts/train_minigrid_rl.py) -------------------------------------------------


def training_intents() -> tuple[tuple[Literal, ...], ...]:
    """The intents the RL agent is trained on (single literals): holding(key),
    not holding(key), open(d) and in_room(agent, r).  Any other intent is a
    situation it never met."""
    holding = Atom("holding", ("key",))
    lits = [Literal(holding), Literal(holding, False)]
    lits += [Literal(Atom("open", (d,))) for d in DOORS]
    lits += [Literal(Atom("in_room", ("agent", r))) for r in ROOMS]
    return tuple((lit,) for lit in lits)


@dataclass(frozen=True, slots=True)
class TrainingConfig:
    episodes: int = 60_000
    room_size: int = 3
    distribution: LayoutDistribution = TRAINING_LAYOUTS
    p_fetch_intent: float = 0.4  # share of episodes whose intent is holding(key)
    p_start_holding: float = 0.25  # share of episodes that start with the key in hand
    max_options: int = 8
    fail_penalty: float = 10.0  # cost (in steps) of an option that could not start or failed
    epsilon_start: float = 0.3
    epsilon_end: float = 0.02
    min_learning_rate: float = 0.02
    temperature: float = 0.5  # stored in the policy; used when the agent acts


@dataclass(frozen=True, slots=True)
class TrainingStats:
    episodes: int
    primitive_steps: int
    states: int
    seconds: float
    window: int  # success is measured over the last ``window`` episodes
    success_rate: float
    per_intent_success: Mapping[str, float]


def train_q_policy(
    rng: np.random.Generator, config: TrainingConfig = TrainingConfig()
) -> tuple[QPolicy, TrainingStats]:
    """SMDP Q-learning over options in the true environment, episodes drawn from
    ``config.distribution`` with ``rng`` (the only source of randomness)."""
    t0 = time.perf_counter()
    sim = minigrid_simulator(config.room_size, config.distribution)
    n_opt = len(OPTIONS)
    q: dict[str, list[float | None]] = {}
    visits: dict[str, list[int]] = {}
    intents = training_intents()
    keys = [intent_key(i) for i in intents]
    goals = [Goal(i) for i in intents]
    fetch = keys.index("holding(key)")
    others = [i for i in range(len(intents)) if i != fetch]
    steps = 0
    recent: deque[tuple[str, bool]] = deque(maxlen=min(5000, config.episodes))
    for episode in range(config.episodes):
        eps = config.epsilon_start + (config.epsilon_end - config.epsilon_start) * episode / max(1, config.episodes - 1)
        x = start_state(generate_layout(rng, config.distribution, config.room_size))
        if rng.random() < config.p_start_holding:
            x = replace(x, key_pos=None)
        while True:
            k = fetch if rng.random() < config.p_fetch_intent else others[int(rng.integers(len(others)))]
            if not goals[k].holds(x):
                break
        sim.set_state(x)
        last: str | None = None
        success = False
        for _ in range(config.max_options):
            phi = abstract_state(keys[k], goals[k], x, last)
            row = q.setdefault(phi, [None] * n_opt)
            count = visits.setdefault(phi, [0] * n_opt)
            if rng.random() < eps:
                o = int(rng.integers(n_opt))
            else:
                # Untried options count as 0, above every (negative) tried value:
                # optimistic initialisation makes the greedy choice explore them.
                vals = np.array([0.0 if v is None else v for v in row])
                best = np.flatnonzero(vals == vals.max())
                o = int(best[int(rng.integers(len(best)))])
            plan = compile_option(OPTIONS[o], x)
            cost = 0.0
            if plan is not None:
                for a in plan:
                    x = sim.step(a)
                steps += len(plan)
                cost = float(len(plan))
            ok = plan is not None and option_succeeded(OPTIONS[o], x)
            if not ok:
                cost += config.fail_penalty
            last = OPTIONS[o] + ("+" if ok else "-")
            success = goals[k].holds(x)
            if success:
                target = -cost
            else:
                nxt = q.get(abstract_state(keys[k], goals[k], x, last))
                tried = [v for v in nxt or () if v is not None]
                target = -cost + (max(tried) if tried else 0.0)
            count[o] += 1
            lr = max(config.min_learning_rate, 1.0 / count[o])
            old = row[o]
            row[o] = target if old is None else old + lr * (target - old)
            if success:
                break
        recent.append((keys[k], success))
    per_intent: dict[str, list[bool]] = {}
    for key, ok in recent:
        per_intent.setdefault(key, []).append(ok)
    stats = TrainingStats(
        episodes=config.episodes,
        primitive_steps=steps,
        states=len(q),
        seconds=time.perf_counter() - t0,
        window=len(recent),
        success_rate=sum(ok for _, ok in recent) / max(1, len(recent)),
        per_intent_success={k: sum(v) / len(v) for k, v in sorted(per_intent.items())},
    )
    table = {
        phi: tuple(None if v is None else round(v, 2) for v in row)
        for phi, row in q.items()
        if any(v is not None for v in row)
    }
    meta = {
        "episodes": config.episodes,
        "room_size": config.room_size,
        "distribution": {
            "key_rooms": list(config.distribution.key_rooms),
            "p_agent_in_key_room": config.distribution.p_agent_in_key_room,
            "key_room_doors": list(config.distribution.key_room_doors),
            "other_doors": list(config.distribution.other_doors),
            "require_key_reachable": config.distribution.require_key_reachable,
        },
        "fail_penalty": config.fail_penalty,
        "p_fetch_intent": config.p_fetch_intent,
        "p_start_holding": config.p_start_holding,
        "success_rate_last_episodes": round(stats.success_rate, 4),
    }
    return QPolicy(OPTIONS, table, config.temperature, meta), stats


# -- the search agent -----------------------------------------------------------------------------


def _state_key(x: MiniGridState) -> tuple[Any, ...]:
    # Within one search the layout is fixed, so it is left out of the key.
    return (x.agent_pos, x.agent_dir, x.key_pos, x.door_open, x.door_locked)


def _side_effects(a: MiniGridState, b: MiniGridState) -> int:
    n = int((a.key_pos is None) != (b.key_pos is None))
    for i in range(len(DOORS)):
        n += a.door_open[i] != b.door_open[i] or a.door_locked[i] != b.door_locked[i]
    return n


def _manhattan(a: Cell, b: Cell) -> int:
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


class SearchAgent:
    """A* over true simulator snapshots (module docstring).

    Plans once in :meth:`begin` (restoring the simulator afterwards) and replays the
    plan, re-planning if the world is not where the plan expects it.  A step costs 1
    and each object change ``side_effect_cost`` more (default: more than any path
    length in the grid), so plans first minimise side effects, then steps."""

    name = "minigrid-search"

    def __init__(self, max_expansions: int = 20_000, side_effect_cost: float | None = None) -> None:
        self.max_expansions = max_expansions
        self.side_effect_cost = side_effect_cost
        self._goal: Goal | None = None
        self._why = ""
        self._plan: deque[tuple[MiniGridState, Action]] = deque()
        self.expansions = 0

    def begin(self, capability: Capability, sim: Simulator[Any], rng: np.random.Generator) -> None:
        goal = Goal.of(capability)
        self._goal, self._why = (goal, "") if isinstance(goal, Goal) else (None, goal)
        self._plan.clear()
        self.expansions = 0
        if self._goal is not None:
            self._replan(sim)

    def act(self, sim: Simulator[Any], rng: np.random.Generator) -> Action | Stop:
        if self._goal is None:
            return Stop(self._why or "begin() was not called")
        x = world_view(sim.get_state())
        if self._goal.holds(x):
            return Stop("done")
        if not self._plan or self._plan[0][0] != x:
            self._replan(sim)
            if not self._plan:
                return Stop(self._why)
        return self._plan.popleft()[1]

    def _replan(self, sim: Simulator[Any]) -> None:
        assert self._goal is not None
        start = sim.get_state()
        self._plan.clear()
        why = self._goal.impossible(world_view(start))
        if why is not None:
            self._why = f"impossible: {why}"
            return
        try:
            plan = self._astar(sim, start, self._goal)
        finally:
            sim.set_state(start)
        if plan is None:
            self._why = "no plan found"
        else:
            self._plan.extend(plan)

    def _astar(self, sim: Simulator[Any], start_raw: Any, goal: Goal) -> list[tuple[MiniGridState, Action]] | None:
        # Raw snapshots go back to the simulator; their world views are searched.
        start = world_view(start_raw)
        size = start.layout.room_size
        penalty = self.side_effect_cost
        if penalty is None:
            penalty = 4.0 * (2 * size + 3) ** 2
        h = _Heuristic(goal, penalty)
        actions = tuple(sim.available_actions())
        tie = itertools.count()
        start_key = _state_key(start)
        best_g: dict[tuple[Any, ...], float] = {start_key: 0.0}
        parent: dict[tuple[Any, ...], tuple[tuple[Any, ...], MiniGridState, Action] | None] = {start_key: None}
        heap: list[tuple[float, int, float, Any, MiniGridState]] = [(h(start), next(tie), 0.0, start_raw, start)]
        while heap:
            _, _, g, raw, x = heapq.heappop(heap)
            key = _state_key(x)
            if g > best_g[key]:
                continue
            if goal.holds(x):
                plan: list[tuple[MiniGridState, Action]] = []
                link = parent[key]
                while link is not None:
                    prev_key, prev, action = link
                    plan.append((prev, action))
                    link = parent[prev_key]
                return plan[::-1]
            self.expansions += 1
            if self.expansions > self.max_expansions:
                return None
            for action in actions:
                sim.set_state(raw)
                y_raw = sim.step(action)
                y = world_view(y_raw)
                ykey = _state_key(y)
                if ykey == key:
                    continue
                gy = g + 1.0 + penalty * _side_effects(x, y)
                if gy < best_g.get(ykey, math.inf):
                    best_g[ykey] = gy
                    parent[ykey] = (key, x, action)
                    heapq.heappush(heap, (gy + h(y), next(tie), gy, y_raw, y))
        return None


class _Heuristic:
    """Admissible estimate: side effects still needed × penalty + a Manhattan bound."""

    def __init__(self, goal: Goal, penalty: float) -> None:
        self.goal = goal
        self.penalty = penalty

    def __call__(self, x: MiniGridState) -> float:
        size = x.layout.room_size
        effects: dict[str, int] = {}
        dist = 0
        agent = x.agent_pos
        for lit in self.goal.literals:
            a = lit.atom
            if _literal_holds(a, x) == lit.positive:
                continue
            if a.predicate in DOOR_STATES:
                effects[a.args[0]] = 1
                dist = max(dist, _manhattan(agent, x.layout.door_cells[DOORS.index(a.args[0])]) - 1)
            elif a.predicate == "holding" or a.args[0] == "key":
                need = 1
                if a.predicate == "in_room" and lit.positive and x.key_pos is not None:
                    need = 2  # pick up, then drop elsewhere
                effects["key"] = max(effects.get("key", 0), need)
                if x.key_pos is not None:
                    dist = max(dist, _manhattan(agent, x.key_pos) - 1)
            elif lit.positive:  # in_room(agent, r)
                x0, y0, x1, y1 = room_bounds(a.args[1], size)
                dx = max(x0 - agent[0], 0, agent[0] - x1)
                dy = max(y0 - agent[1], 0, agent[1] - y1)
                dist = max(dist, dx + dy)
            else:
                dist = max(dist, 1)
        return self.penalty * sum(effects.values()) + dist

"""Benchmark: agents in gymnasium environments capver did not write, assessed through
the user's path and checked against an exact truth nobody here wrote.

gymnasium's toy-text environments carry their exact dynamics in ``env.unwrapped.P``.
Each world here is such an environment (slippery FrozenLake 4×4 and 8×8, Taxi), an
agent whose policy is known as probabilities (a tabular Q-learning agent trained
here, a value-iteration planner, an ε-greedy shortest-path taxi driver), an α and
capabilities.  The assessment goes through :func:`capver.gym_setting` with the
environment as ``gym.make`` returns it (its ``TimeLimit``, the default deep-copy
codec), exactly as a user's would.

The truth is the agent's capability model computed from ``P``
(:func:`true_model`): for each state the agent's executions can start in and each
capability, the distribution of the first α change (Θ = 1) of the Markov chain the
agent's policy induces, within the execution's step limit (the smaller of the
``TimeLimit`` and ``step_cap``) and conditioned on finishing within it, since a
truncated execution is a failure and not evidence.  Several environment states with
one α must give one distribution (α is Markov for these agents), which
:func:`true_model` checks.

Per run (world × method × budget × seed) it reports the exact VD of h∧ and of h̃ to
the truth (section 2's VD over the truth's transitions), the coverage agreement over
a fresh D′, and every verdict of the world's properties checked against the truth:
a qualitative claim of the observed or confident tier is wrong when the truth
disagrees (the truth's support graph decides ``E [ F φ ]`` and ``A [ G φ ]``), a
bound on the agent's Pmax misses when the truth's value (value iteration on the
true model) lies outside it.

Run: ``capver bench gym [--worlds frozenlake4 frozenlake8 taxi] [--methods mcqs-e
random] [--steps 500 2000 8000] [--runs 5] [--out DIR] [--quick]``.
"""

from __future__ import annotations

import contextlib
import sys
import time
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from capver.agents.base import Stop
from capver.bench.cli import BenchParser, summary, write_results
from capver.bench.markdown import markdown_table
from capver.commands.argtypes import positive
from capver.core.properties import (
    Eventually,
    ExistsPath,
    ForallPath,
    Globally,
    Optimum,
    ProbabilityQuery,
    Property,
    StateFormula,
    holds,
)
from capver.core.state import Capability, State
from capver.core.vocabulary import Vocabulary
from capver.envs.base import Simulator
from capver.errors import FailureWarning, SettingWarning

METHODS = ("mcqs-e", "random")
QUICK: dict[str, object] = {"worlds": ["frozenlake4", "taxi"], "steps": [1000], "runs": 1, "sequences": 20}
TOLERANCE = 1e-9  # float noise allowed where a bound meets the truth exactly

# A truth: (α state, capability) → {α successor: probability}.
TrueModel = dict[tuple[State, str], dict[State, float]]


# -- the worlds -------------------------------------------------------------------------


Table = Callable[[int], np.ndarray]  # environment state → π(·|x)


class TabularAgent:
    """An agent whose policy is known as tables over the environment's integer
    states: for a capability c and the state x₀ an execution starts in, ``modes(c,
    x₀)`` lists (weight, table) pairs; at the start of the execution the agent draws
    one mode by its weight (with the learner's generator), then samples each action
    from that mode's π(·|x).  It stops once its
    intent holds."""

    def __init__(
        self,
        name: str,
        modes: Callable[[str, int], Sequence[tuple[float, Table]]],
        achieved: Callable[[int, str], bool],
    ) -> None:
        self.name = name
        self.modes = modes
        self._achieved = achieved
        self._table: Table | None = None
        self._capability = ""

    def achieved(self, x: int, capability: str) -> bool:
        return self._achieved(x, capability)

    def begin(self, capability: Capability, sim: Simulator[Any], rng: np.random.Generator) -> None:
        self._capability = capability.name
        modes = self.modes(capability.name, int(sim.env.unwrapped.s))  # type: ignore[attr-defined]
        pick = int(rng.choice(len(modes), p=[w for w, _ in modes])) if len(modes) > 1 else 0
        self._table = modes[pick][1]

    def act(self, sim: Simulator[Any], rng: np.random.Generator) -> int | Stop:
        x = int(sim.env.unwrapped.s)  # type: ignore[attr-defined]  # a GymSimulator over a toy-text env
        if self._achieved(x, self._capability):
            return Stop("the intent holds")
        assert self._table is not None, "act() before begin()"
        p = self._table(x)
        return int(rng.choice(len(p), p=p)) if p.max() < 1.0 else int(p.argmax())


@dataclass(frozen=True, slots=True)
class World:
    """A gymnasium environment, an agent, α over its integer states, the
    capabilities and the properties the benchmark checks."""

    name: str
    env: gym.Env[Any, Any]
    agent: TabularAgent
    atoms: tuple[str, ...]
    alpha: Callable[[int], frozenset[str]]
    capabilities: tuple[str, ...]
    properties: tuple[str, ...]
    step_cap: int = 200


def _lake(map_name: str) -> gym.Env[Any, Any]:
    return gym.make("FrozenLake-v1", map_name=map_name, is_slippery=True)


def _lake_alpha(lake: Any) -> Callable[[int], frozenset[str]]:
    cells = lake.desc.flatten()
    return lambda x: frozenset({"goal"} if cells[x] == b"G" else {"hole"} if cells[x] == b"H" else set())


LAKE_PROPERTIES = (
    '"reach": E [ F goal ] {caps: goal}',
    '"safe": A [ G !hole ]',
    '"Pmax 1": Pmax=? [ F<=1 goal ] {caps: goal}',
    '"Pmax": Pmax=? [ F goal ] {caps: goal}',
)


def train_q(env: gym.Env[Any, Any], episodes: int, rng: np.random.Generator) -> np.ndarray:
    """Tabular Q-learning (ε-greedy, ε decaying to 0.05, α = 0.1, γ = 0.99)."""
    lake = env.unwrapped
    q = np.zeros((lake.observation_space.n, lake.action_space.n))  # type: ignore[attr-defined]
    for episode in range(episodes):
        s, _ = lake.reset(seed=int(rng.integers(2**31)))
        explore = max(0.05, 1 - episode / (0.6 * episodes))
        for _ in range(200):
            a = int(rng.integers(q.shape[1])) if rng.random() < explore else int(q[s].argmax())
            s2, r, terminated, _, _ = lake.step(a)
            q[s, a] += 0.1 * (float(r) + 0.99 * (0.0 if terminated else q[s2].max()) - q[s, a])
            s = s2
            if terminated:
                break
    return q


def value_iteration(env: gym.Env[Any, Any], gamma: float = 0.999, sweeps: int = 2000) -> np.ndarray:
    """The greedy policy of value iteration on ``P`` for the environment's reward."""
    P = env.unwrapped.P  # type: ignore[attr-defined]
    n, m = len(P), len(P[0])
    v = np.zeros(n)
    q = np.zeros((n, m))
    for _ in range(sweeps):
        for s in range(n):
            for a in range(m):
                q[s, a] = sum(p * (r + gamma * (0.0 if t else v[s2])) for p, s2, r, t in P[s][a])
        v = q.max(axis=1)
    return q.argmax(axis=1)


def _deterministic(policy: np.ndarray, n_actions: int) -> Table:
    eye = np.eye(n_actions)
    return lambda x: eye[policy[x]]


def frozenlake(map_name: str, rng: np.random.Generator) -> World:
    env = _lake(map_name)
    alpha = _lake_alpha(env.unwrapped)
    if map_name == "4x4":
        policy, kind = train_q(env, 5000, rng).argmax(axis=1), "q-learning"
    else:
        # Discounting at 0.95 makes the planner take risks on the long way round:
        # it reaches the goal about 3 times in 4 (at 0.999 always, if slowly).
        policy, kind = value_iteration(env, gamma=0.95, sweeps=500), "value-iteration"
    follow = [(1.0, _deterministic(policy, 4))]
    agent = TabularAgent(kind, lambda _c, _x: follow, lambda x, c: c in alpha(x))
    name = "frozenlake4" if map_name == "4x4" else "frozenlake8"
    return World(name, env, agent, ("goal", "hole"), alpha, ("goal",), LAKE_PROPERTIES)


TAXI_LOCATIONS = ("R", "G", "Y", "B")


def taxi(rng: np.random.Generator, epsilon: float = 0.1) -> World:
    """Taxi-v4 with a driver that takes shortest paths, but asked to deliver, drives
    to a wrong stand (each of the three with probability ``epsilon`` / 3) and drops
    the passenger there: an agent whose capability ``delivered`` fails now and then,
    the same way from every stand."""
    env = gym.make("Taxi-v4")
    inner: Any = env.unwrapped
    P = inner.P

    def alpha(x: int) -> frozenset[str]:
        _, _, p, d = inner.decode(x)
        atoms = {"in_taxi"} if p == 4 else {f"at({TAXI_LOCATIONS[p]})"}
        return frozenset(atoms | ({"delivered"} if p == d else set()))

    def achieved(x: int, c: str) -> bool:
        return c in alpha(x)

    def dropped_at(stand: int) -> Callable[[int], bool]:
        return lambda x: inner.decode(x)[2] == stand

    eye = np.eye(6)
    pickup = _shortest_path_policy(P, lambda x: achieved(x, "in_taxi"))
    to_stand = [_shortest_path_policy(P, dropped_at(k)) for k in range(4)]
    deliver = _shortest_path_policy(P, lambda x: achieved(x, "delivered"))

    def modes(c: str, x0: int) -> list[tuple[float, Table]]:
        if c == "in_taxi":
            return [(1.0, lambda x: eye[pickup[x]])]
        # A wrong stand: one of the three that are not this episode's destination.
        dest = inner.decode(x0)[3]
        wrong = [(epsilon / 3, lambda x, k=k: eye[to_stand[k][x]]) for k in range(4) if k != dest]
        return [(1 - epsilon, lambda x: eye[deliver[x]]), *wrong]

    atoms = (*(f"at({loc})" for loc in TAXI_LOCATIONS), "in_taxi", "delivered")
    props = (
        '"deliver": E [ F delivered ]',
        '"never lost": A [ G !(at(R) & !delivered) ]',
        '"Pmax 2": Pmax=? [ F<=2 delivered ]',
    )
    agent = TabularAgent("shortest-path, wrong stand 10%", modes, achieved)
    return World("taxi", env, agent, atoms, alpha, ("in_taxi", "delivered"), props)


def _shortest_path_policy(P: Mapping[int, Mapping[int, list[Any]]], goal: Callable[[int], bool]) -> np.ndarray:
    """For each state, the first action of a shortest path to a goal state (breadth
    first backwards over the deterministic ``P``; the lowest action on ties)."""
    n = len(P)
    predecessors: dict[int, list[int]] = defaultdict(list)
    for s in range(n):
        for a in P[s]:
            for _, s2, _, _ in P[s][a]:
                predecessors[s2].append(s)
    dist = np.full(n, np.inf)
    frontier = [s for s in range(n) if goal(s)]
    for s in frontier:
        dist[s] = 0
    while frontier:
        nxt = []
        for s2 in frontier:
            for s in predecessors[s2]:
                if dist[s] == np.inf:
                    dist[s] = dist[s2] + 1
                    nxt.append(s)
        frontier = nxt

    def first_move(s: int) -> int:
        return min(P[s], key=lambda a: (dist[P[s][a][0][1]], a))

    return np.array([first_move(s) for s in range(n)])


WORLDS: dict[str, Callable[[np.random.Generator], World]] = {
    "frozenlake4": lambda rng: frozenlake("4x4", rng),
    "frozenlake8": lambda rng: frozenlake("8x8", rng),
    "taxi": taxi,
}


# -- the truth ------------------------------------------------------------------------------


def horizon(world: World) -> int:
    """The steps one execution may take: ``step_cap`` or the environment's time limit."""
    limit = world.env.spec.max_episode_steps if world.env.spec is not None else None
    return min(world.step_cap, limit) if limit else world.step_cap


def dynamics(world: World, vocab: Vocabulary) -> tuple[list[State], np.ndarray, np.ndarray]:
    """What gymnasium's ``env.unwrapped.P`` says, as arrays: α of each environment
    state (in ``vocab``), which states end an episode, and the transition kernel of
    each action (``kernels[a, s, s′]``)."""
    P: Any = world.env.unwrapped.P  # type: ignore[attr-defined]
    n = len(P)
    alpha = [vocab.state(world.alpha(x)) for x in range(n)]
    terminal = np.zeros(n, dtype=bool)
    kernels = np.zeros((len(P[0]), n, n))
    for s in range(n):
        for a in P[s]:
            for p, s2, _, t in P[s][a]:
                kernels[a, s, s2] += p
                terminal[s2] |= bool(t)
    return alpha, terminal, kernels


def true_model(world: World, vocab: Vocabulary, x0: int) -> TrueModel:
    """The agent's true capability model over the α states its executions reach from
    ``x0`` (module docstring).  Raises ``ValueError`` when two environment states with
    one α give a capability different outcome distributions."""
    alpha, terminal, kernels = dynamics(world, vocab)
    steps = horizon(world)
    model: TrueModel = {}
    where: dict[tuple[State, str], int] = {}
    queue, seen = [x0], {x0}
    while queue:
        x = queue.pop()
        for c in world.capabilities:
            ends = first_change(world, kernels, alpha, terminal, x, c, steps)
            total = sum(ends.values())
            dist: dict[State, float] = defaultdict(float)
            for y, p in ends.items():
                dist[alpha[y]] += p / total
            key = (alpha[x], c)
            if key in model and any(abs(model[key].get(s, 0) - p) > 1e-6 for s, p in dist.items()):
                raise ValueError(
                    f"{world.name}: α is not Markov for this agent: {c} from environment states {where[key]} and {x} "
                    f"(both {vocab.format_state(alpha[x])}) has different outcomes"
                )
            model[key], where[key] = dict(dist), x
            for y in ends:
                if y not in seen:
                    seen.add(y)
                    queue.append(y)
    return model


def first_change(
    world: World, kernels: np.ndarray, alpha: list[State], terminal: np.ndarray, x: int, c: str, steps: int
) -> dict[int, float]:
    """Where the agent's execution of ``c`` from ``x`` ends (Θ = 1: at the first α
    change or at the episode's end), as probabilities over environment states, within
    ``steps`` steps (what is missing truncates): the mixture over the agent's modes."""
    n = len(alpha)
    if world.agent.achieved(x, c):
        return {x: 1.0}
    stops = np.array([alpha[y] != alpha[x] for y in range(n)]) | terminal
    ended = np.zeros(n)
    for weight, table in world.agent.modes(c, x):
        policy = np.array([table(y) for y in range(n)])
        chain = np.einsum("sa,asy->sy", policy, kernels)
        v = np.zeros(n)
        v[x] = weight
        for _ in range(steps):
            v = v @ chain
            ended += np.where(stops, v, 0.0)
            v = np.where(stops, 0.0, v)
            if v.sum() < 1e-15:
                break
    return {int(y): float(ended[y]) for y in np.flatnonzero(ended > 1e-15)}


def exact_vd(h: Any, truth: TrueModel) -> float:
    """VD(h, h⋆) of section 2 over the truth's transitions: the mean |Pr_h − Pr_h⋆|."""
    diffs = [abs(p - float(h.prob(s, c, s2))) for (s, c), dist in truth.items() for s2, p in dist.items()]
    return sum(diffs) / len(diffs)


def true_verdict(prop: Property, truth: TrueModel, vocab: Vocabulary, init: State) -> bool | float:
    """The truth's answer: ``E [ F φ ]`` / ``A [ G φ ]`` by a search of its support
    graph, ``Pmax=? [ F(<=k) φ ]`` by value iteration."""
    caps = prop.capability_names

    def allowed(c: str) -> bool:
        return caps is None or c in caps

    query = prop.query
    if isinstance(query, ExistsPath | ForallPath):
        path = query.path
        target: StateFormula = path.goal if isinstance(path, Eventually) else path.invariant  # type: ignore[union-attr]
        reached = _support_reach(truth, init, allowed)
        if isinstance(query, ExistsPath) and isinstance(path, Eventually):
            return any(holds(target, s, vocab) for s in reached)
        if isinstance(query, ForallPath) and isinstance(path, Globally):
            return all(holds(target, s, vocab) for s in reached)
    if isinstance(query, ProbabilityQuery) and query.optimum is Optimum.MAX and isinstance(query.path, Eventually):
        goal, bound = query.path.goal, query.path.bound
        states = {s for s, _ in truth} | {s2 for d in truth.values() for s2 in d}
        v = {s: 1.0 if holds(goal, s, vocab) else 0.0 for s in states}
        for _ in range(bound if bound is not None else 10_000):
            new = {
                s: 1.0
                if holds(goal, s, vocab)
                else max(
                    (sum(p * v[s2] for s2, p in d.items()) for (s1, c), d in truth.items() if s1 == s and allowed(c)),
                    default=0.0,
                )
                for s in states
            }
            if max(abs(new[s] - v[s]) for s in states) < 1e-13:
                v = new
                break
            v = new
        return v[init]
    raise ValueError(f"{prop.name}: the benchmark's truth checks E [ F ], A [ G ] and Pmax=? [ F ] only")


def _support_reach(truth: TrueModel, init: State, allowed: Callable[[str], bool]) -> set[State]:
    reached, stack = {init}, [init]
    while stack:
        s = stack.pop()
        for (s1, c), d in truth.items():
            if s1 == s and allowed(c):
                for s2, p in d.items():
                    if p > 0 and s2 not in reached:
                        reached.add(s2)
                        stack.append(s2)
    return reached


# -- the runs -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Row:
    world: str
    agent: str
    method: str
    budget: int
    seed: int
    steps: int
    executions: int
    failures: int
    vd_and: float
    vd_tilde: float
    coverage: float
    observed: int  # observed claims (verdicts of the observed tier)
    observed_wrong: int
    confident: int
    confident_wrong: int
    bounds: int  # the agent's Pmax bounds
    bounds_missed: int  # ... whose interval misses the truth's value
    seconds: float


@contextlib.contextmanager
def expected_warnings() -> Iterator[None]:
    """The time limit and the failures it causes are expected in these worlds (the
    tables count them): their warnings are not shown."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SettingWarning)
        warnings.simplefilter("ignore", FailureWarning)
        yield


def user_setting(world: World, seed: int) -> Any:
    """The world as a user plugs it in: :func:`capver.gym_setting` with the
    environment as ``gym.make`` returns it."""
    import capver

    return capver.gym_setting(
        world.env,
        world.agent,
        lambda x: world.alpha(int(x.env.unwrapped.s)),
        world.capabilities,
        vocabulary=world.atoms,
        step_cap=world.step_cap,
        name=world.name,
        seed=seed,
    )


def assess(world: World, method: str, budget: int, seed: int, sequences: int) -> Row:
    """One assessment through the user's path, scored against the truth."""
    import capver
    from capver.engines.verification.agent_verdict import LatticeVerdict, Tier
    from capver.engines.verification.quantitative import QuantitativeResult

    start = time.perf_counter()
    with expected_warnings():
        setting = user_setting(world, seed)
        result = capver.learn(setting, method=method, max_steps=budget, seed=seed)
        coverage = result.evaluate(sequences=sequences, seed=seed)["coverage_agreement"]
    vocab = setting.ctx.vocab
    x0 = int(setting.setting.initial_states[0].env.unwrapped.s)
    truth = true_model(world, vocab, x0)
    init = vocab.state(world.alpha(x0))
    counts = dict.fromkeys(("observed", "observed_wrong", "confident", "confident_wrong", "bounds", "missed"), 0)
    for text in world.properties:
        checked = result.verify(text)
        expected = true_verdict(checked.prop, truth, vocab, init)
        r = checked.result
        if isinstance(r, LatticeVerdict) and r.tier in (Tier.OBSERVED, Tier.CONFIDENT):
            tier = "observed" if r.tier is Tier.OBSERVED else "confident"
            counts[tier] += 1
            counts[f"{tier}_wrong"] += (r.verdict.value == "holds") != expected
        elif isinstance(r, QuantitativeResult) and r.agent is not None:
            counts["bounds"] += 1
            counts["missed"] += not (r.agent.lower - TOLERANCE <= float(expected) <= r.agent.upper + TOLERANCE)
    p = result.progress
    return Row(
        world.name,
        world.agent.name,
        method,
        budget,
        seed,
        p.steps,
        p.executions,
        p.failures,
        exact_vd(result.h_and, truth),
        exact_vd(result.h_tilde, truth),
        coverage,
        counts["observed"],
        counts["observed_wrong"],
        counts["confident"],
        counts["confident_wrong"],
        counts["bounds"],
        counts["missed"],
        time.perf_counter() - start,
    )


def table(rows: Sequence[Row]) -> list[str]:
    """One line per world × method × budget, averaged (VD, coverage) or summed (claims)
    over the seeds."""
    groups: dict[tuple[str, str, str, int], list[Row]] = defaultdict(list)
    for r in rows:
        groups[(r.world, r.agent, r.method, r.budget)].append(r)
    body = []
    for (world, agent, method, budget), rs in groups.items():
        n = len(rs)
        body.append(
            [
                world,
                agent,
                method,
                f"{budget:,}",
                n,
                f"{sum(r.failures for r in rs) / max(sum(r.executions for r in rs), 1):.1%}",
                f"{sum(r.vd_and for r in rs) / n:.4f}",
                f"{sum(r.vd_tilde for r in rs) / n:.4f}",
                f"{sum(r.coverage for r in rs) / n:.3f}",
                f"{sum(r.observed_wrong for r in rs)} of {sum(r.observed for r in rs)}",
                f"{sum(r.confident_wrong for r in rs)} of {sum(r.confident for r in rs)}",
                f"{sum(r.bounds - r.bounds_missed for r in rs)} of {sum(r.bounds for r in rs)}",
                f"{sum(r.seconds for r in rs) / n:.1f}",
            ]
        )
    head = (
        "world",
        "agent",
        "method",
        "steps",
        "runs",
        "failed",
        "VD h∧",
        "VD h̃",
        "coverage",
        "observed claims wrong",
        "confident claims wrong",
        "Pmax bounds holding the truth",
        "s / run",
    )
    return markdown_table(head, body)


def build_parser() -> BenchParser:
    parser = BenchParser("gym", summary(__doc__))
    parser.add_argument(
        "--worlds", nargs="+", choices=sorted(WORLDS), default=list(WORLDS), help="the worlds (default: all)"
    )
    parser.add_argument(
        "--methods", nargs="+", choices=METHODS, default=list(METHODS), help="query synthesis (default: both)"
    )
    parser.add_argument(
        "--steps",
        nargs="+",
        type=positive,
        default=[500, 2000, 8000],
        help="the budgets: simulator steps per run (default: 500 2000 8000)",
    )
    parser.add_argument("--runs", type=positive, default=3, help="runs per budget, seeds 0, 1, … (default: 3)")
    parser.add_argument(
        "--sequences", type=positive, default=100, help="D′ sequences for coverage agreement (default: 100)"
    )
    parser.add_out()
    parser.add_quick(QUICK)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse(argv)
    rows: list[Row] = []
    for name in args.worlds:
        world = WORLDS[name](np.random.default_rng(0))
        for method in args.methods:
            for budget in args.steps:
                for seed in range(args.runs):
                    row = assess(world, method, budget, seed, args.sequences)
                    rows.append(row)
                    print(
                        f"{name} {method} {budget} steps, seed {seed}: VD h∧ {row.vd_and:.4f}, h̃ {row.vd_tilde:.4f}, "
                        f"coverage {row.coverage:.3f}, wrong claims {row.observed_wrong + row.confident_wrong}, "
                        f"bounds missing the truth {row.bounds_missed} ({row.seconds:.1f} s)",
                        flush=True,
                    )
    lines = table(rows)
    print("\n".join(lines))
    if args.out is not None:
        write_results(args.out, lines, [asdict(r) for r in rows])
    return 0


if __name__ == "__main__":
    sys.exit(main())

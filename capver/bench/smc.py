"""Benchmark: a plan's success probability for the real agent, bounded by statistical
model checking of the fixed scheduler (capver verify --scheduler) and checked against
the exact value.

Per world and seed: learn the agent's model, plan on h∧ towards the world's goal
(``capver plan``'s introspector), then sample the plan with the agent itself through
the verification entry point until the interval on P[ F goal ] (valid at every look) is at
most ``--width`` wide at confidence 1 − δ (:mod:`capver.engines.verification.smc`).
The exact value of the plan for the agent is computed independently of the sampler:

* ``first-responders``: the primitive agent of the PPDDL domain, whose true model h⋆
  is the domain itself; the plan's value is propagated exactly (rationals) through h⋆.
* ``frozenlake4``: slippery FrozenLake 4×4 with a tabular Q-learning agent
  (:mod:`capver.bench.gym`); the value is propagated through gymnasium's own
  ``env.unwrapped.P`` and the agent's policy, execution by execution, a truncated
  execution ending the run where it stopped.

Reported: the executions of the plan each run needed, the interval's width, and
whether it contains the exact value (the target: in ≥ 95 % of runs, width ≤ 0.1 within
1,000 runs of the plan).

Run: ``capver bench smc [--worlds first-responders frozenlake4] [--runs 20] [--width
0.1] [--out DIR] [--quick]``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from fractions import Fraction

import numpy as np

from capver.bench.cli import BenchParser, summary, write_results
from capver.bench.markdown import markdown_table
from capver.commands.argtypes import open_unit_interval, positive
from capver.core.properties import Eventually, Globally, PathFormula, Until, holds
from capver.core.state import State
from capver.core.vocabulary import Vocabulary

QUICK = {"runs": 2}
DELTA = 0.05

Key = int  # a state of the chain the plan runs on: an α-state, or an environment state
Step = Callable[[Key, str], Mapping[Key, float | Fraction]]


def plan_value(
    step: Step,
    alpha: Callable[[Key], State],
    start: Key,
    plan: Sequence[str],
    path: PathFormula,
    vocab: Vocabulary,
) -> float:
    """The exact probability that a run of ``plan`` satisfies ``path`` (the run
    semantics of :mod:`capver.engines.verification.smc`, written out again here so
    that the sampler is checked against an independent reading): ``step(key, c)`` is
    where an execution of ``c`` ends, and mass it lacks is a failed execution, which
    ends the run where it started (its α did not change)."""

    def verdict(key: Key, i: int) -> bool | None:
        s = alpha(key)
        inside = path.bound is None or i <= path.bound
        match path:
            case Eventually(goal, _):
                return True if inside and holds(goal, s, vocab) else (None if inside else False)
            case Globally(invariant, _):
                return False if inside and not holds(invariant, s, vocab) else (None if inside else True)
            case Until(hold, goal, _):
                if not inside:
                    return False
                return True if holds(goal, s, vocab) else (None if holds(hold, s, vocab) else False)
        raise TypeError(f"not a path formula: {path!r}")

    at_end = isinstance(path, Globally)  # an undecided run: G held, F and U did not
    value = 0.0
    frontier: dict[Key, float] = {start: 1.0}
    for i in range(len(plan) + 1):
        nxt: dict[Key, float] = {}
        for key, p in frontier.items():
            v = verdict(key, i)
            if v is not None:
                value += p * v
                continue
            if i == len(plan):
                value += p * at_end
                continue
            ends = step(key, plan[i])
            for key2, q in ends.items():
                nxt[key2] = nxt.get(key2, 0.0) + p * float(q)
            lost = 1.0 - sum(float(q) for q in ends.values())
            if lost > 1e-12:  # a failed execution: the run ends where it was
                v2 = verdict(key, i + 1)
                value += p * lost * (at_end if v2 is None else v2)
        frontier = nxt
    return value


@dataclass(frozen=True, slots=True)
class Row:
    world: str
    seed: int
    plan: str
    truth: float
    lower: float
    upper: float
    runs: int
    executions: int
    steps: int
    covered: bool
    seconds: float


def _first_responders(seed: int, width: float) -> Row:
    import capver
    from capver.introspection.capability_planning import goal_formula, plan_capabilities
    from capver.io.literal_text import parse_dnf

    start = time.perf_counter()
    a = capver.load_setting("primitive", domain="first_responders", seed=seed)
    result = capver.learn(a, max_steps=1500, seed=seed)
    truth = a.truth
    assert truth is not None  # the primitive agent's model is the domain
    vocab = result.h_and.vocabulary
    init = a.setting.alpha(a.setting.initial_states[0])
    goal = "victim-healthy(z1) victim-healthy(z2)"
    plan = plan_capabilities(
        result.h_and, goal_formula(parse_dnf(goal, vocab)), init, horizon=20, rng=np.random.default_rng(seed)
    )
    names = [s.capability.name for s in plan.steps]
    checked = result.verify(
        "Pmin=? [ F victim-healthy(z1) & victim-healthy(z2) ]", scheduler=names, width=width, seed=seed
    )
    path = checked.prop.query.path  # type: ignore[union-attr]  # a P query
    exact = plan_value(truth.distribution, lambda s: s, init, names, path, vocab)
    return _row("first-responders", seed, names, exact, checked.result, time.perf_counter() - start)


def _frozenlake(seed: int, width: float) -> Row:
    import capver
    from capver.bench.gym import WORLDS, dynamics, expected_warnings, first_change, horizon, user_setting
    from capver.introspection.capability_planning import goal_formula, plan_capabilities
    from capver.io.literal_text import parse_dnf

    start = time.perf_counter()
    world = WORLDS["frozenlake4"](np.random.default_rng(0))
    with expected_warnings():
        setting = user_setting(world, seed)
        result = capver.learn(setting, max_steps=1000, seed=seed)
        vocab = setting.ctx.vocab
        x0 = int(setting.setting.initial_states[0].env.unwrapped.s)
        init = vocab.state(world.alpha(x0))
        plan = plan_capabilities(
            result.h_and, goal_formula(parse_dnf("goal", vocab)), init, horizon=5, rng=np.random.default_rng(seed)
        )
        names = [s.capability.name for s in plan.steps] or ["goal"]
        checked = result.verify("Pmin=? [ F goal ]", scheduler=names, width=width, seed=seed)
    alpha_of, terminal, kernels = dynamics(world, vocab)
    steps = horizon(world)
    path = checked.prop.query.path  # type: ignore[union-attr]  # a P query
    exact = plan_value(
        lambda x, c: first_change(world, kernels, alpha_of, terminal, x, c, steps),
        lambda x: alpha_of[x],
        x0,
        names,
        path,
        vocab,
    )
    return _row("frozenlake4", seed, names, exact, checked.result, time.perf_counter() - start)


def _row(world: str, seed: int, names: Sequence[str], exact: float, r: object, seconds: float) -> Row:
    from capver.engines.verification.smc import SchedulerResult

    assert isinstance(r, SchedulerResult)
    # The interval's ends are bisection points rounded outwards; the exact value is a
    # float sum, so a containment test allows its rounding.
    covered = r.lower - 1e-9 <= exact <= r.upper + 1e-9
    return Row(world, seed, ",".join(names), exact, r.lower, r.upper, r.runs, r.executions, r.steps, covered, seconds)


WORLDS: dict[str, Callable[[int, float], Row]] = {"first-responders": _first_responders, "frozenlake4": _frozenlake}


def table(rows: Sequence[Row], width: float) -> list[str]:
    head = [
        "world",
        "runs",
        "exact value (mean)",
        "interval width (median)",
        "plan executions (median / max)",
        "contains the exact value",
        f"width ≤ {width:g} within 1,000",
    ]
    body = []
    for world in dict.fromkeys(r.world for r in rows):
        rs = [r for r in rows if r.world == world]
        widths = sorted(r.upper - r.lower for r in rs)
        runs = sorted(r.runs for r in rs)
        body.append(
            [
                world,
                str(len(rs)),
                f"{sum(r.truth for r in rs) / len(rs):.4f}",
                f"{widths[len(widths) // 2]:.3f}",
                f"{runs[len(runs) // 2]} / {runs[-1]}",
                f"{sum(r.covered for r in rs)} / {len(rs)}",
                f"{sum(r.upper - r.lower <= width and r.runs <= 1000 for r in rs)} / {len(rs)}",
            ]
        )
    return markdown_table(head, body)


def build_parser() -> BenchParser:
    parser = BenchParser("smc", summary(__doc__))
    parser.add_argument(
        "--worlds", nargs="+", choices=sorted(WORLDS), default=list(WORLDS), help="the worlds (default: both)"
    )
    parser.add_argument(
        "--runs", type=positive, default=20, help="benchmark runs per world, seeds 0, 1, … (default: 20)"
    )
    parser.add_argument(
        "--width", type=open_unit_interval, default=0.1, help="stop each check at this interval width (default: 0.1)"
    )
    parser.add_out()
    parser.add_quick(QUICK)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse(argv)
    rows: list[Row] = []
    for name in args.worlds:
        for seed in range(args.runs):
            row = WORLDS[name](seed, args.width)
            rows.append(row)
            print(
                f"{name} seed {seed}: plan {row.plan}: [{row.lower:.4f}, {row.upper:.4f}] after {row.runs} runs, "
                f"exact {row.truth:.4f} {'inside' if row.covered else 'OUTSIDE'} ({row.seconds:.1f} s)",
                flush=True,
            )
    lines = table(rows, args.width)
    print("\n".join(lines))
    if args.out is not None:
        write_results(args.out, lines, [asdict(r) for r in rows])
    return 0


if __name__ == "__main__":
    sys.exit(main())

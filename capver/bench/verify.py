"""Benchmark: model checking a learned capability model (issue 11's targets).

Learns h∧/h∨ of the LAO* agent on First Responders with MCQS-S (in memory), then times,
on h∨ from the problem's initial state: the reachable set, ``E [ F φ ]`` and
``A [ G ψ ]`` by the BDD engine (every reachable state), z3 bounded model checking with
k = 10, and Storm's exact Pmax of ``F φ`` including its build of the PRISM export.
Targets: at most 2 s for each qualitative query and at most 10 s for Storm with its
build, on the 2-core machine."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

from capver.api import learn, load_setting
from capver.bench.cli import BenchParser, summary
from capver.engines.verification.bmc import BoundedModelChecker
from capver.engines.verification.symbolic import SymbolicEngine, formula_bdd
from capver.io.prism_export import storm_reach
from capver.io.properties_text import parse_property

QUALITATIVE_TARGET = 2.0
STORM_TARGET = 10.0
GOAL = "victim-healthy(z1) & victim-at(z1,l2)"
INVARIANT = "!(victim-dying(z1) & victim-dying(z2))"
QUICK = {"steps": 200}
T = TypeVar("T")


def timed(fn: Callable[[], T]) -> tuple[T, float]:
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def build_parser() -> BenchParser:
    p = BenchParser("verify", summary(__doc__))
    p.add_argument("--steps", type=int, default=1500, help="MCQS-S simulator steps of the learned run (default 1500)")
    p.add_argument("--seed", type=int, default=0, help="seed of the learned run (default 0)")
    p.add_quick(QUICK, "a smoke run on a smaller learned model")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse(argv)
    a = load_setting("lao", domain="first_responders", seed=args.seed)
    result, learn_s = timed(lambda: learn(a, method="mcqs-s", max_steps=args.steps, seed=args.seed))
    h_or = result.h_or
    init = a.setting.alpha(a.setting.initial_states[0])
    caps = tuple(h_or)
    e_f = parse_property(f"E [ F {GOAL} ]", h_or.vocabulary, caps)
    a_g = parse_property(f"A [ G {INVARIANT} ]", h_or.vocabulary, caps)
    rows: list[tuple[str, str, float, float]] = []
    engine, build_s = timed(lambda: SymbolicEngine(h_or))
    reach, reach_s = timed(lambda: engine.reachable(init))
    states = engine.count(reach)
    rows.append((f"BDD reachable set (engine built in {build_s:.2f} s)", f"{states} states", reach_s,
                 QUALITATIVE_TARGET))
    for prop in (e_f, a_g):
        r, s = timed(lambda prop=prop: SymbolicEngine(h_or).check(prop, init))  # type: ignore[misc]
        rows.append((f"BDD {prop.text}", r.verdict, s, QUALITATIVE_TARGET))
    for text in (f"E [ F<=10 {GOAL} ]", f"A [ G<=10 {INVARIANT} ]"):
        prop = parse_property(text, h_or.vocabulary, caps)
        r, s = timed(lambda prop=prop: BoundedModelChecker(h_or).check(prop, init))  # type: ignore[misc]
        rows.append((f"BMC k=10 {text}", r.verdict, s, QUALITATIVE_TARGET))
    goal = formula_bdd(h_or.ctx, e_f.query.path.goal)  # type: ignore[union-attr]
    value, storm_s = timed(lambda: storm_reach(h_or, init, goal, None, maximise=True, exact=True))
    rows.append((f"Storm exact Pmax=? [ F {GOAL} ] incl. build", str(value), storm_s, STORM_TARGET))

    print(f"First Responders h∨ learned by MCQS-S in {args.steps} steps ({learn_s:.1f} s), {states} reachable states "
          f"from the initial state")
    print(f"{'check':<72} {'result':>14} {'seconds':>8} {'target':>7}")
    ok = True
    for what, res, s, target in rows:
        ok &= s <= target
        print(f"{what:<72} {res:>14} {s:>8.3f} {target:>7.1f}")
    print(f"targets (≤ {QUALITATIVE_TARGET:.0f} s per qualitative query, ≤ {STORM_TARGET:.0f} s for Storm with its "
          f"build): {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

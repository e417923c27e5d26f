"""Benchmark: model checking a learned capability model against the model checker's time targets.

Learns h∧/h∨ of the LAO* agent on First Responders with MCQS-S (in memory), then times,
on h∨ from the problem's initial state: the reachable set, ``E [ F φ ]`` and
``A [ G ψ ]`` by the BDD engine (every reachable state), z3 bounded model checking with
k = 10, and Pmax of ``F φ`` by each quantitative checker of ``capver verify --engine``
(Storm exact and on doubles, each including its build of the PRISM export, and
capver's explicit engine) in one run, so that their ratios can be compared.  The BDD
rows compute the full fixpoint over every reachable state (``counts=True``); the
default forward search, which stops at the first goal, is timed beside them.
Targets: at most 2 s for each qualitative query and at most 10 s for Storm with its
build, on the 2-core machine (the explicit engine's row has no target).

``--scale`` runs :mod:`capver.bench.verify_scale` instead (every qualitative engine on
h∧ and h∨ of the paper's agents after 300 and 3,000 steps, with peak memory; its own
options follow ``--scale``)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import TypeVar

from capver.api import learn, load_setting
from capver.bench.cli import BenchParser, summary
from capver.bench.timing import timed
from capver.commands.argtypes import non_negative, positive
from capver.engines.verification import quantitative, storm
from capver.engines.verification.bmc import BoundedModelChecker
from capver.engines.verification.checkers import QUANTITATIVE_CHECKERS
from capver.engines.verification.symbolic import SymbolicEngine
from capver.io.properties_text import parse_property

QUALITATIVE_TARGET = 2.0
STORM_TARGET = 10.0
GOAL = "victim-healthy(z1) & victim-at(z1,l2)"
INVARIANT = "!(victim-dying(z1) & victim-dying(z2))"
QUICK = {"steps": 200}
T = TypeVar("T")


def _wall(fn: Callable[[], T]) -> tuple[T, float]:
    """``fn()`` and its wall-clock seconds, measured as every benchmark measures them."""
    value, t = timed(fn)
    return value, t.wall


def build_parser() -> BenchParser:
    p = BenchParser("verify", summary(__doc__))
    p.add_argument(
        "--steps", type=positive, default=1500, help="MCQS-S simulator steps of the learned run (default 1500)"
    )
    p.add_argument("--seed", type=non_negative, default=0, help="seed of the learned run (default 0)")
    p.add_argument(
        "--scale",
        action="store_true",
        help="the scale benchmark instead (capver bench verify --scale --help lists its options)",
    )
    p.add_quick(QUICK, "a smoke run on a smaller learned model")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    if "--scale" in given:
        from capver.bench import verify_scale

        return verify_scale.main([a for a in given if a != "--scale"])
    args = build_parser().parse(given)
    a = load_setting("lao", domain="first_responders", seed=args.seed)
    result, learn_s = _wall(lambda: learn(a, method="mcqs-s", max_steps=args.steps, seed=args.seed))
    h_or = result.h_or
    init = a.setting.alpha(a.setting.initial_states[0])
    caps = tuple(h_or)
    e_f = parse_property(f"E [ F {GOAL} ]", h_or.vocabulary, caps)
    a_g = parse_property(f"A [ G {INVARIANT} ]", h_or.vocabulary, caps)
    rows: list[tuple[str, str, float, float]] = []
    engine, build_s = _wall(lambda: SymbolicEngine(h_or))
    reach, reach_s = _wall(lambda: engine.reachable(init))
    states = engine.count(reach)
    rows.append(
        (f"BDD reachable set (engine built in {build_s:.2f} s)", f"{states} states", reach_s, QUALITATIVE_TARGET)
    )
    for prop in (e_f, a_g):
        r, s = _wall(lambda prop=prop: SymbolicEngine(h_or).check(prop, init, counts=True))  # type: ignore[misc]
        rows.append((f"BDD {prop.text} (every reachable state)", r.verdict, s, QUALITATIVE_TARGET))
        r, s = _wall(lambda prop=prop: SymbolicEngine(h_or).check(prop, init))  # type: ignore[misc]
        rows.append((f"BDD {prop.text} (forward, {r.explored} states explored)", r.verdict, s, QUALITATIVE_TARGET))
    for text in (f"E [ F<=10 {GOAL} ]", f"A [ G<=10 {INVARIANT} ]"):
        prop = parse_property(text, h_or.vocabulary, caps)
        r, s = _wall(lambda prop=prop: BoundedModelChecker(h_or).check(prop, init))  # type: ignore[misc]
        rows.append((f"BMC k=10 {text}", r.verdict, s, QUALITATIVE_TARGET))
    pmax = parse_property(f"Pmax=? [ F {GOAL} ]", h_or.vocabulary, caps)
    # Storm's rows only where stormpy is installed (it is optional); the explicit engine's always.
    for name in (*(("storm", "storm-float") if storm.available() else ()), "explicit"):
        checker = QUANTITATIVE_CHECKERS[name]()
        q, s = _wall(lambda checker=checker: quantitative.check(pmax, h_or, init, checker))  # type: ignore[misc]
        what = f"--engine {name} Pmax=? [ F {GOAL} ]" + (" incl. build" if name.startswith("storm") else "")
        assert q.value is not None  # a model's value was asked for
        rows.append((what, f"{float(q.value):.10g}", s, STORM_TARGET if name.startswith("storm") else float("inf")))

    print(
        f"First Responders h∨ learned by MCQS-S in {args.steps} steps ({learn_s:.1f} s), {states} reachable states "
        f"from the initial state"
    )
    print(f"{'check':<80} {'result':>14} {'seconds':>8} {'target':>7}")
    ok = True
    for what, res, s, target in rows:
        ok &= s <= target
        print(f"{what:<80} {res:>14} {s:>8.3f} {target:>7.1f}")
    print(
        f"targets (≤ {QUALITATIVE_TARGET:.0f} s per qualitative query, ≤ {STORM_TARGET:.0f} s for Storm with its "
        f"build): {'met' if ok else 'NOT met'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

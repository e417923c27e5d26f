"""Time the IC3 engine (z3's Spacer, :mod:`capver.engines.verification.ic3`) against
the BDD engine (:mod:`capver.engines.verification.symbolic`) on safety properties of
model files.

    python scripts/bench_ic3.py MODEL.capm --property 'A [ G !dead ]' [--property ...]
        [--init ATOMS] [--timeout SECONDS] [--bmc-depth K] [--engines ic3,ic3-bmc,bdd,bdd-counts]

Engines: ``ic3`` (Spacer, with the invariant re-checked by plain z3, timed apart),
``ic3-bmc`` (the same after bounded model checking for runs of at most
``--bmc-depth`` steps),
``bdd`` (the default forward onion rings, which stop at the first bad state) and
``bdd-counts`` (``counts=True``: the full reachable set and fixpoint).  Each
measurement runs in a child process of its own, so that one engine's caches (the
condition BDDs, z3 terms) do not help the next and a run over ``--timeout`` can be
stopped; its time includes building the engine from the model read from the file
(the read itself is timed apart).  One line per measurement: engine, verdict,
seconds, and the invariant's size (lemmas, literals, DAG nodes) or the run's length.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ENGINES = ("ic3", "ic3-bmc", "bdd", "bdd-counts")


def measure(path: str, prop_text: str, init_text: str, engine: str, timeout: float, bmc_depth: int, out: Any) -> None:
    """One measurement, in the child process: puts a result line on ``out``."""
    from capver.engines.verification.ic3 import IC3Engine, check_property_invariant
    from capver.engines.verification.symbolic import SymbolicEngine
    from capver.errors import SolverError
    from capver.io import dsl
    from capver.io.properties_text import parse_property

    start = time.perf_counter()
    parsed = dsl.read(path)
    model = parsed.model
    init = parsed.initial_state(init_text)[0]
    prop = parse_property(prop_text, model.vocabulary, tuple(model))
    read_s = time.perf_counter() - start
    start = time.perf_counter()
    if engine.startswith("ic3"):
        try:
            res = IC3Engine(model, timeout=timeout, bmc_depth=bmc_depth if engine == "ic3-bmc" else 0).check(prop, init)
        except SolverError as e:  # Spacer ran out of time
            out.put(f"{engine:<10} unknown {time.perf_counter() - start:9.2f} s  ({e})")
            return
        seconds = time.perf_counter() - start
        if res.invariant is not None:
            t = time.perf_counter()
            ok = check_property_invariant(model, init, prop, res.invariant)
            inv = res.invariant
            detail = (
                f"invariant: {inv.lemmas} lemmas, {inv.literals} literals, {inv.nodes} nodes; "
                f"re-check by z3 {'passes' if ok else 'FAILS'} in {time.perf_counter() - t:.2f} s"
            )
        else:
            assert res.witness is not None
            detail = f"run of {len(res.witness)} steps (from {res.witness_source})"
        verdict = res.verdict
    else:
        bdd = SymbolicEngine(model).check(prop, init, counts=engine == "bdd-counts")
        seconds = time.perf_counter() - start
        verdict = bdd.verdict
        detail = f"{bdd.reachable} reachable states" if bdd.reachable is not None else f"{bdd.explored} states explored"
        if bdd.witness is not None:
            detail += f", run of {len(bdd.witness)} steps"
    out.put(f"{engine:<10} {verdict:<5} {seconds:9.2f} s  (read {read_s:.1f} s) {detail}")


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("model", type=Path, help="a model file (.capm)")
    p.add_argument("--property", action="append", required=True, metavar="TEXT", help="a safety property (repeatable)")
    p.add_argument("--init", default="", metavar="ATOMS", help="initial state (default: the file's (:init ...))")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per measurement (default 600)")
    p.add_argument("--bmc-depth", type=int, default=10, help="ic3-bmc: BMC depth before Spacer (default 10)")
    p.add_argument("--engines", default=",".join(ENGINES), help=f"comma-separated, of {', '.join(ENGINES)}")
    args = p.parse_args(argv)
    engines = [e for e in args.engines.split(",") if e]
    unknown = set(engines) - set(ENGINES)
    if unknown:
        p.error(f"unknown engines: {', '.join(sorted(unknown))}")
    ctx = mp.get_context("spawn")
    for text in args.property:
        print(f"{args.model}: {text}", flush=True)
        for engine in engines:
            queue = ctx.Queue()
            child = ctx.Process(
                target=measure, args=(str(args.model), text, args.init, engine, args.timeout, args.bmc_depth, queue)
            )
            start = time.perf_counter()
            child.start()
            child.join(args.timeout + 60)
            if child.is_alive():
                child.terminate()
                child.join()
                print(f"  {engine:<10} timed out after {time.perf_counter() - start:.0f} s", flush=True)
            elif queue.empty():
                print(f"  {engine:<10} failed (exit status {child.exitcode})", flush=True)
            else:
                print(f"  {queue.get()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

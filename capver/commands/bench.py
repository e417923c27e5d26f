"""``capver bench NAME``: the benchmark commands whose output the README records.

Each benchmark is a module with ``main(argv) -> int`` whose parser is built with
:class:`capver.bench.cli.BenchParser` (``--help`` and ``--quick`` work the same way in
every one); :data:`BENCHMARKS` is the registry the choices come from."""

from __future__ import annotations

import argparse
import importlib

BENCHMARKS: dict[str, str] = {
    "foundation": "capver.bench.foundation",
    "agents": "capver.bench.agents",
    "minigrid": "capver.bench.minigrid",
    "crafter": "capver.bench.crafter",
    "overcooked": "capver.bench.overcooked",
    "learning": "capver.bench.learning",
    "occam": "capver.bench.occam",
    "introspection": "capver.bench.introspection",
    "verify": "capver.bench.verify",
    "verdicts": "capver.bench.verdicts",
    "decide": "capver.bench.decide",
    "speed": "capver.bench.speed",
    "dprime": "capver.bench.dprime",
    "modelfiles": "capver.bench.modelfiles",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", choices=sorted(BENCHMARKS), help="the benchmark to run")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="arguments of the benchmark (see NAME --help)")


def run(args: argparse.Namespace) -> int:
    return int(importlib.import_module(BENCHMARKS[args.name]).main(args.args))

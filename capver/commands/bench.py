"""``capver bench NAME``: the benchmark commands whose output docs/results.md records.

Each benchmark is a module with ``main(argv) -> int`` whose parser is built with
:class:`capver.bench.cli.BenchParser` (``--help`` and ``--quick`` work the same way in
every one); :data:`BENCHMARKS` (kept in :mod:`capver.bench.cli`, which imports nothing
heavy, so that ``capver --help`` can list it) is the registry the choices come from."""

from __future__ import annotations

import argparse
import importlib

from capver.bench.cli import BENCHMARKS

__all__ = ["BENCHMARKS", "add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", choices=sorted(BENCHMARKS), help="the benchmark to run")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="arguments of the benchmark (see NAME --help)")


def run(args: argparse.Namespace) -> int:
    return int(importlib.import_module(BENCHMARKS[args.name]).main(args.args))

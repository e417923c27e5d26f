"""``capver build``: the lattice bounds h∧ / h∨ of a transition dataset (section 3.1),
printed in the DSL (or written to files).  With no argument it uses the bundled
example dataset (the LAO* agent on 4-block Blocksworld)."""

from __future__ import annotations

import argparse
import importlib.resources
import sys
import time
from pathlib import Path

from capver.commands.argtypes import refuse_to_overwrite
from capver.engines.lattice import LatticeBuilder
from capver.engines.verification.relations import refines
from capver.io import dataset_file, dsl
from capver.logic.bdd import BACKENDS
from capver.logic.condition import LogicContext
from capver.model.kinds import ModelKind

EXAMPLE = "blocks_lao.jsonl"


def example_path() -> Path:
    return Path(str(importlib.resources.files("capver.data") / "examples" / EXAMPLE))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dataset", nargs="?", type=Path, help=f"dataset file (default: the bundled {EXAMPLE})")
    parser.add_argument(
        "--which",
        choices=(ModelKind.AND.dsl, ModelKind.OR.dsl, "both"),
        default="both",
        help="the bounds to build: h∧ (pessimistic), h∨ (optimistic) or both (default: both, "
        "h_and.capm and h_or.capm with --out)",
    )
    parser.add_argument(
        "--out", type=Path, help="write the models (h_and.capm, h_or.capm) into this directory instead of printing"
    )
    parser.add_argument("--force", action="store_true", help="with --out: overwrite existing model files")
    parser.add_argument(
        "--bdd",
        choices=sorted(BACKENDS),
        default="cudd",
        help="BDD backend of the conditions: cudd (compiled) or autoref (pure Python)",
    )
    parser.add_argument("--check", action="store_true", help="also prove h∧ ⪯ h∨ with z3")


def run(args: argparse.Namespace) -> int:
    path = args.dataset or example_path()
    start = time.perf_counter()
    loaded = dataset_file.load(path)
    if loaded.torn is not None:
        print(f"capver build: {loaded.torn.describe(path)}", file=sys.stderr)
    data = loaded.dataset
    ctx = LogicContext(data.vocab, args.bdd)
    bounds = LatticeBuilder(ctx, data).bounds
    elapsed = time.perf_counter() - start
    print(
        f"; {path}: {len(data)} transitions ({data.unique_count()} unique) over "
        f"{len(data.capabilities)} capabilities and {len(data.vocab)} atoms; built in {elapsed:.2f}s",
        file=sys.stderr,
    )
    models = {ModelKind.AND.dsl: bounds.pessimistic, ModelKind.OR.dsl: bounds.optimistic}
    chosen = list(models) if args.which == "both" else [args.which]
    if args.out:
        targets = {name: args.out / ModelKind.parse(name).file for name in chosen}
        for target in targets.values():
            refuse_to_overwrite(target, "--out", args.force)
        args.out.mkdir(parents=True, exist_ok=True)
        for name, target in targets.items():
            dsl.write(models[name], target, name=name)
            print(f"wrote {target}")
    else:
        for name in chosen:
            print(dsl.emit(models[name], name=name))
    if args.check:
        verdict = refines(bounds.pessimistic, bounds.optimistic)
        print(
            f"; z3: h∧ ⪯ h∨ {'proved' if verdict.holds else 'REFUTED: ' + str(verdict.counterexample)}", file=sys.stderr
        )
        return 0 if verdict.holds else 1
    return 0

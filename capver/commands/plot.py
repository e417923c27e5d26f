"""``capver plot RUN [RUN ...]``: the learning curves of several ``capver learn`` runs
of one setting in one figure — model agreement against simulator steps, one line per
method (mean over the runs of that method), as in the paper's Fig. 4."""

from __future__ import annotations

import argparse
from pathlib import Path

from capver.commands.argtypes import refuse_to_overwrite
from capver.errors import RunFileError
from capver.io import run_dir, run_file
from capver.io.curves import plot_curves, read_curves

METRICS = ("coverage_agreement", "agreement", "exact_vd", "coverage_agreement_tilde", "exact_vd_tilde")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("runs", type=Path, nargs="+", metavar="RUN", help="--out directories of capver learn")
    parser.add_argument(
        "--metric", choices=METRICS, default="coverage_agreement", help="the y axis (default coverage_agreement)"
    )
    parser.add_argument("--out", type=Path, required=True, help="the PNG to write (a new file)")
    parser.add_argument("--force", action="store_true", help="overwrite --out if it exists")


def run(args: argparse.Namespace) -> int:
    refuse_to_overwrite(args.out, "--out", args.force)
    manifests = [run_file.read(r) for r in args.runs]
    first = manifests[0]
    for r, m in zip(args.runs[1:], manifests[1:], strict=True):
        if (m.agent, m.setting.domain, m.setting.problem) != (first.agent, first.setting.domain, first.setting.problem):
            raise RunFileError(
                f"{r}: a run of --agent {m.agent} --domain {m.setting.domain}; {args.runs[0]} is of "
                f"--agent {first.agent} --domain {first.setting.domain}: plot runs of one setting together"
            )
    rows = []
    for r in args.runs:
        path = r / run_dir.CURVE_CSV
        if not path.exists():
            raise RunFileError(f"{path}: missing; the run has not written its curve yet")
        rows += read_curves([path])
    if not any(row.get(args.metric, "") != "" for row in rows):
        raise RunFileError(f"--metric {args.metric}: no run recorded it (exact_vd needs a known true model)")
    title = f"{first.agent}: {first.setting.domain}/{first.setting.problem}"
    plot_curves(rows, args.out, metric=args.metric, title=title)
    print(f"wrote {args.out} ({len(args.runs)} runs, {len({row['method'] for row in rows})} methods)")
    return 0

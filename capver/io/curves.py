"""Learning-curve files of ``capver learn`` runs: ``curve.csv`` (one row per
checkpoint, rewritten atomically) and the plot of model agreement against simulator
steps, one line per method, like the paper's Fig. 4."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from capver.io.atomic import replace_text

CURVE_FIELDS = (
    "method",
    "seed",
    "steps",
    "queries",
    "transitions",
    "agreement",
    "coverage_agreement",
    "exact_vd",
    "coverage_agreement_tilde",
    "exact_vd_tilde",
)


def write_curve(path: Path, rows: Iterable[Mapping[str, object]]) -> None:
    """Rewrite the curve CSV atomically: a run killed mid-write keeps the previous
    checkpoint's file whole."""
    buf = io.StringIO(newline="")
    w = csv.DictWriter(buf, fieldnames=CURVE_FIELDS, extrasaction="ignore")
    w.writeheader()
    for r in rows:
        w.writerow(r)
    replace_text(path, buf.getvalue())


def read_curves(paths: Iterable[Path]) -> list[dict[str, str]]:
    rows: list[dict[str, str]] = []
    for p in paths:
        with open(p, newline="") as f:
            rows.extend(csv.DictReader(f))
    return rows


def plot_curves(
    rows: Sequence[Mapping[str, object]], path: Path, metric: str = "coverage_agreement", title: str = ""
) -> None:
    """Model agreement vs simulator steps, one line per method (mean over seeds on a
    common step grid), like the paper's Fig. 4."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, ax = plt.subplots(figsize=(6, 4))
    by_method: dict[str, dict[str, list[tuple[float, float]]]] = {}
    for r in rows:
        val = r.get(metric)
        if val in (None, ""):
            continue
        by_method.setdefault(str(r["method"]), {}).setdefault(str(r["seed"]), []).append(
            (float(r["steps"]), float(val))  # type: ignore[arg-type]
        )
    for method, runs in sorted(by_method.items()):
        top = max(s for pts in runs.values() for s, _ in pts)
        grid = np.linspace(0, top, 200)
        curves = []
        for pts in runs.values():
            pts.sort()
            xs, ys = zip(*pts)
            curves.append(np.interp(grid, xs, ys, right=ys[-1]))
        mean = np.mean(curves, axis=0)
        ax.plot(grid, mean, label=f"{method} ({len(runs)} seed{'s' if len(runs) > 1 else ''})")
    ax.set_xlabel("simulator steps")
    ax.set_ylabel(metric.replace("_", " "))
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend()
    if title:
        ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)

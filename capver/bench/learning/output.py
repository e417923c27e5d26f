"""What ``capver bench learning`` writes: the Markdown tables of the E1/E4 summary
and of the QACE comparison (paper, section 4.2), ``runs.csv`` and one curve plot per
setting and metric."""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from capver.bench.learning.analysis import METRICS, SHORT, THRESHOLDS, QaceRow, Reach, SummaryRow
from capver.bench.learning.runs import RunResult
from capver.bench.markdown import markdown_table, table_row
from capver.io.curves import plot_curves

CURVE_FIELDS = (
    "setting",
    "method",
    "seed",
    "steps",
    "queries",
    "executions",
    "transitions",
    "learn_seconds",
    "agreement",
    "coverage_agreement",
    "exact_vd",
    "mae",
    "mae_tried",
    "mae_effective",
    "sc_coverage",
    "coverage_agreement_tilde",
    "exact_vd_tilde",
    "mae_tilde",
    "mae_tilde_tried",
    "mae_tilde_effective",
    "tilde_seconds",
)


def _reach_cell(r: Reach) -> str:
    if r.mean_steps is None:
        return f"— (0/{r.seeds})"
    return f"{r.mean_steps:.0f} ({r.reached}/{r.seeds})"


def _pm(mean_std: tuple[float, float]) -> str:
    return f"{mean_std[0]:.4f} ± {mean_std[1]:.4f}"


def main_table(rows: Sequence[SummaryRow]) -> list[str]:
    head = ["setting", "method", "seeds", "budget", "steps", "time-capped"]
    for metric in METRICS:
        head += [f"{SHORT[metric]}→{thr:.0%}" for thr in THRESHOLDS]
    for metric in METRICS:
        head += [f"R÷M {SHORT[metric]} {thr:.0%}" for thr in THRESHOLDS]
    head += [
        "R÷M @final cov",
        "cov@budget",
        "final agr",
        "final cov",
        "exact VD",
        "learn s",
        "wall s",
        "final cov h̃",
        "exact VD h̃",
        "R÷M @final cov h̃",
    ]
    lines = markdown_table(head)
    for r in rows:
        cells = [r.setting, r.method, str(r.seeds), str(r.budget), f"{r.steps:.0f}", f"{r.time_capped}/{r.seeds}"]
        cells += [_reach_cell(r.reach[(m, t)]) for m in METRICS for t in THRESHOLDS]
        cells += [r.ratio.get((m, t), "") for m in METRICS for t in THRESHOLDS]
        cells += [
            r.ratio_final_coverage,
            f"{r.cov_at_budget:.4f}",
            _pm(r.final["agreement"]),
            _pm(r.final["coverage_agreement"]),
            "—" if r.exact_vd is None else f"{r.exact_vd:.4f}",
            f"{r.learn_seconds:.3f}",
            f"{r.wall_seconds:.3f}",
            "—" if r.final_tilde is None else _pm(r.final_tilde),
            "—" if r.exact_vd_tilde is None else f"{r.exact_vd_tilde:.4f}",
            r.ratio_final_tilde,
        ]
        lines.append(table_row(cells))
    return lines


def qace_table(rows: Sequence[QaceRow], threshold: float) -> list[str]:
    head = [
        "method",
        "seeds",
        f"reached ≤{threshold}",
        "steps at threshold",
        "executions at threshold",
        "learn s at threshold",
        "best MAE",
        "steps at best",
        "learn s at best",
        "final MAE on tried (s,c)",
        "final MAE on applicable (s,c)",
        "final (s,c) coverage",
        "steps run",
        f"h̃ reached ≤{threshold}",
        "h̃ steps at threshold",
        "h̃ executions at threshold",
        "h̃ s at threshold",
        "h̃ best MAE",
        "h̃ final MAE",
        "h̃ final MAE on applicable (s,c)",
        "h̃ final MAE on tried (s,c)",
    ]
    lines = markdown_table(head)

    def num(v: float | None, fmt: str) -> str:
        return "—" if v is None else format(v, fmt)

    for r in rows:
        lines.append(
            table_row(
                [
                    r.method,
                    str(r.seeds),
                    f"{r.reached}/{r.seeds}",
                    num(r.steps, ".0f"),
                    num(r.executions, ".0f"),
                    num(r.learn_seconds, ".1f"),
                    f"{r.best_mae:.4f}",
                    f"{r.best_steps:.0f}",
                    f"{r.best_seconds:.1f}",
                    num(r.final_mae_tried, ".4f"),
                    f"{r.final_mae_effective:.4f}",
                    f"{r.final_sc_coverage:.3f}",
                    f"{r.budget_steps:.0f}",
                    *_tilde_cells(r, num),
                ]
            )
        )
    return lines


def _tilde_cells(r: QaceRow, num: Callable[[float | None, str], str]) -> list[str]:
    t = r.tilde
    if t is None:
        return ["—"] * 8
    return [
        f"{t.reached}/{r.seeds}",
        num(t.steps, ".0f"),
        num(t.executions, ".0f"),
        num(t.seconds, ".1f"),
        f"{t.best_mae:.4f}",
        f"{t.final_mae:.4f}",
        f"{t.final_mae_effective:.4f}",
        num(t.final_mae_tried, ".4f"),
    ]


def write_runs(path: Path, results: Iterable[RunResult]) -> None:
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CURVE_FIELDS, extrasaction="ignore", restval="")
        w.writeheader()
        for r in results:
            w.writerows(r.rows)


def write_plots(out: Path, results: Sequence[RunResult]) -> list[Path]:
    """``SETTING_METRIC.png`` per setting and recorded metric (mean over seeds)."""
    paths = []
    by_setting: dict[tuple[str, str], list[Mapping[str, object]]] = {}
    for r in results:
        by_setting.setdefault((r.spec.setting, r.spec.kind), []).extend(r.rows)
    for (setting, kind), rows in by_setting.items():
        metrics = ("mae", "mae_tilde") if kind == "qace" else (*METRICS, "exact_vd", "coverage_agreement_tilde")
        for metric in metrics:
            if not any(row.get(metric, "") != "" for row in rows):
                continue
            path = out / f"{setting.replace(':', '_')}_{metric}.png"
            plot_curves(rows, path, metric=metric, title=setting + (" (QACE comparison)" if kind == "qace" else ""))
            paths.append(path)
    return paths

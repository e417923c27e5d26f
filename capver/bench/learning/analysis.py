"""The analysis of ``capver bench learning``'s runs (paper, section 4.2): steps to a
threshold of model agreement (first or sustained), seed-mean curves and their
crossings, Random ÷ method ratios, and the per-method summaries of the curve and
QACE runs."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from capver.bench.learning.runs import RunResult

THRESHOLDS = (0.90, 0.99)
METRICS = ("agreement", "coverage_agreement")
SHORT = {"agreement": "agr", "coverage_agreement": "cov"}

Curve = list[tuple[float, float]]


def curve(result: RunResult, metric: str) -> Curve:
    return [
        (float(r["steps"]), float(r[metric]))  # type: ignore[arg-type]
        for r in result.rows
        if r.get(metric, "") != ""
    ]


def steps_to_reach(points: Curve, threshold: float, sustained: bool = False) -> float | None:
    """Steps at the first checkpoint (after the initial one) whose value is at least
    ``threshold``; with ``sustained`` the first from which it never drops below."""
    hit: float | None = None
    for steps, v in points[1:]:
        if v >= threshold:
            if hit is None:
                hit = steps
                if not sustained:
                    return hit
        elif sustained:
            hit = None
    return hit


def mean_curve(curves: Sequence[Curve]) -> tuple[np.ndarray, np.ndarray]:
    """The seed mean on the union of checkpoint steps; a run that stopped early keeps
    its last value."""
    grid = np.unique(np.concatenate([[s for s, _ in c] for c in curves]))
    ys = [np.interp(grid, [s for s, _ in c], [v for _, v in c]) for c in curves]
    return grid, np.mean(ys, axis=0)


def first_crossing(grid: np.ndarray, values: np.ndarray, target: float) -> float | None:
    """The step at which the piecewise-linear curve first reaches ``target``."""
    above = np.nonzero(values >= target - 1e-12)[0]
    if not len(above):
        return None
    i = int(above[0])
    if i == 0:
        return float(grid[0])
    x0, x1, y0, y1 = grid[i - 1], grid[i], values[i - 1], values[i]
    # values[i] may fall short of the target by the 1e-12 tolerance; the crossing is
    # then at grid[i], not beyond it.
    return float(min(x1, x0 + (target - y0) * (x1 - x0) / (y1 - y0)))


@dataclass(frozen=True, slots=True)
class Reach:
    mean_steps: float | None  # over the seeds that reached it
    reached: int
    seeds: int


@dataclass(frozen=True, slots=True)
class SummaryRow:
    setting: str
    method: str
    seeds: int
    budget: int
    steps: float
    time_capped: int
    reach: Mapping[tuple[str, float], Reach]
    ratio: Mapping[tuple[str, float], str]  # Random ÷ this method (empty for Random itself)
    ratio_final_coverage: str
    cov_at_budget: float
    final: Mapping[str, tuple[float, float]]  # metric → (mean, std)
    exact_vd: float | None
    learn_seconds: float
    wall_seconds: float
    final_tilde: tuple[float, float] | None = None  # h̃'s final coverage agreement (mean, std)
    exact_vd_tilde: float | None = None
    ratio_final_tilde: str = ""  # Random ÷ this method, to this method's final h̃ coverage agreement


def _fmt_ratio(num: float, den: float, lower_bound: bool = False) -> str:
    if den <= 0:
        return "—"
    return f"{'>' if lower_bound else ''}{num / den:.1f}×"


def summarize(results: Sequence[RunResult], budgets: Mapping[str, int], sustained: bool = False) -> list[SummaryRow]:
    """One row per (setting, method label) of the curve runs, in the order of ``results``."""
    groups: dict[tuple[str, str], list[RunResult]] = {}
    for r in results:
        if r.spec.kind == "curve":
            groups.setdefault((r.spec.setting, r.spec.label), []).append(r)
    out = []
    for (setting, label), runs in groups.items():
        reach: dict[tuple[str, float], Reach] = {}
        for metric in METRICS:
            for thr in THRESHOLDS:
                hits = [h for h in (steps_to_reach(curve(r, metric), thr, sustained) for r in runs) if h is not None]
                reach[(metric, thr)] = Reach(float(np.mean(hits)) if hits else None, len(hits), len(runs))
        final = {}
        for metric in METRICS:
            values = [curve(r, metric)[-1][1] for r in runs]
            final[metric] = (float(np.mean(values)), float(np.std(values)))
        vds = [float(r.rows[-1]["exact_vd"]) for r in runs if r.rows[-1].get("exact_vd", "") != ""]  # type: ignore[arg-type]
        tilde_cov = [
            float(r.rows[-1]["coverage_agreement_tilde"])  # type: ignore[arg-type]
            for r in runs
            if r.rows[-1].get("coverage_agreement_tilde", "") != ""
        ]
        tilde_vds = [
            float(r.rows[-1]["exact_vd_tilde"])  # type: ignore[arg-type]
            for r in runs
            if r.rows[-1].get("exact_vd_tilde", "") != ""
        ]
        budget = budgets[setting]
        cov_curves = [curve(r, "coverage_agreement") for r in runs]
        cov_b = float(np.mean([np.interp(budget, [s for s, _ in c], [v for _, v in c]) for c in cov_curves]))
        out.append(
            SummaryRow(
                setting,
                label,
                len(runs),
                budget,
                float(np.mean([float(r.rows[-1]["steps"]) for r in runs])),  # type: ignore[arg-type]
                sum(r.time_capped for r in runs),
                reach,
                {},
                "",
                cov_b,
                final,
                float(np.mean(vds)) if vds else None,
                float(np.mean([r.learn_seconds for r in runs])),
                float(np.mean([r.wall_seconds for r in runs])),
                (float(np.mean(tilde_cov)), float(np.std(tilde_cov))) if tilde_cov else None,
                float(np.mean(tilde_vds)) if tilde_vds else None,
            )
        )
    return [_with_ratios(row, out, groups) for row in out]


def _with_ratios(
    row: SummaryRow, rows: Sequence[SummaryRow], groups: Mapping[tuple[str, str], list[RunResult]]
) -> SummaryRow:
    """Random ÷ this row's method, at each threshold and at this method's final
    coverage agreement of h∧ and of h̃."""
    base = next((r for r in rows if r.setting == row.setting and r.method == "random"), None)
    if base is None or row.method == "random":
        return row
    ratio: dict[tuple[str, float], str] = {}
    for key, mine in row.reach.items():
        theirs = base.reach[key]
        if mine.reached < mine.seeds or mine.mean_steps is None:
            ratio[key] = "—"
        elif theirs.reached == theirs.seeds and theirs.mean_steps is not None:
            ratio[key] = _fmt_ratio(theirs.mean_steps, mine.mean_steps)
        elif theirs.reached == 0:
            ratio[key] = _fmt_ratio(base.steps, mine.mean_steps, lower_bound=True)
        else:
            ratio[key] = "—"
    at_final = _ratio_at_level(groups, row, "coverage_agreement", row.final["coverage_agreement"][0])
    at_tilde = (
        "—" if row.final_tilde is None else _ratio_at_level(groups, row, "coverage_agreement_tilde", row.final_tilde[0])
    )
    return replace(row, ratio=ratio, ratio_final_coverage=at_final, ratio_final_tilde=at_tilde)


def _ratio_at_level(
    groups: Mapping[tuple[str, str], list[RunResult]], row: SummaryRow, metric: str, target: float
) -> str:
    """Random's steps ÷ ``row``'s method's steps to first reach ``target`` on the seed
    means of ``metric`` (piecewise linear between the checkpoints that have it); a
    lower bound when Random's whole run stays below."""
    mine_points = [curve(r, metric) for r in groups[(row.setting, row.method)]]
    rand_points = [curve(r, metric) for r in groups[(row.setting, "random")]]
    if not all(mine_points) or not all(rand_points):
        return "—"
    mine_curve, rand_curve = mean_curve(mine_points), mean_curve(rand_points)
    mine_steps = first_crossing(*mine_curve, target)
    rand_steps = first_crossing(*rand_curve, target)
    if mine_steps is None or mine_steps <= 0:
        return "—"
    if rand_steps is None:
        return _fmt_ratio(float(rand_curve[0][-1]), mine_steps, lower_bound=True)
    return _fmt_ratio(rand_steps, mine_steps)


@dataclass(frozen=True, slots=True)
class QaceRow:
    method: str
    seeds: int
    reached: int
    steps: float | None  # means over the seeds that reached the threshold
    executions: float | None
    learn_seconds: float | None
    best_mae: float
    best_steps: float
    best_seconds: float
    final_mae_tried: float | None
    final_mae_effective: float
    final_sc_coverage: float
    budget_steps: float
    tilde: QaceTilde | None = None


@dataclass(frozen=True, slots=True)
class QaceTilde:
    """The QACE columns of h̃; ``seconds`` are learning plus building h̃ there."""

    reached: int
    steps: float | None
    executions: float | None
    seconds: float | None
    best_mae: float
    best_steps: float
    final_mae: float
    final_mae_effective: float
    final_mae_tried: float | None


def summarize_qace(results: Sequence[RunResult], threshold: float) -> list[QaceRow]:
    groups: dict[str, list[RunResult]] = {}
    for r in results:
        if r.spec.kind == "qace":
            groups.setdefault(r.spec.label, []).append(r)

    def mean(rows: Iterable[Mapping[str, object]], key: str) -> float:
        return float(np.mean([float(row[key]) for row in rows]))  # type: ignore[arg-type]

    out = []
    for label, runs in groups.items():
        hits, bests = [], []
        for r in runs:
            rows = [row for row in r.rows if row.get("mae", "") != ""]
            hit = next((row for row in rows if float(row["mae"]) <= threshold), None)  # type: ignore[arg-type]
            if hit is not None:
                hits.append(hit)
            bests.append(min(rows, key=lambda row: (float(row["mae"]), float(row["steps"]))))  # type: ignore[arg-type]
        tried = [float(r.rows[-1]["mae_tried"]) for r in runs if r.rows[-1].get("mae_tried", "") != ""]  # type: ignore[arg-type]
        tilde = _qace_tilde(runs, threshold)
        out.append(
            QaceRow(
                label,
                len(runs),
                len(hits),
                mean(hits, "steps") if hits else None,
                mean(hits, "executions") if hits else None,
                mean(hits, "learn_seconds") if hits else None,
                mean(bests, "mae"),
                mean(bests, "steps"),
                mean(bests, "learn_seconds"),
                float(np.mean(tried)) if tried else None,
                mean([r.rows[-1] for r in runs], "mae_effective"),
                mean([r.rows[-1] for r in runs], "sc_coverage"),
                mean([r.rows[-1] for r in runs], "steps"),
                tilde,
            )
        )
    return out


def _qace_tilde(runs: Sequence[RunResult], threshold: float) -> QaceTilde | None:
    """h̃'s QACE numbers over the runs (None when h̃ was not scored)."""
    per_run = [[row for row in r.rows if row.get("mae_tilde", "") != ""] for r in runs]
    if not all(per_run):
        return None

    def num(row: Mapping[str, object], key: str) -> float:
        return float(row[key])  # type: ignore[arg-type]

    hits = [
        h
        for h in (next((row for row in rows if num(row, "mae_tilde") <= threshold), None) for rows in per_run)
        if h is not None
    ]
    bests = [min(rows, key=lambda row: (num(row, "mae_tilde"), num(row, "steps"))) for rows in per_run]
    finals = [rows[-1] for rows in per_run]
    tried = [num(row, "mae_tilde_tried") for row in finals if row.get("mae_tilde_tried", "") != ""]

    def mean(rows: Sequence[Mapping[str, object]], key: str) -> float:
        return float(np.mean([num(row, key) for row in rows]))

    return QaceTilde(
        len(hits),
        mean(hits, "steps") if hits else None,
        mean(hits, "executions") if hits else None,
        float(np.mean([num(h, "learn_seconds") + num(h, "tilde_seconds") for h in hits])) if hits else None,
        mean(bests, "mae_tilde"),
        mean(bests, "steps"),
        mean(finals, "mae_tilde"),
        mean(finals, "mae_tilde_effective"),
        float(np.mean(tried)) if tried else None,
    )

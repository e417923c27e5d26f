"""``capver bench learning``: the paper's learning-efficiency comparison (section 4.2,
E1 and E4) and the QACE-style primitive-action comparison.

For every setting × method × seed it runs the MCQS loop under a simulator-step
budget and records learning curves against one evaluation dataset D′ per setting
(shared by all methods and seeds).  Two agreement metrics are recorded (see
:mod:`capver.engines.evaluation`): the paper's printed 1 − VD_s, and the
coverage-weighted 1 − VD over D′ (which charges transitions the learner never saw).
Runs are independent and go to a process pool (``--jobs``).
"""

from __future__ import annotations

import argparse
import csv
import multiprocessing
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from capver.engines.evaluation import collect_eval_dataset, coverage_agreement, mean_abs_error, model_agreement
from capver.engines.learning import LearnConfig, Learner
from capver.engines.mcqs.base import SynthesisConfig
from capver.engines.mcts import MCTSConfig
from capver.engines.report import plot_curves
from capver.model.state import Transition
from capver.settings import SettingArgs, build_assessment

DEFAULT_BUDGETS = {"lao:first_responders": 3000, "lao:blocks": 2000, "lao:tireworld": 1500, "minigrid-rl": 1500}


@dataclass(frozen=True, slots=True)
class Job:
    setting: str
    method: str
    seed: int
    budget: int
    eval_sequences: int
    eval_every: int
    xi: float = 1e-5
    iterations: int = 100


def _assessment(setting: str, seed: int):
    agent, _, domain = setting.partition(":")
    args = SettingArgs(domain=domain or "first_responders", theta=None if agent.startswith("minigrid") else 1, seed=seed)
    return build_assessment(agent, args, np.random.default_rng(seed))


def run_job(job: Job) -> list[dict[str, object]]:
    """One learning run; returns its curve rows."""
    # D′ is built from seed 0's setting and a fixed generator: identical for every job.
    a = _assessment(job.setting, 0)
    d_eval = collect_eval_dataset(a.setting, a.setting.capabilities, job.eval_sequences, np.random.default_rng(4242))
    if job.seed:
        a = _assessment(job.setting, job.seed)
    cfg = LearnConfig(
        method=job.method, max_steps=job.budget, patience=0, xi_cap=job.xi, xi_step=job.xi / 10,
        synthesis=SynthesisConfig(MCTSConfig(iterations=job.iterations, horizon=10, discount=0.95)),
    )
    learner = Learner(a.ctx, a.setting, cfg, np.random.default_rng(1000 + job.seed), grow=a.grow)
    label = job.method if job.xi else f"{job.method} ξ=0"
    rows: list[dict[str, object]] = []
    start = time.monotonic()
    nxt = [0]

    def record(lr: Learner) -> None:
        rows.append({
            "setting": job.setting, "method": label, "seed": job.seed, "steps": lr.progress.steps,
            "queries": lr.progress.queries, "transitions": lr.progress.unique_transitions,
            "agreement": model_agreement(lr.h_and, lr.data, d_eval),
            "coverage_agreement": coverage_agreement(lr.h_and, d_eval),
            "seconds": time.monotonic() - start,
        })

    def on_query(lr: Learner) -> None:
        if lr.progress.steps >= nxt[0]:
            record(lr)
            nxt[0] = lr.progress.steps + job.eval_every

    record(learner)
    learner.run(on_query)
    record(learner)
    return rows


def steps_to(rows: Sequence[dict[str, object]], metric: str, level: float) -> float | None:
    for r in rows:
        if float(r[metric]) >= level:  # type: ignore[arg-type]
            return float(r["steps"])  # type: ignore[arg-type]
    return None


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:,.0f}"


def summarize(all_rows: list[dict[str, object]], metric: str = "coverage_agreement") -> str:
    out = []
    settings = sorted({str(r["setting"]) for r in all_rows})
    for setting in settings:
        rows_s = [r for r in all_rows if r["setting"] == setting]
        methods = sorted({str(r["method"]) for r in rows_s})
        runs = {m: {} for m in methods}
        for r in rows_s:
            runs[str(r["method"])].setdefault(r["seed"], []).append(r)
        finals = {m: float(np.mean([rs[-1][metric] for rs in runs[m].values()])) for m in methods}
        rnd = finals.get("random")
        out.append(f"\n#### {setting}\n")
        out.append("| method | seeds | final coverage agreement | final paper agreement (1−VD_s) | steps to 90% / 99% (coverage) "
                   "| steps to Random's final level | Random ÷ method at that level | wall s |")
        out.append("|---|---|---|---|---|---|---|---|")
        rnd_steps = None
        if rnd is not None:
            hits = [steps_to(rs, metric, rnd) for rs in runs["random"].values()]
            rnd_steps = float(np.mean([h for h in hits if h is not None])) if any(h is not None for h in hits) else None
        for m in methods:
            rs_all = list(runs[m].values())
            paper = float(np.mean([rs[-1]["agreement"] for rs in rs_all]))
            s90 = [steps_to(rs, metric, 0.9) for rs in rs_all]
            s99 = [steps_to(rs, metric, 0.99) for rs in rs_all]

            def mean_hit(v: list[float | None]) -> str:
                hit = [x for x in v if x is not None]
                return f"{_fmt(float(np.mean(hit)))} ({len(hit)}/{len(v)})" if hit else f"— (0/{len(v)})"

            at = [steps_to(rs, metric, rnd) for rs in rs_all] if rnd is not None else []
            at_hit = [x for x in at if x is not None]
            at_mean = float(np.mean(at_hit)) if at_hit else None
            ratio = f"{rnd_steps / at_mean:.1f}×" if (rnd_steps and at_mean) else "—"
            wall = float(np.mean([rs[-1]["seconds"] for rs in rs_all]))
            out.append(f"| {m} | {len(rs_all)} | {finals[m]:.4f} | {paper:.4f} | {mean_hit(s90)} / {mean_hit(s99)} | "
                       f"{_fmt(at_mean)} | {ratio} | {wall:.0f} |")
    return "\n".join(out)


def qace(budget: int, seeds: int, methods: Sequence[str], target: float = 0.009) -> str:
    """Primitive-action agent on First Responders: interactions and time until the mean
    |P_true − P_model| over the true transitions is ≤ ``target``."""
    lines = ["\n#### primitive-action agent, First Responders (QACE setting)\n",
             f"| method | seed | interactions to mean abs error ≤ {target} | learning time s | final error |",
             "|---|---|---|---|---|"]
    for method in methods:
        for seed in range(seeds):
            a = build_assessment("primitive", SettingArgs(domain="first_responders"), np.random.default_rng(seed))
            assert a.truth is not None and a.reachable is not None
            truth = a.truth
            true_t = [Transition(s, c, s2) for s in a.reachable for c, m in truth.items() for s2 in m.distribution(s)]
            cfg = LearnConfig(method=method, max_steps=budget, patience=0,
                              synthesis=SynthesisConfig(MCTSConfig(iterations=100, horizon=10, discount=0.95)))
            learner = Learner(a.ctx, a.setting, cfg, np.random.default_rng(seed))
            hit: list[tuple[int, float]] = []
            start = time.monotonic()
            last = [1.0]

            def check(lr: Learner, hit=hit, start=start, last=last, true_t=true_t, truth=truth) -> None:
                if lr.progress.queries % 5:
                    return
                err = mean_abs_error(lr.h_and, truth, true_t)
                last[0] = err
                if err <= target and not hit:
                    hit.append((lr.progress.steps, time.monotonic() - start))
                    raise StopIteration

            try:
                learner.run(check)
            except StopIteration:
                pass
            steps = f"{hit[0][0]:,}" if hit else f"not reached in {budget:,}"
            secs = f"{hit[0][1]:.1f}" if hit else f"{time.monotonic() - start:.1f}"
            lines.append(f"| {method} | {seed} | {steps} | {secs} | {last[0]:.4f} |")
    lines.append(f"\n{len(true_t)} true transitions from {len(a.reachable)} reachable states; "
                 "QACE needs 2,466–5,295 interactions and 395–462 s on this kind of machine.")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="capver bench learning", description=__doc__.splitlines()[0])
    ap.add_argument("--settings", default=",".join(DEFAULT_BUDGETS))
    ap.add_argument("--methods", default="mcqs-e,mcqs-s,random")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--budget-scale", type=float, default=1.0, help="multiply the default step budgets")
    ap.add_argument("--eval-sequences", type=int, default=300)
    ap.add_argument("--eval-every", type=int, default=100)
    ap.add_argument("--ablation", action="store_true", help="also run MCQS with ξ = 0 on the PDDL settings")
    ap.add_argument("--qace", action="store_true", help="also run the primitive-action (QACE) comparison")
    ap.add_argument("--qace-budget", type=int, default=2000)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="tiny budgets: a smoke run")
    ap.add_argument("--out", type=Path, default=Path("bench-learning"))
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    settings = [s for s in args.settings.split(",") if s]
    methods = [m for m in args.methods.split(",") if m]
    scale = 0.05 if args.quick else args.budget_scale
    seeds = 1 if args.quick else args.seeds
    evals = 30 if args.quick else args.eval_sequences
    jobs = [
        Job(s, m, seed, max(50, int(DEFAULT_BUDGETS.get(s, 1500) * scale)), evals if not s.startswith("minigrid") else max(20, evals // 3),
            max(10, int(args.eval_every * scale)))
        for s in settings for m in methods for seed in range(seeds)
    ]
    if args.ablation:
        jobs += [
            Job(s, m, seed, max(50, int(DEFAULT_BUDGETS.get(s, 1500) * scale)), evals, max(10, int(args.eval_every * scale)), xi=0.0)
            for s in settings if s.startswith("lao") for m in methods if m != "random" for seed in range(seeds)
        ]
    start = time.monotonic()
    with multiprocessing.get_context("fork").Pool(args.jobs) as pool:
        results = pool.map(run_job, jobs, chunksize=1)
    rows = [r for rs in results for r in rs]
    with open(args.out / "runs.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    text = summarize(rows)
    for s in settings:
        sub = [r for r in rows if r["setting"] == s]
        for metric in ("coverage_agreement", "agreement"):
            plot_curves(sub, args.out / f"{s.replace(':', '_')}_{metric}.png", metric=metric, title=s)
    if args.qace:
        text += "\n" + qace(50 if args.quick else args.qace_budget, 1 if args.quick else min(args.seeds, 3),
                            [m for m in methods if m != "random"] or ["mcqs-s"])
    text += f"\n\n{len(jobs)} runs, {time.monotonic() - start:.0f} s wall with {args.jobs} processes, os.cpu_count() = {multiprocessing.cpu_count()}\n"
    (args.out / "table.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Benchmark: learning efficiency of MCQS-E, MCQS-S and the Random Query baseline
(section 4.2, questions E1 and E4), and a QACE-style comparison on primitive actions.

Part 1 (E1).  For every setting (default: LAO* on First Responders, Blocksworld and
Tireworld with Θ = 1, and the MiniGrid RL agent with Θ = ∞) and every method, the
learning loop of :mod:`capver.engines.learning` runs for ``--seeds`` seeds on a
budget of simulator steps.  At checkpoints the pessimistic model h∧ is scored
against ONE evaluation dataset D′ per setting (the same for every method and seed:
``--eval-sequences`` sequences of 10–30 uniformly random capabilities, collected
once with a fixed seed) with

* ``agreement`` — section 4.2's model agreement 1 − VD_s as printed (D′'s
  transitions weighted by the learner's own counts; see
  :func:`capver.engines.evaluation.model_agreement`);
* ``coverage_agreement`` — 1 − VD weighted by D′'s counts, which also charges the
  behaviour the learner has not seen yet;
* ``exact_vd`` where the true model is known;
* the same coverage agreement and exact VD for the Occam model h̃
  (``*_tilde``), computed after the run on the h∧ of every checkpoint so that
  building h̃ never changes the learner's time budget or its h∧ numbers.

The table gives, per setting × method, the steps to reach 90 % and 99 % of either
metric (mean over the seeds that reached it, with how many did), the ratio
Random ÷ method for each threshold that every seed of both reached, the ratio of
the steps Random needs to reach the method's final coverage agreement to the steps
the method needed (on the seed-mean curves, interpolated between checkpoints;
``>x`` when Random never gets there: x is then a lower bound), final values and
wall-clock.  Random runs get ``--random-factor`` times the step budget (they are
cheap per step) so that this ratio can be measured rather than only bounded.

Part 2 (E4).  MCQS-S and MCQS-E with ξ = 0 on the PDDL settings (rows ``… ξ=0``).

Part 3.  The QACE comparison (Verma et al. 2023): the primitive-action agent on
First Responders, whose true model is known.  Every ``--qace-every`` queries the
mean |P_true − P_model| of h∧ over all transitions of the true model from the
reachable states is computed; reported are the simulator steps, executions and
learning time (evaluation excluded) at which it first drops to
``--qace-threshold`` (QACE needs 2,466–5,295 interactions and 395–462 s to reach
0.009), or the best value reached — for h∧ and, beside it, for h̃ (whose time adds
the seconds spent building h̃ at that checkpoint).

Run: ``capver bench learning [--quick] [--jobs 2] [--executor local|threads|ray [--address ADDR]]
[--out DIR]``; writes ``table.md``, ``runs.csv`` and one PNG per setting and metric into
``--out``.  The runs and the D′ chunks beyond the first go to ``--jobs`` workers of the
executor (capver.engines.executors); the results do not depend on which.

The package, one part a module: :mod:`~capver.bench.learning.settings` (settings, D′,
true transitions), :mod:`~capver.bench.learning.runs` (curve and QACE runs, jobs),
:mod:`~capver.bench.learning.analysis` (thresholds, curves, summaries),
:mod:`~capver.bench.learning.output` (tables, runs.csv, plots) and
:mod:`~capver.bench.learning.cli` (options and ``main``).
"""

from __future__ import annotations

from capver.bench.learning.analysis import (
    METRICS,
    SHORT,
    THRESHOLDS,
    Curve,
    QaceRow,
    QaceTilde,
    Reach,
    SummaryRow,
    curve,
    first_crossing,
    mean_curve,
    steps_to_reach,
    summarize,
    summarize_qace,
)
from capver.bench.learning.analysis import (
    _fmt_ratio as _fmt_ratio,
)
from capver.bench.learning.cli import QUICK, build_parser, main, plan_jobs
from capver.bench.learning.cli import _csv_list as _csv_list
from capver.bench.learning.output import CURVE_FIELDS, main_table, qace_table, write_plots, write_runs
from capver.bench.learning.runs import Job, RunResult, RunSpec, run_curve, run_job, run_jobs, run_qace
from capver.bench.learning.settings import (
    DEFAULT_BUDGETS,
    DEFAULT_SETTINGS,
    EVAL_SEED,
    FALLBACK_BUDGET,
    QACE_SETTING,
    QUICK_BUDGET,
    SETTING_SEED,
    EvalSet,
    applicable_transitions,
    build_setting,
    collect_eval_set,
    parse_setting,
    true_transitions,
)

# _csv_list and _fmt_ratio stay importable from here: capver.bench.decide uses them.
__all__ = [
    "CURVE_FIELDS",
    "DEFAULT_BUDGETS",
    "DEFAULT_SETTINGS",
    "EVAL_SEED",
    "FALLBACK_BUDGET",
    "METRICS",
    "QACE_SETTING",
    "QUICK",
    "QUICK_BUDGET",
    "SETTING_SEED",
    "SHORT",
    "THRESHOLDS",
    "Curve",
    "EvalSet",
    "Job",
    "QaceRow",
    "QaceTilde",
    "Reach",
    "RunResult",
    "RunSpec",
    "SummaryRow",
    "applicable_transitions",
    "build_parser",
    "build_setting",
    "collect_eval_set",
    "curve",
    "first_crossing",
    "main",
    "main_table",
    "mean_curve",
    "parse_setting",
    "plan_jobs",
    "qace_table",
    "run_curve",
    "run_job",
    "run_jobs",
    "run_qace",
    "steps_to_reach",
    "summarize",
    "summarize_qace",
    "true_transitions",
    "write_plots",
    "write_runs",
]

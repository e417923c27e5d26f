"""Benchmark: CPU milliseconds per simulator step of the learning loop, per
query-synthesis method and per phase (issue 13, "Cheaper query synthesis").

For every method (default MCQS-E, MCQS-S and Random) one learning run on LAO* First
Responders (``--setting``) with the search configuration of ``capver learn`` (100
MCTS iterations, horizon 10, 2 executions per query) runs to ``--steps`` simulator
steps, and the process CPU time is split into

* ``planning`` — synthesising each query (the first plan, from x₀);
* ``replanning`` — consulting the query policy during execution, which is where
  MCQS-E and MCQS-S re-plan after a surprise;
* ``execution`` — the agent and the simulator (one capability execution each);
* ``recording`` — adding the transition to D and rebuilding h∧/h∨ incrementally,
  and the per-query probability-change test of the stopping rule;
* ``other`` — everything else in the loop (choosing x₀, reverting the simulator).

``other`` is the total minus the four measured phases, so the phases sum to the
total.  ``--variants`` adds MCQS-E runs with a behaviour-changing option of the
search (``saturate``: end a search once the root is worth the maximal disagreement 1,
:attr:`capver.engines.mcqs.base.SynthesisConfig.stop_at_full_disagreement`), so one
run shows the default and the option side by side.  Numbers are CPU time of this
process, not wall-clock, and still depend on what else the machine runs.

Run: ``capver bench speed [--quick] [--out DIR]``; writes ``table.md`` and
``speed.csv`` into ``--out`` and prints the table.
"""

from __future__ import annotations

import csv
import dataclasses
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from capver.bench.cli import BenchParser, summary
from capver.bench.learning import build_setting, parse_setting
from capver.engines.execution import Execution
from capver.engines.learning import LearnConfig, Learner
from capver.engines.mcqs import QUERY_METHODS
from capver.engines.mcqs.base import QueryPolicy, QuerySynthesizer, SynthesisInput
from capver.model.capability_model import CompoundModel
from capver.model.state import State
from capver.settings import SettingError

PHASES = ("planning", "replanning", "execution", "recording", "other")
DEFAULT_METHODS = ("mcqs-e", "mcqs-s", "random")
# Behaviour-changing options of the search a run can be repeated with; "default" is
# the configuration ``capver learn`` uses.  Each applies to the methods listed.
VARIANTS: dict[str, dict[str, Any]] = {
    "default": {},
    "saturate": {"stop_at_full_disagreement": True},
}
VARIANT_METHODS: dict[str, tuple[str, ...]] = {"saturate": ("mcqs-e",)}
QUICK: dict[str, object] = {"steps": 120, "variants": ["default", "saturate"]}


class _Clock:
    """CPU seconds per phase."""

    def __init__(self) -> None:
        self.seconds = dict.fromkeys(PHASES, 0.0)

    def add(self, phase: str, start: float) -> None:
        self.seconds[phase] += time.process_time() - start


class _TimedPolicy:
    def __init__(self, policy: QueryPolicy, clock: _Clock) -> None:
        self.policy = policy
        self.clock = clock

    def next(self, s: State, step: int, surprised: bool, current: SynthesisInput) -> str | None:
        t = time.process_time()
        try:
            return self.policy.next(s, step, surprised, current)
        finally:
            self.clock.add("replanning", t)


class _TimedSynthesizer:
    def __init__(self, synth: QuerySynthesizer, clock: _Clock) -> None:
        self.synth = synth
        self.name = synth.name
        self.clock = clock

    def synthesize(self, s0: State, inp: SynthesisInput, rng: np.random.Generator) -> QueryPolicy:
        t = time.process_time()
        try:
            return _TimedPolicy(self.synth.synthesize(s0, inp, rng), self.clock)
        finally:
            self.clock.add("planning", t)


class _TimedLearner(Learner):
    """The learning loop with its phases timed; what it computes is unchanged."""

    clock: _Clock

    def _execute(self, c: str, x: Any) -> Execution:
        t = time.process_time()
        try:
            return super()._execute(c, x)
        finally:
            self.clock.add("execution", t)

    def _observe(self, ex: Execution) -> bool:
        t = time.process_time()
        try:
            return super()._observe(ex)
        finally:
            self.clock.add("recording", t)

    def _max_probability_change(self, before: CompoundModel, log_start: int) -> float:
        t = time.process_time()
        try:
            return super()._max_probability_change(before, log_start)
        finally:
            self.clock.add("recording", t)


@dataclass(frozen=True, slots=True)
class SpeedRow:
    method: str
    variant: str
    steps: int
    queries: int
    transitions: int
    seconds: float  # CPU seconds of the whole loop
    phases: dict[str, float]  # CPU seconds per phase, summing to ``seconds``

    def ms_per_step(self, phase: str | None = None) -> float:
        s = self.seconds if phase is None else self.phases[phase]
        return 1000.0 * s / max(self.steps, 1)


def measure(setting: str, method: str, variant: str, steps: int, seed: int, iterations: int, horizon: int,
            executions: int) -> SpeedRow:
    """One timed learning run to ``steps`` simulator steps (setting construction excluded)."""
    a = build_setting(setting)
    config = LearnConfig.from_options(method, executions=executions, iterations=iterations, horizon=horizon,
                                      xi_cap=1e-5, patience=0, max_steps=steps)
    config = dataclasses.replace(config, synthesis=dataclasses.replace(config.synthesis, **VARIANTS[variant]))
    rng = np.random.default_rng(seed)
    a.setting.sim.reset(seed)
    learner = _TimedLearner(a.ctx, a.setting, config, rng, grow=a.grow)
    clock = learner.clock = _Clock()
    learner.synth = _TimedSynthesizer(learner.synth, clock)
    start = time.process_time()
    progress = learner.run()
    total = time.process_time() - start
    measured = sum(v for k, v in clock.seconds.items() if k != "other")
    phases = dict(clock.seconds, other=max(0.0, total - measured))
    # Rounding of the clock can leave ``other`` a hair below zero; the total then
    # absorbs it so that the phases still add up.
    return SpeedRow(method, variant, progress.steps, progress.queries, progress.unique_transitions,
                    max(total, measured), phases)


def table(rows: Sequence[SpeedRow]) -> list[str]:
    head = ["method", "variant", "steps", "queries", "transitions", "ms/step", *(f"{p} ms/step" for p in PHASES)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r.method, r.variant, str(r.steps), str(r.queries), str(r.transitions), f"{r.ms_per_step():.2f}",
                 *(f"{r.ms_per_step(p):.2f}" for p in PHASES)]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _csv_list(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def build_parser() -> BenchParser:
    p = BenchParser("speed", summary(__doc__))
    p.add_argument("--setting", default="lao:first_responders",
                   help="lao:DOMAIN, primitive:DOMAIN or minigrid-rl (default lao:first_responders)")
    p.add_argument("--methods", type=_csv_list, default=list(DEFAULT_METHODS),
                   help=f"comma-separated query-synthesis methods (default {','.join(DEFAULT_METHODS)})")
    p.add_argument("--variants", type=_csv_list, default=["default"],
                   help=f"comma-separated search variants among {','.join(VARIANTS)}; 'saturate' applies to "
                   "MCQS-E only (default: default)")
    p.add_argument("--steps", type=int, default=800, help="simulator steps per run (default 800)")
    p.add_argument("--seed", type=int, default=0, help="seed of every run (default 0)")
    p.add_argument("--iterations", type=int, default=100, help="MCTS iterations per plan (default 100)")
    p.add_argument("--horizon", type=int, default=10, help="query horizon (default 10)")
    p.add_argument("--executions", type=int, default=2, help="executions per query (default 2)")
    p.add_argument("--out", type=Path, default=Path("bench-speed"), help="output directory (default bench-speed)")
    p.add_quick(QUICK, "a smoke run: every method and variant on a short run")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse(argv)
    unknown = sorted(m for m in args.methods if m not in QUERY_METHODS)
    if unknown:
        parser.error(f"--methods: unknown method(s) {unknown}; expected some of {sorted(QUERY_METHODS)}")
    bad = sorted(v for v in args.variants if v not in VARIANTS)
    if bad:
        parser.error(f"--variants: unknown variant(s) {bad}; expected some of {sorted(VARIANTS)}")
    if min(args.steps, args.iterations, args.horizon, args.executions) < 1:
        parser.error("--steps, --iterations, --horizon and --executions must be positive")
    try:
        parse_setting(args.setting)
    except SettingError as exc:
        parser.error(f"--setting: {exc}")
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for method in args.methods:
        for variant in args.variants:
            if method not in VARIANT_METHODS.get(variant, (method,)):
                continue
            print(f"{method} {variant}: {args.steps} steps …", file=sys.stderr, flush=True)
            rows.append(measure(args.setting, method, variant, args.steps, args.seed, args.iterations, args.horizon,
                                args.executions))
    lines = [
        "# capver bench speed",
        "",
        (f"{args.setting}, seed {args.seed}, {args.steps} simulator steps per run; MCTS {args.iterations} iterations, "
         f"horizon {args.horizon}; {args.executions} executions per query. CPU ms per simulator step of this "
         "process, in total and per phase (the phases sum to the total)."),
        "",
        *table(rows),
    ]
    text = "\n".join(lines) + "\n"
    (out / "table.md").write_text(text)
    with (out / "speed.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["method", "variant", "steps", "queries", "transitions", "cpu_seconds",
                    *(f"{p}_seconds" for p in PHASES)])
        for r in rows:
            w.writerow([r.method, r.variant, r.steps, r.queries, r.transitions, f"{r.seconds:.4f}",
                        *(f"{r.phases[p]:.4f}" for p in PHASES)])
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())

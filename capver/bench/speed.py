"""Benchmark: CPU milliseconds per simulator step of the learning loop, per
query-synthesis method and per phase.

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
search turned off (``all-iterations``: every search runs all its iterations instead
of ending once the root is worth the maximal disagreement 1,
:attr:`capver.engines.mcqs.base.SynthesisConfig.stop_at_full_disagreement`, as
before the early end of a search), so one run shows both side by side.  Numbers are CPU time of this
process, not wall-clock, and still depend on what else the machine runs.

``--reachable K`` also counts what there is to learn (why the stopping
rule does not fire): a breadth-first closure over executions with the model-free
simulator from the initial state — every (state, capability) pair of every state
reached is executed K times, capabilities discovered on the way included — and, for
the LAO* agent, the same closure computed exactly from the agent's policy and the
domain's outcome distributions (what the simulator samples from).

``--converge SECONDS`` also runs each method to the stopping rule of ``capver learn``
(25 queries without a new transition or a > 5 % probability change) with a cap of that
many CPU seconds, for the seeds ``--converge-seeds`` (seeded as ``capver bench
learning`` seeds its runs), and reports time, steps, unique transitions and coverage
agreement against ``capver bench learning``'s D′ (see docs/speed.md, "Convergence").

Run: ``capver bench speed [--quick] [--out DIR]``; writes ``table.md`` and
``speed.csv`` into ``--out`` and prints the table.
"""

from __future__ import annotations

import csv
import dataclasses
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from capver.agents.lao_agent import LAOAgent
from capver.bench.cli import BenchParser, summary
from capver.bench.learning.runs import RunSpec
from capver.bench.learning.settings import build_setting, collect_eval_set, parse_setting
from capver.bench.markdown import markdown_table, table_row
from capver.commands.argtypes import non_negative, non_negative_list, positive, seconds_or_off
from capver.core.state import Capability, State, Transition
from capver.engines.evaluation import checkpoint_scores
from capver.engines.execution import Execution, execute
from capver.engines.learning import LearnConfig, Learner, StopReason
from capver.engines.mcqs import QUERY_METHODS
from capver.engines.mcqs.base import QueryPolicy, QuerySynthesizer, SynthesisInput
from capver.model.capability_model import CompoundModel
from capver.settings import Assessment, SettingError

PHASES = ("planning", "replanning", "execution", "recording", "other")
DEFAULT_METHODS = ("mcqs-e", "mcqs-s", "random")
# Behaviour-changing options of the search a run can be repeated with; "default" is
# the configuration ``capver learn`` uses.  Each applies to the methods listed.
VARIANTS: dict[str, dict[str, Any]] = {
    "default": {},
    "all-iterations": {"stop_at_full_disagreement": False},
}
VARIANT_METHODS: dict[str, tuple[str, ...]] = {"all-iterations": ("mcqs-e",)}
QUICK: dict[str, object] = {"steps": 120, "variants": ["default", "all-iterations"]}


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


def measure(
    setting: str, method: str, variant: str, steps: int, seed: int, iterations: int, horizon: int, executions: int
) -> SpeedRow:
    """One timed learning run to ``steps`` simulator steps (setting construction excluded)."""
    a = build_setting(setting)
    config = LearnConfig.from_options(
        method, executions=executions, iterations=iterations, horizon=horizon, xi_cap=1e-5, patience=0, max_steps=steps
    )
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
    return SpeedRow(
        method, variant, progress.steps, progress.queries, progress.unique_transitions, max(total, measured), phases
    )


@dataclass(frozen=True, slots=True)
class Reachable:
    """The closure of the initial state under executions."""

    how: str
    states: int
    capabilities: int
    pairs: int  # (s, c) pairs
    transitions: int  # distinct ⟨s, c, s′⟩
    multi: int  # pairs with more than one outcome
    unchanged: int  # pairs whose only outcome is s itself (achieved already, or gave up)
    seconds: float

    def line(self) -> str:
        return (
            f"| {self.how} | {self.states} | {self.capabilities} | {self.pairs} | {self.transitions} | "
            f"{self.multi} | {self.unchanged} | {self.seconds:.1f} |"
        )


def _closure(a: Assessment, outcomes: Callable[[State, Capability], set[State]], how: str) -> Reachable:
    """Every (s, c) of every state reached from the initial states, until nothing new;
    ``outcomes(s, c)`` gives the successors of c from s."""
    st = a.setting
    if not st.symbolic_states:
        raise SettingError(
            f"{a.name}: counting reachable transitions needs environment states that are the "
            "symbolic states (a lao: or primitive: setting)"
        )
    start = time.process_time()
    caps = {c.name: c for c in st.capabilities}
    states = {st.alpha(x) for x in st.initial_states}
    outs: dict[tuple[State, str], set[State]] = {}
    changed = True
    while changed:  # a capability discovered late is tried in the states met before it
        changed = False
        for s in sorted(states):
            for name in list(caps):
                if (s, name) in outs:
                    continue
                changed = True
                succ = outs[(s, name)] = outcomes(s, caps[name])
                for s2 in succ:
                    if a.grow is not None:
                        for c in a.grow(Transition(s, name, s2)):
                            caps.setdefault(c.name, c)
                    states.add(s2)
    return Reachable(
        how,
        len(states),
        len(caps),
        len(outs),
        sum(map(len, outs.values())),
        sum(len(v) > 1 for v in outs.values()),
        sum(v == {s} for (s, _), v in outs.items()),
        time.process_time() - start,
    )


def reachable_by_execution(a: Assessment, samples: int, rng: np.random.Generator) -> Reachable:
    """The closure with the model-free simulator: each pair executed ``samples`` times."""
    st = a.setting

    def outcomes(s: State, c: Capability) -> set[State]:
        return {execute(st.agent, st.sim, st.alpha, c, s, rng, st.budget).transition.s_next for _ in range(samples)}

    return _closure(a, outcomes, f"{samples} executions per pair (model-free simulator)")


def reachable_exactly(a: Assessment) -> Reachable | None:
    """The closure from the LAO* agent's policy and the domain's exact outcomes (None
    for other agents).  One execution with Θ = 1 ends at the first change of state:
    its outcomes are those of the agent's action other than s (s itself when the
    intent already holds, the agent gives up, or the action surely changes nothing;
    the chance that a possible change fails to happen for the whole step cap is
    neglected)."""
    agent = a.setting.agent
    if not isinstance(agent, LAOAgent):
        return None
    task = agent.task

    def outcomes(s: State, c: Capability) -> set[State]:
        pos, neg = intent = agent.vocab.literals(c.intent)
        if (s & pos) == pos and not (s & neg):
            return {s}
        act = agent.policy_action(intent, s)
        if act is None:
            return {s}
        return {t for p, t in task.outcomes(s, act) if p > 0 and t != s} or {s}

    return _closure(a, outcomes, "exact (agent's policy × domain outcomes)")


@dataclass(frozen=True, slots=True)
class ConvergeRow:
    method: str
    seed: int
    stop: str
    cpu: float
    wall: float
    steps: int
    queries: int
    executions: int
    transitions: int
    coverage: float
    agreement: float

    def line(self) -> str:
        return (
            f"| {self.method} | {self.seed} | {self.stop} | {self.cpu:.1f} | {self.wall:.1f} | {self.steps} | "
            f"{self.queries} | {self.executions} | {self.transitions} | {self.coverage:.4f} | "
            f"{self.agreement:.4f} |"
        )


def converge(
    setting: str,
    method: str,
    seed: int,
    cpu_cap: float,
    eval_sequences: int,
    iterations: int,
    horizon: int,
    executions: int,
) -> ConvergeRow:
    """One run to the stopping rule (patience 25), or to ``cpu_cap`` CPU seconds."""
    a = build_setting(setting)
    d_eval = collect_eval_set(setting, eval_sequences).dataset(a)
    rng = RunSpec(setting, method, seed, 1, 0).rng()  # the seeding of capver bench learning
    a.setting.sim.reset(int(rng.integers(2**31 - 1)))
    config = LearnConfig.from_options(
        method, executions=executions, iterations=iterations, horizon=horizon, xi_cap=1e-5, patience=25
    )
    learner = Learner(a.ctx, a.setting, config, rng, grow=a.grow)
    wall, cpu = time.monotonic(), time.process_time()

    def on_query(lr: Learner) -> None:
        if time.process_time() - cpu >= cpu_cap:
            lr.request_stop()

    p = learner.run(on_query)
    wall, cpu = time.monotonic() - wall, time.process_time() - cpu
    stop = "converged" if p.stop is StopReason.CONVERGED else f"CPU cap {cpu_cap:g} s"
    sc = checkpoint_scores(learner.h_and, learner.data, d_eval)
    return ConvergeRow(
        method,
        seed,
        stop,
        cpu,
        wall,
        p.steps,
        p.queries,
        p.executions,
        p.unique_transitions,
        sc["coverage_agreement"],
        sc["agreement"],
    )


def table(rows: Sequence[SpeedRow]) -> list[str]:
    head = ["method", "variant", "steps", "queries", "transitions", "ms/step", *(f"{p} ms/step" for p in PHASES)]
    lines = markdown_table(head)
    for r in rows:
        cells = [
            r.method,
            r.variant,
            str(r.steps),
            str(r.queries),
            str(r.transitions),
            f"{r.ms_per_step():.2f}",
            *(f"{r.ms_per_step(p):.2f}" for p in PHASES),
        ]
        lines.append(table_row(cells))
    return lines


def _csv_list(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def build_parser() -> BenchParser:
    p = BenchParser("speed", summary(__doc__))
    p.add_argument(
        "--setting",
        default="lao:first_responders",
        help="lao:DOMAIN, primitive:DOMAIN or minigrid-rl (default lao:first_responders)",
    )
    p.add_argument(
        "--methods",
        type=_csv_list,
        default=list(DEFAULT_METHODS),
        help=f"comma-separated query-synthesis methods (default {','.join(DEFAULT_METHODS)})",
    )
    p.add_argument(
        "--variants",
        type=_csv_list,
        default=["default"],
        help=f"comma-separated search variants among {','.join(VARIANTS)}; 'all-iterations' applies to "
        "MCQS-E only (default: default)",
    )
    p.add_argument("--steps", type=positive, default=800, help="simulator steps per run (default 800)")
    p.add_argument("--seed", type=non_negative, default=0, help="seed of every run (default 0)")
    p.add_argument("--iterations", type=positive, default=100, help="MCTS iterations per plan (default 100)")
    p.add_argument("--horizon", type=positive, default=10, help="query horizon (default 10)")
    p.add_argument("--executions", type=positive, default=2, help="executions per query (default 2)")
    p.add_argument(
        "--reachable",
        type=non_negative,
        default=0,
        metavar="K",
        help="also count the reachable transitions, executing every pair K times (default 0: skip)",
    )
    p.add_argument(
        "--converge",
        type=seconds_or_off,
        default=0.0,
        metavar="SECONDS",
        help="also run every method to the stopping rule, capped at this many CPU seconds (default 0: skip)",
    )
    p.add_argument(
        "--converge-seeds",
        type=non_negative_list,
        default=[0],
        help="comma-separated seeds of the --converge runs (default 0)",
    )
    p.add_argument(
        "--eval-sequences",
        type=positive,
        default=300,
        help="sequences of D′ for the coverage of the --converge runs (default 300)",
    )
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
    seeds: list[int] = args.converge_seeds
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
            rows.append(
                measure(
                    args.setting, method, variant, args.steps, args.seed, args.iterations, args.horizon, args.executions
                )
            )
    lines = [
        "# capver bench speed",
        "",
        (
            f"{args.setting}, seed {args.seed}, {args.steps} simulator steps per run; MCTS {args.iterations} iterations, "
            f"horizon {args.horizon}; {args.executions} executions per query. CPU ms per simulator step of this "
            "process, in total and per phase (the phases sum to the total)."
        ),
        "",
        *table(rows),
    ]
    if args.reachable:
        print(f"reachable transitions: {args.reachable} executions per pair …", file=sys.stderr, flush=True)
        # A fresh setting for each closure: capability discovery remembers what it saw.
        a = build_setting(args.setting)
        a.setting.sim.reset(args.seed)
        found = [
            reachable_by_execution(a, args.reachable, np.random.default_rng(args.seed)),
            reachable_exactly(build_setting(args.setting)),
        ]
        lines += [
            "",
            f"Reachable from the initial state of {args.setting} (the closure over executions):",
            "",
            (
                "| closure | states | capabilities | (s, c) pairs | transitions | pairs with > 1 outcome | "
                "pairs with s′ = s only | CPU s |"
            ),
            "|---|---|---|---|---|---|---|---|",
            *(r.line() for r in found if r is not None),
        ]
    if args.converge:
        found_rows = []
        for method in args.methods:
            for seed in seeds:
                print(
                    f"{method} seed {seed}: to the stopping rule, ≤ {args.converge:g} CPU s …",
                    file=sys.stderr,
                    flush=True,
                )
                found_rows.append(
                    converge(
                        args.setting,
                        method,
                        seed,
                        args.converge,
                        args.eval_sequences,
                        args.iterations,
                        args.horizon,
                        args.executions,
                    )
                )
        lines += [
            "",
            (
                f"To the stopping rule (25 queries without a new transition or a > 5 % probability change), at most "
                f"{args.converge:g} CPU s; coverage against D′ of {args.eval_sequences} sequences:"
            ),
            "",
            (
                "| method | seed | stop | CPU s | wall s | steps | queries | executions | unique transitions | "
                "coverage agreement | printed 1 − VD_s |"
            ),
            "|---|---|---|---|---|---|---|---|---|---|---|",
            *(r.line() for r in found_rows),
        ]
    text = "\n".join(lines) + "\n"
    (out / "table.md").write_text(text)
    with (out / "speed.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(
            ["method", "variant", "steps", "queries", "transitions", "cpu_seconds", *(f"{p}_seconds" for p in PHASES)]
        )
        for r in rows:
            w.writerow(
                [
                    r.method,
                    r.variant,
                    r.steps,
                    r.queries,
                    r.transitions,
                    f"{r.seconds:.4f}",
                    *(f"{r.phases[p]:.4f}" for p in PHASES),
                ]
            )
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())

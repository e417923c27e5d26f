"""``capver learn``: assess an agent with MCQS-E, MCQS-S or the Random Query baseline
(sections 3–4) and write everything a user needs to read, resume and plot the run.

The output directory holds ``run.json`` (the agent, setting, method and budget, read
by ``capver eval`` and by ``--resume``), ``dataset.jsonl`` (append-only, one record
per capability execution: ``--resume`` continues a killed run with nothing lost),
``eval.jsonl`` (the independent evaluation dataset D′), ``h_and.capm`` / ``h_or.capm``
(the learned bounds in the DSL), ``h_tilde.capm`` (the Occam model h̃ between them),
``certificate.json`` (z3's h∧ ⪯ h̃ ⪯ h∨ and h∧ ⪯ h∨), ``curve.csv`` /
``curve.png`` (model agreement vs simulator steps, for h∧ and h̃) and ``report.txt``
(each capability in plain words, from h̃'s short conditions).

Everything the user typed is checked before anything is created, and a directory
is only ever written into when it is empty, new, or (with ``--resume``) a run that
capver wrote: no file that capver did not create is overwritten.  A resumed run keeps
its query method (another is refused, naming the run's), and removes the
``evaluation.json`` of ``capver eval`` once it no longer describes the run's data.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from capver.commands.argtypes import open_unit_interval, positive, seconds, theta
from capver.commands.progress import ProgressReport
from capver.core.dataset import TransitionDataset
from capver.core.properties import Property
from capver.core.state import State
from capver.engines.directed import PropertyTracker, Targets, TierChange
from capver.engines.eval_collection import SUGGESTED_CHUNK, collect_eval_chunked
from capver.engines.evaluation import checkpoint_scores, tilde_scores
from capver.engines.executors import EXECUTORS, Executor, make_executor
from capver.engines.findings import Achievement, capability_statuses, run_findings
from capver.engines.learning import LEARN_DEFAULTS, LearnConfig, Learner, ParallelExecutions, resumed_queries
from capver.engines.lifting import run_lifted_model
from capver.engines.mcqs import QUERY_METHODS
from capver.engines.mcqs.tilde import REWARDS
from capver.errors import RunFileError, UsageError
from capver.io import certificate, dataset_file, dsl, property_status, run_file
from capver.io.atomic import replace_text
from capver.io.curves import plot_curves, read_curves, write_curve
from capver.io.explain import capability_report, tilde_blocks
from capver.io.properties_text import parse_properties
from capver.io.run_file import RunBudget, RunManifest
from capver.model.capability_model import CompoundModel
from capver.model.lifted import LiftedOccam
from capver.settings import SETTINGS, Assessment, SettingArgs, SettingSpec, build_assessment

DEFAULT_MAX_STEPS = LEARN_DEFAULTS.max_steps
"""The budget of a run given none: about a minute of MCQS-S on the bundled domains."""

DEFAULT_METHOD = LEARN_DEFAULTS.method
"""The query method of a new run given none; a resumed run keeps its own."""

EXIT_INTERRUPTED = 130
EVALUATION = "evaluation.json"  # written by capver eval


def add_setting_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--agent", choices=sorted(SETTINGS), default="lao", help="the agent to assess")
    parser.add_argument(
        "--domain",
        default=SettingArgs().domain,
        help=f"bundled PPDDL domain for lao/primitive (default: {SettingArgs().domain}), as for "
        "capver run; kitchen layout for overcooked (cramped_room, two_pots)",
    )
    parser.add_argument("--problem", default="problem1", help="problem of the domain")
    parser.add_argument("--model", metavar="FILE", help="capability-model file (.capm) for the model agent")
    parser.add_argument("--init", default="", metavar="ATOMS", help="model agent: initial state atoms")
    parser.add_argument("--theta", type=theta, default=1, help="temporal length Θ for lao, or 'inf'")
    parser.add_argument(
        "--step-cap",
        type=positive,
        default=SettingArgs().step_cap,
        help="simulator steps one capability execution may take (lao with Θ = inf, MiniGrid)",
    )
    parser.add_argument(
        "--layouts",
        type=positive,
        default=20,
        help="MiniGrid: number of start layouts; overcooked: number of start states",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of every random choice")


_DEFAULTS = LearnConfig()


def _weight(text: str) -> float:
    """A number in [0, 1] (the weight λ of --reward tilde)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1], got {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1], got {text!r}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_setting_arguments(parser)
    parser.add_argument(
        "--method",
        choices=sorted(QUERY_METHODS),
        default=None,
        help=f"query synthesis: MCQS-E (exact), MCQS-S (sampled) or random (default: {DEFAULT_METHOD}) "
        "for a new run; --resume keeps the run's method and refuses another",
    )
    parser.add_argument(
        "--max-steps",
        type=positive,
        default=None,
        help=f"budget: simulator steps over the whole run (default: {DEFAULT_MAX_STEPS} when no "
        "budget is given; --resume keeps the run's budget unless one is given)",
    )
    parser.add_argument("--max-queries", type=positive, default=None, help="budget: queries over the whole run")
    parser.add_argument(
        "--max-seconds", type=seconds, default=None, help="budget: wall-clock seconds of this invocation"
    )
    parser.add_argument(
        "--patience",
        type=int,
        default=LEARN_DEFAULTS.patience,
        help="stop after this many queries without change (0: never)",
    )
    parser.add_argument(
        "--executions", type=positive, default=LEARN_DEFAULTS.executions, help="executions n of each query"
    )
    parser.add_argument("--horizon", type=positive, default=LEARN_DEFAULTS.horizon, help="query horizon")
    parser.add_argument(
        "--iterations", type=positive, default=LEARN_DEFAULTS.iterations, help="MCTS iterations per plan"
    )
    parser.add_argument(
        "--xi", type=float, default=LEARN_DEFAULTS.xi_cap, help="cap of the revisitation bonus ξ (0: the ξ=0 ablation)"
    )
    parser.add_argument(
        "--reward",
        choices=sorted(REWARDS),
        default="disagreement",
        help="query-synthesis reward: the paper's h∧/h∨ disagreement, or 'tilde', which also targets "
        "states where the Occam model h̃ rests on few observations (default disagreement; see docs/tilde_reward.md)",
    )
    parser.add_argument(
        "--tilde-every",
        type=positive,
        default=_DEFAULTS.tilde_every,
        metavar="K",
        help=f"--reward tilde: rebuild h̃ every K queries (default {_DEFAULTS.tilde_every})",
    )
    parser.add_argument(
        "--tilde-weight",
        type=_weight,
        default=_DEFAULTS.tilde_weight,
        metavar="λ",
        help=f"--reward tilde: weight λ ∈ [0, 1] of h̃'s uncertainty (default {_DEFAULTS.tilde_weight})",
    )
    parser.add_argument("--eval-sequences", type=positive, default=300, help="sequences in the evaluation dataset D′")
    parser.add_argument(
        "--eval-chunk",
        type=positive,
        default=None,
        metavar="N",
        help=f"collect D′ in chunks of N sequences on the executor's workers (e.g. {SUGGESTED_CHUNK:,}); "
        "D′ then depends on N, never on the executor (default: one stream in this process)",
    )
    parser.add_argument("--eval-every", type=positive, default=200, help="evaluate every this many simulator steps")
    parser.add_argument(
        "--properties",
        type=Path,
        default=None,
        metavar="FILE.props",
        help="properties (capver verify's language) the run should decide: queries go where they can "
        "change a property's verdict tier, and the run stops when every property is observed or "
        "confident (patience does not apply); --resume keeps the run's properties",
    )
    parser.add_argument(
        "--delta",
        type=open_unit_interval,
        default=None,
        help="with --properties: confident verdicts have error probability ≤ δ (default 0.05)",
    )
    parser.add_argument(
        "--epsilon",
        type=open_unit_interval,
        default=None,
        help="with --properties: a confident verdict needs every frontier pair's unseen-effect "
        "probability ≤ ε (default 0.05)",
    )
    parser.add_argument(
        "--width",
        type=open_unit_interval,
        default=None,
        help="with --properties: a Pmax=? / Pmin=? property is decided once the agent's bounds at "
        "1 − δ are at most this far apart (default 0.1)",
    )
    parser.add_argument(
        "--no-focus",
        action="store_true",
        help="with --properties: track the verdicts but keep the method's own queries (an ablation)",
    )
    parser.add_argument(
        "--out", type=Path, required=True, help="output directory: new or empty, or with --resume a capver learn run"
    )
    parser.add_argument("--resume", action="store_true", help="continue the run in --out")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    add_executor_arguments(parser)


def add_executor_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--executor",
        choices=sorted(EXECUTORS),
        default="local",
        help="where executions of a query and D′ chunks run: local (this process, or --concurrency "
        "processes), threads (for agents waiting on an endpoint) or ray (default local)",
    )
    parser.add_argument(
        "--address",
        default=None,
        metavar="ADDR",
        help="--executor ray: the cluster to join (e.g. HOST:6379 or 'auto'; default: a new local one)",
    )
    parser.add_argument(
        "--concurrency",
        type=positive,
        default=1,
        metavar="N",
        help="executions of one query in flight at once, and workers of the executor (default 1: "
        "the executions of a query run one after another in this process; with N > 1 or another "
        "executor they run in rounds with their own random streams, the same run on every executor)",
    )


def setting_args(args: argparse.Namespace) -> SettingArgs:
    return SettingArgs(
        domain=args.domain,
        problem=args.problem,
        model=args.model,
        init=args.init,
        theta=args.theta,
        step_cap=args.step_cap,
        layouts=args.layouts,
        seed=args.seed,
    )


def given_budget(args: argparse.Namespace) -> RunBudget | None:
    """The budget options typed on the command line, or None when there are none."""
    if args.max_steps is None and args.max_queries is None and args.max_seconds is None:
        return None
    return RunBudget(args.max_steps, args.max_queries, args.max_seconds)


def check_out(
    out: Path, resume: bool, manifest: RunManifest, given: RunBudget | None, method: str | None = None
) -> RunManifest:
    """Refuse an output directory that this run may not write into, before anything
    is created; return the manifest the run goes on under.  Its budget is the one
    given, else (on resume) the run's own, else the default.  Its method is
    ``method`` when given (else ``manifest.method``) for a new run, and the run's own
    on resume: a run keeps one query method, since its curve, models and
    ``evaluation.json`` each describe one method's data, so another is refused."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: exists and is not a directory; expected a directory for the run")
    stored = RunBudget()
    if resume:
        if not out.is_dir():
            raise RunFileError(f"--resume: {out}: no such directory; nothing to resume")
        kept = run_file.check_resume(out, manifest)
        if method is not None and method != kept.method:
            raise RunFileError(
                f"--resume: {out} is a --method {kept.method} run, given --method {method}; a run keeps one query "
                f"method (its curve.csv and models describe {kept.method}'s data): leave out --method (or pass "
                f"--method {kept.method}) to continue it, or start a new --out to compare methods"
            )
        method, stored = kept.method, kept.budget
    elif out.is_dir() and any(out.iterdir()):
        if (out / run_file.NAME).exists():
            raise RunFileError(
                f"--out {out}: holds a capver learn run already; pass --resume to continue it, or choose a new --out"
            )
        names = sorted(p.name for p in out.iterdir())
        shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
        raise UsageError(
            f"--out {out}: directory is not empty ({shown}) and is not a capver learn run; "
            "choose a new or empty directory"
        )
    budget = given if given is not None else stored
    if budget == RunBudget():
        budget = RunBudget(max_steps=DEFAULT_MAX_STEPS)
    return RunManifest(manifest.agent, manifest.setting, method if method is not None else manifest.method, budget)


def eval_dataset(
    a: Assessment,
    out: Path,
    n: int,
    seed: int,
    report: ProgressReport,
    executor: Executor,
    spec: SettingSpec,
    chunk: int | None,
) -> TransitionDataset:
    """D′, stored in ``out/eval.jsonl`` so that a resumed run uses the same one; in
    chunks of ``chunk`` sequences, those beyond the first on ``executor``'s workers."""
    path = out / "eval.jsonl"
    if path.exists():
        return dataset_file.load(path, vocab=a.ctx.vocab, strict=True).dataset
    with report.phase(f"collecting the evaluation dataset D′ ({n} sequences of 10–30 capabilities)"):
        d = collect_eval_chunked(a.setting, a.setting.capabilities, n, seed + 10_007, executor, spec, chunk)
    with dataset_file.DatasetWriter.open(path, a.ctx.vocab, resume=False) as w:
        for c in d.capabilities:
            w.write_capability(c)
        for t, n_t in d.items():
            for _ in range(n_t):
                w.write(t)
    return d


@dataclass(slots=True)
class Curve:
    """The checkpoints of a run, saved to ``curve.csv`` at every checkpoint so that a
    killed run keeps its curve and ``--resume`` continues it."""

    path: Path
    rows: list[dict[str, object]] = field(default_factory=list)

    @staticmethod
    def load(path: Path) -> Curve:
        return Curve(path, [dict(r) for r in read_curves([path])] if path.exists() else [])

    @property
    def last_steps(self) -> int | None:
        return int(float(str(self.rows[-1]["steps"]))) if self.rows else None

    def add(self, row: dict[str, object]) -> None:
        self.rows.append(row)
        write_curve(self.path, self.rows)


def run(args: argparse.Namespace) -> int:
    executor = make_executor(args.executor, args.concurrency, args.address)
    try:
        return _run(args, executor)
    finally:
        executor.close()


def _run(args: argparse.Namespace, executor: Executor) -> int:
    invoked = time.monotonic()
    out: Path = args.out
    report = ProgressReport("capver learn", quiet=args.quiet)
    manifest = check_out(
        out,
        args.resume,
        RunManifest(args.agent, setting_args(args), args.method or DEFAULT_METHOD),
        given_budget(args),
        args.method,
    )
    # Building the setting validates the domain, problem, model file and --init: a
    # mistake there must not leave a half-made run directory behind.
    with report.phase(f"building the setting ({args.agent})"):
        assessment = build_assessment(args.agent, manifest.setting, np.random.default_rng(args.seed))
    out.mkdir(parents=True, exist_ok=True)
    run_file.write(out, manifest)
    report.say(
        f"capver learn: {assessment.name}, method {manifest.method}, budget {manifest.budget.describe()}"
        + (" (resumed)" if args.resume else "")
    )
    ctx = assessment.ctx
    # Workers build the setting themselves from its name, arguments and seed.
    spec = SettingSpec(args.agent, manifest.setting, args.seed)
    d_eval = eval_dataset(assessment, out, args.eval_sequences, args.seed, report, executor, spec, args.eval_chunk)
    with warnings.catch_warnings():
        # Reported below in one line of ours, without the library's source location.
        warnings.simplefilter("ignore", dataset_file.TornRecordWarning)
        writer, data = dataset_file.open_or_resume(out / "dataset.jsonl", ctx.vocab, assessment.setting.capabilities)
    if writer.loaded.torn is not None:
        report.say(
            f"capver learn: {writer.loaded.torn.describe(out / 'dataset.jsonl')}; cut it off and resumed "
            f"after record {writer.loaded.records}"
        )
    props, targets, directed, history = _properties(args, out, assessment)
    b = manifest.budget
    config = LearnConfig.from_options(
        manifest.method,
        executions=args.executions,
        iterations=args.iterations,
        horizon=args.horizon,
        xi_cap=args.xi,
        patience=args.patience,
        max_steps=b.max_steps,
        max_queries=b.max_queries,
        max_seconds=b.max_seconds,
        reward=args.reward,
        tilde_every=args.tilde_every,
        tilde_weight=args.tilde_weight,
        properties=props,
        targets=targets,
        directed=directed,
    )
    # A resumed run continues with a different stream of random choices.
    rng = np.random.default_rng([args.seed, len(data)])
    parallel = None if args.executor == "local" and args.concurrency == 1 else ParallelExecutions(executor, spec)
    learner = Learner(
        ctx,
        assessment.setting,
        config,
        rng,
        data=data,
        sink=writer,
        grow=assessment.grow,
        parallel=parallel,
        history=history,
    )
    if learner.tracker is not None:
        property_status.write(out, learner.tracker, directed)
        for prop in props:
            st = learner.tracker.status[prop.name]
            report.say(f"capver learn: property {prop.name}: {_tier_text(st.verdict, st.tier)}")
    learner.progress.queries = resumed_queries(writer.loaded.meta)
    curve = Curve.load(out / "curve.csv")
    started = time.monotonic()
    # h̃ of the data as it stands: the last checkpoint's is the one written at the end,
    # so it is built once, not twice (h̃ is a pure function of h∧, the data and the seed).
    built: dict[int, LiftedOccam] = {}

    def occam() -> LiftedOccam:
        key = learner.progress.executions
        if key not in built:
            built.clear()
            built[key] = run_lifted_model(learner.h_and, learner.data, args.seed)
        return built[key]

    def record() -> dict[str, object]:
        p = learner.progress
        row: dict[str, object] = {
            "method": manifest.method,
            "seed": args.seed,
            "steps": p.steps,
            "queries": p.queries,
            "transitions": p.unique_transitions,
            "exact_vd": "",
        }
        scores = checkpoint_scores(learner.h_and, learner.data, d_eval, assessment.truth, assessment.reachable)
        row.update((k, round(v, 6)) for k, v in scores.items())
        row["exact_vd_tilde"] = ""
        scores = tilde_scores(occam().model, d_eval, assessment.truth, assessment.reachable)
        row.update((k, round(v, 6)) for k, v in scores.items())
        curve.add(row)
        return row

    next_eval = [0 if curve.last_steps is None else curve.last_steps + args.eval_every]

    def on_query(lr: Learner) -> None:
        p = lr.progress
        if lr.tracker is not None and lr.property_changes:
            property_status.write(out, lr.tracker, directed)
            for ch in lr.property_changes:
                report.say(
                    f"capver learn: property {ch.name}: {_tier_text(ch.verdict, ch.tier)} after {ch.steps} "
                    f"simulator steps ({ch.queries} queries)"
                )
        if p.steps >= next_eval[0]:
            row = record()
            next_eval[0] = p.steps + args.eval_every
            status = (
                f"[{manifest.method}] queries {p.queries}, transitions {p.unique_transitions}, "
                f"coverage {row['coverage_agreement']:.4f}"
            )
        else:
            status = f"[{manifest.method}] queries {p.queries}, transitions {p.unique_transitions}"
        usage = agent_usage(lr.setting.agent, lr.worker_usage)
        report.update(p.steps, status + (f", {usage}" if usage else ""))

    interrupted = False
    failure: BaseException | None = None
    report.start_bar(b.max_steps, learner.progress.steps, "step")
    try:
        if curve.last_steps is None:
            record()
        learner.run(on_query)
    except KeyboardInterrupt:
        interrupted = True
    except Exception as exc:  # noqa: BLE001 - re-raised below, after what was learned is saved
        failure = exc
    finally:
        writer.close()
        report.close_bar()
    learn_seconds = time.monotonic() - started
    write_first = len(report.phases)
    try:
        write_seconds = _write_outputs(
            learner,
            curve,
            record,
            occam,
            lambda: learner.progress.executions in built,
            assessment.name,
            out,
            report,
            assessment.truth,
            args.seed,
        )
    except KeyboardInterrupt:
        report.say(
            f"capver learn: interrupted while writing the models; {out}/dataset.jsonl holds all "
            f"{learner.progress.executions} executions: run the same command with --resume to write them"
        )
        return EXIT_INTERRUPTED
    except Exception as exc:
        if failure is not None:
            # The learning error is the one the user must see; the writing error is a consequence.
            report.say(f"capver learn: could not write the models after the error below: {exc}")
            raise failure from None
        raise
    _drop_stale_evaluation(out, len(learner.data), report)
    if failure is not None:
        raise failure
    write_phases = len(report.phases) - write_first
    p = learner.progress
    last = curve.rows[-1]
    if interrupted:
        report.say(
            f"capver learn: interrupted; saved {p.executions} executions in {out}/dataset.jsonl and wrote "
            f"the models, curve and report; continue with --resume"
        )
        return EXIT_INTERRUPTED
    print(
        f"{assessment.name} {manifest.method}: {p.stop_reason}; {p.queries} queries, {p.executions} executions "
        f"({p.failures} failed), {p.steps} simulator steps, {p.unique_transitions} unique transitions, "
        f"{len(learner.capabilities)} capabilities."
    )
    # Set-up is everything before learning (the setting, D′); the writing time is the
    # sum of the phase lines printed for it, so the three add up to the total shown.
    setup_seconds = round(started - invoked, 1)
    learn_seconds = round(learn_seconds, 1)
    print(
        summary_text(
            last,
            out,
            setup_seconds,
            learn_seconds,
            write_seconds,
            write_phases,
            example_property(learner.h_and, learner.h_or, _initial_state(learner)),
            report.quiet,
        )
    )
    if (usage := agent_usage(assessment.setting.agent, learner.worker_usage)) is not None:
        print(f"{assessment.name}: {usage} in this invocation")
    if learner.tracker is not None:
        print(property_summary(learner.tracker))
    return 0


def _drop_stale_evaluation(out: Path, transitions: int, report: ProgressReport) -> None:
    """``capver eval``'s scores describe the data they scored: once a resumed run
    holds more, its ``evaluation.json`` is removed, with a line saying so, rather
    than left to be read as the run's scores.  A file capver eval did not write (no
    "transitions" and "bound") is left alone."""
    path = out / EVALUATION
    try:
        scored = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return
    if not isinstance(scored, dict) or "bound" not in scored or scored.get("transitions") in (None, transitions):
        return
    path.unlink()
    report.say(
        f"capver learn: removed {path}, which scored {scored['transitions']} transitions (the run now holds "
        f"{transitions}); run capver eval {out} again for the run's scores"
    )


METRIC_WORDS = {
    "coverage_agreement": (
        "coverage agreement",
        "the share of the agent's behaviour in the evaluation dataset D′ that the model predicts",
    ),
    "agreement": (
        "paper agreement 1 − VD_s",
        "section 4.2's metric, which counts only transitions the learner saw: near 1 for any method",
    ),
    "exact_vd": ("exact VD", "the distance to the true model over its reachable states (0 is perfect)"),
}
"""The summary's metrics, in the order printed: name and what it measures (the
definitions of docs/results.md); coverage agreement is the headline learning metric."""


def _score(x: object) -> str:
    return f"{x:.3f}" if isinstance(x, float) else str(x)


def _initial_state(learner: Learner) -> State | None:
    """The setting's symbolic initial state when it has exactly one."""
    st = learner.setting
    starts = {st.alpha(x) for x in st.initial_states}
    return next(iter(starts)) if len(starts) == 1 else None


def example_property(h_and: CompoundModel, h_or: CompoundModel, init: State | None) -> str:
    """A property worth verifying first: reaching the intent (one atom, false in the
    initial state) of the first capability h∧ observed achieving it; a template when
    there is none."""
    vocab = h_and.vocabulary
    for st in capability_statuses(h_and, h_or).values():
        intent = st.capability.intent
        if (
            st.achievement is Achievement.ACHIEVED
            and len(intent) == 1
            and intent[0].positive
            and (init is None or not init >> vocab.index(intent[0].atom) & 1)
        ):
            return f"E [ F {intent[0].atom} ]"
    return "E [ F ATOM ]"


def summary_text(
    last: Mapping[str, object],
    out: Path,
    setup: float,
    learning: float,
    writing: float,
    phases: int,
    example: str = "E [ F ATOM ]",
    quiet: bool = False,
) -> str:
    """The end-of-learn lines after the counts: each metric of the last checkpoint with
    what it measures (h̃'s beside h∧'s where there is one), the time (set-up +
    learning + the ``phases`` output phases = total, as printed), and what to run
    next (``example`` is the property suggested to ``capver verify``; ``quiet``: the
    phase lines were not printed)."""
    lines = []
    for key, (name, meaning) in METRIC_WORDS.items():
        value = last.get(key, "")
        if value == "":
            continue
        tilde = last.get(f"{key}_tilde", "")
        beside = f" (h̃ {_score(tilde)})" if tilde != "" else ""
        lines.append(f"  {name} {_score(value)}{beside}: {meaning}")
    lines.append(
        f"  time: set-up {setup:.1f} s, learning {learning:.1f} s, writing {writing:.1f} s "
        f"(the {phases} output phases{'' if quiet else ' above'}), total {round(setup + learning + writing, 1):.1f} s"
    )
    lines.append(
        f"Wrote {out}/ (report.txt: what the agent can do, in words). Next: capver report {out} "
        f'(an HTML page of the run), capver verify {out} --property "{example}" (model-check what '
        f"the agent can reach; docs/properties.md), capver eval {out} (all scores)"
    )
    return "\n".join(lines)


def _tier_text(verdict: str, tier: str) -> str:
    if tier in ("observed", "confident"):
        return f"{verdict.upper()} ({tier})"
    return verdict.upper()


def property_summary(tracker: PropertyTracker) -> str:
    """Each property with its tier, the steps it took to get there, and what is still
    missing for those left undecided."""
    t = tracker.targets
    head = (
        f"Properties (confident: error probability ≤ δ = {t.delta:g}, unseen effects ≤ ε = {t.epsilon:g} per "
        "execution at every frontier pair):"
    )
    lines = [head]
    for prop in tracker.properties:
        st = tracker.status[prop.name]
        reached = tracker.reached(prop.name)
        when = f" after {reached.steps} simulator steps" if reached is not None else ""
        line = f"  {prop.name}: {_tier_text(st.verdict, st.tier)}{when}"
        if not st.decided:
            line += f"; missing: {st.missing}"
        lines.append(line)
    return "\n".join(lines)


def _properties(
    args: argparse.Namespace, out: Path, a: Assessment
) -> tuple[tuple[Property, ...], Targets, bool, tuple[TierChange, ...]]:
    """The run's properties: those given (copied into the run), else on --resume the
    run's own; their targets (given, else stored, else the defaults) and history."""
    stored = property_status.read(out) if args.resume else None
    kept = out / property_status.PROPS
    source = args.properties if args.properties is not None else (kept if args.resume and kept.exists() else None)
    if source is None:
        if args.delta is not None or args.epsilon is not None or args.width is not None or args.no_focus:
            raise UsageError("--delta, --epsilon, --width and --no-focus need --properties")
        return (), Targets(), True, ()
    try:
        text = source.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--properties {source}: {exc.strerror or exc}") from None
    caps = tuple(c.name for c in a.setting.capabilities)
    props = parse_properties(text, a.ctx.vocab, caps, filename=str(source))
    if not props:
        raise UsageError(f"--properties {source}: no property in the file")
    default = stored.targets if stored is not None else Targets()
    targets = Targets(
        args.delta if args.delta is not None else default.delta,
        args.epsilon if args.epsilon is not None else default.epsilon,
        args.width if args.width is not None else default.width,
    )
    directed = not args.no_focus if (args.no_focus or stored is None) else stored.directed
    if source != kept:
        replace_text(kept, text)
    history = stored.history if stored is not None else ()
    return props, targets, directed, history


def agent_usage(agent: object, workers: Mapping[str, int] | None = None) -> str | None:
    """The endpoint accounting of an agent that keeps one (the LLM agent's ``usage``:
    calls, cache hits, retries, tokens paid), in words, with the counters the
    executor's workers added (``Learner.worker_usage``); None for other agents."""
    usage = getattr(agent, "usage", None)
    if workers and dataclasses.is_dataclass(usage) and not isinstance(usage, type):
        usage = dataclasses.replace(usage, **{k: getattr(usage, k) + v for k, v in workers.items()})
    describe = getattr(usage, "describe", None)
    return str(describe()) if callable(describe) else None


def _write_outputs(
    learner: Learner,
    curve: Curve,
    record: Callable[[], object],
    occam: Callable[[], LiftedOccam],
    occam_built: Callable[[], bool],
    title: str,
    out: Path,
    report: ProgressReport,
    truth: CompoundModel | None,
    seed: int,
) -> float:
    """The last checkpoint, the curve plot, the three models, the report and the
    certificate, each as a phase with its own progress line; the sum of those lines'
    seconds (what the summary prints as the writing time)."""
    first = len(report.phases)
    if not occam_built():
        with report.phase("building h̃ (the Occam model) and lifting it over objects"):
            occam()
    if curve.last_steps != learner.progress.steps or len(curve.rows) == 1:
        with report.phase("scoring h∧ and h̃ against D′ at the last checkpoint"):
            record()
    with report.phase("plotting curve.png"):
        plot_curves(curve.rows, out / "curve.png", title=title)
    with report.phase("writing h_and.capm, h_or.capm and h_tilde.capm"):
        # The setting's initial state goes into the models, so that planning and export
        # start there by default (when the setting has one symbolic initial state).
        st = learner.setting
        init = _initial_state(learner)
        lifted = occam()
        tilde = lifted.model
        dsl.write(learner.h_and, out / "h_and.capm", name="pessimistic", init=init)
        dsl.write(learner.h_or, out / "h_or.capm", name="optimistic", init=init)
        dsl.write_lifted(lifted, out / certificate.TILDE, name="occam", init=init)
    with report.phase("reading the findings off h∧"):
        findings = run_findings(learner.h_and, seed)
    with report.phase("writing report.txt"):
        text = capability_report(learner.h_and, learner.h_or, tilde, findings, tilde_blocks(lifted))
        if (usage := agent_usage(st.agent, learner.worker_usage)) is not None:
            text += f"\nEndpoint usage of this invocation: {usage}.\n"
        replace_text(out / "report.txt", text)
    with report.phase("certifying h∧ ⪯ h̃ ⪯ h∨" + (" and h∧ ⪯ h⋆ ⪯ h∨" if truth is not None else "") + " with z3"):
        models = {"h_and.capm": learner.h_and, "h_or.capm": learner.h_or, certificate.TILDE: tilde}
        cert = certificate.certify(out, truth, models)
    for claim in cert.claims:
        report.say(f"capver learn: {claim.text}")
    return report.seconds_since(first)

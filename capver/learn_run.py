"""A learning run into a run directory: what ``capver learn`` does between reading its
options and printing its summary (MCQS-E, MCQS-S or the Random Query baseline of
sections 3–4, with the checkpoints of section 4.2's learning curves).

The directory holds ``run.json`` (the agent, setting, method and budget, read by
``capver eval`` and by ``--resume``), ``dataset.jsonl`` (append-only, one record per
capability execution: a resumed run continues a killed one with nothing lost),
``eval.jsonl`` (the independent evaluation dataset D′), ``h_and.capm`` / ``h_or.capm``
(the learned bounds in the DSL), ``h_tilde.capm`` (the Occam model h̃ between them),
``certificate.json`` (z3's h∧ ⪯ h̃ ⪯ h∨ and h∧ ⪯ h∨), ``curve.csv`` / ``curve.png``
(model agreement vs simulator steps, for h∧ and h̃), ``report.txt`` (each capability
in plain words, from h̃'s short conditions) and, with properties, ``properties.props``
and ``properties.json``.

A directory is only ever written into when it is empty, new, or (resuming) a run that
capver wrote: no file that capver did not create is overwritten.  A resumed run keeps
its query method (another is refused, naming the run's), and removes the
``evaluation.json`` of ``capver eval`` once it no longer describes the run's data.
"""

from __future__ import annotations

import dataclasses
import json
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from capver.commands.progress import ProgressReport
from capver.core.dataset import TransitionDataset
from capver.core.properties import Property
from capver.core.setting_args import SettingArgs
from capver.core.state import State
from capver.engines.directed import Targets, TierChange
from capver.engines.eval_collection import collect_eval_chunked
from capver.engines.evaluation import checkpoint_scores, tilde_scores
from capver.engines.executors import Executor
from capver.engines.findings import run_findings
from capver.engines.learning import LEARN_DEFAULTS, LearnConfig, Learner, ParallelExecutions, resumed_queries
from capver.engines.lifting import run_lifted_model
from capver.engines.verification.verdict import claim_words
from capver.errors import RunFileError, UsageError
from capver.io import certificate, dataset_file, property_status, run_dir, run_file
from capver.io.abstraction_file import TILDE, load_abstraction
from capver.io.atomic import replace_text
from capver.io.curves import plot_curves, read_curves, write_curve
from capver.io.explain import capability_report, tilde_blocks
from capver.io.properties_text import parse_properties
from capver.io.run_file import RunBudget, RunManifest
from capver.model.abstraction import Abstraction
from capver.model.capability_model import CompoundModel
from capver.model.kinds import ModelKind
from capver.model.lifted import LiftedOccam
from capver.settings import Assessment, SettingSpec, build_assessment, world_of

__all__ = [
    "DEFAULT_EVAL_EVERY",
    "DEFAULT_EVAL_SEQUENCES",
    "DEFAULT_MAX_STEPS",
    "DEFAULT_METHOD",
    "Curve",
    "LearnOptions",
    "LearnOutcome",
    "agent_usage",
    "check_out",
    "eval_dataset",
    "initial_state",
    "learn_into",
    "tier_text",
]

DEFAULT_MAX_STEPS = LEARN_DEFAULTS.max_steps
"""The budget of a run given none: about a minute of MCQS-S on the bundled domains."""

DEFAULT_METHOD = LEARN_DEFAULTS.method
"""The query method of a new run given none; a resumed run keeps its own."""

DEFAULT_EVAL_SEQUENCES = 300
"""Sequences in the evaluation dataset D′ (section 4.2)."""

DEFAULT_EVAL_EVERY = 200
"""Simulator steps between two checkpoints of the learning curve."""

_CONFIG = LearnConfig()  # the query-synthesis defaults not in LEARN_DEFAULTS


@dataclass(frozen=True, slots=True)
class LearnOptions:
    """What a learning run is asked to do: the options of ``capver learn`` (its
    ``--help`` says what each means).  ``method`` and ``budget`` None: the run's own
    on resume, else the defaults; ``parallel``: executions go to the executor's
    workers in rounds instead of one after another in this process."""

    out: Path
    agent: str
    setting: SettingArgs
    seed: int = 0
    method: str | None = None
    budget: RunBudget | None = None
    resume: bool = False
    eval_sequences: int = DEFAULT_EVAL_SEQUENCES
    eval_chunk: int | None = None
    eval_every: int = DEFAULT_EVAL_EVERY
    executions: int = LEARN_DEFAULTS.executions
    iterations: int = LEARN_DEFAULTS.iterations
    horizon: int = LEARN_DEFAULTS.horizon
    xi_cap: float = LEARN_DEFAULTS.xi_cap
    patience: int = LEARN_DEFAULTS.patience
    reward: str = _CONFIG.reward
    tilde_every: int = _CONFIG.tilde_every
    tilde_weight: float = _CONFIG.tilde_weight
    properties: Path | None = None
    delta: float | None = None
    epsilon: float | None = None
    width: float | None = None
    no_focus: bool = False
    abstraction: str | None = None
    ignore_environment: bool = False
    parallel: bool = False


@dataclass(frozen=True, slots=True)
class LearnOutcome:
    """How a learning run ended: its manifest, setting and learner (models, data,
    progress, property tracker), the last checkpoint's row of ``curve.csv`` (None
    when interrupted while writing), the seconds of set-up, learning and writing (the
    sum of the ``write_phases`` phase lines), and whether it was interrupted."""

    manifest: RunManifest
    assessment: Assessment
    learner: Learner
    last: Mapping[str, object] | None
    setup_seconds: float
    learn_seconds: float
    write_seconds: float
    write_phases: int
    interrupted: bool


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
    path = out / run_dir.EVAL_DATASET
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


def learn_into(options: LearnOptions, report: ProgressReport, executor: Executor) -> LearnOutcome:
    """Run (or, with ``options.resume``, continue) a learning run into
    ``options.out`` (module docstring), its phases and progress on ``report`` and its
    executions on ``executor``; what a caller prints at the end is in the outcome.
    Raises the learning error after saving what was learned."""
    invoked = time.monotonic()
    out = options.out
    manifest = check_out(
        out,
        options.resume,
        RunManifest(options.agent, options.setting, options.method or DEFAULT_METHOD),
        options.budget,
        options.method,
    )
    # Building the setting validates the domain, problem, model file and --init: a
    # mistake there must not leave a half-made run directory behind.
    with report.phase(f"building the setting ({options.agent})"):
        assessment = build_assessment(options.agent, manifest.setting, np.random.default_rng(options.seed))
    _check_abstraction(options)
    out.mkdir(parents=True, exist_ok=True)
    run_file.write(out, manifest)
    report.say(
        f"capver learn: {assessment.name}, method {manifest.method}, budget {manifest.budget.describe()}"
        + (" (resumed)" if options.resume else "")
    )
    ctx = assessment.ctx
    # Workers build the setting themselves from its name, arguments and seed.
    spec = SettingSpec(options.agent, manifest.setting, options.seed)
    d_eval = eval_dataset(
        assessment, out, options.eval_sequences, options.seed, report, executor, spec, options.eval_chunk
    )
    with warnings.catch_warnings():
        # Reported below in one line of ours, without the library's source location.
        warnings.simplefilter("ignore", dataset_file.TornRecordWarning)
        writer, data = dataset_file.open_or_resume(out / run_dir.DATASET, ctx.vocab, assessment.setting.capabilities)
    if writer.loaded.torn is not None:
        report.say(
            f"capver learn: {writer.loaded.torn.describe(out / 'dataset.jsonl')}; cut it off and resumed "
            f"after record {writer.loaded.records}"
        )
    props, targets, directed, history = _properties(options, assessment)
    abstraction, since = _abstraction(options, assessment, len(data))
    b = manifest.budget
    config = LearnConfig.from_options(
        manifest.method,
        executions=options.executions,
        iterations=options.iterations,
        horizon=options.horizon,
        xi_cap=options.xi_cap,
        patience=options.patience,
        max_steps=b.max_steps,
        max_queries=b.max_queries,
        max_seconds=b.max_seconds,
        reward=options.reward,
        tilde_every=options.tilde_every,
        tilde_weight=options.tilde_weight,
        properties=props,
        targets=targets,
        directed=directed,
        # What the environment settles needs no query (capver.engines.verification.environment).
        world=world_of(options.agent, manifest.setting) if props and not options.ignore_environment else None,
        abstraction=abstraction,
        abstraction_since=since,
    )
    # A resumed run continues with a different stream of random choices.
    rng = np.random.default_rng([options.seed, len(data)])
    parallel = ParallelExecutions(executor, spec) if options.parallel else None
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
            report.say(f"capver learn: property {prop.name}: {tier_text(st.verdict, st.tier)}")
    learner.progress.queries = resumed_queries(writer.loaded.meta)
    curve = Curve.load(out / run_dir.CURVE_CSV)
    started = time.monotonic()
    # h̃ of the data as it stands: the last checkpoint's is the one written at the end,
    # so it is built once, not twice (h̃ is a pure function of h∧, the data and the seed).
    built: dict[int, LiftedOccam] = {}

    def occam() -> LiftedOccam:
        key = learner.progress.executions
        if key not in built:
            built.clear()
            built[key] = run_lifted_model(learner.h_and, learner.data, options.seed)
        return built[key]

    def record() -> dict[str, object]:
        p = learner.progress
        row: dict[str, object] = {
            "method": manifest.method,
            "seed": options.seed,
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

    next_eval = [0 if curve.last_steps is None else curve.last_steps + options.eval_every]

    def on_query(lr: Learner) -> None:
        p = lr.progress
        if lr.tracker is not None and lr.property_changes:
            property_status.write(out, lr.tracker, directed)
            for ch in lr.property_changes:
                report.say(
                    f"capver learn: property {ch.name}: {tier_text(ch.verdict, ch.tier)} after {ch.steps} "
                    f"simulator steps ({ch.queries} queries)"
                )
        if p.steps >= next_eval[0]:
            row = record()
            next_eval[0] = p.steps + options.eval_every
            status = (
                f"[{manifest.method}] queries {p.queries}, transitions {p.unique_transitions}, "
                f"coverage {row['coverage_agreement']:.4f}"
            )
        else:
            status = f"[{manifest.method}] queries {p.queries}, transitions {p.unique_transitions}"
        if p.failures:
            status += f", failed {p.failures}"
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
            options.seed,
        )
    except KeyboardInterrupt:
        report.say(
            f"capver learn: interrupted while writing the models; {out}/dataset.jsonl holds all "
            f"{learner.progress.executions} executions: run the same command with --resume to write them"
        )
        return LearnOutcome(manifest, assessment, learner, None, 0.0, 0.0, 0.0, 0, True)
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
    if interrupted:
        report.say(
            f"capver learn: interrupted; saved {learner.progress.executions} executions in {out}/dataset.jsonl "
            "and wrote the models, curve and report; continue with --resume"
        )
    return LearnOutcome(
        manifest,
        assessment,
        learner,
        curve.rows[-1],
        round(started - invoked, 1),
        round(learn_seconds, 1),
        write_seconds,
        write_phases,
        interrupted,
    )


def _drop_stale_evaluation(out: Path, transitions: int, report: ProgressReport) -> None:
    """``capver eval``'s scores describe the data they scored: once a resumed run
    holds more, its ``evaluation.json`` is removed, with a line saying so, rather
    than left to be read as the run's scores.  A file capver eval did not write (no
    "transitions" and "bound") is left alone."""
    path = out / run_dir.EVALUATION
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


def initial_state(learner: Learner) -> State | None:
    """The setting's symbolic initial state when it has exactly one."""
    st = learner.setting
    starts = {st.alpha(x) for x in st.initial_states}
    return next(iter(starts)) if len(starts) == 1 else None


def tier_text(verdict: str, tier: str) -> str:
    if tier in ("observed", "confident"):
        return f"{claim_words(verdict, tier)} ({tier})"
    return verdict.upper()


def _properties(
    options: LearnOptions, a: Assessment
) -> tuple[tuple[Property, ...], Targets, bool, tuple[TierChange, ...]]:
    """The run's properties: those given (copied into the run), else on --resume the
    run's own; their targets (given, else stored, else the defaults) and history."""
    out = options.out
    stored = property_status.read(out) if options.resume else None
    kept = out / property_status.PROPS
    source = (
        options.properties if options.properties is not None else (kept if options.resume and kept.exists() else None)
    )
    if source is None:
        if options.delta is not None or options.epsilon is not None or options.width is not None or options.no_focus:
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
        options.delta if options.delta is not None else default.delta,
        options.epsilon if options.epsilon is not None else default.epsilon,
        options.width if options.width is not None else default.width,
    )
    directed = not options.no_focus if (options.no_focus or stored is None) else stored.directed
    if source != kept:
        replace_text(kept, text)
    history = stored.history if stored is not None else ()
    return props, targets, directed, history


def _check_abstraction(options: LearnOptions) -> None:
    """Refuse an abstraction the run cannot use before anything is written."""
    if options.abstraction is None:
        return
    if options.properties is None and not (options.resume and (options.out / property_status.PROPS).exists()):
        raise UsageError("--abstraction needs --properties (it serves their verdicts)")
    if options.abstraction == TILDE and not (options.resume and (options.out / ModelKind.TILDE.file).exists()):
        raise UsageError(
            f"--abstraction {TILDE}: h̃ is the run's own ({ModelKind.TILDE.file}); give it with --resume on a run "
            "that has one, or give a file"
        )


def _abstraction(options: LearnOptions, a: Assessment, executions: int) -> tuple[Abstraction | None, int]:
    """The abstraction the properties' verdicts may rest on (checked by
    :func:`_check_abstraction`), and how many executions of the data it does not pool:
    h̃ (``tilde``) was chosen from all of them."""
    if options.abstraction is None:
        return None, 0
    ab = load_abstraction(
        options.abstraction, a.ctx.vocab, a.setting.capabilities, lambda: run_dir.Run.open(options.out).h_tilde
    )
    return ab, executions if options.abstraction == TILDE else 0


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
        plot_curves(curve.rows, out / run_dir.CURVE_PNG, title=title)
    with report.phase("writing h_and.capm, h_or.capm and h_tilde.capm"):
        # The setting's initial state goes into the models, so that planning and export
        # start there by default (when the setting has one symbolic initial state).
        st = learner.setting
        init = initial_state(learner)
        lifted = occam()
        tilde = lifted.model
        run_dir.write_models(out, learner.h_and, learner.h_or, lifted, init)
    with report.phase("reading the findings off h∧"):
        findings = run_findings(learner.h_and, seed)
    with report.phase("writing report.txt"):
        text = capability_report(learner.h_and, learner.h_or, tilde, findings, tilde_blocks(lifted))
        if (usage := agent_usage(st.agent, learner.worker_usage)) is not None:
            text += f"\nEndpoint usage of this invocation: {usage}.\n"
        replace_text(out / run_dir.REPORT_TXT, text)
    with report.phase("certifying h∧ ⪯ h̃ ⪯ h∨" + (" and h∧ ⪯ h⋆ ⪯ h∨" if truth is not None else "") + " with z3"):
        models = {certificate.AND: learner.h_and, certificate.OR: learner.h_or, certificate.TILDE: tilde}
        cert = certificate.certify(out, truth, models)
    for claim in cert.claims:
        report.say(f"capver learn: {claim.text}")
    return report.seconds_since(first)

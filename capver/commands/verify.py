"""``capver verify``: check properties of an agent's capabilities (the property
language of :mod:`capver.io.properties_text`; docs/properties.md) on a learned run or
on one model file.

On a run directory the verdict is about the *agent*, from h∧ and h∨ together
(:mod:`capver.engines.verification.agent_verdict`), in tiers that say what it
licenses: observed (exact: the witness or counterexample was observed), with
confidence 1 − δ (rests on h∨, and the data bound the agent's unseen effects at h∨'s
frontier by ε; the guarantee is printed), unconfirmed (with the queries that would
confirm it) or unknown (with the query that would decide it).  On a model file the
verdict is about that model.  Qualitative properties are checked by the engines of
:data:`~capver.engines.verification.qualitative.QUALITATIVE_ENGINES` (``--engine
bdd|ic3|abc|bmc``; ``auto``, the default, starts the BDD engine and races IC3 or BMC
beside it when the reachable set grows large, each in its own process: the first
answer wins), and the output names the engine that answered; an inductive invariant
IC3 (Spacer's or ABC's) found for an ``A [ G φ ]`` is recorded by ``--save`` in the run's certificate,
which ``capver certify`` re-checks.  The tiers' frontier is always computed on BDDs.
Quantitative ones (Pmax/Pmin, P<=p, Rmin/Rmax) by Storm (exact rationals) or capver's
explicit-state engine (``--engine``), on h∧ of a run — the maximum-likelihood model
section 4.2 evaluates — with the agent's value bounded at confidence 1 − δ
(:func:`capver.engines.verification.quantitative.agent_bounds`), which also decides
a ``P<op>p`` bound for the agent.  ``--model-kind and|or`` checks every property on
one bound of the lattice instead.

Every result repeats its property's text; a witness or counterexample is printed as
its initial state and then, per step, the atoms added and removed
(:meth:`Witness.format_changes`), and in ``--json`` as lists of atoms
(:meth:`Witness.to_json`).  ``--json`` values are numbers, with the exact fraction
beside them when the checker computed one.  ``--save`` writes the records to
``RUN/verdicts.json`` (:mod:`capver.io.verdicts_file`) for ``capver report``.

``--timeout SECONDS`` bounds each qualitative check (one property on one model, and
the tier's frontier): a check that runs out prints one line ``capver verify: error:``
naming the property, the model, the engines stopped and what to try, and the other
properties are still checked; a tier that runs out is stated as unconfirmed
("frontier not computed within --timeout").  With ``--save`` the verdicts of the
properties that were checked are saved, and a timed-out property keeps the verdict
an earlier ``--save`` wrote for it.

Exit status, as model checkers do: 0 every property holds, 1 one is violated,
4 none is violated but a check ran out of ``--timeout``, 3 none of those but one is
unconfirmed, unknown or undecided, 2 bad input.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import TextIO

from capver.commands.argtypes import (
    add_environment_option,
    non_negative,
    open_unit_interval,
    positive,
    refuse_to_overwrite,
    seconds,
)
from capver.core.properties import ForallPath, Globally, Property, to_text
from capver.core.state import State
from capver.core.vocabulary import Vocabulary
from capver.engines.verification import Evidence, Outcome, Verdict, VerdictRecord, verify_all
from capver.engines.verification.agent_verdict import DEFAULT_DELTA, DEFAULT_EPSILON
from capver.engines.verification.checkers import QUANTITATIVE_CHECKERS
from capver.engines.verification.evidence import engine_names
from capver.engines.verification.ic3 import IC3Result
from capver.engines.verification.qualitative import QUALITATIVE_ENGINES
from capver.engines.verification.smc import (
    DEFAULT_MAX_EXECUTIONS,
    DEFAULT_MAX_RUNS,
    DEFAULT_WIDTH,
    SchedulerCheck,
    SchedulerResult,
    plan_scheduler,
)
from capver.engines.verification.symbolic import Witness
from capver.engines.verification.verdict import EXIT_TIMEOUT, EXIT_UNKNOWN, EXIT_VIOLATED
from capver.errors import CapverError, UsageError
from capver.io import certificate, dsl, run_dir, verdicts_file
from capver.io.abstraction_file import TILDE, abstraction_text, load_abstraction
from capver.io.dsl import ParsedModel
from capver.io.properties_text import parse_property, read_properties
from capver.model.abstraction import Projection
from capver.model.kinds import ModelKind
from capver.settings import assessment_of, evidence_of

MODEL_KINDS = {
    "lattice": "on a run, qualitative verdicts about the agent from h∧ and h∨, quantitative values on h∧",
    "and": "every property on h∧ alone (the pessimistic model: observed transitions only)",
    "or": "every property on h∨ alone (the optimistic model)",
    "mle": "the maximum-likelihood model, which is h∧ (section 4.2): the same as 'and'",
    "tilde": "every property on the Occam model h̃ (h_tilde.capm), between h∧ and h∨ and predicting where no data is",
}
AUTO = "auto"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "target",
        type=Path,
        metavar="RUN|MODEL.capm",
        help="a capver learn run directory (verdicts about the agent) or one model file",
    )
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument(
        "--property",
        action="append",
        default=[],
        metavar="TEXT",
        help="a property, e.g. 'A [ G !(holding(a) & holding(b)) ]' (repeatable)",
    )
    what.add_argument("--properties", type=Path, metavar="FILE.props", help="a file of named properties")
    parser.add_argument(
        "--init",
        metavar="ATOMS",
        default=None,
        help="initial state as its true atoms; --init '' is the empty state (default: the model's "
        "(:init ...), which a run's models carry; a model without one needs --init)",
    )
    parser.add_argument(
        "--model-kind",
        choices=tuple(MODEL_KINDS),
        default="lattice",
        help="which model of a run the properties are checked on: "
        + "; ".join(f"{k}: {v}" for k, v in MODEL_KINDS.items()),
    )
    parser.add_argument(
        "--engine",
        choices=(AUTO, *QUALITATIVE_ENGINES, *QUANTITATIVE_CHECKERS),
        action="append",
        default=[],
        metavar="NAME",
        help="the model checker (repeatable: one for E/A properties, one for P/R; the kind not named "
        "stays auto). E/A properties: "
        + "; ".join(f"{k}: {e.summary}" for k, e in QUALITATIVE_ENGINES.items())
        + "; auto (default): bdd first, and when its reachable set grows large ic3 (unbounded "
        "A G, E F, E U) or bmc (the others) beside it in parallel, the first answer wins. "
        "P/R properties: storm (Storm, exact rationals), storm-float "
        "(Storm on doubles, sound, precision 1e-12), explicit (capver's explicit-state engine, exact up "
        "to 5,000 states), sparse (capver's vectorised engine: a float solution rounded to rationals "
        "and verified exactly, exact arithmetic where the check fails); auto: explicit up to 200 "
        "reachable states, sparse above. Each value names the engine and its precision guarantee",
    )
    parser.add_argument(
        "--timeout",
        type=seconds,
        default=None,
        metavar="SECONDS",
        help="stop a qualitative check (one property on one model, or a verdict tier's frontier) "
        "after this many seconds: a one-line error names the property, the engines and what to "
        "try, the other properties are still checked, and the exit status is 4 unless one is "
        "violated (default: no limit)",
    )
    parser.add_argument(
        "--delta",
        type=open_unit_interval,
        default=DEFAULT_DELTA,
        help="on a run, the error probability δ of every statement about the agent that rests on the "
        "data's bounds: confident verdicts and the bounds on quantitative values (anytime-valid: they "
        f"hold wherever the run stopped; default {DEFAULT_DELTA})",
    )
    parser.add_argument(
        "--epsilon",
        type=open_unit_interval,
        default=DEFAULT_EPSILON,
        help="on a run, a verdict that rests on h∨ is confident only when every (state, capability) "
        "pair of h∨'s frontier shows an unseen effect with probability ≤ ε per execution at "
        f"confidence 1 − δ; otherwise it is unconfirmed, with the queries that would confirm it "
        f"(default {DEFAULT_EPSILON})",
    )
    parser.add_argument(
        "--bound-scope",
        choices=("sound", "observed"),
        default="sound",
        help="bounds on the agent's quantitative values: sound (unseen outcomes bounded by the "
        "missing mass, untried (state, capability) pairs at their worst, so a reachable untried pair "
        "widens the bound) or observed (the data read as complete: a bound on the agent restricted "
        "to the observed pairs and outcomes)",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object per property instead of text (values as numbers, with the exact "
        'fraction in "exact"; witnesses as lists of atoms)',
    )
    parser.add_argument(
        "--save",
        action="store_true",
        help=f"on a run: also write the verdicts (the --json records) to RUN/{verdicts_file.NAME}, "
        "which capver report shows; replaces a file capver wrote there, never another one",
    )
    parser.add_argument(
        "--replay",
        type=non_negative,
        default=0,
        metavar="N",
        help="on a run: execute each witness / counterexample N times with the agent in its "
        "simulator and report how often it reached the property's goal (default: 0, no replay)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the replays and of --scheduler's runs")
    parser.add_argument(
        "--abstraction",
        metavar="SPEC",
        default=None,
        help="on a run: verdicts about the agent may also rest on the assumption that each capability's "
        "effects have one distribution within each class of states: 'tilde' (states that agree on the atoms "
        "h̃'s conditions mention), 'symmetry' (a pair and its every renaming of same-typed objects, effects "
        "compared after renaming), a file of 'CAPABILITY: atom, ...' lines ('*' for the rest), or "
        "module:function (a Python callable of the capability and the set of true atoms); executions pool per "
        "class, the assumption is tested on the data, and δ is split three ways (per pair, per class, the tests)",
    )
    parser.add_argument(
        "--save-abstraction",
        metavar="FILE",
        type=Path,
        default=None,
        help="with --abstraction tilde or FILE: write its atoms per capability to FILE, in the file form "
        "--abstraction reads, for a person to review or edit (never over an existing file)",
    )
    sampled = parser.add_argument_group(
        "a fixed scheduler, checked with the agent itself (statistical model checking; P properties)"
    )
    sampled.add_argument(
        "--scheduler",
        metavar="CAPS",
        default=None,
        help="on a run: a plan, its capabilities in order separated by commas (e.g. the plan capver plan "
        "prints); each P property's probability under it is sampled with the run's agent until decided, "
        "with an interval at confidence 1 − δ valid wherever the sampling stops; the executions are appended to "
        f"RUN/{run_dir.SCHEDULED}",
    )
    sampled.add_argument(
        "--width",
        type=open_unit_interval,
        default=DEFAULT_WIDTH,
        help=f"with --scheduler: a P=? interval this narrow ends the sampling (default {DEFAULT_WIDTH})",
    )
    sampled.add_argument(
        "--max-runs",
        type=positive,
        default=DEFAULT_MAX_RUNS,
        help=f"with --scheduler: runs of the scheduler at most (default {DEFAULT_MAX_RUNS})",
    )
    sampled.add_argument(
        "--max-executions",
        type=positive,
        default=DEFAULT_MAX_EXECUTIONS,
        help="with --scheduler: capability executions per run at most, the step limit of an unbounded "
        f"formula (default {DEFAULT_MAX_EXECUTIONS})",
    )
    add_environment_option(parser)


def run(args: argparse.Namespace) -> int:
    target: Path = args.target
    if args.save:
        if not target.is_dir():
            raise UsageError(
                f"--save: {target} is one model file; --save writes {verdicts_file.NAME} into a run "
                "directory (capver learn --out)"
            )
        verdicts_file.check_writable(target)
    if args.save_abstraction is not None:
        if args.abstraction is None:
            raise UsageError("--save-abstraction: writes the abstraction --abstraction names; none was given")
        refuse_to_overwrite(args.save_abstraction, "--save-abstraction")
        if args.abstraction != TILDE and not Path(args.abstraction).is_file():
            # Refused before the run's evidence is read: only atoms have a file form.
            raise UsageError(
                f"--save-abstraction: {args.abstraction} is not given by atoms; "
                "only atoms per capability (tilde or a file) have a file form"
            )
    evidence, first, on = _evidence(args, target)
    if args.save_abstraction is not None:
        _save_abstraction(args.save_abstraction, evidence, out=sys.stderr if args.json else sys.stdout)
    vocab = first.vocabulary
    if args.init is None and first.init is None:
        # A verdict from an initial state the user never chose (the empty one) looks
        # like a verdict about the agent and is not one.
        raise UsageError(
            f"{first.filename} has no (:init ...) and no --init was given: give --init ATOMS "
            "(the initial state's true atoms) or add (:init ...) to the model"
        )
    props = _properties(args, vocab, tuple(first.model))
    init, source = first.start(args.init)
    qualitative_engine, quantitative_engine = engine_names(args.engine, option="--engine")
    earlier = _saved_records(target) if args.save else {}
    invariants: list[tuple[str, ModelKind, IC3Result]] = []  # (property text, model, proof) for --save
    codes = []
    records: list[VerdictRecord] = []
    out = sys.stderr if args.json else sys.stdout  # with --json, stdout stays one JSON object per line
    scheduler = None
    if args.scheduler is not None:
        evidence, init, scheduler = _scheduled(args, target, evidence, init)
    verdicts = verify_all(
        evidence,
        props,
        init,
        on=on,
        engine=qualitative_engine,
        quantitative_engine=quantitative_engine,
        timeout=args.timeout,
        scheduler=scheduler,
    )
    for verdict in verdicts:
        if verdict.stopped is not None:
            print(f"capver verify: error: {verdict.stopped}", file=sys.stderr)
            record = earlier.get(to_text(verdict.prop)) or verdict.to_record()
            if record.verdict != Outcome.TIMEOUT:
                note = f"not re-checked: {verdict.stopped}; this is the verdict saved before"
                record = record.with_fields(rechecked=False, note=note)
            if args.json:
                print(json.dumps(record.to_json(), ensure_ascii=False))
        else:
            record = verdict.to_record().with_fields(init_from=source)
            text = verdict.to_text()
            witness = verdict.witness
            if args.replay and evidence.lattice and witness is not None and witness.steps:
                reached, runs = _replay(target, verdict.prop, witness, args.replay, args.seed)
                record = record.with_fields(replay={"runs": runs, "reached_goal": reached})
                text += f"\n  replayed on the agent: the goal was reached in {reached} of {runs} runs"
            print(json.dumps(record.to_json(), ensure_ascii=False) if args.json else text, flush=True)
            if evidence.lattice:
                _proved(verdict, invariants)
        records.append(record)
        codes.append(verdict.exit_status)
        if isinstance(verdict.result, SchedulerResult):
            # The agent's own executions: data of the run, beside D.
            run_dir.write_dataset(target / run_dir.SCHEDULED, verdict.result.data, append=True)
    if args.save:
        path = verdicts_file.write(target, records)
        print(f"saved {len(records)} verdict{'s' if len(records) != 1 else ''} to {path}", file=out)
        _save_invariants(target, invariants, init, out)
    for code in (EXIT_VIOLATED, EXIT_TIMEOUT, EXIT_UNKNOWN):
        if code in codes:
            return code
    return 0


def _evidence(args: argparse.Namespace, target: Path) -> tuple[Evidence, ParsedModel, ModelKind | None]:
    """What the verdicts rest on, the model file that gives the vocabulary and the
    initial state, and the model every property is checked on (None: the lattice)."""
    if not target.is_dir():
        if args.model_kind != "lattice":
            raise UsageError(
                f"--model-kind {args.model_kind}: {target} is one model; the kinds are models of a run "
                f"directory ({', '.join(k.file for k in ModelKind)})"
            )
        first = dsl.read(target)
        return Evidence.of_model(first.model), first, None
    opened = run_dir.Run.open(target)
    on = (
        None
        if args.model_kind == "lattice"
        else ModelKind.parse("and" if args.model_kind == "mle" else args.model_kind)
    )
    if on is ModelKind.TILDE and not opened.has(on.file):
        raise UsageError(
            f"--model-kind tilde: {target} has no {on.file} (runs of capver learn write it since the Occam model "
            "was added)"
        )
    evidence = evidence_of(
        opened,
        delta=args.delta,
        epsilon=args.epsilon,
        scope=args.bound_scope,
        environment=on is None and not args.ignore_environment,
        tilde=on is ModelKind.TILDE,
    )
    if args.abstraction is not None:
        if on is not None:
            raise UsageError(f"--abstraction: verdicts about the agent only, not with --model-kind {args.model_kind}")
        if args.abstraction == TILDE and not opened.has(ModelKind.TILDE.file):
            raise UsageError(f"--abstraction tilde: {target} has no {ModelKind.TILDE.file}")
        ab = load_abstraction(
            args.abstraction, evidence.h_and.vocabulary, evidence.h_and.capabilities, lambda: opened.h_tilde
        )
        evidence = dataclasses.replace(evidence, abstraction=ab)
    return evidence, opened.parsed(ModelKind.AND), on


def _save_abstraction(path: Path, evidence: Evidence, out: TextIO) -> None:
    ab = evidence.abstraction
    assert isinstance(ab, Projection)  # tilde or a file: checked before the evidence was read
    vocab = evidence.h_and.vocabulary
    with path.open("x", encoding="utf-8") as f:  # "x": never over a file that appeared since the check
        f.write(abstraction_text(ab, vocab, ab.name))
    print(f"wrote {path} (the classes of {ab.name}, {len(ab.masks)} capabilities)", file=out)


def _scheduled(
    args: argparse.Namespace, target: Path, evidence: Evidence, init: State
) -> tuple[Evidence, State, SchedulerCheck]:
    """The evidence with the run's agent (rebuilt from run.json), the initial state
    in the setting's vocabulary, and the plan ``--scheduler`` names."""
    if not target.is_dir():
        raise UsageError(f"--scheduler: {target} is one model file; a scheduler is run with the agent of a run")
    opened = run_dir.Run.open(target, require=(*run_dir.BOUNDS, run_dir.MANIFEST, run_dir.DATASET))
    a = assessment_of(opened.manifest, need="--scheduler", python="result.verify(prop, scheduler=[...])")
    vocab = a.ctx.vocab
    # The run's data, read once with the models: the scheduler needs its capabilities,
    # which name atoms, not bit positions of a vocabulary.
    data = evidence.data
    assert data is not None  # the run has its dataset (required above)
    names = [n.strip() for n in args.scheduler.split(",") if n.strip()]
    unknown = [n for n in names if n not in data.capability_table]
    if not names or unknown:
        known = ", ".join(sorted(data.capability_table)[:8])
        raise UsageError(
            f"--scheduler {args.scheduler!r}: expected capabilities of the run separated by commas"
            + (f"; {unknown[0]!r} is not one" if unknown else "")
            + f" (they include {known})"
        )
    start = vocab.state(evidence.h_and.vocabulary.atoms_of(init))
    check = SchedulerCheck(
        plan_scheduler(names),
        f"the plan {', '.join(names)}",
        width=args.width,
        max_runs=args.max_runs,
        max_executions=args.max_executions,
        seed=args.seed,
    )
    return dataclasses.replace(evidence, agent=a.setting), start, check


def _proved(verdict: Verdict, invariants: list[tuple[str, ModelKind, IC3Result]]) -> None:
    """Keep an IC3 engine's proof (Spacer's or ABC's) of an ``A [ G φ ]`` on a run's
    model for the certificate (``--save``)."""
    query = verdict.prop.query
    if not (isinstance(query, ForallPath) and isinstance(query.path, Globally)):
        return
    for kind, result in verdict.model_results():
        if kind is not None and isinstance(result, IC3Result) and result.invariant is not None and result.holds:
            invariants.append((_bare_text(verdict.prop), kind, result))


def _bare_text(prop: Property) -> str:
    """The property in the property language without its name."""
    return to_text(prop).removeprefix(f"{json.dumps(prop.name, ensure_ascii=False)}: ")


def _save_invariants(
    target: Path, invariants: list[tuple[str, ModelKind, IC3Result]], init: State, out: TextIO
) -> None:
    """Record the IC3 engines' invariants in the run's certificate (re-checked by plain z3 there
    first); a run without a certificate, or whose models changed since it was made,
    is told so and keeps its certificate as it is."""
    recorded = 0
    engines = sorted({result.engine for _, _, result in invariants})
    for text, kind, result in invariants:
        assert result.invariant is not None
        try:
            certificate.add_invariant(target, text, kind.file, result.invariant, init)
            recorded += 1
        except certificate.CertificateError as exc:
            print(f"capver verify: the invariant of {text} on {kind.file} is not recorded: {exc}", file=sys.stderr)
    if recorded:
        print(
            f"recorded {recorded} inductive invariant{'s' if recorded != 1 else ''} ({', '.join(engines)}) in "
            f"{target / certificate.NAME}; capver certify {target} re-checks them",
            file=out,
        )


def _saved_records(target: Path) -> dict[str, VerdictRecord]:
    """The records an earlier ``--save`` wrote, by property text (none when there is
    no such file, or it is not capver's: ``--save`` refuses that one anyway)."""
    path = target / verdicts_file.NAME
    try:
        rows = verdicts_file.records(json.loads(path.read_text(encoding="utf-8")), str(path))
    except (OSError, ValueError, CapverError):
        return {}
    return {r.text: r for r in rows}


def _properties(args: argparse.Namespace, vocab: Vocabulary, caps: tuple[str, ...]) -> tuple[Property, ...]:
    if args.properties is not None:
        props = read_properties(args.properties, vocab, caps)
    else:
        # Unnamed --property options are p1, p2, ... in the order given.
        props = tuple(
            prop if text.lstrip().startswith('"') else dataclasses.replace(prop, name=f"p{k}")
            for k, text in enumerate(args.property, 1)
            for prop in (parse_property(text, vocab, caps),)
        )
    return props


def _replay(directory: Path, prop: Property, witness: Witness, n: int, seed: int) -> tuple[int, int]:
    """Execute the witness's capabilities with the run's agent ``n`` times
    (:func:`capver.engines.replay.replay`)."""
    import numpy as np

    from capver.engines.replay import replay

    run = run_dir.Run.open(directory, require=(run_dir.MANIFEST,))
    a = assessment_of(run.manifest, need="--replay", python="result.replay(property, runs=N)")
    vocab = a.ctx.vocab
    path = prop.query.path  # type: ignore[union-attr]  # qualitative here
    table = run.dataset(vocab=vocab).capability_table
    r = replay(a.setting, vocab, path, witness, n, np.random.default_rng(seed), table)
    return r.reached, r.runs

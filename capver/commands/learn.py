"""``capver learn``: assess an agent with MCQS-E, MCQS-S or the Random Query baseline
(sections 3–4): the options, the run (:func:`capver.learn_run.learn_into`, which says
what the run directory holds) and the summary printed at its end.

Everything the user typed is checked before anything is created (the types of
:mod:`capver.commands.argtypes`, then the setting and the output directory).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path

from capver.commands.argtypes import (
    add_environment_option,
    non_negative_number,
    open_unit_interval,
    positive,
    seconds,
    theta,
)
from capver.commands.progress import ProgressReport
from capver.core.setting_args import SettingArgs
from capver.core.state import State
from capver.engines.directed import PropertyTracker
from capver.engines.eval_collection import SUGGESTED_CHUNK
from capver.engines.executors import EXECUTORS, make_executor
from capver.engines.findings import Achievement, capability_statuses
from capver.engines.learning import LEARN_DEFAULTS, LearnConfig
from capver.engines.mcqs import QUERY_METHODS
from capver.engines.mcqs.tilde import REWARDS
from capver.io.run_file import RunBudget
from capver.learn_run import (
    DEFAULT_EVAL_EVERY,
    DEFAULT_EVAL_SEQUENCES,
    DEFAULT_MAX_STEPS,
    DEFAULT_METHOD,
    LearnOptions,
    agent_usage,
    initial_state,
    learn_into,
    tier_text,
)
from capver.model.capability_model import CompoundModel
from capver.settings import SETTINGS

EXIT_INTERRUPTED = 130


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


_DEFAULTS = LearnConfig()  # the defaults not in LEARN_DEFAULTS


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
        "--xi",
        type=non_negative_number,
        default=LEARN_DEFAULTS.xi_cap,
        help="cap of the revisitation bonus ξ (0: the ξ=0 ablation)",
    )
    parser.add_argument(
        "--reward",
        choices=sorted(REWARDS),
        default=_DEFAULTS.reward,
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
    parser.add_argument(
        "--eval-sequences", type=positive, default=DEFAULT_EVAL_SEQUENCES, help="sequences in the evaluation dataset D′"
    )
    parser.add_argument(
        "--eval-chunk",
        type=positive,
        default=None,
        metavar="N",
        help=f"collect D′ in chunks of N sequences on the executor's workers (e.g. {SUGGESTED_CHUNK:,}); "
        "D′ then depends on N, never on the executor (default: one stream in this process)",
    )
    parser.add_argument(
        "--eval-every", type=positive, default=DEFAULT_EVAL_EVERY, help="evaluate every this many simulator steps"
    )
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
        help="with --properties: the confidence 1 − δ of the confident tier's bound (default 0.05)",
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
        "--abstraction",
        metavar="SPEC",
        default=None,
        help="with --properties: the verdicts may rest on executions pooled per class of this abstraction "
        "(as capver verify --abstraction: 'symmetry', a file of 'CAPABILITY: atom, ...' lines, module:function, "
        "or, with "
        "--resume, 'tilde': the run's h̃ as it stands, which then pools only the executions that come after), "
        "and the queries go to the classes that keep a property undecided",
    )
    add_environment_option(parser)
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


def options(args: argparse.Namespace) -> LearnOptions:
    """The options of a learning run, from the command line."""
    return LearnOptions(
        out=args.out,
        agent=args.agent,
        setting=setting_args(args),
        seed=args.seed,
        method=args.method,
        budget=given_budget(args),
        resume=args.resume,
        eval_sequences=args.eval_sequences,
        eval_chunk=args.eval_chunk,
        eval_every=args.eval_every,
        executions=args.executions,
        iterations=args.iterations,
        horizon=args.horizon,
        xi_cap=args.xi,
        patience=args.patience,
        reward=args.reward,
        tilde_every=args.tilde_every,
        tilde_weight=args.tilde_weight,
        properties=args.properties,
        delta=args.delta,
        epsilon=args.epsilon,
        width=args.width,
        no_focus=args.no_focus,
        abstraction=args.abstraction,
        ignore_environment=args.ignore_environment,
        parallel=not (args.executor == "local" and args.concurrency == 1),
    )


def run(args: argparse.Namespace) -> int:
    report = ProgressReport("capver learn", quiet=args.quiet)
    executor = make_executor(args.executor, args.concurrency, args.address)
    try:
        outcome = learn_into(options(args), report, executor)
    finally:
        executor.close()
    if outcome.interrupted or outcome.last is None:
        return EXIT_INTERRUPTED
    learner, name = outcome.learner, outcome.assessment.name
    p = learner.progress
    print(
        f"{name} {outcome.manifest.method}: {p.stop_reason}; {p.queries} queries, {p.executions} executions "
        f"({p.failures} failed), {p.steps} simulator steps, {p.unique_transitions} unique transitions, "
        f"{len(learner.capabilities)} capabilities."
    )
    if p.failures:
        # Failed executions are not evidence (docs/your_agent.md, "What failures do").
        worst = sorted(learner.data.failures.items(), key=lambda kv: (-kv[1], kv[0]))
        shown = ", ".join(f"{c} {n}" for c, n in worst[:5]) + (", …" if len(worst) > 5 else "")
        print(f"  failed executions, not evidence, by capability: {shown}")
    # Set-up is everything before learning (the setting, D′); the writing time is the
    # sum of the phase lines printed for it, so the three add up to the total shown.
    print(
        summary_text(
            outcome.last,
            args.out,
            outcome.setup_seconds,
            outcome.learn_seconds,
            outcome.write_seconds,
            outcome.write_phases,
            example_property(learner.h_and, learner.h_or, initial_state(learner)),
            report.quiet,
        )
    )
    if (usage := agent_usage(outcome.assessment.setting.agent, learner.worker_usage)) is not None:
        print(f"{name}: {usage} in this invocation")
    if learner.tracker is not None:
        print(property_summary(learner.tracker))
    return 0


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


def property_summary(tracker: PropertyTracker) -> str:
    """Each property with its tier, the steps it took to get there, and what is still
    missing for those left undecided."""
    t = tracker.targets
    head = (
        f"Properties (confident: with confidence 1 − δ = {1 - t.delta:g}, unseen effects ≤ ε = {t.epsilon:g} per "
        "execution at every frontier pair, so a run breaks the claim with probability ≤ ε per execution):"
    )
    lines = [head]
    for prop in tracker.properties:
        st = tracker.status[prop.name]
        reached = tracker.reached(prop.name)
        when = f" after {reached.steps} simulator steps" if reached is not None else ""
        line = f"  {prop.name}: {tier_text(st.verdict, st.tier)}{when}"
        if st.lattice is not None and st.lattice.environment is not None:
            line += f" ({st.lattice.reason})"
        note = st.lattice.abstraction if st.lattice is not None else None
        if st.tier == "confident" and note is not None and note.used:
            line += f" (assuming {note.assumption}: ε bounds each class's unseen effects)"
        if not st.decided:
            line += f"; missing: {st.missing}"
        lines.append(line)
    return "\n".join(lines)

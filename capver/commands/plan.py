"""``capver plan``: plan with a capability model's capabilities towards a goal, using
the introspector of the model-introspection paper (milestones by state mutation of
the goal, section 5.1; bilevel search, section 5.3) or GREEDY, and optionally check
the plan by executing it with the model-backed agent (the E3 cross-evaluation of
section 4.2 of the capability paper).

The goal is a formula over the model's atoms: literals separated by spaces (``~``
negates one) and alternatives separated by ``|``, e.g. ``"on(a,b) ~clear(c)"``.  The
command prints the milestones from the initial state, the plan with the outcome each
step is planned for, the probabilities the model predicts and, with
``--execute-with model``, how often the agent reached the goal.  Exit status 0 when a
plan was found, 1 when none was.  See :mod:`capver.introspection.capability_planning`.

The model is a ``.capm`` file or a ``capver learn`` run directory, whose h∧ is used
(the model ``capver verify`` computes a run's probabilities on; ``--model-kind``
picks h∨ or h̃ instead).  Each step prints Pr_h of its planned outcome, the
average over every rule that applies, as ``capver export --plan`` does.
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

import numpy as np

from capver.commands.argtypes import positive, seconds
from capver.core.vocabulary import Literal
from capver.errors import UsageError
from capver.introspection.capability_planning import (
    CAPABILITY_PLANNERS,
    CapabilityPlan,
    ExecutionReport,
    execute_plan,
    goal_formula,
    plan_capabilities,
)
from capver.introspection.search import SearchBudget
from capver.io.literal_text import parse_dnf
from capver.io.run_dir import Run
from capver.model.capability_model import CompoundModel
from capver.model.kinds import ModelKind


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "model",
        metavar="MODEL.capm|RUN_DIR",
        help="capability-model file, or a capver learn run directory (its h_and.capm, the model "
        "capver verify computes a run's probabilities on; --model-kind picks another)",
    )
    parser.add_argument(
        "--model-kind",
        choices=tuple(RUN_MODELS),
        default=None,
        help="with RUN_DIR: the run's model to plan with: "
        + "; ".join(f"{k}: {v}" for k, v in RUN_MODELS.items())
        + " (default: and)",
    )
    parser.add_argument(
        "--goal",
        required=True,
        help="goal literals, e.g. 'on(a,b) ~clear(c)' ('~' negates, '|' separates alternatives)",
    )
    parser.add_argument(
        "--init",
        metavar="ATOMS",
        default=None,
        help="initial state as space-separated atoms, e.g. 'ontable(a) clear(a)'; --init '' is the "
        "empty state (default: the model's (:init ...), else the empty state)",
    )
    parser.add_argument(
        "--planner",
        choices=CAPABILITY_PLANNERS,
        default="introspector",
        help="introspector (milestones) or greedy (most probable path) (default: introspector)",
    )
    parser.add_argument(
        "--horizon", type=positive, default=20, help="maximum number of capability executions in a plan (default: 20)"
    )
    parser.add_argument("--timeout", type=seconds, default=None, help="planning time limit in seconds")
    parser.add_argument(
        "--execute-with",
        choices=("model",),
        default=None,
        help="model: execute the plan with the agent that behaves as MODEL",
    )
    parser.add_argument("--runs", type=positive, default=100, help="executions of the plan (default: 100)")
    parser.add_argument("--seed", type=int, default=0, help="seed of every random choice (default: 0)")


RUN_MODELS = {k.value: f"{k.file} ({k.description})" for k in ModelKind}


def model_path(target: str, kind: str | None) -> str:
    """The model file to plan with: ``target`` itself, or in a run directory the
    model of ``kind`` (h∧ by default, as ``capver verify`` computes a run's
    probabilities on it)."""
    p = Path(target)
    if not p.is_dir():
        if kind is not None:
            raise UsageError(
                f"--model-kind {kind}: {target} is one model file; --model-kind picks a model of a "
                "run directory (capver learn --out)"
            )
        return target
    name = ModelKind.parse(kind or "and").file
    if not (p / name).is_file():
        raise UsageError(
            f"{target}: a directory without {name}; expected MODEL.capm or the --out directory of capver learn"
        )
    run = Run(p)
    run.check_fresh()  # a run whose data outgrew its models is refused, as by every command
    return str(run.file(name))


def format_plan(plan: CapabilityPlan, model: CompoundModel) -> list[str]:
    vocab = model.vocabulary
    lines = [f"initial state: {vocab.format_state(plan.initial)}", f"goal: {plan.goal}"]
    if plan.milestones:
        lines.append(
            "milestones (mutations of the goal from the initial state): " + ", ".join(str(m) for m in plan.milestones)
        )
    else:
        lines.append("milestones: none (the goal holds and no capability can undo it, or no capability can reach it)")
    status = "solved" if plan.solved else ("TIMED OUT" if plan.timed_out else "no plan reaches the goal")
    lines.append(
        f"{plan.planner}: {len(plan.steps)} capabilities, {status}; planning {plan.runtime:.4f} s "
        f"(grounding {plan.build_seconds:.4f} s), {plan.expanded} expanded, {plan.generated} generated"
    )
    for i, (a, s, s2) in enumerate(zip(plan.steps, plan.states, plan.states[1:]), 1):
        eta = a.effect
        changes = [str(x) for x in vocab.atoms_of(eta.add)] + [
            Literal(x, False).short for x in vocab.atoms_of(eta.delete)
        ]
        # The outcome's probability Pr_h(s2 | s, c), averaged over every rule that
        # applies at s (as `capver export --plan` prints it), not the probability
        # within the one rule the planner grounded the step on.
        lines.append(
            f"  {i}. {a.name}   planned outcome: {' '.join(changes) or 'no change'}"
            f"   Pr_h = {model.prob(s, a.name, s2)} (an outcome of rule {a.rule + 1})"
        )
    if plan.solved:
        lines.append(
            f"predicted: path probability {plan.path_probability} ({float(plan.path_probability):.4f}), "
            f"goal probability {plan.success_probability} ({float(plan.success_probability):.4f}), "
            f"no prediction {plan.unknown_probability} ({float(plan.unknown_probability):.4f})"
        )
    return lines


def format_report(report: ExecutionReport) -> list[str]:
    first = (
        f"executed {report.runs} times: goal reached in {report.successes} ({report.success_rate:.1%}; "
        f"model predicts {float(report.predicted_success):.1%})"
    )
    second = (
        f"  planned path followed in {report.on_path}, final state predicted possible in "
        f"{report.predicted_possible} ({report.reachability_accuracy:.1%}), "
        f"{report.failed_executions} failed executions, {report.steps} simulator steps"
    )
    return [first, second]


def run(args: argparse.Namespace) -> int:
    from capver.io import dsl
    from capver.settings import model_assessment

    path = model_path(args.model, args.model_kind)
    parsed = dsl.read(path)
    model = parsed.model
    vocab = model.vocabulary
    init, source = parsed.start(args.init)
    alternatives = parse_dnf(args.goal, vocab, what="--goal")
    goal = goal_formula(alternatives)
    rng = np.random.default_rng(args.seed)
    budget = SearchBudget(timeout=args.timeout)
    plan = plan_capabilities(model, goal, init, planner=args.planner, horizon=args.horizon, rng=rng, budget=budget)
    print(f"model {parsed.name!r} ({path}): {len(model)} capabilities; starting from {source}")
    print("\n".join(format_plan(plan, model)))
    if not plan.solved:
        return 1
    if args.execute_with == "model":
        setting = model_assessment(model, init, f"model:{path}").setting
        report = execute_plan(plan, setting, rng, model=model, runs=args.runs)
        print("\n".join(format_report(report)))
    if Path(args.model).is_dir() and plan.steps:
        # The plan as a fixed scheduler of the agent itself (statistical model checking).
        goal_text = " | ".join(
            " & ".join(str(lit.atom) if lit.positive else f"!{lit.atom}" for lit in conj) for conj in alternatives
        )
        caps = ",".join(a.capability.name for a in plan.steps)
        print(
            f"to bound its success with the agent itself: capver verify {shlex.quote(args.model)} "
            f"--scheduler {shlex.quote(caps)} --property {shlex.quote(f'Pmin=? [ F {goal_text} ]')}"
        )
    return 0

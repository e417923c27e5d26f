"""``capver run``: execute a few capabilities of one agent and show the transitions
(section 3.3's capability execution and trajectory extraction, made visible).

The agent is the LAO* agent or the primitive-action agent on a bundled PPDDL
domain, or the model-backed agent of a capability-model file.  Capabilities are
discovered by random walks (section 3) for the LAO* agent, are the ground actions
for the primitive agent and the model's capabilities for the model-backed agent;
``--capability`` names them explicitly instead.  Each one is executed from the
initial state and from states reached by random walks, and every execution is
printed with its state, added and deleted atoms, step count and stop reason.
"""

from __future__ import annotations

import argparse

import numpy as np

from capver.commands.argtypes import non_negative, positive, theta
from capver.core.setting_args import SettingArgs
from capver.core.state import Capability, State
from capver.core.vocabulary import Vocabulary
from capver.engines.discovery import random_walks
from capver.engines.execution import Execution, ExecutionBudget, execute
from capver.errors import UsageError
from capver.io.literal_text import parse_conjunction
from capver.settings import Assessment, build_assessment

AGENTS = ("lao", "primitive", "model")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "agent",
        choices=AGENTS,
        help="lao: LAO* planner; primitive: one ground action per "
        "capability; model: behaves as the capability model given with --model",
    )
    # One default domain for every command that runs an agent: capver learn's.
    parser.add_argument(
        "--domain",
        default=SettingArgs().domain,
        help=f"bundled PPDDL domain (default: {SettingArgs().domain}, as for capver learn)",
    )
    parser.add_argument("--problem", default="problem1", help="problem of the domain (default: problem1)")
    parser.add_argument("--model", metavar="FILE", help="capability-model file (.capm) for the model agent")
    parser.add_argument(
        "--init",
        metavar="ATOMS",
        default="",
        help="model agent: initial state as space-separated atoms, e.g. 'on(a,b) clear(a)'",
    )
    parser.add_argument(
        "--capabilities",
        metavar="N",
        type=non_negative,
        default=3,
        help="number of capabilities to execute, drawn at random (default: 3)",
    )
    parser.add_argument(
        "--capability",
        metavar="NAME",
        action="append",
        default=[],
        help="execute this capability (repeatable), e.g. 'on(a,b)' or 'holding(a)&~clear(b)'",
    )
    parser.add_argument(
        "--walk-states",
        metavar="K",
        type=non_negative,
        default=2,
        help="also execute from K states reached by random walks (default: 2)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of every random choice (default: 0)")
    parser.add_argument("--theta", type=theta, default=1, help="temporal length bound Θ, or 'inf' (default: 1)")
    parser.add_argument(
        "--step-cap",
        type=positive,
        default=200,
        help="simulator steps one capability execution may take (default: 200)",
    )


def parse_capability(name: str, vocab: Vocabulary) -> Capability:
    """The capability whose intent ``name`` spells: a conjunction of literals, e.g.
    ``on(a,b)`` or ``holding(a)&~clear(b)`` (the form :meth:`Capability.for_intent`
    writes)."""
    return Capability.for_intent(parse_conjunction(name, vocab, what="--capability"))


def _setup(args: argparse.Namespace, rng: np.random.Generator) -> tuple[Assessment, list[Capability]]:
    """The agent's setting (built by :mod:`capver.settings`, as for ``capver learn``)
    and the capabilities to execute: discovered or named with ``--capability``."""
    if args.agent == "model" and not args.model:
        raise UsageError("--model FILE is required for the model agent")
    options = SettingArgs(
        domain=args.domain,
        problem=args.problem,
        model=args.model,
        init=args.init,
        theta=args.theta,
        step_cap=args.step_cap,
        seed=args.seed,
    )
    a = build_assessment(args.agent, options, rng)
    caps = list(a.setting.capabilities)
    if not args.capability:
        return a, caps
    if args.agent == "lao":  # LAO* pursues any intent over the domain's atoms
        return a, [parse_capability(n, a.ctx.vocab) for n in args.capability]
    known = {c.name: c for c in caps}
    for n in args.capability:
        if n not in known:
            what = (
                "the model has no such capability"
                if args.agent == "model"
                else f"not a ground action of {args.domain}/{args.problem}"
            )
            raise UsageError(f"--capability {n!r}: {what}, e.g. {caps[0].name!r}")
    return a, [known[n] for n in args.capability]


def format_execution(ex: Execution, vocab: Vocabulary) -> list[str]:
    t = ex.transition
    eta = t.effect
    added = ", ".join(str(a) for a in vocab.atoms_of(eta.add)) or "-"
    deleted = ", ".join(str(a) for a in vocab.atoms_of(eta.delete)) or "-"
    lines = [
        f"  state:    {vocab.format_state(t.s)}",
        f"  added:    {added}",
        f"  deleted:  {deleted}",
        f"  steps: {ex.steps}   temporal length: {len(ex.symbolic_trajectory) - 1}   stop: {ex.stop_reason}",
    ]
    if ex.failed:
        lines.append(f"  FAILED: {ex.failure}")
    return lines


def run(args: argparse.Namespace) -> int:
    rng = np.random.default_rng(args.seed)
    a, caps = _setup(args, rng)
    st, vocab = a.setting, a.ctx.vocab
    n_known = len(caps) if args.capability else len(st.capabilities)
    if not args.capability and args.capabilities < len(caps):
        picked = sorted(rng.choice(len(caps), size=args.capabilities, replace=False).tolist())
        caps = [caps[i] for i in picked]
    x0 = st.sim.reset(args.seed)
    starts: list[tuple[str, State]] = [("initial state", x0)]
    walked = sorted({t.s_next for t in random_walks(st.sim, st.alpha, rng, n_walks=3, length=20)} - {x0})
    if walked and args.walk_states:
        idx = sorted(rng.choice(len(walked), size=min(args.walk_states, len(walked)), replace=False).tolist())
        starts += [(f"random-walk state {k + 1}", walked[i]) for k, i in enumerate(idx)]
    budget = ExecutionBudget(max_steps=args.step_cap, theta=args.theta)
    theta = "inf" if args.theta is None else str(args.theta)
    print(
        f"{args.agent} agent, {a.name}: {n_known} capabilities, executing {len(caps)} "
        f"from {len(starts)} states (theta={theta}, seed={args.seed})"
    )
    n = 0
    for c in caps:
        for where, x in starts:
            n += 1
            ex = execute(st.agent, st.sim, st.alpha, c, x, rng, budget)
            print(f"[{n}] {c.name}  from {where}")
            print("\n".join(format_execution(ex, vocab)))
    return 0

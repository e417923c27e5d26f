"""``capver export``: write a capability model (paper, section 2) as a PPDDL domain
and problem, optionally also as an all-outcomes determinised PDDL domain and
problem, and optionally plan on the latter with pyperplan and replay the plan under
the model (see :mod:`capver.io.ppddl_export` for the translation).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TypeVar

from capver.commands.argtypes import refuse_to_overwrite
from capver.errors import CapverError, UsageError
from capver.io import dsl
from capver.io.literal_text import parse_conjunction
from capver.io.ppddl_export import (
    check_search,
    export_determinized,
    export_ppddl,
    solve,
    validate_plan,
)
from capver.io.prism_export import export_prism

T = TypeVar("T")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", metavar="MODEL.capm", help="capability-model file")
    parser.add_argument("--out", metavar="DIR", required=True, help="directory for the PDDL files (created if missing)")
    parser.add_argument("--init", metavar="ATOMS", default="",
                        help="initial state as its true atoms, e.g. 'ontable(a) clear(a) handempty' "
                        "(default: the model's (:init ...), else every atom false)")
    parser.add_argument("--goal", metavar="LITERALS", default="",
                        help="goal as a conjunction of literals, '~' negates, e.g. 'on(a,b) ~clear(b)'")
    parser.add_argument("--format", choices=("ppddl", "prism"), default="ppddl",
                        help="ppddl: domain.pddl / problem.pddl for planners; prism: model.prism, the model as an MDP "
                        "(one command per capability and BDD region, exact probabilities, a label per atom) for "
                        "Storm or PRISM")
    parser.add_argument("--determinize", action="store_true",
                        help="also write domain_det.pddl / problem_det.pddl (all-outcomes determinisation, "
                        "negative preconditions compiled away)")
    parser.add_argument("--plan", action="store_true",
                        help="solve the determinised files with pyperplan and validate the plan under the "
                        "model (implies --determinize)")
    parser.add_argument("--search", default="bfs",
                        help="pyperplan search for --plan: bfs or ids (blind), or astar, wastar, gbf, ehs "
                        "with --heuristic (default: bfs, which finds a shortest plan)")
    parser.add_argument("--heuristic", default=None, help="pyperplan heuristic for --plan, e.g. hff or hmax")


def run(args: argparse.Namespace) -> int:
    parsed = dsl.read(args.model)
    model, vocab = parsed.model, parsed.vocabulary
    init, source = parsed.initial_state(args.init)
    goal = parse_conjunction(args.goal, vocab, what="--goal") if args.goal.strip() else ()
    if args.plan:
        try:
            check_search(args.search, args.heuristic)
        except CapverError as exc:
            raise UsageError(f"--search {args.search!r} --heuristic {args.heuristic!r}: {exc}") from None
    out = Path(args.out)
    if args.format == "prism":
        return _prism(args, parsed, init, source, out)
    try:
        ppddl = export_ppddl(model, init=init, goal=goal, name=parsed.name)
        written = list(ppddl.write(out))
        det = det_files = None
        if args.determinize or args.plan:
            det = export_determinized(model, init=init, goal=goal, name=parsed.name)
            det_files = det.write(out)
            written += det_files
    except OSError as exc:
        raise UsageError(f"--out {args.out!r}: cannot write the files ({exc.strerror or exc})") from None
    exported = sum(1 for cm in model.values() if cm.rules)
    print(f"exported {exported} of {len(model)} capabilities of {parsed.name!r} over {len(vocab)} atoms; "
          f"initial state from {source}")
    for p in written:
        print(f"  wrote {p}")
    if det is None or det_files is None or not args.plan:
        return 0
    plan = solve(*det_files, search=args.search, heuristic=args.heuristic)
    if plan is None:
        why = " (the goal is unreachable even when every capability outcome may be chosen)" if args.search == "bfs" else ""
        print(f"pyperplan ({args.search}) found no plan{why}")
        return 1
    check = validate_plan(model, det, plan)
    print(f"pyperplan plan ({len(plan)} steps, search {args.search}):")
    for k, st in enumerate(check.steps, 1):
        a = det.actions[st.action]
        print(f"  {k}. {st.action}   capability {st.capability!r}, region {a.region}, "
              f"outcome probability {a.probability}")
        print(f"     {vocab.format_state(st.state)} -> {vocab.format_state(st.next_state)}   "
              f"Pr_h = {st.probability}")
    if check.valid:
        print(f"valid under the model: every step has positive probability and the goal holds at the end; "
              f"probability of this outcome chain: {check.probability}")
        return 0
    print(f"NOT valid under the model: {check.failure or 'the goal does not hold at the end'}")
    return 1


def _prism(args: argparse.Namespace, parsed: dsl.ParsedModel, init: int, source: str, out: Path) -> int:
    if args.goal.strip() or args.determinize or args.plan:
        raise UsageError("--format prism: a PRISM model carries no goal or plan; give the goal as a property "
                         "(capver verify, or Storm's Pmax=? [ F ... ]) and leave out --goal/--determinize/--plan")
    target = out / "model.prism"
    refuse_to_overwrite(target, "--out")
    export = export_prism(parsed.model, init, name=parsed.name)
    out.mkdir(parents=True, exist_ok=True)
    target.write_text(export.text, encoding="utf-8")
    commands = sum(1 for line in export.text.splitlines() if line.lstrip().startswith("["))
    print(f"exported {len(parsed.model)} capabilities of {parsed.name!r} over {len(parsed.vocabulary)} atoms as a "
          f"PRISM MDP ({commands} commands, {target.stat().st_size} bytes); initial state from {source}")
    print(f"  wrote {target}")
    return 0

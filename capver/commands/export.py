"""``capver export``: write a capability model (paper, section 2), or the two models
of a ``capver learn`` run, as files that planners and PPDDL tools read as written
(see :mod:`capver.io.ppddl_export` for the translation):

* flavour ``ppddl`` (default): ``domain.pddl`` / ``problem.pddl``, PPDDL with decimal
  probabilities (``--exact-fractions`` for capver's own reader);
* flavour ``pddlgym``: ``domain.pddl`` / ``problems/problem.pddl`` that
  ``pddlgym.core.PDDLEnv(domain, problems, dynamic_action_space=True)`` loads;
* ``--determinize``: also ``domain_det.pddl`` / ``problem_det.pddl``, the
  all-outcomes determinisation for classical planners (``--strips`` for planners
  without negative or disjunctive preconditions, e.g. pyperplan); ``--plan`` solves it
  with pyperplan and replays the plan under the model.

A planning problem needs a goal and an initial state: without ``--goal`` (or
without an initial state, from ``--init`` or the model's ``(:init ...)``) the command
refuses unless ``--empty-problem`` asks for the trivial one.  ``--out`` may only hold
files that capver export wrote there (listed in ``capver-export.json``) unless
``--force`` is given.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path

from capver.commands.argtypes import refuse_to_overwrite
from capver.core.state import State
from capver.core.vocabulary import Literal
from capver.engines.classical_planning import check_search, solve, validate_plan
from capver.engines.verification.prism import export_prism
from capver.errors import CapverError, UsageError
from capver.io import dsl
from capver.io.literal_text import parse_conjunction
from capver.io.ppddl_export.determinised import DeterminizedExport, export_determinized
from capver.io.ppddl_export.names import PDDLNames
from capver.io.ppddl_export.pddlgym_flavour import export_pddlgym
from capver.io.ppddl_export.ppddl import export_ppddl
from capver.io.ppddl_export.printer import ExportStats
from capver.io.run_dir import Run
from capver.model.kinds import ModelKind

FLAVORS = ("ppddl", "pddlgym")
MANIFEST = "capver-export.json"
RUN_MODELS = (ModelKind.AND, ModelKind.OR)
OPTIONAL_RUN_MODELS = (ModelKind.TILDE,)  # the Occam model, in runs made since it was added


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "model",
        metavar="MODEL.capm|RUN_DIR",
        help="capability-model file, or a capver learn run directory (exports its h_and, h_or and, when "
        "present, h_tilde, each into a subfolder of --out, from the setting's initial state)",
    )
    parser.add_argument(
        "--out",
        metavar="DIR",
        required=True,
        help="directory for the files (created if missing; it may hold only files capver export "
        "wrote there, unless --force)",
    )
    parser.add_argument(
        "--init",
        metavar="ATOMS",
        default=None,
        help="initial state as its true atoms, e.g. 'ontable(a) clear(a) handempty'; --init '' is the "
        "empty state (default: the model's (:init ...), which a run's models carry)",
    )
    parser.add_argument(
        "--goal",
        metavar="LITERALS",
        default="",
        help="goal as a conjunction of literals, as in capver plan: '~' negates, e.g. 'on(a,b) ~clear(b)'",
    )
    parser.add_argument(
        "--empty-problem",
        action="store_true",
        help="without --goal (or an initial state), write the trivial problem instead of refusing",
    )
    parser.add_argument(
        "--flavor",
        "--flavour",
        dest="flavor",
        metavar="FLAVOR",
        default="ppddl",
        help="ppddl: domain.pddl / problem.pddl (PPDDL with conditional effects); pddlgym: "
        "domain.pddl / problems/problem.pddl for pddlgym.core.PDDLEnv(domain, problems, "
        "dynamic_action_space=True) (conditional effects compiled away)",
    )
    parser.add_argument(
        "--exact-fractions",
        action="store_true",
        help="write probabilities as exact fractions (1/3) for capver's own PPDDL reader; other "
        "tools read only the default decimals",
    )
    parser.add_argument(
        "--keep-idle",
        action="store_true",
        help="keep capabilities that can never change the state (left out by default: no plan "
        "needs them), with an effect that re-asserts a literal of their precondition",
    )
    parser.add_argument(
        "--format",
        choices=("ppddl", "prism"),
        default="ppddl",
        help="ppddl: PDDL files for planners (see --flavor); prism: model.prism, the model as an MDP "
        "(one command per capability and BDD region, exact probabilities, a label per atom) for "
        "Storm or PRISM",
    )
    parser.add_argument(
        "--determinize",
        action="store_true",
        help="also write domain_det.pddl / problem_det.pddl (all-outcomes determinisation; "
        "negative and disjunctive preconditions, as Fast Downward reads them)",
    )
    parser.add_argument(
        "--strips",
        action="store_true",
        help="with --determinize: one action per cube, positive preconditions only (for pyperplan "
        "and other STRIPS planners; larger)",
    )
    parser.add_argument(
        "--plan",
        action="store_true",
        help="solve the determinised files with pyperplan and validate the plan under the "
        "model (implies --determinize --strips)",
    )
    parser.add_argument(
        "--search",
        default="bfs",
        help="pyperplan search for --plan: bfs or ids (blind), or astar, wastar, gbf, ehs "
        "with --heuristic (default: bfs, which finds a shortest plan)",
    )
    parser.add_argument("--heuristic", default=None, help="pyperplan heuristic for --plan, e.g. hff or hmax")
    parser.add_argument("--force", action="store_true", help="write into --out even if it holds other files")


@dataclass(frozen=True, slots=True)
class _Source:
    """One model to export: its file, the subfolder of --out, and its parse."""

    path: Path
    subdir: str
    parsed: dsl.ParsedModel


def _sources(arg: str) -> list[_Source]:
    p = Path(arg)
    if p.is_dir():
        run = Run(p)
        missing = [m.file for m in RUN_MODELS if not run.has(m.file)]
        if missing:
            raise UsageError(f"{arg}: not a capver learn run directory (no {' or '.join(missing)})")
        kinds = RUN_MODELS + tuple(m for m in OPTIONAL_RUN_MODELS if run.has(m.file))
        return [_Source(run.file(m.file), m.python, run.parsed(m)) for m in kinds]
    return [_Source(p, "", dsl.read(p))]


def _problem(args: argparse.Namespace, src: _Source) -> tuple[State, str, tuple[Literal, ...]]:
    parsed = src.parsed
    init, source = parsed.start(args.init)
    goal = parse_conjunction(args.goal, parsed.vocabulary, what="--goal") if args.goal.strip() else ()
    if args.format == "prism" or args.empty_problem:
        return init, source, goal
    if not goal:
        raise UsageError(
            f"{src.path}: a planning problem needs a goal; add --goal LITERALS (e.g. "
            f"--goal '{_example_goal(parsed)}'), or --empty-problem for the trivial problem"
        )
    if args.init is None and parsed.init is None:
        raise UsageError(
            f"{src.path}: the model has no (:init ...); add --init ATOMS (its true atoms), or --empty-problem"
        )
    return init, source, goal


def _example_goal(parsed: dsl.ParsedModel) -> str:
    atoms = parsed.vocabulary.atoms
    return str(atoms[0]) if atoms else "p"


def _check_out(out: Path, option: str, force: bool) -> None:
    """Refuse an --out that holds files capver export did not write there."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"{option} {out}: exists and is not a directory")
    if force or not out.exists():
        return
    ours: set[str] = set()
    manifest = out / MANIFEST
    if manifest.is_file():
        try:
            ours = set(json.loads(manifest.read_text(encoding="utf-8")).get("files", []))
        except (ValueError, AttributeError):
            ours = set()
    foreign = sorted(
        str(p.relative_to(out))
        for p in out.rglob("*")
        if p.is_file() and p != manifest and str(p.relative_to(out)) not in ours
    )
    if foreign:
        shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
        raise UsageError(
            f"{option} {out}: holds files capver export did not write ({shown}); choose an empty or "
            "new folder, or pass --force to write there anyway"
        )


def _record(out: Path, files: list[str]) -> None:
    manifest = out / MANIFEST
    old: list[str] = []
    if manifest.is_file():
        try:
            old = list(json.loads(manifest.read_text(encoding="utf-8")).get("files", []))
        except (ValueError, AttributeError):
            old = []
    data = {"written_by": "capver export", "files": sorted(set(old) | set(files))}
    manifest.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def run(args: argparse.Namespace) -> int:
    if args.flavor not in FLAVORS:
        raise UsageError(f"--flavor {args.flavor!r}: unknown flavour; expected one of {', '.join(FLAVORS)}")
    if args.strips and not (args.determinize or args.plan):
        raise UsageError("--strips: applies to the determinised files; add --determinize")
    if args.plan:
        try:
            check_search(args.search, args.heuristic)
        except CapverError as exc:
            raise UsageError(f"--search {args.search!r} --heuristic {args.heuristic!r}: {exc}") from None
    sources = _sources(args.model)
    problems = [_problem(args, src) for src in sources]
    out = Path(args.out)
    if args.format == "prism":
        if args.goal.strip() or args.determinize or args.plan:
            raise UsageError(
                "--format prism: a PRISM model carries no goal or plan; give the goal as a property "
                "(capver verify, or Storm's Pmax=? [ F ... ]) and leave out --goal/--determinize/--plan"
            )
        for src, (init, source, _) in zip(sources, problems, strict=True):
            _prism(src, init, source, out / src.subdir, args.force)
        return 0
    _check_out(out, "--out", args.force)
    status = 0
    for src, (init, source, goal) in zip(sources, problems, strict=True):
        status = max(status, _export_one(args, src, init, source, goal, out))
    return status


def _size(p: Path) -> str:
    return f"{p.stat().st_size:,} bytes"


def _export_one(
    args: argparse.Namespace, src: _Source, init: State, source: str, goal: tuple[Literal, ...], out: Path
) -> int:
    parsed = src.parsed
    model, vocab = parsed.model, parsed.vocabulary
    name = src.subdir or parsed.name
    target = out / src.subdir
    det: DeterminizedExport | None = None
    try:
        if args.flavor == "pddlgym":
            gym = export_pddlgym(model, init=init, goal=goal, name=name, keep_idle=args.keep_idle)
            files = gym.write(target)
            stats, names = gym.stats, gym.names
        else:
            pp = export_ppddl(
                model, init=init, goal=goal, name=name, exact_fractions=args.exact_fractions, keep_idle=args.keep_idle
            )
            files = pp.write(target)
            stats, names = pp.stats, pp.names
        written = [(files[0], f"{stats.actions} actions"), (files[1], "")]
        if args.determinize or args.plan:
            det = export_determinized(
                model, init=init, goal=goal, name=name, keep_idle=args.keep_idle, strips=args.strips or args.plan
            )
            det_files = det.write(target)
            written += [(det_files[0], f"{det.stats.actions} actions"), (det_files[1], "")]
        _record(out, [str(p.relative_to(out)) for p, _ in written])
    except OSError as exc:
        raise UsageError(f"--out {args.out!r}: cannot write the files ({exc.strerror or exc})") from None
    goal_text = " & ".join(x.short for x in goal) or "none (--empty-problem)"
    exported = len(model) - len(stats.no_rules) - (0 if stats.idle_kept else len(stats.idle))
    print(
        f"exported {exported} of {len(model)} capabilities of {parsed.name!r} over {len(vocab)} atoms"
        f"{' (' + str(src.path) + ')' if src.subdir else ''}; initial state from {source}; goal: {goal_text}"
    )
    _print_left_out(stats)
    for p, what in written:
        print(f"  wrote {p} ({_size(p)}{', ' + what if what else ''})")
    _print_renames(names, files[0].name)
    if det is None or not args.plan:
        return 0
    return _plan(args, parsed, det, det_files)


def _print_left_out(stats: ExportStats) -> None:
    if stats.idle and not stats.idle_kept:
        print(
            f"  left out {len(stats.idle)} capabilities that can never change the state (every effect empty; "
            "--keep-idle keeps them)"
        )
    if stats.no_rules:
        print(f"  left out {len(stats.no_rules)} capabilities without rules (no prediction anywhere)")


def _print_renames(names: PDDLNames, domain_file: str) -> None:
    rows = names.renames()
    if not rows:
        return
    print(f"  renamed {len(rows)} names for PDDL (all listed at the top of {domain_file}):")
    caps = [r for r in rows if r[0] == "capability"]
    for kind, old, new in [r for r in rows if r[0] != "capability"]:
        print(f"    {kind} {json.dumps(old, ensure_ascii=False)} -> {new}")
    if caps:
        shown = ", ".join(f"{json.dumps(old, ensure_ascii=False)} -> {new}" for _, old, new in caps[:3])
        more = f", ... ({len(caps) - 3} more)" if len(caps) > 3 else ""
        print(f"    capabilities: {shown}{more}")


def _plan(
    args: argparse.Namespace, parsed: dsl.ParsedModel, det: DeterminizedExport, det_files: tuple[Path, Path]
) -> int:
    model, vocab = parsed.model, parsed.vocabulary
    plan = solve(*det_files, search=args.search, heuristic=args.heuristic)
    if plan is None:
        why = (
            " (the goal is unreachable even when every capability outcome may be chosen)"
            if args.search == "bfs"
            else ""
        )
        print(f"pyperplan ({args.search}) found no plan{why}")
        return 1
    check = validate_plan(model, det, plan)
    print(f"pyperplan plan ({len(plan)} steps, search {args.search}):")
    for k, st in enumerate(check.steps, 1):
        print(f"  {k}. {st.action}   capability {st.capability!r}")
        print(f"     {vocab.format_state(st.state)} -> {vocab.format_state(st.next_state)}   Pr_h = {st.probability}")
    if check.valid:
        print(
            f"valid under the model: every step has positive probability and the goal holds at the end; "
            f"probability of this outcome chain: {check.probability}"
        )
        return 0
    print(f"NOT valid under the model: {check.failure or 'the goal does not hold at the end'}")
    return 1


def _prism(src: _Source, init: State, source: str, out: Path, force: bool) -> None:
    parsed = src.parsed
    target = out / "model.prism"
    refuse_to_overwrite(target, "--out", force)
    export = export_prism(parsed.model, init, name=parsed.name)
    out.mkdir(parents=True, exist_ok=True)
    target.write_text(export.text, encoding="utf-8")
    commands = sum(1 for line in export.text.splitlines() if line.lstrip().startswith("["))
    print(
        f"exported {len(parsed.model)} capabilities of {parsed.name!r} over {len(parsed.vocabulary)} atoms as a "
        f"PRISM MDP ({commands} commands, {target.stat().st_size} bytes); initial state from {source}"
    )
    print(f"  wrote {target}")

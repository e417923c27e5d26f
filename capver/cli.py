"""capver: learn interpretable capability models of black-box AI agents, and check them by machine.

The command line.  Each sub-command lives in its own module under
:mod:`capver.commands` and exposes ``add_arguments(parser)`` and ``run(args) -> int``;
:data:`COMMANDS` is the registry the parser is built from, with each command's
one-line summary, so that only the chosen command's module is imported.

There is one error path for every command: a :class:`CapverError`, or an ``OSError``
on a file the user named (missing, a directory, unwritable, ``/sys`` or ``/proc``), is
printed as one line ``capver CMD: error: ...`` with exit status 2; Ctrl-C ends with
one line and status 130.  A traceback means a bug in capver.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import os
import sys
from dataclasses import dataclass

from capver.bench.cli import BENCHMARKS
from capver.errors import CapverError


@dataclass(frozen=True, slots=True)
class Command:
    """A sub-command: the module with ``add_arguments(parser)`` and ``run(args) -> int``,
    and the one-line summary ``capver --help`` lists (kept here, so that listing the
    commands imports none of them); ``epilog`` ends the command's own ``--help``."""

    module: str
    summary: str
    epilog: str | None = None


COMMANDS: dict[str, Command] = {
    "build": Command(
        "capver.commands.build", "build the pessimistic and optimistic models of a dataset and print them in the DSL"
    ),
    "certify": Command(
        "capver.commands.certify",
        "re-check the z3 certificates of learn runs (models unchanged, h∧ ⪯ h∨, and "
        "h∧ ⪯ h⋆ ⪯ h∨ when the truth is known, still proved), or with --write certify the models as "
        "they are now",
        "Exit status: 0 every certificate holds as stated (with --write: every claim holds), 1 a verdict "
        "differs or an invariant fails, 2 a certificate is missing or malformed or a model file changed "
        "since it was certified (--write then certifies the files as they are).",
    ),
    "check": Command(
        "capver.commands.check",
        "prove or refute h1 ⪯ h2, h1 ≡ h2 and equal probabilities between model files (z3, BDDs)",
    ),
    "eval": Command(
        "capver.commands.evaluate", "evaluate a capver learn run: model agreement, exact VD, E3 reachability"
    ),
    "export": Command(
        "capver.commands.export",
        "export a capability model as PPDDL (and determinised PDDL), optionally planning with pyperplan",
    ),
    "learn": Command(
        "capver.commands.learn",
        "learn capability models of an agent by active query synthesis (MCQS) or random queries",
    ),
    "plan": Command(
        "capver.commands.plan",
        "plan towards a goal with the capabilities of a capability model (introspector or GREEDY)",
    ),
    "plot": Command(
        "capver.commands.plot",
        "plot the learning curves of capver learn runs (one line per method), like the paper's Fig. 4",
    ),
    "report": Command(
        "capver.commands.report", "write one static HTML page (no server, nothing fetched) showing a capver learn run"
    ),
    "run": Command(
        "capver.commands.run_agent",
        "run one agent on one domain and print the transitions of a few capability executions",
    ),
    "verify": Command(
        "capver.commands.verify",
        "check properties of an agent's capabilities on a learned run (h∧ and h∨) or a model",
        "The property language (E/A, Pmax/Pmin, P bounds, Rmin/Rmax with F, G, U, bounded or not; "
        "{caps: ...}; true/false), its grammar and an example of every operator: docs/properties.md. "
        "Exit status: 0 every property holds, 1 one is violated, 4 none is violated but a check ran out "
        "of --timeout, 3 none of those but one is unconfirmed, unknown or undecided, 2 bad input.",
    ),
    # Every benchmark of the registry, which imports none of them.
    "bench": Command(
        "capver.commands.bench", f"run a benchmark ({', '.join(BENCHMARKS)}; NAME --quick for a smoke run)"
    ),
}

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class DefaultsHelpFormatter(argparse.HelpFormatter):
    """Appends ``(default: X)`` to an option's help unless the help already names its
    default, or there is none worth naming (``None``, ``False``, an empty string)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if "default" in text or action.default in (None, False, "", argparse.SUPPRESS) or not action.option_strings:
            return text
        return f"{text} (default: {action.default})"


ALL = "*"


def build_parser(only: str | None = ALL) -> argparse.ArgumentParser:
    """The parser of every command (``only=ALL``), or with the options of the one
    command ``only`` and the others listed by name and summary (``None``: none)."""
    parser = argparse.ArgumentParser(prog="capver", description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--version",
        action="version",
        version=f"capver {package_version()}",
        help="print capver's version (from the installed package's metadata) and exit",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, command in COMMANDS.items():
        p = sub.add_parser(
            name,
            help=command.summary,
            description=command.summary,
            epilog=command.epilog,
            formatter_class=DefaultsHelpFormatter,
        )
        if only in (ALL, name):
            module = importlib.import_module(command.module)
            module.add_arguments(p)
            p.set_defaults(_run=module.run)
    return parser


def package_version() -> str:
    """The installed distribution's version (pyproject's ``version``), so that
    ``capver --version`` never disagrees with ``pip show capver``."""
    try:
        return importlib.metadata.version("capver")
    except importlib.metadata.PackageNotFoundError:
        return "unknown (capver is not installed: pip install -e .)"


def describe_os_error(exc: OSError) -> str:
    """``PATH: reason`` for an OSError, in the words of the operating system."""
    reason = exc.strerror or str(exc)
    if exc.filename is None:
        return reason
    where = os.fsdecode(exc.filename)
    if exc.filename2 is not None:
        where += f" -> {os.fsdecode(exc.filename2)}"
    return f"{where}: {reason}"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # Only the chosen command's module is imported: `capver --help` and `capver CMD
    # --help` stay fast however heavy the other commands' imports are.
    chosen = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser(chosen if chosen in COMMANDS else None)
    args = parser.parse_args(argv)
    try:
        return int(args._run(args))
    except BrokenPipeError:
        # The reader went away (e.g. `capver build | head`): not an error of ours.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except CapverError as exc:
        print(f"capver {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:
        print(f"capver {args.command}: error: {describe_os_error(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"\ncapver {args.command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())

"""The ``capver`` command line.

Each sub-command lives in its own module under :mod:`capver.commands` and exposes
``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``; :data:`COMMANDS` is the
registry the parser is built from (imported lazily so that ``capver --help`` stays
fast).

There is one error path for every command: a :class:`CapverError`, or an ``OSError``
on a file the user named (missing, a directory, unwritable, ``/sys`` or ``/proc``), is
printed as one line ``capver CMD: error: ...`` with exit status 2; Ctrl-C ends with
one line and status 130.  A traceback means a bug in capver.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from capver.errors import CapverError

COMMANDS: dict[str, str] = {
    "build": "capver.commands.build",
    "check": "capver.commands.check",
    "eval": "capver.commands.evaluate",
    "export": "capver.commands.export",
    "learn": "capver.commands.learn",
    "plan": "capver.commands.plan",
    "plot": "capver.commands.plot",
    "report": "capver.commands.report",
    "run": "capver.commands.run_agent",
    "bench": "capver.commands.bench",
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="capver", description=__doc__.splitlines()[0] if __doc__ else None)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, module_name in COMMANDS.items():
        module = importlib.import_module(module_name)
        p = sub.add_parser(name, help=module.HELP, description=module.HELP, formatter_class=DefaultsHelpFormatter)
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


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
    parser = build_parser()
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

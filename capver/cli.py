"""The ``capver`` command line.

Each sub-command lives in its own module under :mod:`capver.commands` and exposes
``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``; :data:`COMMANDS` is the
registry the parser is built from (imported lazily so that ``capver --help`` stays
fast).  Project errors are printed as one clear message and exit status 2.
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
    "run": "capver.commands.run_agent",
    "bench": "capver.commands.bench",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="capver", description=__doc__.splitlines()[0] if __doc__ else None)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, module_name in COMMANDS.items():
        module = importlib.import_module(module_name)
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


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
        return 2


if __name__ == "__main__":
    sys.exit(main())

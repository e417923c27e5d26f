"""The command line shared by every ``capver bench NAME`` module: one way to build a
benchmark's parser (its ``prog`` and description), one way to give it a
``--quick`` mode, and one way to write its ``--out`` directory.

``--quick`` is a set of different *defaults*, not an override: an option given
explicitly on the command line keeps its value, so ``--quick --timeout 5`` runs the
quick sizes with a 5 s timeout.  The quick values are appended to the help of the
options they change, so ``--help`` shows both defaults."""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

# The benchmarks of ``capver bench NAME``: name -> module with ``main(argv) -> int``.
# Kept here, in a module that imports nothing heavy, so that ``capver --help`` lists
# every benchmark without importing any of them.
BENCHMARKS: dict[str, str] = {
    "foundation": "capver.bench.foundation",
    "agents": "capver.bench.agents",
    "minigrid": "capver.bench.minigrid",
    "crafter": "capver.bench.crafter",
    "overcooked": "capver.bench.overcooked",
    "learning": "capver.bench.learning",
    "occam": "capver.bench.occam",
    "introspection": "capver.bench.introspection",
    "verify": "capver.bench.verify",
    "quantitative": "capver.bench.quantitative",
    "verdicts": "capver.bench.verdicts",
    "decide": "capver.bench.decide",
    "speed": "capver.bench.speed",
    "dprime": "capver.bench.dprime",
    "modelfiles": "capver.bench.modelfiles",
    "gym": "capver.bench.gym",
    "smc": "capver.bench.smc",
    "abstraction": "capver.bench.abstraction",
}

QUICK_HELP = "a smoke run that finishes in well under a minute on two cores"

# ``literal`` and :role:`target`, :role:`~a.b.target` or :role:`title <target>`
_LITERAL = re.compile(r"``(.+?)``")
_ROLE = re.compile(r":[a-z]+(?::[a-z]+)?:`([^`]+)`")


def _role_text(m: re.Match[str]) -> str:
    """What Sphinx shows for a cross-reference: the title if there is one, the last
    component with ``~``, else the whole target."""
    text = m.group(1)
    if text.endswith(">") and "<" in text:
        return text[: text.index("<")].strip()
    if text.startswith("~"):
        return text[1:].rsplit(".", 1)[-1]
    return text


def plain(text: str) -> str:
    """``text`` without reStructuredText markup and with its whitespace collapsed (argparse
    re-wraps a description anyway)."""
    return " ".join(_LITERAL.sub(r"\1", _ROLE.sub(_role_text, text)).split())


def summary(doc: str | None) -> str:
    """The first paragraph of a module docstring, as plain text."""
    if not doc:
        return ""
    return plain(doc.strip().split("\n\n", 1)[0])


class BenchParser(argparse.ArgumentParser):
    """The parser of ``capver bench NAME``.  ``prog`` is fixed rather than taken from
    ``sys.argv``, which holds ``capver`` (or, under ``python -m``, the module's file
    name) while the user typed ``capver bench NAME``."""

    def __init__(self, name: str, description: str) -> None:
        super().__init__(prog=f"capver bench {name}", description=plain(description))
        self.quick_defaults: dict[str, Any] = {}
        self.new_out = False  # add_out() was called

    def add_quick(self, quick: Mapping[str, Any], what: str = QUICK_HELP) -> None:
        """Add ``--quick``; ``quick`` maps an option's ``dest`` to its value under
        ``--quick``.  Call it after the options in ``quick`` have been added: their
        help gets the quick value appended, so ``--help`` shows both defaults."""
        actions = {a.dest: a for a in self._actions}
        missing = sorted(set(quick) - set(actions))
        if missing:
            raise ValueError(f"--quick sets unknown option(s) {missing}")
        for dest, value in quick.items():
            action = actions[dest]
            shown = _show(value).replace("%", "%%")  # argparse %-formats help strings
            action.help = f"{action.help}; --quick: {shown}" if action.help else f"--quick: {shown}"
        self.add_argument("--quick", action="store_true", help=what)
        self.quick_defaults = dict(quick)

    def parse(self, argv: Sequence[str] | None) -> argparse.Namespace:
        """Parse ``argv``; with ``--quick``, the options not given take their quick values.

        argparse only fills in a default for a destination the namespace does not
        hold yet, so a second parse into a namespace that already holds the quick
        values makes them the defaults while explicit options still win."""
        args = self.parse_args(argv)
        if self.quick_defaults and args.quick:
            args = self.parse_args(argv, namespace=argparse.Namespace(**self.quick_defaults))
        out = getattr(args, "out", None) if self.new_out else None
        if out is not None and out.exists():
            self.error(f"--out {out}: already exists; give a new directory (nothing is overwritten)")
        return args

    def add_out(self) -> None:
        """Add ``--out DIR``, a new directory for ``table.md`` and ``results.json``
        (:func:`write_results`); :meth:`parse` refuses one that exists."""
        self.add_argument("--out", type=Path, default=None, help="a new directory for table.md and results.json")
        self.new_out = True


def _show(value: Any) -> str:
    if isinstance(value, list | tuple):
        return " ".join(map(str, value))
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={_show(v)}" for k, v in value.items())
    return str(value)


def write_results(out: Path, lines: Sequence[str], results: object) -> None:
    """A benchmark's ``--out`` directory, new: ``table.md`` (the printed table) and
    ``results.json`` (``results``, JSON data); says what it wrote."""
    out.mkdir(parents=True)
    (out / "table.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (out / "results.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out}/table.md and results.json")

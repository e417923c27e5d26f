"""Code, help texts and docs name features, papers and sections, never tracker issue
numbers: a reader of capver's code, of ``capver ... --help`` or of its docs has no
tracker to look "issue 13" up in.  Every mention of "issue <number>" (any case; also
"issues 12 and 13", "issue #7") in a Python file under capver/, in the help of every
command and benchmark, in README.md or in a Markdown file under docs/ fails, with its
file:line."""

from __future__ import annotations

import argparse
import importlib
import re
from pathlib import Path

import pytest

from capver.cli import ALL, build_parser
from capver.commands import bench
from tests.helpers.paths import ROOT

TRACKER_NUMBER = re.compile(r"\bissues?\s*#?\s*\d+", re.IGNORECASE)


def _hits(text: str, where: str) -> list[str]:
    """``where:line: the line`` for every tracker number in ``text`` (searched as a whole,
    so that a number wrapped onto the next line is found too)."""
    out = []
    for m in TRACKER_NUMBER.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        out.append(f"{where}:{line}: {text.splitlines()[line - 1].strip()}")
    return out


def _check_files(paths: list[Path]) -> None:
    assert paths
    hits = [h for p in sorted(paths) for h in _hits(p.read_text(encoding="utf-8"), str(p.relative_to(ROOT)))]
    assert not hits, "name the feature, paper or section instead of the tracker issue:\n" + "\n".join(hits)


@pytest.mark.parametrize(
    "text",
    [
        "(issue 12)",
        "issue 13, part 5",
        "Issue 14's E2",
        "issues 12 and 13",
        "issue #7",
        "before\nissue 13",
        "the issue\n11 targets",
    ],
)
def test_the_pattern_finds_tracker_numbers(text: str) -> None:
    assert _hits(text, "x")


@pytest.mark.parametrize(
    "text", ["attached to an issue", "tissue 3", "issue_12", "the issue's targets", "section 4.2's E2"]
)
def test_the_pattern_leaves_other_words_alone(text: str) -> None:
    assert not _hits(text, "x")


def test_python_sources_under_capver() -> None:
    _check_files(list((ROOT / "capver").rglob("*.py")))


def test_readme_and_docs() -> None:
    # All of docs/, docs/bench/ included: besides hand-written READMEs it holds recorded
    # benchmark outputs (table.md, ...).  None of those mentions a tracker number (checked
    # when this test was written), and they are printed by capver/bench, which
    # test_python_sources_under_capver keeps free of them, so nothing is excluded.
    _check_files([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def test_help_texts() -> None:
    parser = build_parser(ALL)
    helps = {"capver --help": parser.format_help()}
    helps.update({f"capver {name} --help": p.format_help() for name, p in _subparsers(parser).items()})
    for name, module in sorted(bench.BENCHMARKS.items()):
        helps[f"capver bench {name} --help"] = importlib.import_module(module).build_parser().format_help()
    hits = [h for where, text in helps.items() for h in _hits(text, where)]
    assert not hits, "help texts name the feature, paper or section, not the tracker issue:\n" + "\n".join(hits)

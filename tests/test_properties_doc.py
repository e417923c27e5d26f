"""docs/properties.md is kept true: every production of grammars/properties.lark (rule,
alias and terminal) appears in it, every ``$ capver verify models/toy_blocks.capm ...``
example prints the lines shown under it (a line ending in ``…`` is a prefix), the
``.props`` example is read and checked, and ``capver verify --help`` points to it."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from capver import cli
from capver.engines.verification import storm
from tests.helpers.optional_tools import STORMPY_HINT

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "properties.md"
GRAMMAR = REPO / "grammars" / "properties.lark"
COMMAND = "$ capver verify models/toy_blocks.capm "


def production_names() -> set[str]:
    """Every rule, alias (``-> name``) and terminal the grammar defines."""
    names: set[str] = set()
    for line in GRAMMAR.read_text(encoding="utf-8").splitlines():
        code = line.split("//", 1)[0]
        if m := re.match(r"\s*[?!]*([a-z_][a-z0-9_]*)\s*:", code):
            names.add(m.group(1))
        if m := re.match(r"([A-Z_][A-Z0-9_]*)(\.\d+)?\s*:", code):
            names.add(m.group(1))
        names.update(re.findall(r"->\s*([a-z_][a-z0-9_]*)", code))
    return names


def test_every_production_of_the_grammar_is_documented() -> None:
    names = production_names()
    assert {"start", "property", "query", "path", "formula", "atom", "until", "NUMBER", "_TRUE"} <= names
    doc = DOC.read_text(encoding="utf-8")
    missing = sorted(n for n in names if not re.search(rf"(?<![A-Za-z0-9_]){re.escape(n)}(?![A-Za-z0-9_])", doc))
    assert not missing, f"docs/properties.md does not mention {missing}"


def examples() -> list[tuple[str, list[str]]]:
    """(command, expected output lines) of every example in the console blocks."""
    out: list[tuple[str, list[str]]] = []
    text = DOC.read_text(encoding="utf-8")
    for block in re.findall(r"```console\n(.*?)```", text, flags=re.DOTALL):
        for line in block.splitlines():
            if line.startswith("$ "):
                assert line.startswith(COMMAND), line
                out.append((line[2:], []))
            else:
                out[-1][1].append(line)
    return out


def test_the_doc_has_an_example_per_operator() -> None:
    commands = " ".join(c for c, _ in examples())
    for word in (
        "E [ F",
        "A [ G",
        "E [ G",
        "A [ F",
        " U ",
        "U<=",
        "F<=",
        "G<=",
        "Pmax=?",
        "Pmin=?",
        "P<=",
        "P<",
        "P>=",
        "P>",
        "Rmin=?",
        "Rmax=?",
        "{caps:",
        "true",
        "false",
        '"stacked":',
    ):
        assert word in commands, word


@pytest.mark.parametrize(("command", "expected"), examples(), ids=[c for c, _ in examples()])
def test_each_example_prints_what_the_doc_shows(
    command: str, expected: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = shlex.split(command)
    assert argv[0] == "capver"
    if not storm.available():  # the default engine is then the explicit one, with the same exact values
        expected = [line.replace("engine storm)", "engine explicit)") for line in expected]
        if any(a.startswith("storm") for a in argv):  # --engine storm or storm-float
            pytest.skip(STORMPY_HINT)
    monkeypatch.chdir(REPO)
    code = cli.main(argv[1:])
    lines = capsys.readouterr().out.splitlines()
    assert code in (0, 1), lines
    assert len(lines) >= len(expected)
    for want, got in zip(expected, lines, strict=False):
        if want == "…":
            break
        if want.endswith(" …"):
            assert got.startswith(want[:-2]), (want, got)
        else:
            assert got == want
    # The verdict or value is on the first line: FAILS and VIOLATED exit with 1.
    assert (code == 1) == (" — FAILS " in lines[0] or " — VIOLATED " in lines[0])


def test_the_props_example_is_read_and_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocks = re.findall(r"```props\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.DOTALL)
    assert len(blocks) == 1
    path = tmp_path / "blocks.props"
    path.write_text(blocks[0], encoding="utf-8")
    code = cli.main(
        ["verify", str(REPO / "models" / "toy_blocks.capm"), "--properties", str(path), "--engine", "explicit"]
    )
    lines = [line for line in capsys.readouterr().out.splitlines() if not line.startswith(" ")]
    assert code == 0
    assert [line.split(":")[0] for line in lines] == ["exclusive", "stack soon", "p3"]
    assert "Pmax = 0.5625" in lines[1] and "Rmin = 28/9" in lines[2]


def test_verify_help_points_to_the_doc(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["verify", "--help"])
    assert "docs/properties.md" in capsys.readouterr().out

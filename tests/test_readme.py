"""The README and docs/usage.md are kept true: the README's Python block and set-up
commands run as written, and so does every fenced ``console`` or ``bash`` block of
both files.

A section (the text under one heading) is the unit that runs: its blocks run in order
in one scratch directory holding a copy of models/, so a later block may use what an
earlier one wrote, and nothing is written into the repository.

* ``console``: the ``$ `` lines are commands, each run by bash.  The lines under a
  command are output it must print: each one somewhere in its stdout or stderr, except
  that a number followed by `` s`` or `` ms`` is a duration and matches any number,
  and a line ``…`` stands for lines left out.  A command must exit 0 unless the next
  command is ``echo $?``, whose shown output is then the status it must exit with.
* ``bash``: the block runs as one script under ``set -eo pipefail``.

Both find ``capver`` and ``python`` in this interpreter's environment.  A section whose
blocks name an LLM agent talks to the tests' local chat-completions server
(tests/helpers/llm_server.py): its ``export CAPVER_LLM_...`` lines, which name the user's
endpoint, are replaced by the server's address.  Sections outside FAST are slow;
CHECKS adds assertions on what a section wrote."""

from __future__ import annotations

import contextlib
import json
import os
import re
import runpy
import shlex
import shutil
import subprocess
import sys
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from capver.engines.verification import storm
from capver.io import certificate
from tests.helpers.optional_tools import STORMPY_HINT
from tests.helpers.paths import ROOT

README = ROOT / "README.md"
USAGE = ROOT / "docs" / "usage.md"
RUNNABLE_DOCS = (README, USAGE)
TIMEOUT = 900  # seconds per command: the Crafter and tabletop runs take a few minutes on a loaded machine


# -- the Python block and the set-up commands ----------------------------------------------


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.DOTALL)


def test_the_readme_has_a_python_block() -> None:
    assert python_blocks(), "README.md lost its 'Use from Python' block"


@pytest.mark.parametrize("block", python_blocks())
def test_the_python_block_runs(block: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if 'engine="storm"' in block and not storm.available():
        pytest.skip(STORMPY_HINT + " (the block asks Storm for a probability)")
    script = tmp_path / "readme_block.py"
    script.write_text(block, encoding="utf-8")
    runpy.run_path(str(script), run_name="readme")
    out = capsys.readouterr().out
    assert '(:capability "on(a,b)"' in out and "(tried-on-a-b)" in out  # h∧'s rules hold only where tried
    assert "; In words: achieves on(a,b) always when" in out  # h̃'s rule, in words
    assert "'agreement': 1.0" in out  # the LAO* agent on Blocksworld is deterministic
    # the agent was seen to stack a on b, printed as capver verify prints it
    assert "p1: E [ F on(a,b) ] — HOLDS for the agent (observed)" in out
    assert "executions; step budget 300" in out and "'domain.pddl'" in out


def test_first_rules_finds_quoted_and_unquoted_capability_names() -> None:
    """The README's helper works on every capability name the DSL writes: quoted
    (``"on(a,b)"``) and plain (``goal``)."""
    block = python_blocks()[0]
    helper = block[block.index("def first_rules") : block.index("\n\n\n", block.index("def first_rules"))]
    space: dict[str, object] = {}
    exec(helper, space)  # noqa: S102 - the README's own definition, run as written
    first_rules = space["first_rules"]
    text = '(:capability goal\n    :intent (goal)\n    ; Rule 1: a\n    ; Rule 2: b\n  (:capability "on(a,b)"\n    ; Rule 1: c\n'
    assert first_rules(text, "goal", 1) == "(:capability goal\n    :intent (goal)\n    ; Rule 1: a"  # type: ignore[operator]
    assert first_rules(text, "on(a,b)", 1) == '(:capability "on(a,b)"\n    ; Rule 1: c\n'  # type: ignore[operator]


def setup_commands() -> list[str]:
    """The two set-up commands: the indented lines of the set-up section."""
    text = README.read_text(encoding="utf-8")
    start = text.index("## Set-up")
    section = text[start : text.index("\n## ", start)]
    return [line.strip() for line in section.splitlines() if line.startswith("    ")]


def test_the_readme_shows_two_setup_commands_and_the_ci_runs_the_second() -> None:
    commands = setup_commands()
    assert len(commands) == 2
    assert commands[1].endswith("python -m pytest -n 2 -q")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "python -m pytest -n 2 -q" in ci


@pytest.mark.slow
def test_the_setup_command_learns_first_responders(tmp_path: Path) -> None:
    """The first set-up command's capver part, as written (the install part is what CI does)."""
    learn = setup_commands()[0].split("&& ")[-1]
    argv = shlex.split(learn)
    res = subprocess.run(
        [sys.executable, "-m", "capver", *argv[1:]],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    assert "step budget 1500" in res.stdout
    assert (tmp_path / "runs" / "demo" / "h_and.capm").exists()


# -- the links of the front door and of the pages it moved its text to ---------------------------

LINKED_DOCS = (README, USAGE, ROOT / "docs" / "results.md", ROOT / "docs" / "architecture.md")


def heading_anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, spaces to hyphens, punctuation dropped
    (letters, digits and combining marks such as the tilde of h̃ stay)."""
    kept = [
        c
        for c in heading.strip().lower()
        if c in " -_" or unicodedata.category(c)[0] in "LN" or unicodedata.category(c) == "Mn"
    ]
    return "".join("-" if c == " " else c for c in kept)


def anchors(path: Path) -> set[str]:
    fenced, found = False, set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            found.add(heading_anchor(line.lstrip("#")))
    return found


def test_heading_anchors_follow_github() -> None:
    assert (
        heading_anchor(" Readable, generalising models: the Occam model h̃ (`capver bench occam`)")
        == "readable-generalising-models-the-occam-model-h̃-capver-bench-occam"
    )
    assert (
        heading_anchor("Verdicts about the agent, and what each licenses")
        == "verdicts-about-the-agent-and-what-each-licenses"
    )


@pytest.mark.parametrize("doc", LINKED_DOCS, ids=lambda p: p.name)
def test_every_relative_link_resolves(doc: Path) -> None:
    """Text moved between the README and docs/ keeps its links: every relative link names
    an existing file, and every #anchor a heading of it."""
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", doc.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        dest = (doc.parent / path).resolve() if path else doc
        if not dest.exists() or (anchor and anchor not in anchors(dest)):
            broken.append(target)
    assert broken == []


# -- the fenced blocks ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Section:
    """The runnable blocks under one heading of a document, in order."""

    doc: str  # the document's path in the repository
    heading: str
    blocks: tuple[tuple[str, str], ...]  # (language, text)

    @property
    def key(self) -> tuple[str, str]:
        return (self.doc, self.heading)


def sections(path: Path) -> list[Section]:
    """The sections of a Markdown file that hold ``console`` or ``bash`` blocks."""
    found: dict[str, list[tuple[str, str]]] = {}
    heading: str = ""
    lang: str | None = None  # inside a fenced block: its language
    body: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if lang is None and line.startswith("```"):
            lang, body = line[3:].strip(), []
        elif lang is not None and line.startswith("```"):
            if lang in ("console", "bash"):
                found.setdefault(heading, []).append((lang, "\n".join(body)))
            lang = None
        elif lang is not None:
            body.append(line)
        elif line.startswith("#"):
            heading = line.lstrip("#").strip()
    assert lang is None, f"{path}: a fenced block is not closed"
    doc = path.relative_to(ROOT).as_posix()
    return [Section(doc, h, tuple(blocks)) for h, blocks in found.items()]


DURATION = re.compile(r"\d+(?:\.\d+)?(?= m?s\b)")


def output_pattern(shown: str) -> re.Pattern[str]:
    """A shown output line as a pattern: exact, but for its durations."""
    return re.compile(r"\d+(?:\.\d+)?".join(re.escape(part) for part in DURATION.split(shown)))


def test_shown_output_matches_exactly_but_for_durations() -> None:
    shown = "26 queries; learning 0.6 s, planning 0.0008 s"
    assert output_pattern(shown).search("x: 26 queries; learning 12.25 s, planning 3 s.")
    assert not output_pattern(shown).search("27 queries; learning 0.6 s, planning 0.0008 s")
    assert not output_pattern("coverage 0.589405").search("coverage 0.589406")


def console_steps(text: str) -> list[tuple[str, list[str]]]:
    steps: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            assert steps, f"a console block starts with a '$ ' command, not {line!r}"
            steps[-1][1].append(line)
    return steps


def run_console(text: str, cwd: Path, env: dict[str, str]) -> str:
    steps = console_steps(text)
    outputs = []
    for i, (command, shown) in enumerate(steps):
        if command == "echo $?":
            continue  # checked with the command before it
        res = subprocess.run(
            ["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False
        )
        out = res.stdout + res.stderr
        status = steps[i + 1] if i + 1 < len(steps) and steps[i + 1][0] == "echo $?" else None
        expected = int(status[1][0]) if status else 0
        assert res.returncode == expected, f"$ {command}\nexit status {res.returncode}, shown {expected}\n{out[-3000:]}"
        for line in shown:
            if line.strip() not in ("", "…"):
                assert output_pattern(line).search(out), f"$ {command}\ndid not print\n{line}\nbut\n{out[-3000:]}"
        outputs.append(out)
    return "\n".join(outputs)


LLM_EXPORT = re.compile(r"^export CAPVER_LLM_\w+=")


def run_bash(text: str, cwd: Path, env: dict[str, str]) -> str:
    lines = text.splitlines()
    if "CAPVER_LLM_BASE_URL" in env:  # the tests' server stands in for the user's endpoint
        lines = [line for line in lines if not LLM_EXPORT.match(line)]
    commands = [line for line in lines if line.strip() and not line.lstrip().startswith("#")]
    res = subprocess.run(
        ["bash", "-c", "\n".join(["set -eo pipefail", *lines])],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT * len(commands),
        check=False,
    )
    out = res.stdout + res.stderr
    assert res.returncode == 0, f"{text}\nexit status {res.returncode}\n{out[-3000:]}"
    return out


def run_section(section: Section, cwd: Path) -> str:
    shutil.copytree(ROOT / "models", cwd / "models")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    with contextlib.ExitStack() as stack:
        if any("llm" in text.lower() for _, text in section.blocks):
            from tests.helpers.llm_server import LocalChatServer

            srv = stack.enter_context(LocalChatServer())
            env |= {
                "CAPVER_LLM_BASE_URL": srv.base_url,
                "CAPVER_LLM_MODEL": "scripted",
                "CAPVER_LLM_CACHE": str(cwd / "llm-cache"),
            }
        return "\n".join(
            run_console(text, cwd, env) if lang == "console" else run_bash(text, cwd, env)
            for lang, text in section.blocks
        )


# -- what the sections wrote ----------------------------------------------------------------


def check_first_session(cwd: Path, out: str) -> None:
    run = cwd / "runs" / "blocks"
    assert (run / "report.html").stat().st_size > 10_000
    claims = certificate.read(run).claims
    assert len(claims) == 3 and all(c.holds for c in claims)  # z3: h∧ ⪯ h̃ ⪯ h∨


def check_whole_session(cwd: Path, out: str) -> None:
    assert (cwd / "runs" / "blocks" / "report.html").stat().st_size > 10_000
    assert json.loads((cwd / "runs" / "blocks" / "run.json").read_text())["budget"]["max_steps"] == 200  # resumed
    assert (cwd / "runs" / "blocks.png").stat().st_size > 0
    for name in ("h_and", "h_or", "h_tilde"):
        assert (cwd / "runs" / "blocks-pddl" / name / "domain_det.pddl").exists()


def check_export(cwd: Path, out: str) -> None:
    # Fast Downward solved the run's determinised h∧; pddlgym loaded h∨ with its capabilities.
    assert "Solution found" in out and "achieve-" in out


def check_property_directed(cwd: Path, out: str) -> None:
    assert "every property decided" in out
    assert "property stack: HOLDS (observed)" in out
    stored = json.loads((cwd / "runs" / "toy-props" / "properties.json").read_text(encoding="utf-8"))
    assert [p["name"] for p in stored["properties"]] == ["stack", "never both", "tower within 2"]
    assert all(p["decided"] for p in stored["properties"])


def check_llm(cwd: Path, out: str) -> None:
    assert "step budget 2000" in out and "LLM calls" in out
    assert (cwd / "runs" / "llm" / "h_and.capm").exists()


def check_other_agents(cwd: Path, out: str) -> None:
    for run, agent in (("crafter", "crafter"), ("overcooked", "overcooked"), ("tabletop", "tabletop-llm")):
        folder = cwd / "runs" / run
        claims = certificate.read(folder).claims
        assert claims and all(c.holds for c in claims)  # z3: h∧ ⪯ h̃ ⪯ h∨
        assert "What the learned model reveals" in (folder / "report.txt").read_text(encoding="utf-8")
        assert json.loads((folder / "run.json").read_text())["agent"] == agent


CHECKS: dict[tuple[str, str], Callable[[Path, str], None]] = {
    ("README.md", "A first session"): check_first_session,
    ("docs/usage.md", "A whole session"): check_whole_session,
    ("docs/usage.md", "Exporting models to planners and PPDDL tools"): check_export,
    ("docs/usage.md", "Learning that decides your properties"): check_property_directed,
    ("docs/usage.md", "LLM agents over an OpenAI-compatible endpoint"): check_llm,
    ("docs/usage.md", "Other agents: Crafter, an Overcooked kitchen, a SayCan tabletop"): check_other_agents,
}
FAST = {  # the sections that take well under 20 s
    ("README.md", "A first session"),
    ("docs/usage.md", "Atoms, literals and errors"),
    ("docs/usage.md", "Learning that decides your properties"),
}
SECTIONS = [s for doc in RUNNABLE_DOCS for s in sections(doc)]


def test_the_checked_sections_exist_and_every_command_has_an_example() -> None:
    keys = {s.key for s in SECTIONS}
    assert set(CHECKS) <= keys and FAST <= keys, sorted(set(CHECKS) - keys) + sorted(FAST - keys)
    from capver.cli import COMMANDS

    usage = "\n".join(text for s in SECTIONS if s.doc == "docs/usage.md" for _, text in s.blocks)
    assert [c for c in COMMANDS if not re.search(rf"^(\$ )?capver {c} ", usage, flags=re.MULTILINE)] == []


@pytest.mark.parametrize(
    "section",
    [pytest.param(s, id=f"{s.doc}: {s.heading}", marks=() if s.key in FAST else pytest.mark.slow) for s in SECTIONS],
)
def test_every_block_runs_as_written(section: Section, tmp_path: Path) -> None:
    out = run_section(section, tmp_path)
    check = CHECKS.get(section.key)
    if check is not None:
        check(tmp_path, out)


def test_usage_names_every_benchmark() -> None:
    """The ``capver bench NAME`` row of docs/usage.md lists every benchmark of the registry."""
    from capver.bench.cli import BENCHMARKS

    row = next(
        line for line in USAGE.read_text(encoding="utf-8").splitlines() if line.startswith("| `capver bench NAME")
    )
    assert [name for name in BENCHMARKS if f"`{name}`" not in row] == []

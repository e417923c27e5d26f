"""The README is kept true: its Python block, its shell session and the indented
commands of its export and LLM sections run as written."""

from __future__ import annotations

import json
import os
import re
import runpy
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from capver.io import certificate

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.DOTALL)


def test_the_readme_has_a_python_block() -> None:
    assert python_blocks(), "README.md lost its 'Use from Python' block"


@pytest.mark.parametrize("block", python_blocks())
def test_the_python_block_runs(block: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "readme_block.py"
    script.write_text(block, encoding="utf-8")
    runpy.run_path(str(script), run_name="readme")
    out = capsys.readouterr().out
    assert "; Capability model pessimistic" in out
    assert "; Capability model occam" in out
    assert "'agreement': 1.0" in out  # the LAO* agent on Blocksworld is deterministic
    assert "\nholds\n" in out  # the agent was seen to stack a on b
    assert "executions; step budget 300" in out and "'domain.pddl'" in out


def shell_lines() -> list[str]:
    blocks = re.findall(r"```sh\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.DOTALL)
    return [line for block in blocks for line in block.strip().splitlines()]


def indented_commands(heading: str) -> list[str]:
    """The indented command lines of the README section that starts with ``heading``
    (comment lines left out)."""
    text = README.read_text(encoding="utf-8")
    start = text.index(heading)
    end = text.find("\n#", start + len(heading))
    section = text[start:end if end >= 0 else len(text)]
    lines = [line.strip() for line in section.splitlines() if line.startswith("    ")]
    return [line for line in lines if line and not line.startswith("#")]


def setup_commands() -> list[str]:
    """The two set-up commands: the indented lines of the set-up section."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Set-up"):text.index("## Usage")]
    return [line.strip() for line in section.splitlines() if line.startswith("    ")]


def test_the_readme_shows_two_setup_commands_and_the_ci_runs_the_second() -> None:
    commands = setup_commands()
    assert len(commands) == 2
    assert commands[1].endswith("python -m pytest -n 2 -q")
    ci = (README.parent / ".ci" / "run").read_text(encoding="utf-8")
    assert "python -m pytest -n 2 -q" in ci


@pytest.mark.slow
def test_every_shell_line_of_the_readme_runs(tmp_path: Path) -> None:
    """The session of the Usage section, line by line, in a scratch directory with a
    copy of models/ (nothing is written into the repository)."""
    shutil.copytree(README.parent / "models", tmp_path / "models")
    lines = shell_lines()
    assert len(lines) >= 10
    for line in lines:
        argv = shlex.split(line)
        assert argv[0] == "capver"
        res = subprocess.run([sys.executable, "-m", "capver", *argv[1:]], cwd=tmp_path, capture_output=True,
                             text=True, timeout=600, check=False)
        assert res.returncode == 0, f"{line}\n{res.stdout[-2000:]}\n{res.stderr[-2000:]}"
    assert (tmp_path / "runs" / "blocks" / "report.html").stat().st_size > 10_000
    assert json.loads((tmp_path / "runs" / "blocks" / "run.json").read_text())["budget"]["max_steps"] == 200
    # The export section's commands work on what the session exported: Fast Downward
    # solves the run's determinised h∧ and pddlgym loads h∨ with its capabilities.
    demo = indented_commands("### Exporting models to planners")
    assert len(demo) == 3
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    res = subprocess.run(["bash", "-c", "\n".join(["set -e", *demo])], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=600, check=False)
    assert res.returncode == 0, f"{res.stdout[-2000:]}\n{res.stderr[-2000:]}"
    assert "Solution found" in res.stdout and "achieve-" in res.stdout


def test_the_property_directed_learn_line_runs_as_written(tmp_path: Path) -> None:
    """The property-directed section's ``capver learn`` line as written, in a scratch
    copy of models/: every property of models/toy_blocks.props gets decided."""
    shutil.copytree(README.parent / "models", tmp_path / "models")
    (line,) = indented_commands("### Learning that decides your properties")
    argv = shlex.split(line)
    res = subprocess.run([sys.executable, "-m", "capver", *argv[1:]], cwd=tmp_path, capture_output=True, text=True,
                         timeout=600, check=False)
    assert res.returncode == 0, res.stderr[-2000:]
    assert "every property decided" in res.stdout
    stored = json.loads((tmp_path / "runs" / "toy-props" / "properties.json").read_text(encoding="utf-8"))
    assert [p["name"] for p in stored["properties"]] == ["stack", "never both", "tower within 2"]
    assert all(p["decided"] for p in stored["properties"])
    assert "property stack: HOLDS (observed)" in res.stderr + res.stdout


@pytest.mark.slow
def test_the_llm_learn_command_runs_as_written(tmp_path: Path) -> None:
    """The LLM section's ``capver learn`` line as written, against the tests' local
    chat-completions server (the section's ``export`` lines name the user's endpoint)."""
    from llm_server import LocalChatServer

    learn = [line for line in indented_commands("### LLM agents") if line.startswith("capver ")]
    assert len(learn) == 1
    argv = shlex.split(learn[0])
    with LocalChatServer() as srv:
        env = {**os.environ, "CAPVER_LLM_BASE_URL": srv.base_url, "CAPVER_LLM_MODEL": "scripted",
               "CAPVER_LLM_CACHE": str(tmp_path / "cache")}
        res = subprocess.run([sys.executable, "-m", "capver", *argv[1:]], cwd=tmp_path, env=env, capture_output=True,
                             text=True, timeout=600, check=False)
    assert res.returncode == 0, res.stderr[-2000:]
    assert "step budget 2000" in res.stdout and "LLM calls" in res.stdout
    assert (tmp_path / "runs" / "llm" / "h_and.capm").exists()


@pytest.mark.slow
def test_the_setup_command_learns_first_responders(tmp_path: Path) -> None:
    """The first set-up command's capver part, as written (the install part is what CI does)."""
    learn = setup_commands()[0].split("&& ")[-1]
    argv = shlex.split(learn)
    res = subprocess.run([sys.executable, "-m", "capver", *argv[1:]], cwd=tmp_path, capture_output=True, text=True,
                         timeout=900, check=False)
    assert res.returncode == 0, res.stderr[-2000:]
    assert "step budget 1500" in res.stdout
    assert (tmp_path / "runs" / "demo" / "h_and.capm").exists()


@pytest.mark.slow
def test_the_other_agents_learn_as_written(tmp_path: Path) -> None:
    """The three ``capver learn`` lines of "Other agents", as written; the tabletop's
    endpoint is the tests' local chat-completions server."""
    from llm_server import LocalChatServer

    lines = indented_commands("### Other agents")
    assert [shlex.split(line)[3] for line in lines] == ["crafter", "overcooked", "tabletop-llm"]
    with LocalChatServer() as srv:
        env = {**os.environ, "CAPVER_LLM_BASE_URL": srv.base_url, "CAPVER_LLM_MODEL": "scripted",
               "CAPVER_LLM_CACHE": str(tmp_path / "cache")}
        for line in lines:
            argv = shlex.split(line)
            res = subprocess.run([sys.executable, "-m", "capver", *argv[1:]], cwd=tmp_path, env=env,
                                 capture_output=True, text=True, timeout=900, check=False)
            assert res.returncode == 0, f"{line}\n{res.stderr[-2000:]}"
            out = tmp_path / argv[argv.index("--out") + 1]
            claims = certificate.read(out).claims
            assert claims and all(c.holds for c in claims)  # z3: h∧ ⪯ h̃ ⪯ h∨
            assert "What the learned model reveals" in (out / "report.txt").read_text(encoding="utf-8")
            assert json.loads((out / "run.json").read_text())["agent"] == argv[3]

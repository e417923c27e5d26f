"""docs/your_agent.md runs as written: its Python blocks in order in one session (as a
reader pastes them into a notebook), then its shell commands on the run it saved;
and what they print is what the guide says, checked against gymnasium's exact
dynamics (``env.unwrapped.P``)."""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.paths import ROOT
from tests.helpers.traced_once import traced_once

GUIDE = ROOT / "docs" / "your_agent.md"


def blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", GUIDE.read_text(encoding="utf-8"), flags=re.DOTALL)


def commands() -> list[tuple[str, list[str]]]:
    """Each ``$ command`` of the console blocks with the lines shown after it."""
    steps: list[tuple[str, list[str]]] = []
    for block in blocks("console"):
        for line in block.splitlines():
            if line.startswith("$ "):
                steps.append((line[2:], []))
            elif steps:
                steps[-1][1].append(line)
    return steps


def _environ() -> dict[str, str]:
    """This interpreter's ``capver`` first on the PATH."""
    return {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}


def capver(cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["capver", *argv], cwd=cwd, capture_output=True, text=True, timeout=300, env=_environ(), check=False
    )


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], list[str]]:
    """The guide's Python blocks, run in order in a scratch directory: (the directory,
    the session's names, what each block printed)."""
    cwd = tmp_path_factory.mktemp("guide")
    space: dict[str, Any] = {"__name__": "guide"}
    printed: list[str] = []
    old = Path.cwd()
    os.chdir(cwd)
    # Under xdist this module's tests are spread over both workers, so each runs the
    # guide's learning (9 s; 29 s traced under .ci/run): traced in one of them only.
    try:
        with traced_once(tmp_path_factory, "your-agent-guide"), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for block in blocks("python"):
                out = io.StringIO()
                with contextlib.redirect_stdout(out):
                    exec(compile(block, str(GUIDE), "exec"), space)  # noqa: S102 - the guide's own code
                printed.append(out.getvalue())
        space["_warnings"] = [str(w.message) for w in caught]
    finally:
        os.chdir(old)
    return cwd, space, printed


@pytest.mark.slow
def test_the_frozenlake_example_learns_the_truth(session: tuple[Path, dict[str, Any], list[str]]) -> None:
    _, space, printed = session
    truth, learned = space["truth"], space["learned"]
    # The agent is optimal on the slippery 4×4 lake: gymnasium's P gives 0.8235.
    assert abs(truth - 14 / 17) < 1e-9
    assert abs(float(learned.result.value) - truth) <= 0.05, printed[2]
    bounds = learned.result.agent
    assert bounds.lower <= truth <= bounds.upper
    assert f"truth {truth:.4f}" in printed[2] and str(learned) in printed[2]
    # FrozenLake's time limit is said once, in one line, before learning.
    limits = [w for w in space["_warnings"] if "TimeLimit (max_episode_steps=100)" in w]
    assert len(limits) == 1 and "\n" not in limits[0]


@pytest.mark.slow
def test_the_guides_verdicts_are_observed_and_true(session: tuple[Path, dict[str, Any], list[str]]) -> None:
    _, _, printed = session
    text = printed[3]
    assert "p1: E [ F goal ] {caps: goal} — HOLDS for the agent (observed)" in text
    assert "p1: A [ G !hole ] — VIOLATED for the agent (observed)" in text
    replayed = re.search(r"goal was reached in (\d+) of 200 runs", text)
    assert replayed is not None and 140 <= int(replayed.group(1)) <= 190  # about 0.82 × 200
    assert "'coverage_agreement'" in text
    taxi = printed[4]
    assert "p1: E [ F delivered ] — HOLDS for the agent (observed)" in taxi
    assert "Pmax = 1 on h∧ (MLE)" in taxi


@pytest.mark.slow
def test_every_command_reads_the_saved_custom_run(session: tuple[Path, dict[str, Any], list[str]]) -> None:
    cwd, space, _ = session
    env = _environ()
    outputs: dict[str, subprocess.CompletedProcess[str]] = {}
    last = 0
    for command, shown in commands():
        if command == "echo $?":
            assert shown == [str(last)], command
            continue
        r = subprocess.run(
            command, shell=True, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False
        )
        outputs[command.split()[1]] = r
        last = r.returncode
        assert r.returncode in (0, 1), f"{command}\n{r.stdout}\n{r.stderr}"
    assert (cwd / "runs/frozen/report.html").is_file()
    assert "coverage" in outputs["eval"].stdout and "E3 (reachability) skipped" not in outputs["eval"].stderr
    verify = outputs["verify"].stdout
    # The command line and Python say the same thing about the same run.
    python = str(space["result"].verify("E [ F goal ] {caps: goal}")).splitlines()[0]
    assert python in verify and "p2: A [ G !hole ] — VIOLATED for the agent (observed)" in verify
    assert outputs["verify"].returncode == 1
    assert (cwd / "runs/frozen-pddl").is_dir() and any((cwd / "runs/frozen-pddl").rglob("*.pddl"))
    assert "solved" in outputs["plan"].stdout
    assert outputs["certify"].returncode == 0


@pytest.mark.slow
def test_what_needs_the_live_agent_says_so_in_one_line(session: tuple[Path, dict[str, Any], list[str]]) -> None:
    cwd, _, _ = session
    r = capver(cwd, "verify", "runs/frozen", "--property", "E [ F goal ] {caps: goal}", "--replay", "5")
    assert r.returncode == 2
    error = r.stderr.strip().splitlines()
    assert len(error) == 1 and "result.replay(property, runs=N)" in error[0] and "'frozenlake'" in error[0]
    r = capver(cwd, "eval", "runs/frozen")
    assert r.returncode == 0 and r.stderr.count("E3 (reachability) skipped") == 1

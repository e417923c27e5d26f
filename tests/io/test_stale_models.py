"""A run whose models and data agree, or a clear refusal: run.json records the data
the models were built from (size and SHA-256 of dataset.jsonl), and every command that
reads a run's models refuses, in one line naming the command that rebuilds them, when
the data has changed since."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from capver.io import run_dir, run_file
from tests.helpers.cli import capver, capver_in_process
from tests.helpers.paths import ROOT

LEARN = ["learn", "--agent", "lao", "--domain", "blocks", "--method", "mcqs-s", "--quiet"]


@pytest.fixture(scope="module")
def learned(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One run, learned once per module and never written to (``run`` copies it)."""
    out = tmp_path_factory.mktemp("stale") / "run"
    r = capver_in_process(*LEARN, "--max-steps", "60", "--out", str(out), cwd=ROOT)
    assert r.returncode == 0, r.stderr
    return out


@pytest.fixture
def run(learned: Path, tmp_path: Path) -> Path:
    out = tmp_path / "run"
    shutil.copytree(learned, out)
    return out


def test_the_models_record_the_data_they_were_built_from(run: Path) -> None:
    stamp = run_file.models_from(run)
    assert stamp == run_dir.dataset_stamp(run)
    assert stamp is not None and stamp["bytes"] == (run / run_dir.DATASET).stat().st_size


@pytest.mark.parametrize("command", ["verify", "report", "export", "plan"])
def test_an_observation_added_after_the_models_is_refused_by_every_command(run: Path, command: str) -> None:
    """The issue's example: a record appended to a confident run's dataset."""
    lines = (run / run_dir.DATASET).read_text(encoding="utf-8").splitlines()
    with (run / run_dir.DATASET).open("a", encoding="utf-8") as f:
        f.write(lines[-1] + "\n")
    argv = {
        "verify": ["verify", str(run), "--property", "E [ F on(a,b) ]"],
        "report": ["report", str(run), "--out", str(run / "page.html")],
        "export": ["export", str(run), "--out", str(run / "pddl"), "--goal", "on(a,b)"],
        "plan": ["plan", str(run), "--goal", "on(a,b)"],
    }[command]
    r = capver_in_process(*argv, cwd=ROOT)
    assert r.returncode == 2, (r.stdout, r.stderr)
    error = r.stderr.strip().splitlines()
    assert len(error) == 1 and "do not describe the data beside them" in error[0]
    assert f"capver learn --agent lao --domain blocks --method mcqs-s --out {run} --resume" in error[0]


def test_the_named_command_rebuilds_the_models(run: Path) -> None:
    lines = (run / run_dir.DATASET).read_text(encoding="utf-8").splitlines()
    with (run / run_dir.DATASET).open("a", encoding="utf-8") as f:
        f.write(lines[-1] + "\n")
    verify = ("verify", str(run), "--property", "E [ F on(a,b) ]")
    assert capver_in_process(*verify, cwd=ROOT).returncode == 2
    r = capver_in_process(*LEARN, "--out", str(run), "--resume", cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert run_file.models_from(run) == run_dir.dataset_stamp(run)
    assert capver_in_process(*verify, cwd=ROOT).returncode == 0


@pytest.mark.slow
def test_a_killed_resume_leaves_a_run_that_is_consistent_or_refused(run: Path) -> None:
    """Kill a --resume while it records executions: the run is then either one whose
    models match its data, or refused in one line."""
    size = (run / run_dir.DATASET).stat().st_size
    proc = subprocess.Popen(
        [sys.executable, "-m", "capver", *LEARN, "--max-steps", "100000", "--out", str(run), "--resume"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while (run / run_dir.DATASET).stat().st_size <= size + 2000 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert (run / run_dir.DATASET).stat().st_size > size  # it was killed while recording
    r = capver("verify", str(run), "--property", "E [ F on(a,b) ]", cwd=ROOT, timeout=600)
    consistent = run_file.models_from(run) == run_dir.dataset_stamp(run)
    if consistent:
        assert r.returncode in (0, 3), r.stderr
    else:
        assert r.returncode == 2 and "do not describe the data beside them" in r.stderr
    assert json.loads((run / run_file.NAME).read_text(encoding="utf-8"))["agent"] == "lao"

"""The command line as a new user meets it: the commands of the user report, run as
typed (the ``capver`` console script in a subprocess), with what must and must not
happen to the user's files, exit statuses and messages."""

from __future__ import annotations

import argparse
import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from capver.cli import COMMANDS, build_parser
from capver.engines.learning import resumed_queries
from capver.io import dataset_file
from tests.helpers.cli import capver, capver_command, capver_in_process
from tests.helpers.paths import ROOT

REPO = ROOT


def one_line_error(res: subprocess.CompletedProcess[str], command: str) -> str:
    """The run failed with exit 2 and one ``capver CMD: error:`` line, no traceback."""
    assert res.returncode == 2, (res.returncode, res.stderr)
    assert "Traceback" not in res.stderr
    errors = [line for line in res.stderr.splitlines() if line.startswith(f"capver {command}: error: ")]
    assert len(errors) == 1, res.stderr
    return errors[0]


def curve(out: Path) -> list[dict[str, str]]:
    with open(out / "curve.csv") as f:
        return list(csv.DictReader(f))


# -- 1. data loss -----------------------------------------------------------------------------


def test_resume_refuses_a_directory_capver_did_not_write_and_overwrites_nothing(tmp_path: Path) -> None:
    u = tmp_path / "u"
    u.mkdir()
    (u / "report.txt").write_text("MY NOTES\n")
    (u / "curve.csv").write_text("mine\n")
    learn = ["learn", "--agent", "lao", "--domain", "blocks", "--max-steps", "10", "--out", str(u)]
    err = one_line_error(capver_in_process(*learn), "learn")
    assert "not a capver learn run" in err and "--resume" not in err  # it must not recommend --resume
    err = one_line_error(capver_in_process(*learn, "--resume"), "learn")
    assert "not a capver learn run" in err
    assert (u / "report.txt").read_text() == "MY NOTES\n" and (u / "curve.csv").read_text() == "mine\n"
    assert sorted(p.name for p in u.iterdir()) == ["curve.csv", "report.txt"]


def test_resume_into_the_package_source_is_refused(tmp_path: Path) -> None:
    before = sorted(p.name for p in (REPO / "capver").iterdir())
    res = capver_in_process(
        "learn", "--agent", "lao", "--domain", "blocks", "--max-steps", "10", "--out", "capver", "--resume", cwd=REPO
    )
    one_line_error(res, "learn")
    assert sorted(p.name for p in (REPO / "capver").iterdir()) == before


def test_a_directory_holding_a_run_is_continued_only_with_resume(small_run: Path) -> None:
    out = small_run
    before = (out / "dataset.jsonl").read_bytes()
    err = one_line_error(capver_in_process("learn", "--agent", "lao", "--domain", "blocks", "--out", str(out)), "learn")
    assert "pass --resume" in err
    assert (out / "dataset.jsonl").read_bytes() == before


@pytest.mark.parametrize("command", [["build", "--out"], ["plot", "RUN", "--out"]])
def test_output_files_that_exist_are_not_overwritten_without_force(
    tmp_path: Path, command: list[str], small_run: Path
) -> None:
    target = tmp_path / "mine.png"
    if command[0] == "build":
        target = tmp_path / "h_and.capm"
    target.write_text("MINE\n")
    if command[0] == "plot":
        argv = ["plot", str(small_run), "--out", str(target)]
    else:
        argv = ["build", "--out", str(tmp_path)]
    err = one_line_error(capver_in_process(*argv), command[0])
    assert "exists" in err and "--force" in err
    assert target.read_text() == "MINE\n"
    assert capver_in_process(*argv, "--force").returncode == 0
    assert target.read_bytes() != b"MINE\n"


# -- 2. a failed learn leaves no trap -------------------------------------------------------


def test_a_failed_learn_creates_nothing_and_the_corrected_command_works(tmp_path: Path) -> None:
    d = tmp_path / "D"
    err = one_line_error(
        capver_in_process("learn", "--agent", "lao", "--domain", "nosuch", "--max-steps", "10", "--out", str(d)),
        "learn",
    )
    assert "nosuch" in err and "blocks" in err
    assert not d.exists()
    res = capver_in_process(
        "learn",
        "--agent",
        "lao",
        "--domain",
        "blocks",
        "--max-steps",
        "10",
        "--eval-sequences",
        "5",
        "--out",
        str(d),
        "--quiet",
    )
    assert res.returncode == 0, res.stderr


def test_resume_with_another_setting_names_the_field_that_differs(small_run: Path) -> None:
    out = small_run
    err = one_line_error(
        capver_in_process(
            "learn", "--agent", "lao", "--domain", "blocks", "--theta", "inf", "--out", str(out), "--resume"
        ),
        "learn",
    )
    assert "--theta: the run has 1, given inf" in err
    assert "--domain" not in err  # only what differs


# -- 3. budgets -----------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["-5", "0", "ten"])
def test_non_positive_budgets_are_rejected_before_anything_is_written(tmp_path: Path, bad: str) -> None:
    out = tmp_path / "run"
    res = capver_in_process("learn", "--agent", "lao", "--domain", "blocks", "--max-steps", bad, "--out", str(out))
    assert res.returncode == 2 and "--max-steps: expected a positive integer" in res.stderr
    assert not out.exists()


def test_a_negative_revisitation_bonus_is_rejected(tmp_path: Path) -> None:
    out = tmp_path / "run"
    res = capver_in_process("learn", "--agent", "lao", "--domain", "blocks", "--xi", "-0.1", "--out", str(out))
    assert res.returncode == 2 and "argument --xi: expected a non-negative number, got '-0.1'" in res.stderr
    assert not out.exists()


@pytest.mark.slow
def test_learn_has_a_default_budget_and_resume_keeps_the_run_budget(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert (
        capver_in_process(
            "learn",
            "--agent",
            "lao",
            "--domain",
            "blocks",
            "--max-steps",
            "60",
            "--eval-sequences",
            "5",
            "--out",
            str(out),
            "--quiet",
        ).returncode
        == 0
    )
    assert json.loads((out / "run.json").read_text())["budget"]["max_steps"] == 60
    res = capver_in_process("learn", "--agent", "lao", "--domain", "blocks", "--out", str(out), "--resume", "--quiet")
    assert res.returncode == 0, res.stderr
    assert "step budget 60" in res.stdout
    assert int(curve(out)[-1]["steps"]) == 60  # nothing was learned past the stored budget
    # A new budget given on resume replaces the stored one and is stored in turn.
    assert (
        capver_in_process(
            "learn",
            "--agent",
            "lao",
            "--domain",
            "blocks",
            "--out",
            str(out),
            "--resume",
            "--quiet",
            "--max-steps",
            "90",
        ).returncode
        == 0
    )
    assert json.loads((out / "run.json").read_text())["budget"]["max_steps"] == 90
    assert int(curve(out)[-1]["steps"]) == 90
    # With no budget at all, the documented default applies (on a small model-backed
    # agent, so that 2,000 steps take seconds).
    fresh = tmp_path / "fresh"
    res = capver_in_process(
        "learn",
        "--agent",
        "model",
        "--model",
        str(REPO / "models" / "toy_blocks.capm"),
        "--init",
        "ontable(a) ontable(b) clear(a) clear(b) handempty",
        "--method",
        "random",
        "--patience",
        "0",
        "--eval-sequences",
        "5",
        "--out",
        str(fresh),
        "--quiet",
    )
    assert res.returncode == 0, res.stderr
    assert json.loads((fresh / "run.json").read_text())["budget"]["max_steps"] == 2000
    assert "step budget 2000" in res.stdout and int(curve(fresh)[-1]["steps"]) == 2000


def test_learn_verify_export_and_plan_start_from_the_empty_state(tmp_path: Path) -> None:
    """``--init '{}'`` is the state where no atom holds, in every command that takes
    an initial state: the run's models start there and say so."""
    out = tmp_path / "empty"
    model = str(REPO / "models" / "toy_blocks.capm")
    res = capver_in_process(
        "learn", "--agent", "model", "--model", model, "--init", "{}", "--max-steps", "20",
        "--eval-sequences", "3", "--out", str(out), "--quiet",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert "(:init)" in (out / "h_and.capm").read_text(encoding="utf-8")
    checked = capver_in_process("verify", str(out), "--property", "E [ F holding(a) ]", "--json")
    assert json.loads(checked.stdout.splitlines()[0])["init"] == "{}"
    for init in ("{}", ""):
        on_model = capver_in_process("verify", model, "--init", init, "--property", "E [ F holding(a) ]", "--json")
        record = json.loads(on_model.stdout.splitlines()[0])
        assert (record["init"], record["verdict"]) == ("{}", "fails")
    braced = capver_in_process(
        "verify", model, "--init", "{ontable(a), ontable(b), clear(a), clear(b), handempty}",
        "--property", "E [ F holding(a) ]", "--json",
    )  # fmt: skip
    assert json.loads(braced.stdout.splitlines()[0])["verdict"] == "holds"
    exported = capver_in_process("export", model, "--init", "{}", "--goal", "holding(a)", "--out", str(tmp_path / "x"))
    assert exported.returncode == 0, exported.stderr
    problem = next((tmp_path / "x").rglob("*problem*.pddl")).read_text(encoding="utf-8")
    assert "(:init)" in " ".join(problem.split()) or "(:init )" in problem


def test_help_shows_the_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["learn", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "(default: mcqs-s)" in text and "(default: first_responders)" in text
    assert "default: 2000 when no budget is given" in text


def _subparser(name: str) -> argparse.ArgumentParser:
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return commands.choices[name]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_option_of_every_command_has_help(command: str) -> None:
    missing = [a.dest for a in _subparser(command)._actions if a.dest != "help" and not a.help]
    assert missing == []


# -- 4. Ctrl-C and time ---------------------------------------------------------------------


def _wait_for_dataset(proc: subprocess.Popen[str] | subprocess.Popen[bytes], dataset: Path, size: int) -> None:
    """Until the running learn has written ``size`` bytes of dataset (the deadline only
    keeps a broken run from hanging the suite)."""
    deadline = time.monotonic() + 600
    while (
        proc.poll() is None and time.monotonic() < deadline and not (dataset.exists() and dataset.stat().st_size > size)
    ):
        time.sleep(0.1)
    if not (dataset.exists() and dataset.stat().st_size > size):
        proc.kill()
        pytest.fail(f"learn wrote no {size} bytes of {dataset.name} (exit status {proc.wait()})")


def test_ctrl_c_ends_learn_with_one_line_saying_what_was_saved(tmp_path: Path) -> None:
    out = tmp_path / "run"
    cmd = capver_command()
    # As from a terminal: SIGINT not ignored.  A background job, or a pytest-xdist
    # worker after some library set SIGINT to SIG_IGN, would pass the ignore on to
    # the child, and Python keeps an inherited SIG_IGN, so the Ctrl-C would never arrive.
    # So the child resets it and then execs capver in the same process.
    argv = [
        *cmd,
        "learn",
        "--agent",
        "lao",
        "--domain",
        "blocks",
        "--max-steps",
        "100000",
        "--patience",
        "0",
        "--eval-sequences",
        "5",
        "--out",
        str(out),
    ]
    reset = "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])"
    proc = subprocess.Popen(
        [sys.executable, "-c", reset, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    # Ctrl-C once learning is under way, however long that takes: sent after a fixed
    # wait, it could land while a busy machine is still importing.
    _wait_for_dataset(proc, out / "dataset.jsonl", 20_000)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=300)  # writing after Ctrl-C scores, lifts and certifies
    assert proc.returncode == 130
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("capver learn: interrupted; saved ") and "--resume" in last
    for name in ("h_and.capm", "h_or.capm", "curve.csv", "report.txt"):
        assert (out / name).stat().st_size > 0


def test_learn_reports_learning_writing_and_total_time_and_plain_lines_off_a_terminal(tmp_path: Path) -> None:
    res = capver_in_process(
        "learn",
        "--agent",
        "lao",
        "--domain",
        "blocks",
        "--max-steps",
        "40",
        "--eval-sequences",
        "5",
        "--eval-every",
        "10",
        "--out",
        str(tmp_path / "run"),
    )
    assert res.returncode == 0
    assert "learning " in res.stdout and "writing " in res.stdout and "total " in res.stdout
    assert "\r" not in res.stderr  # stderr is a pipe: no in-place redraws
    assert "writing h_and.capm, h_or.capm and h_tilde.capm: done in" in res.stderr


# -- 5. one error path ----------------------------------------------------------------------


def _error_cases(tmp: Path) -> list[tuple[str, list[str]]]:
    afile = tmp / "afile"
    afile.write_text("x\n")
    good = str(REPO / "models" / "toy_blocks.capm")
    return [
        ("check", ["check", str(tmp / "nonexistent.capm")]),
        ("check", ["check", str(tmp)]),
        ("check", ["check", good, str(tmp / "nonexistent.capm")]),
        ("learn", ["learn", "--agent", "lao", "--domain", "blocks", "--max-steps", "10", "--out", str(afile)]),
        ("learn", ["learn", "--agent", "lao", "--domain", "blocks", "--max-steps", "10", "--out", "/sys/x"]),
        ("learn", ["learn", "--agent", "lao", "--domain", "blocks", "--max-steps", "10", "--out", "/proc/x"]),
        ("build", ["build", "--out", "/sys/x"]),
        ("bench", ["bench", "introspection", "--quick", "--out", "/sys/x"]),
    ]


def test_every_reported_traceback_is_now_a_one_line_error(tmp_path: Path) -> None:
    for command, argv in _error_cases(tmp_path):
        err = one_line_error(capver_in_process(*argv), command)
        assert len(err) < 400, err
    assert (tmp_path / "afile").read_text() == "x\n"


def test_plot_into_an_unwritable_place_is_a_one_line_error(small_run: Path) -> None:
    one_line_error(capver_in_process("plot", str(small_run), "--out", "/sys/x.png"), "plot")


# -- 8. the query count survives kill -9 and --resume ---------------------------------------


@pytest.mark.slow
def test_queries_continue_after_kill_and_resume(tmp_path: Path) -> None:
    out = tmp_path / "run"
    cmd = capver_command()
    argv = [
        "learn",
        "--agent",
        "lao",
        "--domain",
        "blocks",
        "--method",
        "mcqs-s",
        "--eval-sequences",
        "5",
        "--eval-every",
        "1000",
        "--patience",
        "0",
        "--out",
        str(out),
        "--quiet",
    ]
    # --eval-every 1000: no checkpoint is written between the start and the kill, so
    # the curve cannot be where the count comes from.
    proc = subprocess.Popen(
        cmd + argv + ["--max-steps", "100000"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    dataset = out / "dataset.jsonl"
    _wait_for_dataset(proc, dataset, 30_000)  # the kill must come after queries, not after a fixed time
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    started = resumed_queries(dataset_file.load(dataset).meta)
    assert started > 5
    steps = dataset_file.load(dataset).dataset.simulator_steps
    res = capver_in_process(*argv, "--resume", "--max-steps", str(steps + 100))
    assert res.returncode == 0, res.stderr
    rows = curve(out)
    queries = [int(r["queries"]) for r in rows]
    assert queries == sorted(queries)
    # The resumed run counts on from the queries the killed one had started.
    assert rows[-1]["steps"] == str(steps + 100)
    assert queries[-1] > started
    assert resumed_queries(dataset_file.load(dataset).meta) == queries[-1]


def test_listing_the_commands_imports_none_of_them() -> None:
    # `capver --help` must not pay for numpy, dd, pysmt or any command's imports.
    code = (
        "import sys\n"
        "from capver import cli\n"
        "try:\n    cli.main(['--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in sys.modules if m.startswith('capver.commands') or m in ('numpy', 'dd', 'pysmt', 'z3')]\n"
        "print('HEAVY', heavy)\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert "HEAVY []" in res.stdout
    for name in COMMANDS:
        assert f"    {name}" in res.stdout  # every command is listed with its summary


# -- 6. the README's plan example works as written ------------------------------------------


def test_plan_starts_from_the_model_s_own_initial_state_and_says_so(tmp_path: Path) -> None:
    res = capver_in_process("plan", "models/toy_blocks.capm", "--goal", "on(a,b)", cwd=REPO)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "starting from the (:init ...) of models/toy_blocks.capm" in res.stdout
    assert "initial state: {ontable(a), ontable(b), clear(a), clear(b), handempty}" in res.stdout
    assert "solved" in res.stdout
    # --init still wins, and an empty model state is named as such
    res = capver_in_process(
        "plan", "models/toy_blocks.capm", "--goal", "on(a,b)", "--init", "holding(a) ontable(b) clear(b)", cwd=REPO
    )
    assert "starting from --init" in res.stdout and "initial state: {ontable(b), clear(b), holding(a)}" in res.stdout


def test_learned_models_record_the_setting_s_initial_state(small_run: Path) -> None:
    from capver.envs.ppddl import load_task
    from capver.io import dsl

    out = small_run
    for name in ("h_and.capm", "h_or.capm"):
        assert dsl.read(out / name).init == load_task("blocks", "problem1").initial_state


def test_a_vocabulary_mismatch_names_the_first_model() -> None:
    # In a process of its own: the one-line error and its status as the shell sees them.
    res = capver("check", "models/toy_blocks.capm", "models/door_key.capm", cwd=REPO)
    err = one_line_error(res, "check")
    assert "differs from that of the first model (models/toy_blocks.capm)" in err
    assert "logic context" not in res.stderr


# -- 9. noise: a torn last record is reported in one line by eval and by resume ----------


def test_a_torn_last_record_is_reported_by_eval_and_repaired_quietly_by_resume(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert (
        capver_in_process(
            "learn",
            "--agent",
            "lao",
            "--domain",
            "blocks",
            "--max-steps",
            "20",
            "--eval-sequences",
            "5",
            "--out",
            str(out),
            "--quiet",
        ).returncode
        == 0
    )
    with open(out / "dataset.jsonl", "ab") as f:
        f.write(b'{"s": "1f", "c": "on(a')  # a write cut off by a kill
    res = capver_in_process("eval", str(out), "--reachability", "0")
    assert res.returncode == 0
    assert "torn last line" in res.stderr and "using the" in res.stderr and "--resume repairs" in res.stderr
    res = capver_in_process(
        "learn", "--agent", "lao", "--domain", "blocks", "--max-steps", "30", "--out", str(out), "--resume"
    )
    assert res.returncode == 0, res.stderr
    torn = [line for line in res.stderr.splitlines() if "torn last line" in line]
    assert len(torn) == 1 and torn[0].startswith("capver learn: ") and "cut it off" in torn[0]
    assert "TornRecordWarning" not in res.stderr and "dataset_file.py" not in res.stderr
    assert not dataset_file.load(out / "dataset.jsonl").torn

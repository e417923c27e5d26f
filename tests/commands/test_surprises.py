"""Ten surprises a new user of the command line met, each run as the user types it
(the ``capver`` console script in a subprocess) with what it must print and do to the
user's files.  docs/command_line_surprises.md describes each one."""

from __future__ import annotations

import csv
import importlib
import importlib.metadata
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from capver.bench.cli import BENCHMARKS
from capver.core.setting_args import SettingArgs
from capver.io import dsl
from capver.io.html_report import GENERATOR_META, ReportInputs, is_report_page, render
from capver.io.run_file import RunBudget, RunManifest
from tests.helpers.cli import capver_in_process
from tests.helpers.examples import scaled
from tests.helpers.paths import ROOT

REPO = ROOT
TOY = REPO / "models" / "toy_blocks.capm"
DOC = REPO / "docs" / "command_line_surprises.md"


def one_line_error(res: subprocess.CompletedProcess[str], command: str) -> str:
    """The run failed with exit 2 and one ``capver CMD: error:`` line, no traceback."""
    assert res.returncode == 2, (res.returncode, res.stdout, res.stderr)
    assert "Traceback" not in res.stderr
    errors = [line for line in res.stderr.splitlines() if line.startswith(f"capver {command}: error: ")]
    assert len(errors) == 1, res.stderr
    return errors[0]


def rows(out: Path) -> list[dict[str, str]]:
    with open(out / "curve.csv", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def snapshot(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


# small_run (conftest.py): a private copy of a 30-step MCQS-E run of the LAO* agent on Blocksworld.


# -- 1. --resume keeps the run's method ------------------------------------------------------


def test_resume_refuses_another_method_and_names_the_run_s(small_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    shutil.copytree(small_run, out)
    assert capver_in_process("eval", str(out), "--reachability", "0").returncode == 0
    scored = json.loads((out / "evaluation.json").read_text(encoding="utf-8"))
    before = snapshot(out)
    base = ("learn", "--agent", "lao", "--domain", "blocks", "--out", str(out), "--resume", "--quiet")
    err = one_line_error(capver_in_process(*base, "--method", "random", "--max-steps", "60"), "learn")
    assert "--method mcqs-e run, given --method random" in err and "leave out --method" in err
    assert snapshot(out) == before  # refused before anything was written

    # Without --method the run goes on with its own; evaluation.json scored fewer
    # transitions than the run now holds, so it is removed, and the user is told.
    res = capver_in_process(*base, "--max-steps", "60")
    assert res.returncode == 0, res.stderr
    assert "method mcqs-e" in res.stderr and "budget 60 steps" in res.stderr
    assert json.loads((out / "run.json").read_text(encoding="utf-8"))["method"] == "mcqs-e"
    curve = rows(out)
    assert {r["method"] for r in curve} == {"mcqs-e"} and int(curve[-1]["steps"]) >= 60
    assert not (out / "evaluation.json").exists()
    assert f"removed {out / 'evaluation.json'}, which scored {scored['transitions']} transitions" in res.stderr
    # capver eval writes it again for the data the run holds now.
    assert capver_in_process("eval", str(out), "--reachability", "0").returncode == 0
    rescored = json.loads((out / "evaluation.json").read_text(encoding="utf-8"))
    assert rescored["method"] == "mcqs-e" and rescored["transitions"] > scored["transitions"]
    # A resume that adds nothing (the budget is spent) keeps a current evaluation.json.
    res = capver_in_process(*base, "--method", "mcqs-e")
    assert res.returncode == 0, res.stderr
    assert json.loads((out / "evaluation.json").read_text(encoding="utf-8")) == rescored


def test_resume_leaves_an_evaluation_json_capver_did_not_write(small_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    shutil.copytree(small_run, out)
    (out / "evaluation.json").write_text('{"my": "notes", "transitions": 1}\n', encoding="utf-8")
    res = capver_in_process(
        "learn", "--agent", "lao", "--domain", "blocks", "--out", str(out), "--resume", "--quiet", "--max-steps", "45"
    )
    assert res.returncode == 0, res.stderr
    assert (out / "evaluation.json").read_text(encoding="utf-8") == '{"my": "notes", "transitions": 1}\n'


# -- 2. capver report replaces its own page ----------------------------------------------------


def test_report_replaces_its_own_page_and_refuses_a_foreign_one(small_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    shutil.copytree(small_run, out)
    page = out / "report.html"
    assert capver_in_process("report", str(out)).returncode == 0
    first = page.read_text(encoding="utf-8")
    assert '<meta name="generator" content="capver report">' in first
    # verify --save adds verdicts: the second report shows them instead of being refused.
    assert capver_in_process("verify", str(out), "--property", "E [ F on(a,b) ]", "--save").returncode in (0, 1, 3)
    res = capver_in_process("report", str(out))
    assert res.returncode == 0, res.stderr
    assert page.read_text(encoding="utf-8") != first and "E [ F on(a,b) ]" in page.read_text(encoding="utf-8")
    # A page written before the mark (the same opening and title) is capver's too.
    legacy = first.replace('<meta name="generator" content="capver report">', "")
    page.write_text(legacy, encoding="utf-8")
    assert capver_in_process("report", str(out)).returncode == 0
    assert page.read_text(encoding="utf-8") != legacy
    # Someone else's file is still refused, and kept.
    for foreign in (
        "<html><head><title>my notes</title></head></html>\n",
        "<!DOCTYPE html>\n<p>capver report: my own page</p>\n",
    ):
        page.write_text(foreign, encoding="utf-8")
        err = one_line_error(capver_in_process("report", str(out)), "report")
        assert "capver does not overwrite files it did not create" in err and "--force" in err
        assert page.read_text(encoding="utf-8") == foreign
    # A symlink to a capver page is not replaced through.
    elsewhere = tmp_path / "elsewhere.html"
    elsewhere.write_text(first, encoding="utf-8")
    page.unlink()
    page.symlink_to(elsewhere)
    one_line_error(capver_in_process("report", str(out)), "report")
    assert elsewhere.read_text(encoding="utf-8") == first


@settings(max_examples=scaled(60), deadline=None)
@given(agent=st.text(min_size=1, max_size=20), domain=st.text(min_size=1, max_size=20), other=st.text(max_size=300))
def test_every_rendered_page_is_recognised_and_other_text_is_not(agent: str, domain: str, other: str) -> None:
    """For all manifests (names with <, &, quotes ...), the page render() writes is
    capver's; text without the mark and without render's opening is not."""
    page = render(ReportInputs(RunManifest(agent, SettingArgs(domain=domain), "mcqs-e", RunBudget(max_steps=5))))
    assert is_report_page(page)
    assert is_report_page(page.replace(GENERATOR_META, ""))  # a page from before the mark
    assume(GENERATOR_META not in other and not other.startswith("<!DOCTYPE html>"))
    assert not is_report_page(other)
    if other:
        assert not is_report_page(other + page)  # a capver page inside another file is not one


# -- 3. capver plan RUN_DIR ------------------------------------------------------------------


def test_plan_accepts_a_run_directory(small_run: Path, tmp_path: Path) -> None:
    res = capver_in_process("plan", str(small_run), "--goal", "on(a,b)")
    assert res.returncode == 0, res.stderr
    assert f"({small_run / 'h_and.capm'})" in res.stdout and "solved" in res.stdout
    # The same plan as on the model file itself.
    direct = capver_in_process("plan", str(small_run / "h_and.capm"), "--goal", "on(a,b)")
    assert direct.stdout.splitlines()[1:4] == res.stdout.splitlines()[1:4]
    res = capver_in_process("plan", str(small_run), "--goal", "on(a,b)", "--model-kind", "or")
    assert f"({small_run / 'h_or.capm'})" in res.stdout
    err = one_line_error(capver_in_process("plan", str(tmp_path), "--goal", "on(a,b)"), "plan")
    assert "without h_and.capm" in err and "MODEL.capm" in err and "Is a directory" not in err
    err = one_line_error(capver_in_process("plan", str(TOY), "--goal", "on(a,b)", "--model-kind", "or"), "plan")
    assert "--model-kind or" in err and "one model file" in err


# -- 4. capver build: h∧ and h∨ ----------------------------------------------------------------


def test_build_writes_both_bounds(tmp_path: Path) -> None:
    res = capver_in_process("build", "--out", str(tmp_path / "models"), "--check")
    assert res.returncode == 0, res.stderr
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == ["h_and.capm", "h_or.capm"]
    h_and = dsl.read(tmp_path / "models" / "h_and.capm")
    h_or = dsl.read(tmp_path / "models" / "h_or.capm", ctx=h_and.ctx)
    assert (h_and.name, h_or.name) == ("pessimistic", "optimistic")
    assert "h∧ ⪯ h∨ proved" in res.stderr
    # Both bounds of the same capabilities, and not the same model twice.
    assert h_and.model.keys() == h_or.model.keys()
    assert (tmp_path / "models" / "h_and.capm").read_text(encoding="utf-8").split("\n", 1)[1] != (
        tmp_path / "models" / "h_or.capm"
    ).read_text(encoding="utf-8").split("\n", 1)[1]
    printed = capver_in_process("build").stdout
    assert "; Capability model pessimistic" in printed and "; Capability model optimistic" in printed
    only = capver_in_process("build", "--which", "pessimistic", "--out", str(tmp_path / "one"))
    assert only.returncode == 0 and sorted(p.name for p in (tmp_path / "one").iterdir()) == ["h_and.capm"]


# -- 5. one default domain ---------------------------------------------------------------------


def test_learn_and_run_default_to_the_same_domain(tmp_path: Path) -> None:
    res = capver_in_process("run", "lao", "--capabilities", "1", "--walk-states", "0")
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("lao agent, lao:first_responders/problem1:")
    out = tmp_path / "run"
    res = capver_in_process(
        "learn", "--agent", "lao", "--max-steps", "5", "--eval-sequences", "2", "--out", str(out), "--quiet"
    )
    assert res.returncode == 0, res.stderr
    assert json.loads((out / "run.json").read_text(encoding="utf-8"))["setting"]["domain"] == "first_responders"
    for command in ("learn", "run"):
        text = " ".join(capver_in_process(command, "--help").stdout.split())
        assert re.search(r"--domain DOMAIN [^-]*\(default: first_responders", text), text


# -- 6. capver --version -----------------------------------------------------------------------


def test_version_comes_from_the_package_metadata() -> None:
    res = capver_in_process("--version")
    assert res.returncode == 0, res.stderr
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert res.stdout.strip() == f"capver {project['version']}" == f"capver {importlib.metadata.version('capver')}"
    assert "--version" in capver_in_process("--help").stdout


# -- 7. every benchmark in capver --help -------------------------------------------------------


def test_top_level_help_lists_every_benchmark() -> None:
    text = " ".join(capver_in_process("--help").stdout.split())
    listed = re.search(r"bench run a benchmark \(([^;]*);", text)
    assert listed is not None, text
    assert set(listed.group(1).split(", ")) == set(BENCHMARKS)
    # Every name listed is a benchmark that exists: its module (or package) has a main().
    for module in BENCHMARKS.values():
        assert callable(getattr(importlib.import_module(module), "main", None)), module
    # The ones the README records, among them those the old help left out.
    assert {"crafter", "overcooked", "occam", "verdicts", "decide", "speed", "dprime", "modelfiles"} <= set(BENCHMARKS)


# -- 8. capver certify --help names --write ----------------------------------------------------


def test_certify_help_names_write() -> None:
    text = capver_in_process("certify", "--help").stdout
    description = " ".join(text.split("positional arguments:")[0].split("\n", 2)[-1].split())
    assert "with --write certify the models as they are now" in description
    options = " ".join(text.split("options:")[1].split())
    assert (
        "--write instead of re-checking: certify the models as they are now and write RUN/certificate.json" in options
    )
    assert "Exit status: 0" in text


# -- 9. plan prints the outcome's probability --------------------------------------------------


def test_plan_prints_the_outcome_probability_as_export_does(tmp_path: Path) -> None:
    res = capver_in_process("plan", str(TOY), "--goal", "on(a,b)")
    assert res.returncode == 0, res.stderr
    planned = [Fraction(p) for p in re.findall(r"Pr_h = (\S+) \(an outcome of rule \d+\)", res.stdout)]
    assert planned == [Fraction(3, 4), Fraction(3, 4)]
    assert "p=1" not in res.stdout
    exported = capver_in_process("export", str(TOY), "--out", str(tmp_path / "pddl"), "--goal", "on(a,b)", "--plan")
    assert exported.returncode == 0, exported.stderr
    assert [Fraction(p) for p in re.findall(r"Pr_h = (\S+)", exported.stdout)] == planned
    # By hand from the model file: stack-a-on-b with b clear applies both rules, so
    # its outcome has (1 + 1/2) / 2; the path's product is what plan predicts.
    assert "path probability 9/16" in res.stdout
    assert planned[0] * planned[1] == Fraction(9, 16)


# -- 10. the Fast Downward line leaves nothing in the current directory -------------------------


def fast_downward_lines() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## The Fast Downward line") :]
    return [line.strip() for line in section.splitlines() if line.startswith("    ")]


@pytest.mark.slow
def test_the_fast_downward_line_leaves_no_file_in_the_current_directory(tmp_path: Path) -> None:
    pytest.importorskip("up_fast_downward")
    session = [
        "capver learn --agent lao --domain blocks --method mcqs-e --max-steps 150 --out runs/blocks --quiet",
        'capver export runs/blocks --out runs/blocks-pddl --goal "on(a,b)" --determinize',
    ]
    for line in session:
        assert capver_in_process(*shlex.split(line)[1:], cwd=tmp_path).returncode == 0, line
    before = sorted(p.name for p in tmp_path.iterdir())
    lines = fast_downward_lines()
    assert len(lines) == 2 and "--plan-file runs/blocks-pddl-h_and.plan" in lines[1]
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    res = subprocess.run(
        ["bash", "-c", "\n".join(["set -e", *lines])],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    assert "Solution found" in res.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == before == ["runs"]
    plan = (tmp_path / "runs" / "blocks-pddl-h_and.plan").read_text(encoding="utf-8")
    steps = [line for line in plan.splitlines() if line.startswith("(")]
    assert steps and all(s.startswith("(achieve-") for s in steps)
    # The export folder holds only capver's files: exporting again is not refused.
    res = capver_in_process(*shlex.split(session[1])[1:], cwd=tmp_path)
    assert res.returncode == 0, res.stderr

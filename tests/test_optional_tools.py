"""A machine without the optional tools runs the suite green: every test that needs ABC
(Debian's ``yosys``: ``yosys-abc``), Chromium (``chromium``, ``chromedriver``) or
stormpy skips with an install hint, and none fails.

The test runs, in a pytest subprocess with those tools hidden (``CAPVER_HIDE_TOOLS``,
tests/helpers/optional_tools.py), the tests that touch them: found by looking for
``abc_available``, ``yosys``, ``chromium``, ``stormpy``, ``storm.`` and
``available_engines`` in tests/.  The whole quick loop runs the same way with

    CAPVER_HIDE_TOOLS=yosys-abc,chromium,chromedriver,stormpy python -m pytest -n 2 -q -m "not slow"
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.helpers.optional_tools import ABC_HINT, CHROMIUM_HINT, OPTIONAL_TOOLS, STORMPY_HINT, VARIABLE
from tests.helpers.paths import ROOT

TOUCHING = [
    "tests/engines/verification/test_storm.py",
    "tests/engines/verification/test_abc_pdr.py",
    "tests/engines/verification/test_constants.py",
    "tests/engines/verification/test_sparse_engine.py::test_sparse_equals_storm_exact_and_storm_float_is_within_its_bound",
    "tests/engines/verification/test_until.py::test_storm_and_explicit_agree_on_until",
    "tests/engines/verification/test_until.py::test_every_checker_answers_until_properties_alike",
    "tests/engines/verification/test_qualitative_engines.py::test_every_registered_engine_agrees_with_brute_force",
    "tests/commands/test_verify_command.py::test_quantitative_properties_agree_with_storm_and_bounds_follow_prism",
    "tests/commands/test_verify_command.py::test_export_format_prism_is_read_by_storm_as_written",
    "tests/commands/test_verify_command.py::test_every_quantitative_engine_gives_the_same_numbers",
    "tests/commands/test_verify_output.py::test_json_values_on_doubles_have_no_exact_fraction",
    "tests/test_shipped_models.py::test_every_shipped_verdict_is_confirmed_independently",
    "tests/test_properties_doc.py",
    "tests/test_readme.py::test_the_python_block_runs",
    "tests/bench/test_bench_cli.py::test_verify_quick",
    "tests/bench/test_bench_quantitative.py",
    "tests/bench/test_bench_verify_scale.py::test_parser_names_defaults_and_quick_values",
    "tests/io/test_report_html.py::test_the_page_in_headless_chromium",
]


def _environment() -> dict[str, str]:
    """This run's environment with the tools hidden, and without what would tie the child to
    this run: coverage's measurement (the child would write the data file CI combines),
    PYTEST_ADDOPTS, xdist's worker variables and CI (where a missing browser fails)."""
    drop = ("COV_CORE_", "COVERAGE_", "PYTEST_", "CI")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop) and k != "_CAPVER_HIDE_ROOT"}
    env[VARIABLE] = ",".join(OPTIONAL_TOOLS)
    return env


@pytest.mark.slow
def test_the_tests_that_touch_optional_tools_skip_without_them() -> None:
    res = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "-m", "not slow", *TOUCHING],
        cwd=ROOT,
        env=_environment(),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    out = res.stdout
    assert res.returncode == 0, out[-4000:] + res.stderr[-2000:]
    summary = out.strip().splitlines()[-1]
    assert " failed" not in summary and " error" not in summary, summary
    counts = {k: int(n) for n, k in re.findall(r"(\d+) (passed|skipped)", summary)}
    assert counts["passed"] > 0 and counts["skipped"] > 0, summary
    # Each tool's tests skipped, each naming how to install what is missing.
    skips = [line for line in out.splitlines() if line.startswith("SKIPPED")]
    for hint in (STORMPY_HINT, ABC_HINT, CHROMIUM_HINT):
        assert any(hint in line for line in skips), (hint, skips)

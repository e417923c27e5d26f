"""scripts/test_durations.py, which writes the table of where the suite's time goes into
docs/test_suite.md: read from a JUnit report of pytest's (classes, parameters, skips and
failures), summed per test file, and written between the markers only."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.helpers.paths import ROOT


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("test_durations_script", ROOT / "scripts" / "test_durations.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="0" failures="1" skipped="1" tests="5" time="12.5">
<testcase classname="tests.io.test_dsl" name="test_a" time="1.25" />
<testcase classname="tests.io.test_dsl.TestRoundTrip" name="test_b[x|y]" time="4.0" />
<testcase classname="tests.test_readme" name="test_c" time="6.0"><failure message="no" /></testcase>
<testcase classname="tests.test_readme" name="test_d" time="0.5"><skipped message="why" /></testcase>
<testcase classname="tests.engines.verification.test_ic3" name="test_e" time="0.75" />
</testsuite></testsuites>
"""


def test_the_table_sums_per_file_and_lists_the_slowest(tmp_path: Path) -> None:
    script = _script()
    junit = tmp_path / "junit.xml"
    junit.write_text(JUNIT, encoding="utf-8")
    cases = script.read_junit(junit)
    assert [(c.file, c.name, c.seconds, c.outcome) for c in cases] == [
        ("tests/io/test_dsl.py", "test_a", 1.25, "passed"),
        ("tests/io/test_dsl.py", "TestRoundTrip::test_b[x|y]", 4.0, "passed"),
        ("tests/test_readme.py", "test_c", 6.0, "failed"),
        ("tests/test_readme.py", "test_d", 0.5, "skipped"),
        ("tests/engines/verification/test_ic3.py", "test_e", 0.75, "passed"),
    ]
    assert script.suite_wall(junit) == 12.5
    doc = tmp_path / "doc.md"
    doc.write_text(f"# Title\n\nbefore\n\n{script.BEGIN}\nold table\n{script.END}\n\nafter\n", encoding="utf-8")
    assert script.main(["--junit", str(junit), "--doc", str(doc), "--slowest", "2"]) == 0
    text = doc.read_text(encoding="utf-8")
    assert text.startswith("# Title\n\nbefore\n\n") and text.endswith(f"{script.END}\n\nafter\n")
    assert "old table" not in text
    body = text.split(script.BEGIN)[1].split(script.END)[0]
    assert "5 tests (3 passed, 1 failed, 1 skipped): wall-clock 12 s (0.2 min)" in body
    assert "the tests' own seconds add up to 12 s" in body
    rows = [line for line in body.splitlines() if line.startswith("| `")]
    assert rows[:3] == [
        "| `tests/test_readme.py` | 2 | 6.5 | 52.0 % |",
        "| `tests/io/test_dsl.py` | 2 | 5.2 | 42.0 % |",
        "| `tests/engines/verification/test_ic3.py` | 1 | 0.8 | 6.0 % |",
    ]
    assert rows[3:] == [
        "| `tests/test_readme.py::test_c` | 6.0 |",
        "| `tests/io/test_dsl.py::TestRoundTrip::test_b[x\\|y]` | 4.0 |",
    ]


def test_a_document_without_the_markers_is_refused(tmp_path: Path) -> None:
    script = _script()
    doc = tmp_path / "doc.md"
    doc.write_text("no markers\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="markers are missing"):
        script.write(doc, "table")
    assert doc.read_text(encoding="utf-8") == "no markers\n"


def test_the_suite_doc_holds_a_generated_table() -> None:
    script = _script()
    text = (ROOT / "docs" / "test_suite.md").read_text(encoding="utf-8")
    assert text.count(script.BEGIN) == 1 and text.count(script.END) == 1
    body = text.split(script.BEGIN)[1].split(script.END)[0]
    assert "| test file | tests | seconds | share |" in body and "slowest tests" in body

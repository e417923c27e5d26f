"""scripts/coverage_by_package.py, the per-package coverage table .ci/run prints: on a
small package measured by coverage in a child process, each package's statements and
misses are the ones counted by hand, and the total is coverage's own report's.

coverage comes with the ``dev`` extra (pytest-cov), which CI installs: there a missing
coverage is a failure, elsewhere a skip."""

from __future__ import annotations

import importlib.util
import io
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "coverage_by_package.py"

try:
    import coverage
except ImportError:  # pragma: no cover - the dev extra is missing
    if os.environ.get("CI"):
        raise  # CI installs '.[test,dev]' (.ci/run)
    pytest.skip("coverage is not installed (pip install -e '.[dev]')", allow_module_level=True)


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("coverage_by_package", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


FILES = {
    # 5 statements, `return 2` never runs
    "capver/__init__.py": "",
    "capver/a.py": "def f():\n    return 1\n\n\ndef g():\n    return 2\n\n\nf()\n",
    # b.py runs whole (1 statement); c.py is never imported (2 statements, both missed)
    "capver/sub/__init__.py": "",
    "capver/sub/b.py": "X = 1\n",
    "capver/sub/c.py": "Y = 2\nZ = 3\n",
}


@pytest.fixture
def measured(tmp_path: Path) -> Path:
    for name, text in FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "main.py").write_text("import capver.a\nimport capver.sub.b\n", encoding="utf-8")
    data = tmp_path / ".coverage"
    # A child process, so that this measurement does not disturb the one CI runs the
    # tests under; COVERAGE_* variables of that outer run are left out.
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE")}
    subprocess.run(
        [sys.executable, "-m", "coverage", "run", f"--data-file={data}", "--source=capver", "main.py"],
        cwd=tmp_path,
        env=env,
        check=True,
        capture_output=True,
        timeout=120,
    )
    return data


def test_each_package_counts_its_own_modules_and_the_total_is_coverages(measured: Path) -> None:
    script = load_script()
    cov = coverage.Coverage(data_file=str(measured))
    cov.load()
    rows = {r.package: (r.statements, r.missed) for r in script.by_package(cov)}
    assert rows == {"capver": (5, 1), "capver.sub": (3, 2)}
    total = script.PackageCoverage("TOTAL", 8, 3)
    assert total.percent == pytest.approx(100 * 5 / 8)
    assert cov.report(file=io.StringIO()) == pytest.approx(total.percent)
    lines = script.table(script.by_package(cov)).splitlines()
    assert lines[1].split() == ["capver", "5", "1", "80.0%"]
    assert lines[2].split() == ["capver.sub", "3", "2", "33.3%"]
    assert lines[3].split() == ["TOTAL", "8", "3", "62.5%"]


def test_the_command_prints_the_table_and_names_a_missing_data_file(measured: Path, tmp_path: Path) -> None:
    res = subprocess.run(
        [sys.executable, str(SCRIPT), str(measured)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[-1].split() == ["TOTAL", "8", "3", "62.5%"]
    missing = tmp_path / "none" / ".coverage"
    res = subprocess.run(
        [sys.executable, str(SCRIPT), str(missing)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
        timeout=120,
    )
    assert res.returncode == 2
    assert str(missing) in res.stderr and "no coverage data file" in res.stderr


def test_a_module_outside_capver_is_its_own_directorys_package() -> None:
    script = load_script()
    assert script.package_of(Path("/x/capver/engines/mcqs/base.py")) == "capver.engines.mcqs"
    assert script.package_of(Path("/x/capver/api.py")) == "capver"
    assert script.package_of(Path("/x/other/mod.py")) == "other"

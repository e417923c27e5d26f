"""Print a coverage data file one line per package, so that CI's log stays readable.

    python scripts/coverage_by_package.py [DATA_FILE]

``.ci/run`` runs the README's test command under pytest-cov (``--cov=capver``), which
writes ``.coverage``; coverage's own terminal report has a line per module (about 150),
this one a line per package: statements, missed statements and the percentage covered,
and a total that is coverage's own (a test checks the two agree).  Line coverage only,
of the processes pytest runs: the ``capver`` subprocesses some tests start are not
measured.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import coverage


@dataclass(frozen=True, slots=True)
class PackageCoverage:
    """The statements of one package's own modules (not its subpackages') and how many ran."""

    package: str
    statements: int
    missed: int

    @property
    def percent(self) -> float:
        return 100.0 * (self.statements - self.missed) / self.statements if self.statements else 100.0


def package_of(path: Path) -> str:
    """``…/capver/engines/mcqs/base.py`` -> ``capver.engines.mcqs``: the dotted path from
    the outermost directory named ``capver`` (the repository's ``grammars/`` holds no
    Python, so every measured module lies under it)."""
    parts = path.parent.parts
    start = parts.index("capver") if "capver" in parts else len(parts) - 1
    return ".".join(parts[start:])


def by_package(cov: coverage.Coverage) -> list[PackageCoverage]:
    """Sum coverage's per-module analysis over each package, sorted by package name."""
    statements: defaultdict[str, int] = defaultdict(int)
    missed: defaultdict[str, int] = defaultdict(int)
    for measured in cov.get_data().measured_files():
        _, lines, _, missing, _ = cov.analysis2(measured)
        package = package_of(Path(measured))
        statements[package] += len(lines)
        missed[package] += len(missing)
    return [PackageCoverage(p, statements[p], missed[p]) for p in sorted(statements)]


def table(rows: list[PackageCoverage]) -> str:
    total = PackageCoverage("TOTAL", sum(r.statements for r in rows), sum(r.missed for r in rows))
    width = max(len(r.package) for r in [*rows, total])
    lines = [f"{'coverage by package':<{width}}  {'stmts':>6}  {'miss':>6}  cover"]
    lines += [f"{r.package:<{width}}  {r.statements:>6}  {r.missed:>6}  {r.percent:5.1f}%" for r in [*rows, total]]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    data_file = argv[0] if argv else ".coverage"
    if not Path(data_file).exists():
        print(
            f"coverage_by_package: no coverage data file {data_file!r} (did the test run write one?)", file=sys.stderr
        )
        return 2
    cov = coverage.Coverage(data_file=data_file)
    cov.load()
    print(table(by_package(cov)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

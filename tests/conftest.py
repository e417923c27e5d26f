"""pytest configuration shared by capver's tests: hypothesis profiles, and the rules
that keep the suite free of flaky tests.

Hypothesis profiles, chosen by ``CAPVER_HYPOTHESIS_PROFILE``: ``dev`` (the default, for
the inner loop) tries 8 examples per property, ``ci`` (what ``.ci/run`` sets) 12 and
``thorough`` 300; a test that sets its own ``max_examples`` writes ``scaled(n)``
(tests/helpers/examples.py), ``n`` chosen for 20 examples: 3/5 of it under ``ci``, 2/5
under ``dev``.  The ``@example``s that once found a bug run in every profile.  Where the suite's
time goes: the generated table in docs/test_suite.md.  There is no deadline because
examples build BDD managers and call z3, whose first call in a process is much slower
than the rest.

Flaky tests, and how the suite avoids them.  A test that passes or fails with the
machine's speed or the order xdist runs tests in is a broken test.  The causes met so
far, and the rule for each:

* Wall-clock thresholds (``elapsed < 10``, a wall-time ratio, a printed "0.0 s"):
  tests assert counts (steps, expansions, requests served at once), relations between
  recorded numbers at full precision (wall ≥ learn), or a bound the code guarantees
  whatever the load (a call abandoned before its hang ends); times against targets
  belong to ``capver bench``, which measures them.
* Sleeps used for synchronisation: a test waits for the event itself (a dataset
  grown past N bytes, a line printed by the child) before it signals or kills; a
  deadline there only keeps a broken run from hanging the suite.  A sleep that only
  picks the moment of a kill (test_dataset_file) is fine: what it asserts holds at
  every moment.
* Shared output paths under pytest-xdist: everything is written under the test's own
  ``tmp_path`` (or a ``tmp_path_factory`` directory), and commands that write
  relative to the working directory run after ``monkeypatch.chdir(tmp_path)``.
* Unseeded randomness: every random draw goes through a ``numpy.random.Generator``
  built from a fixed seed (``np.random.default_rng(seed)``); a library that reads
  numpy's global state (pddlgym) is seeded inside ``seeded_global_numpy``, which
  restores it.  Hypothesis searches randomly, so its properties assert exact
  invariants, never a threshold on sampled values, and the profiles below keep no
  example database (no file shared between workers) and no deadline.
"""

from __future__ import annotations

import gc
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from tests.helpers import optional_tools
from tests.helpers.cli import capver_in_process

# The garbage collector of a test process.  A worker's heap grows with every module it
# runs (session fixtures, learned models, hypothesis's state), and at Python's default
# thresholds (700, 10, 10) each full collection rescans all of it: the quick loop's two
# workers spent 43 s in the collector (measured with gc.callbacks), 13 s at these
# thresholds with the heap at the end of collection frozen (pytest_collection_finish
# below); its wall-clock time fell from 195 s to 185 s.  What the tests check is the
# same: only when garbage cycles are freed changes, and a test that needs them freed
# calls gc.collect() itself.
gc.set_threshold(50_000, 50, 50)

# CAPVER_HIDE_TOOLS=yosys-abc,chromium,chromedriver,stormpy: run as on a machine without
# those optional tools (tests/helpers/optional_tools.py), before any test module is imported.
if optional_tools.names_from_environment():
    optional_tools.hide(optional_tools.names_from_environment())

_COMMON: dict[str, Any] = {
    "deadline": None,
    "database": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}

settings.register_profile("dev", max_examples=8, **_COMMON)
# ci at 12, not 20: under coverage the suite's hypothesis properties took 155 s of its
# tests' 1,236 s at 20 (.ci/run, 2026-12-06), and the whole suite has ten minutes.
settings.register_profile("ci", max_examples=12, **_COMMON)
settings.register_profile("thorough", max_examples=300, **_COMMON)
settings.load_profile(os.environ.get("CAPVER_HYPOTHESIS_PROFILE", "dev"))


# One small learned run per pytest process (per xdist worker), for the tests that only
# need *a* run directory to read, resume or report on; a learn subprocess costs seconds,
# and some twenty tests used to run their own on this same setting.
SMALL_RUN_ARGV = (
    "learn",
    "--agent",
    "lao",
    "--domain",
    "blocks",
    "--method",
    "mcqs-e",
    "--max-steps",
    "30",
    "--eval-sequences",
    "5",
    "--quiet",
)


@pytest.fixture(scope="session")
def small_run_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run ``capver learn SMALL_RUN_ARGV`` writes, learned once; never written to:
    tests take ``small_run``, their own copy."""
    out = tmp_path_factory.mktemp("small_run") / "run"
    res = capver_in_process(*SMALL_RUN_ARGV, "--out", str(out))
    assert res.returncode == 0, res.stderr
    return out


@pytest.fixture
def small_run(small_run_source: Path, tmp_path: Path) -> Path:
    """A private copy of the session's small run (a 30-step MCQS-E run of the LAO* agent on
    Blocksworld) under the test's ``tmp_path``, so no test sees another's writes."""
    out = tmp_path / "small_run"
    shutil.copytree(small_run_source, out)
    return out


# Modules that take the longest (docs/test_suite.md's generated table), collected first
# with every module that has a slow test: pytest-xdist hands tests out in collection
# order, so a heavy module collected last leaves one worker running it alone at the end
# (the top-level tests/test_readme.py sorts after every package).  Each module stays in
# one piece and in its own order, so its fixtures are built as before.
HEAVY_FIRST = (
    "tests/io/test_export_tools.py",
    "tests/test_readme.py",
    "tests/test_your_agent_doc.py",
    "tests/engines/verification/test_qualitative_engines.py",
    "tests/bench/test_bench_learning.py",
    "tests/engines/test_executors.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    def module(item: pytest.Item) -> str:
        return item.nodeid.split("::", 1)[0]

    heavy = set(HEAVY_FIRST) | {module(it) for it in items if it.get_closest_marker("slow") is not None}
    order = {id(it): k for k, it in enumerate(items)}
    items.sort(key=lambda it: (module(it) not in heavy, order[id(it)]))


def pytest_collection_finish(session: pytest.Session) -> None:
    # The modules and test items alive now live until the process ends: moved out of
    # the collector's generations, no full collection scans them again.
    gc.collect()
    gc.freeze()

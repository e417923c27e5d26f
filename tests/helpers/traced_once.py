"""Coverage's tracing for one xdist worker only, for a module fixture that every worker
builds the same way.  Import it from tests as
``from tests.helpers.traced_once import traced_once``.

Under ``-n 2`` each worker builds a module's fixtures for itself, and xdist cannot be
told to keep a module's tests on one worker without changing the command CI runs.
Coverage combines the workers' data, so it needs a fixture's capver lines from one of
them: the first worker to claim ``name`` in the session's shared temporary directory
builds it traced, the others inside :func:`~tests.helpers.untraced.untraced`, which
saves the tracer's several-fold slow-down there.  Without xdist the block is traced."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import pytest

from tests.helpers.untraced import untraced_unless


@contextlib.contextmanager
def traced_once(tmp_path_factory: pytest.TempPathFactory, name: str) -> Iterator[None]:
    """Traced in the first process of the session to enter a block of this ``name``,
    untraced in the other xdist workers."""
    first = True
    if os.environ.get("PYTEST_XDIST_WORKER"):
        # The workers' base temporary directories sit in the controller's, which
        # belongs to this session alone (a new one, or emptied, per run).
        claim = tmp_path_factory.getbasetemp().parent / f"traced-once-{name}"
        try:
            os.close(os.open(claim, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            first = False
    with untraced_unless(first):
        yield

"""Coverage's tracing paused for a block, for the tests that hand capver's files to
third-party tools or run statistical experiments.  Import it from tests as
``from tests.helpers.untraced import untraced``.

``.ci/run`` measures ``--cov=capver``, so the time a third-party tool (pddlgym, plado,
unified-planning's parser, pyperplan) spends in its own code is never measured, yet
coverage's tracer still runs on each of its millions of calls: that made the export
tests several times slower under ``.ci/run`` than without coverage.

pytest-cov's ``no_cover`` marker does not help under ``-n 2``: each xdist worker has
two started ``Coverage`` objects, the marker stops only the newer one, and coverage
then resumes the older one's tracer (a ``no_cover`` test ran traced, measured).  So
:func:`untraced` stops every started ``Coverage`` object and restarts them in the order
they were started; their data is kept, so what runs after the block in the test's own
frames is measured as usual.  A function that is running while the block runs (a
capver call that the block sits inside) stays untraced after the block until it
returns: a frame is traced from the call that started it, so one that started or ran
on while tracing was off is not picked up again (measured: three lines of
capver/bench/introspection.py were lost that way).  So call it from test code, around
the third-party or repeated work itself."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


@contextlib.contextmanager
def untraced() -> Iterator[None]:
    """No coverage tracing inside the block (nothing to do when coverage is not
    installed or not measuring)."""
    try:
        from coverage import Coverage
    except ImportError:  # the dev extra is missing: nothing traces
        yield
        return
    paused: list[Coverage] = []
    while (cov := Coverage.current()) is not None:
        cov.stop()
        paused.append(cov)
    try:
        yield
    finally:
        for cov in reversed(paused):
            cov.start()


def untraced_unless(traced: bool) -> contextlib.AbstractContextManager[None]:
    """:func:`untraced`, or nothing when ``traced``: the repetitions of a statistical
    test after the first (``untraced_unless(seed == 0)``), whose lines the first
    measures."""
    return contextlib.nullcontext() if traced else untraced()

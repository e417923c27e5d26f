"""How many examples a hypothesis property that sets its own ``max_examples`` tries, by
profile: a test writes ``scaled(n)`` with ``n`` chosen for a run of
:data:`REFERENCE_EXAMPLES` examples per property, and gets 3/5 of it in the ``ci``
profile (what ``.ci/run`` sets), 2/5 in ``dev``, the default (at least 3, or ``n`` when
smaller, in both), and 15 times it in ``thorough`` (tests/conftest.py registers the
profiles and loads one before any test module is imported)."""

from __future__ import annotations

from hypothesis import settings

REFERENCE_EXAMPLES = 20
"""The examples per property the ``n`` of :func:`scaled` is chosen for (the ``ci``
profile's count until the suite had to fit in ten minutes under coverage)."""


def scaled(n: int) -> int:
    factor = settings.default.max_examples / REFERENCE_EXAMPLES
    if factor >= 1:
        return round(n * factor)
    return max(min(n, 3), round(n * factor))

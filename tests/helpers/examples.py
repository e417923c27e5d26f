"""How many examples a hypothesis property that sets its own ``max_examples`` tries, by
profile: ``scaled(n)`` is ``n`` in the ``ci`` profile (what ``.ci/run`` sets, and what
``n`` was chosen for), 2/5 of it (at least 3, or ``n`` when smaller) in ``dev``, the
default, and 15 times it in ``thorough`` (tests/conftest.py registers the profiles and
loads one before any test module is imported)."""

from __future__ import annotations

from hypothesis import settings

CI_EXAMPLES = 20
"""``max_examples`` of the ``ci`` profile, the reference ``n`` is scaled from."""


def scaled(n: int) -> int:
    factor = settings.default.max_examples / CI_EXAMPLES
    if factor >= 1:
        return round(n * factor)
    return max(min(n, 3), round(n * factor))

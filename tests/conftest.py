"""pytest configuration shared by capver's tests: hypothesis profiles.

The default profile keeps ``max_examples`` modest so the whole suite runs in about a
minute on two cores; ``CAPVER_HYPOTHESIS_PROFILE=thorough`` searches harder.  There
is no deadline because examples build BDD managers and call z3, whose first call
in a process is much slower than the rest.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings

# corpus.py lives next to this file; make ``import corpus`` work however pytest is invoked.
sys.path.insert(0, str(Path(__file__).parent))

_COMMON: dict[str, Any] = {
    "deadline": None,
    "database": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}

settings.register_profile("capver", max_examples=20, **_COMMON)
settings.register_profile("thorough", max_examples=300, **_COMMON)
settings.load_profile(os.environ.get("CAPVER_HYPOTHESIS_PROFILE", "capver"))

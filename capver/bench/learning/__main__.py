"""``python -m capver.bench.learning``: the same as ``capver bench learning``."""

import sys

from capver.bench.learning.cli import main

sys.exit(main())

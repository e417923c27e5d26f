"""``python -m capver``: the same command line as the ``capver`` script."""

import sys

from capver.cli import main

sys.exit(main())

"""capver's test suite.  A regular package, so that ``tests.helpers`` is this
directory's and not the ``tests`` package some third-party wheels install into
site-packages (opensimplex ships one)."""

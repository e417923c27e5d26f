"""Package data of capver (bundled PDDL domains of the paper's section 4.2
experiments); a package so that ``importlib.resources.files("capver.data")``
finds it."""

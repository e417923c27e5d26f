"""Rule conditions over a vocabulary (section 3.1), between :mod:`capver.core` and :mod:`capver.model`.

- ``bdd``: binary decision diagrams (backends, cubes, irredundant covers).
- ``smt``: pysmt/z3 formulas over one Boolean symbol per atom.
- ``condition``: conditions kept both as a BDD and as an SMT formula.
"""

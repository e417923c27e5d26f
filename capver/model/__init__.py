"""Model types (paper, section 2's capability model).

- ``capability_model``: rules, capability models and compound models h†.
"""

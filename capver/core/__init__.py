"""The bottom data layer: what every other layer speaks about (paper, section 2).

- ``vocabulary``: typed objects, predicates and ground atoms (V = ⟨P, O⟩), atom ↔ bit position.
- ``state``: symbolic states as ``int`` bitsets, effects, capabilities, observed effects.
- ``dataset``: the capability-transition dataset D and its counts.
- ``properties``: the property syntax ``capver verify`` checks (state and path formulas).
- ``setting_args``: the arguments that name an assessment setting (what ``run.json`` stores).
"""

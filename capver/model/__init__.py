"""Model types (paper, section 2's capability model; section 3.1's Occam model h̃).

- ``capability_model``: rules, capability models and compound models h†.
- ``occam``: h̃ and, per capability, the minimiser choice that made its conditions.
- ``lifted``: schemas, lifted vocabularies and capabilities, h̃ lifted over objects and grounding by substitution.
"""

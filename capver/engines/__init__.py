"""The algorithms (layer 5): learning, the lattice bounds, planning on models and model checking.

- ``lattice``: the lattice bounds h∧ ⪯ h⋆ ⪯ h∨ built from a dataset (section 3.1, Theorems 1 and 3).
- ``occam``: the Occam model h̃ inside the lattice h∧ ⪯ h̃ ⪯ h∨ (minimisers in ``MINIMISERS``).
- ``lifting``: lifting the Occam model h̃ over objects.
- ``learning``: the MCQS learning loop (sections 3.2–3.3; defaults in ``LEARN_DEFAULTS``).
- ``mcqs/``: Monte Carlo Query Synthesis, one module per method and the registry ``QUERY_METHODS``.
- ``mcts``: the one UCT engine shared by MCQS-E, MCQS-S and the MCTS planner baselines.
- ``directed``: property-directed learning: the user's properties' tiers tracked while MCQS learns.
- ``discovery``: capability discovery (section 3, opening paragraphs).
- ``execution``: executing a capability and turning the trajectory into a transition (section 3.3).
- ``evaluation``: evaluating learned models (section 2's VD, section 4.2's methodology).
- ``eval_collection``: the evaluation dataset D′ (section 4.2) collected in chunks on an executor.
- ``executors``: executors for the embarrassingly parallel work (local, threads, ray: ``EXECUTORS``).
- ``findings``: what the learned models reveal about an agent (section 4.2's E2).
- ``classical_planning``: pyperplan's searches on a model's all-outcomes determinisation.
- ``verification/``: model checking of capability models and the verdicts it licenses about the agent.
"""

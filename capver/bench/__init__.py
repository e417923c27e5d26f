"""The benchmarks of ``capver bench NAME`` (layer 8), whose output docs/results.md records.

- ``cli``: the command line every benchmark module shares (parser, ``--quick``).
- ``timing``: the one timing helper (wall clock and process CPU time).
- ``markdown``: the one Markdown table writer of the benchmarks' ``table.md`` files.
- ``foundation``: the lattice bounds, Pr_h and the z3 lattice-order check against targets.
- ``learning/``: learning efficiency of MCQS-E, MCQS-S and Random Query (E1, E4), and QACE.
- ``speed``: CPU milliseconds per simulator step of the learning loop, per method and phase.
- ``dprime``: why 1 − VD_s cannot rank the methods on the LAO* settings (a full-size D′).
- ``occam``: the Occam model h̃ beside the pessimistic model h∧.
- ``modelfiles``: writing and reading back h∧ and h∨ in the model-file form.
- ``verify``: model checking a learned model against the checker's time targets.
- ``verify_scale``: qualitative model checking at the scale of the paper's agents (``--scale``).
- ``quantitative``: quantitative model checking (Pmax / Pmin of F φ) per engine.
- ``verdicts``: are the tiered agent verdicts of ``capver verify`` right (against a known truth)?
- ``decide``: property-directed learning: steps until a property's verdict is decided.
- ``agents``: capability executions per second of the LAO* agent, Θ = 1 and Θ = ∞.
- ``environment``: what a capability execution costs in an environment, and how coarse α is.
- ``minigrid``: the MiniGrid world: snapshot costs and executions per second of both agents.
- ``crafter``: the Crafter setting: snapshot costs, executions per second, α's aggregation.
- ``overcooked``: the Overcooked-like kitchen: snapshot costs, executions per second, aggregation.
- ``introspection``: the runtime comparisons of the model-introspection paper (Figures 2 and 4).
"""

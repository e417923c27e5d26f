"""The sub-commands of ``capver`` (layer 8), one module each; ``capver.cli`` dispatches to them.

- ``learn``: ``capver learn``: assess an agent with MCQS-E, MCQS-S or Random Query.
- ``evaluate``: ``capver eval RUN``: score a run by section 4.2's methodology.
- ``build``: ``capver build``: the lattice bounds h∧ / h∨ of a transition dataset.
- ``check``: ``capver check``: z3 / BDD checks between model files (⪯, ≡, equal Pr_h).
- ``certify``: ``capver certify RUN...``: re-check the certificates of runs.
- ``verify``: ``capver verify``: check properties of an agent's capabilities.
- ``export``: ``capver export``: write a model as files planners and PPDDL tools read.
- ``plan``: ``capver plan``: plan with a model's capabilities towards a goal.
- ``run_agent``: ``capver run``: execute a few capabilities of one agent and show the transitions.
- ``plot``: ``capver plot RUN...``: the learning curves of several runs in one figure.
- ``report``: ``capver report RUN``: one static HTML page for a run.
- ``bench``: ``capver bench NAME``: the benchmark commands.
- ``argtypes``: argument types shared by the sub-commands.
- ``progress``: what a long command shows while it runs.
"""

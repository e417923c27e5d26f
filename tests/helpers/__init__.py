"""Helpers shared by capver's tests, imported as ``from tests.helpers.cli import capver``
(pytest puts the repository root on ``sys.path``: ``pythonpath`` in pyproject.toml).

* ``cli`` - ``capver ARGV`` in a subprocess, as a user types it.
* ``paths`` - ``ROOT``, the repository root, for tests in any folder.
* ``corpus`` - the example corpus, hypothesis strategies and brute-force references
  (section 2's definitions, section 3.1's lattice).
* ``plado_reader`` - a PPDDL export as plado reads it.
* ``llm_server`` - a local OpenAI-compatible chat-completions server process for the
  LLM agents' tests (also run as a script: ``python tests/helpers/llm_server.py``).
"""

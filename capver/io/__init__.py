"""Reading and writing files, and presentation (layer 6).

- ``dsl/``: the capability-model language: read and write compound models h† as text.
- ``dataset_file``: append-only persistence of the capability-transition dataset D.
- ``run_file``: ``run.json``, the manifest of a ``capver learn`` run.
- ``run_dir``: a ``capver learn`` run directory as one object (``Run``) and ``save``.
- ``certificate``: certificates of learned models: z3 verdicts bound to the model files' bytes.
- ``curves``: learning-curve files (``curve.csv``) and their plot.
- ``literal_text``: the one reader of atoms, literals, states and goals as users write them.
- ``properties_text``: the reader of the property language of ``capver verify``.
- ``property_status``: a property-directed run's ``properties.props`` and ``properties.json``.
- ``verdicts_file``: ``verdicts.json``, the verdicts ``capver verify RUN --save`` printed.
- ``explain``: a learned model in plain words (rule comments, ``report.txt``, the HTML report).
- ``html_report``: one self-contained HTML page for a ``capver learn`` run (``capver report``).
- ``ppddl_export/``: export a compound model as files that PDDL and PPDDL tools read.
- ``atomic``: whole-file writes that a kill cannot tear.
"""

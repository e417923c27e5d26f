"""``verdicts.json`` of a run: the verdicts ``capver verify RUN --save`` printed (its
``--json`` records, one per property), which ``capver report`` shows; each is a
:class:`~capver.engines.verification.verdict.VerdictRecord`, written and read back by
that one type.

The file says it is capver's (``"format": "capver-verdicts"``): a later ``--save``
replaces such a file, and refuses any other file of that name, which someone else
put there and may still want."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from capver.engines.verification.verdict import VerdictRecord
from capver.errors import RunFileError, UsageError
from capver.io.atomic import replace_text

NAME = "verdicts.json"
FORMAT = "capver-verdicts"
VERSION = 1


def check_writable(directory: Path) -> Path:
    """The file ``--save`` writes in ``directory``; a :class:`UsageError` when a file
    capver did not write is there.  Called before any property is checked, so a
    refusal costs nothing."""
    path = directory / NAME
    if (path.exists() or path.is_symlink()) and not _ours(path):
        raise UsageError(
            f'--save: {path} exists and capver did not write it (no "format": "{FORMAT}"); '
            "capver does not overwrite files it did not create: move it away or remove it"
        )
    return path


def _ours(path: Path) -> bool:
    """A regular file whose JSON says it is capver's, whatever its version (a newer
    capver's file is still capver's to replace)."""
    if path.is_symlink() or not path.is_file():
        return False
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    return isinstance(data, dict) and data.get("format") == FORMAT


def write(directory: Path, verdicts: Sequence[VerdictRecord]) -> Path:
    """Replace ``directory/verdicts.json`` with ``verdicts`` (refused as
    :func:`check_writable` says)."""
    path = check_writable(directory)
    doc = {"format": FORMAT, "version": VERSION, "verdicts": [v.to_json() for v in verdicts]}
    replace_text(path, json.dumps(doc, ensure_ascii=False, indent=1) + "\n")
    return path


def records(data: object, source: str) -> tuple[VerdictRecord, ...]:
    """The verdict records of a parsed ``verdicts.json``; a :class:`RunFileError`
    naming ``source`` when it is not one capver wrote."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        found = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise RunFileError(f"{source}: not a capver verdicts file (format {found!r}, expected {FORMAT!r})")
    if data.get("version") != VERSION:
        raise RunFileError(f"{source}: verdicts file version {data.get('version')!r}; this capver reads {VERSION}")
    rows = data.get("verdicts")
    if not isinstance(rows, list):
        raise RunFileError(f'{source}: "verdicts" is not a list of objects')
    return tuple(VerdictRecord.from_json(r, f"{source}, verdict {k}") for k, r in enumerate(rows, 1))

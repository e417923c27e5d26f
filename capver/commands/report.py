"""``capver report RUN``: one static HTML page for a ``capver learn`` run — the
setting, the last checkpoint's numbers, the learning curve, each capability of h∧
with its rules and success probabilities, the certificate and the property verdicts
(``verdicts.json``, which ``capver verify RUN --save`` writes) when the run has them,
and links to the run's files.

The page (default ``RUN/report.html``) is self-contained: it can be opened from disk
with no server and fetches nothing.  Like every command, it never overwrites a file
it did not create unless given ``--force``; a page it wrote (it carries
``<meta name="generator" content="capver report">``) is replaced, so running the
command again after ``capver learn --resume`` or ``capver verify --save`` refreshes it.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import urllib.parse
from pathlib import Path

from capver.commands.argtypes import refuse_to_overwrite
from capver.errors import RunFileError
from capver.io import run_dir, verdicts_file
from capver.io.curves import read_curves
from capver.io.explain import read_findings
from capver.io.html_report import JsonFile, ReportInputs, curve_points, is_report_page, render
from capver.model.kinds import ModelKind

DEFAULT_NAME = "report.html"
CERTIFICATE = run_dir.CERTIFICATE
VERDICTS = verdicts_file.NAME  # written by capver verify RUN --save
# Linked from the page in this order; those the run lacks are listed as not present.
LINKED = (
    *(k.file for k in ModelKind),
    run_dir.REPORT_TXT,
    run_dir.DATASET,
    run_dir.EVAL_DATASET,
    run_dir.CURVE_CSV,
    run_dir.CURVE_PNG,
    run_dir.MANIFEST,
    CERTIFICATE,
    VERDICTS,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run", type=Path, metavar="RUN_DIR", help="the --out directory of capver learn")
    parser.add_argument(
        "--out",
        type=Path,
        metavar="FILE.html",
        help=f"the HTML file to write: a new file or a page capver report wrote, which is "
        f"replaced (default: RUN_DIR/{DEFAULT_NAME})",
    )
    parser.add_argument("--force", action="store_true", help="overwrite --out even if capver did not write it")


def _json_file(path: Path) -> JsonFile | None:
    """An optional JSON file of the run: None when absent; a broken one is shown on
    the page as unreadable rather than stopping the report."""
    if not path.exists():
        return None
    try:
        return JsonFile(path.name, json.loads(path.read_text(encoding="utf-8")))
    except json.JSONDecodeError as e:
        return JsonFile(path.name, error=f"line {e.lineno} column {e.colno}: {e.msg}")
    except (OSError, UnicodeDecodeError) as e:
        return JsonFile(path.name, error=str(e))


def _href(target: Path, page: Path) -> str:
    """A relative URL from the page to ``target``, so the page and the run directory
    can be moved together."""
    rel = os.path.relpath(target.resolve(), page.resolve().parent)
    return urllib.parse.quote(Path(rel).as_posix())


def _write(path: Path, text: str) -> None:
    """Write UTF-8 whatever the locale, through a new temporary file beside ``path``
    (mkstemp never reuses an existing name, so no other file is touched) that then
    replaces it: a kill leaves the old page or the new one."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.chmod(tmp, 0o644)  # mkstemp makes it 0600; a report is meant to be shared
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _ours(path: Path) -> bool:
    """A regular file that starts like a page ``capver report`` wrote."""
    if not path.is_file():
        return False
    try:
        with path.open("rb") as f:
            head = f.read(4096).decode("utf-8", errors="replace")
    except OSError:
        return False
    return is_report_page(head)


def run(args: argparse.Namespace) -> int:
    directory: Path = args.run
    run = run_dir.Run.open(directory, require=(run_dir.MANIFEST,))
    manifest = run.manifest  # a directory capver learn did not write is refused here
    out: Path = args.out if args.out is not None else directory / DEFAULT_NAME
    refuse_to_overwrite(out, "--out", args.force, ours=_ours)
    if out.is_dir():
        raise RunFileError(f"--out {out}: is a directory; expected the HTML file to write")

    h_and = run.h_and if run.has(ModelKind.AND.file) else None
    curve_path = run.file(run_dir.CURVE_CSV)
    curve = curve_points(read_curves([curve_path]), str(curve_path)) if curve_path.exists() else []
    links = {name: _href(directory / name, out) if (directory / name).exists() else None for name in LINKED}
    report_txt = run.file(run_dir.REPORT_TXT)
    findings = read_findings(report_txt.read_text(encoding="utf-8")) if report_txt.exists() else None
    page = render(
        ReportInputs(
            manifest=manifest,
            h_and=h_and,
            curve=curve,
            certificate=_json_file(directory / CERTIFICATE),
            verdicts=_json_file(directory / VERDICTS),
            links=links,
            findings=findings,
        )
    )
    _write(out, page)
    n = len(h_and) if h_and is not None else 0
    print(f"wrote {out} ({n} capabilities, {len(curve)} checkpoints)")
    return 0

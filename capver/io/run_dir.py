"""A ``capver learn`` run directory as one object: :class:`Run` opens the directory
``capver learn --out`` writes (or :meth:`capver.api.LearnResult.save`), reads its
parts on first use, and :func:`save` writes the parts a learned result has.

The directory holds the manifest ``run.json`` (:mod:`capver.io.run_file`), the data
``dataset.jsonl`` and the evaluation dataset D′ ``eval.jsonl`` (section 4.2), the
lattice bounds h∧ ⪯ h∨ of section 3.1 (``h_and.capm``, ``h_or.capm``) and the Occam
model h̃ between them (``h_tilde.capm``), the certificate of Theorem 3's lattice
(``certificate.json``), the learning curve, the properties of a property-directed
run and the verdicts of ``capver verify --save``.  Every command that reads a run
goes through :class:`Run`, so each file name is defined here once and a missing
file is reported the same way everywhere: the directory, the file, and what
wrote it.

:func:`save` keeps the project's rule that no file capver did not create is
overwritten: it writes into a new or empty directory, or into a run capver wrote
(one with a valid ``run.json``), and nowhere else.
"""

from __future__ import annotations

import hashlib
import shlex
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from capver.errors import RunFileError
from capver.io import run_file
from capver.io.run_file import RunManifest
from capver.model import kinds
from capver.model.kinds import ModelKind

if TYPE_CHECKING:
    from capver.core.dataset import TransitionDataset
    from capver.core.properties import Property
    from capver.core.state import State
    from capver.core.vocabulary import Vocabulary
    from capver.io.dsl import ParsedModel
    from capver.model.capability_model import CompoundModel
    from capver.model.lifted import LiftedOccam

MANIFEST = run_file.NAME
DATASET = "dataset.jsonl"
EVAL_DATASET = "eval.jsonl"
CERTIFICATE = "certificate.json"  # the same name as capver.io.certificate.NAME (checked by the tests)
CURVE_CSV = "curve.csv"
CURVE_PNG = "curve.png"
REPORT_TXT = "report.txt"
EVALUATION = "evaluation.json"  # written by capver eval
PROPERTIES = "properties.props"  # capver.io.property_status.PROPS
PROPERTY_STATUS = "properties.json"  # capver.io.property_status.NAME
VERDICTS = "verdicts.json"  # capver.io.verdicts_file.NAME
SCHEDULED = "scheduled.jsonl"
"""The executions of ``capver verify --scheduler``: the agent's own runs of a fixed
scheduler, kept beside D (not in it: the models were built from D)."""

BOUNDS = tuple(k.file for k in kinds.BOUNDS)
"""What a directory needs to be a run to model-check: the lattice bounds."""

_WHAT = {
    MANIFEST: "the manifest capver learn writes first",
    DATASET: "the data, written by capver learn and LearnResult.save",
    EVAL_DATASET: "the evaluation dataset D′, written by capver learn",
    **{k.file: k.description for k in ModelKind},
}


def _missing(directory: Path, name: str) -> RunFileError:
    what = _WHAT.get(name, "")
    return RunFileError(
        f"{directory / name}: missing{f' ({what})' if what else ''}; the directory {directory} "
        "is not a run with it: expected the --out directory of capver learn (or of LearnResult.save)"
    )


@dataclass(frozen=True, slots=True)
class Run:
    """An opened run directory.  The parts are read on first use and kept: the
    models share one logic context (z3 and the BDDs compare formulas of one
    context).  The setting the manifest names is rebuilt by
    :func:`capver.settings.assessment_of` (a layer above files)."""

    path: Path
    _cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def open(cls, path: str | Path, *, require: Iterable[str] = BOUNDS) -> Run:
        """The run in ``path``; a :class:`RunFileError` naming the directory and the
        first missing file of ``require`` (file names of this module; by default the
        bounds h∧ and h∨, which every model-checking command needs)."""
        directory = Path(path)
        if not directory.is_dir():
            what = "not a directory" if directory.exists() else "no such directory"
            raise RunFileError(f"{directory}: {what}; expected the --out directory of capver learn")
        for name in require:
            if not (directory / name).is_file():
                raise _missing(directory, name)
        return cls(directory)

    def file(self, name: str) -> Path:
        return self.path / name

    def has(self, name: str) -> bool:
        return (self.path / name).is_file()

    # -- the manifest and the setting ---------------------------------------------

    @property
    def manifest(self) -> RunManifest:
        """``run.json``: the agent, setting, method and budget of the run."""
        if "manifest" not in self._cache:
            self._cache["manifest"] = run_file.read(self.path)
        manifest: RunManifest = self._cache["manifest"]
        return manifest

    # -- the models --------------------------------------------------------------

    def parsed(self, kind: str | ModelKind) -> ParsedModel:
        """The model file of ``kind`` (any spelling :meth:`ModelKind.parse` reads:
        ``and``, ``h_and``, ``h∧`` ...) as parsed, in the context of h∧ (the first
        model)."""
        from capver.io import dsl

        which = ModelKind.parse(kind, what="kind")
        key = f"model:{which.value}"
        if key not in self._cache:
            self.check_fresh()
            name = which.file
            if not self.has(name):
                raise _missing(self.path, name)
            if which is ModelKind.AND:
                self._cache[key] = dsl.read(self.path / name)
            else:
                first = self.parsed(ModelKind.AND)
                self._cache[key] = dsl.read(
                    self.path / name, ctx=first.ctx, ctx_source=f"the first model ({self.path / ModelKind.AND.file})"
                )
        parsed: ParsedModel = self._cache[key]
        return parsed

    def model(self, kind: str | ModelKind) -> CompoundModel:
        return self.parsed(kind).model

    def check_fresh(self) -> None:
        """Refuse a run whose models are older than its data (a learn killed after
        recording executions and before writing its models, or a dataset changed by
        hand): a verdict from them would not be about the data beside them."""
        stamp = run_file.models_from(self.path)
        if stamp is None or "fresh" in self._cache:
            return
        now = dataset_stamp(self.path)
        if now is not None and now != stamp:
            raise RunFileError(
                f"{self.path}: its models were written from {stamp.get('bytes')} bytes of {DATASET}, which now "
                f"holds {now['bytes']}: they do not describe the data beside them; rebuild them with "
                f"{rebuild_command(self)}"
            )
        self._cache["fresh"] = True

    @property
    def h_and(self) -> CompoundModel:
        return self.model("and")

    @property
    def h_or(self) -> CompoundModel:
        return self.model("or")

    @property
    def h_tilde(self) -> CompoundModel:
        return self.model("tilde")

    # -- the data ----------------------------------------------------------------

    def dataset(self, *, vocab: Vocabulary | None = None, torn: list[str] | None = None) -> TransitionDataset:
        """``dataset.jsonl`` in ``vocab`` (that very object; by default the models'
        vocabulary when the run has them, else the file's own).  A torn last line (a killed run) is not hidden: its
        description is appended to ``torn`` when given; the records before it are
        returned either way."""
        return self._dataset(DATASET, vocab, torn)

    def eval_dataset(self, *, vocab: Vocabulary | None = None, torn: list[str] | None = None) -> TransitionDataset:
        """``eval.jsonl``, the evaluation dataset D′ of section 4.2."""
        return self._dataset(EVAL_DATASET, vocab, torn)

    def _dataset(self, name: str, vocab: Vocabulary | None, torn: list[str] | None) -> TransitionDataset:
        from capver.io import dataset_file

        if vocab is None and self.has(ModelKind.AND.file):
            vocab = self.parsed("and").vocabulary
        key = f"data:{name}:{id(vocab)}"
        if key not in self._cache:
            if not self.has(name):
                raise _missing(self.path, name)
            with warnings.catch_warnings():
                # Reported through ``torn`` by the caller, in its own words.
                warnings.simplefilter("ignore", dataset_file.TornRecordWarning)
                self._cache[key] = dataset_file.load(self.path / name, vocab=vocab)
        loaded = self._cache[key]
        if torn is not None and loaded.torn is not None:
            torn.append(f"{loaded.torn.describe(self.path / name)}; using the {loaded.records} records before it")
        data: TransitionDataset = loaded.dataset
        return data

    # -- the properties -----------------------------------------------------------

    @property
    def properties(self) -> tuple[Property, ...]:
        """The properties of a property-directed run (``properties.props``), parsed
        over h∧'s vocabulary and capabilities; () when the run has none."""
        from capver.io.properties_text import parse_properties

        if not self.has(PROPERTIES):
            return ()
        text = (self.path / PROPERTIES).read_text(encoding="utf-8")
        h = self.h_and
        return tuple(parse_properties(text, h.vocabulary, tuple(h), filename=str(self.path / PROPERTIES)))


def rebuild_command(run: Run) -> str:
    """The command that writes a run's models anew from its data: ``capver learn
    --resume`` with the run's own options (its budget reached, it learns nothing more),
    or, for a setting made in Python, ``result.save`` again."""
    try:
        m = run.manifest
    except RunFileError:
        return "capver build (the lattice bounds of a dataset)"
    if m.custom:
        return "result.save(...) in Python (the run's setting was made there)"
    return " ".join(
        ["capver learn", *m.learn_options(), "--method", m.method, "--out", shlex.quote(str(run.path)), "--resume"]
    )


def check_target(directory: Path, *, what: str = "save") -> None:
    """Refuse a directory :func:`save` may not write into, before anything is
    written: an existing file, or a non-empty directory that is not a run capver
    wrote (one with a valid ``run.json``)."""
    if directory.exists() and not directory.is_dir():
        raise RunFileError(f"{what}: {directory} exists and is not a directory; expected a directory for the run")
    if directory.is_dir() and any(directory.iterdir()):
        if not (directory / MANIFEST).is_file():
            names = sorted(p.name for p in directory.iterdir())
            shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
            raise RunFileError(
                f"{what}: {directory} is not empty ({shown}) and is not a capver learn run; "
                "capver does not overwrite files it did not create: choose a new or empty directory"
            )
        run_file.read(directory)  # a broken run.json is not capver's run to replace


def save(
    directory: str | Path,
    *,
    h_and: CompoundModel,
    h_or: CompoundModel,
    tilde: LiftedOccam | CompoundModel | None,
    data: TransitionDataset | None = None,
    manifest: RunManifest | None = None,
    init: State | None = None,
    properties_text: str | None = None,
) -> Run:
    """Write the models (h∧, h∨ and h̃, lifted over objects when ``tilde`` is a
    :class:`~capver.model.lifted.LiftedOccam`) with the initial state ``init``,
    the data (when given and the run has no ``dataset.jsonl`` yet: ``capver learn``
    appends to its own as it goes), the manifest and the properties; the
    certificate is :func:`capver.io.certificate.certify`'s to write (it reads runs
    through :class:`Run`).  Refused as :func:`check_target` says.  Returns the run,
    opened."""
    from capver.io.atomic import replace_text

    path = Path(directory)
    check_target(path)
    path.mkdir(parents=True, exist_ok=True)
    if manifest is not None:
        run_file.write(path, manifest)
    if data is not None and not (path / DATASET).exists():
        write_dataset(path / DATASET, data)
    if properties_text is not None:
        replace_text(path / PROPERTIES, properties_text)
    write_models(path, h_and, h_or, tilde, init)
    return Run.open(path)


def write_models(
    path: Path,
    h_and: CompoundModel,
    h_or: CompoundModel,
    tilde: LiftedOccam | CompoundModel | None,
    init: State | None,
) -> None:
    """The run's model files, each under its name (:attr:`ModelKind.dsl`) and starting
    in ``init``: h∧, h∨ and h̃ (lifted over objects when ``tilde`` is a
    :class:`~capver.model.lifted.LiftedOccam`; none when it is None)."""
    from capver.io import dsl
    from capver.model.lifted import LiftedOccam

    and_, or_, tilde_ = ModelKind.AND, ModelKind.OR, ModelKind.TILDE
    dsl.write(h_and, path / and_.file, name=and_.dsl, init=init)
    dsl.write(h_or, path / or_.file, name=or_.dsl, init=init)
    if isinstance(tilde, LiftedOccam):
        dsl.write_lifted(tilde, path / tilde_.file, name=tilde_.dsl, init=init)
    elif tilde is not None:
        dsl.write(tilde, path / tilde_.file, name=tilde_.dsl, init=init)
    stamp = dataset_stamp(path)
    if stamp is not None:
        run_file.stamp_models(path, stamp)


def dataset_stamp(path: Path) -> dict[str, object] | None:
    """What a run's models are built from: the size and SHA-256 of its dataset.jsonl
    (None without one).  The file only grows, so any execution recorded after the
    models were written changes it."""
    data_file = path / DATASET
    if not data_file.is_file():
        return None
    data = data_file.read_bytes()
    return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def write_dataset(path: Path, data: TransitionDataset, *, append: bool = False) -> None:
    """A dataset file holding ``data``: its capabilities, then each execution in the
    order it was added (the lattice reads the counts, the confidence bounds also the
    order in which each pair's outcomes came), then the failed executions.  With
    ``append`` they go after what the file already holds (it is created if missing)."""
    from capver.io import dataset_file

    with dataset_file.DatasetWriter.open(path, data.vocab, resume=append) as w:
        for c in data.capabilities:
            w.write_capability(c)
        for t, n, steps in data.additions():
            for k in range(n):
                w.write(t, steps=steps if k == 0 else 0)
        for t, steps, reason in data.failed():
            w.write(t, steps=steps, meta={"failure": reason})

"""Append-only persistence of the capability-transition dataset D (section 2,
Definition "capability-transition dataset"; MCQS, section 4, grows D one execution
at a time, so D must survive the learner being killed).

File format (JSON Lines, UTF-8, one JSON object per line, ``\\n``-terminated):

* line 1, the header: ``{"format": "capver-dataset", "version": 1, "vocabulary": …}``
  with the vocabulary as :meth:`Vocabulary.to_json` writes it;
* capability declarations: ``{"capability": name, "intent": [[atom, positive], …]}``;
* transitions: ``{"s": hex, "c": name, "s2": hex, "steps": n}`` plus an optional
  ``"meta"`` object; states are the hexadecimal spelling of the bitset.  A record
  whose meta has ``"failure"`` is a failed execution: it is read back as a failure
  (:meth:`TransitionDataset.add_failure`), not as a transition.

A record is one ``write(2)`` of the whole line including its newline, so a writer
killed at any instant leaves every earlier record intact and at most one partial
("torn") last line.  :func:`load` reports a torn last line instead of failing;
:meth:`DatasetWriter.open` with ``resume=True`` cuts it off so that appending
continues on a fresh line.  Anything else that does not parse is corruption and
raises :class:`DatasetError` naming ``file:line:column`` and what was expected.
"""

from __future__ import annotations

import json
import os
import re
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any, BinaryIO, Self

from capver.core.dataset import TransitionDataset
from capver.core.state import Capability, Transition
from capver.core.vocabulary import Atom, Literal, Vocabulary
from capver.errors import DatasetError, TornRecordError, VocabularyError

try:  # advisory locking keeps two writers from interleaving appends (POSIX only)
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

FORMAT = "capver-dataset"
VERSION = 1

PathLike = str | os.PathLike[str]

_HEX = re.compile(r"[0-9a-fA-F]+")
_CAPABILITY_KEYS = frozenset({"capability", "intent"})
_TRANSITION_KEYS = frozenset({"s", "c", "s2", "steps", "meta"})
_CONTEXT_WIDTH = 72


class TornRecordWarning(UserWarning):
    """Issued when a torn last line is found (and, on resume, cut off)."""


@dataclass(frozen=True, slots=True)
class TornLine:
    """An unterminated, unparsable last line: a record whose write was cut off."""

    line: int  # 1-based line number
    offset: int  # byte offset of the line's first byte (everything before is intact)
    length: int  # bytes in the torn tail
    preview: str  # the start of the torn bytes, escaped
    reason: str  # why it does not parse

    def describe(self, path: PathLike) -> str:
        return (
            f"{os.fspath(path)}:{self.line}: torn last line ({self.length} bytes, no newline, "
            f"{self.reason}): {self.preview}"
        )


@dataclass(frozen=True, slots=True)
class LoadResult:
    """What :func:`load` read back.

    ``records`` counts the complete records after the header (capability declarations
    and transitions); ``meta`` pairs the 0-based ordinal of each transition that had
    metadata with that metadata."""

    dataset: TransitionDataset
    records: int
    torn: TornLine | None
    meta: tuple[tuple[int, Mapping[str, Any]], ...] = ()


@dataclass(frozen=True, slots=True)
class _Scan:
    """A load plus what a resuming writer needs to know about the file's tail."""

    result: LoadResult
    end: int  # byte offset just after the last complete record
    needs_newline: bool  # the last complete record has no terminating newline


class _HeaderTorn(Exception):
    """Internal: the file is empty or its header line was cut off."""

    def __init__(self, torn: TornLine | None) -> None:
        super().__init__()
        self.torn = torn


# -- reading ------------------------------------------------------------------------------


def load(path: PathLike, *, vocab: Vocabulary | None = None, strict: bool = False) -> LoadResult:
    """Read a dataset file back.

    A torn last line is returned in :attr:`LoadResult.torn` (and, with ``strict``,
    raised as :class:`TornRecordError`); every record before it is loaded.  With
    ``vocab`` the header's vocabulary must equal it and the dataset uses that very
    object.  Any other malformed content raises :class:`DatasetError`."""
    try:
        scan = _scan(path, vocab)
    except _HeaderTorn as exc:
        where = f"{os.fspath(path)}:1"
        what = "the file is empty" if exc.torn is None else f"the header line is torn ({exc.torn.reason})"
        raise TornRecordError(
            f"{where}: {what}; expected a header line "
            f'{{"format": "{FORMAT}", "version": {VERSION}, "vocabulary": ...}}',
            path=os.fspath(path),
            line=1,
            recovered=0,
        ) from None
    result = scan.result
    if strict and result.torn is not None:
        raise TornRecordError(
            result.torn.describe(path) + f"; the {result.records} records before it were intact",
            path=os.fspath(path),
            line=result.torn.line,
            recovered=result.records,
        )
    return result


def _scan(path: PathLike, vocab: Vocabulary | None) -> _Scan:
    name = os.fspath(path)
    try:
        with open(path, "rb") as f:
            return _scan_open(name, f, vocab)
    except FileNotFoundError:
        raise DatasetError(f"{name}: no such dataset file") from None
    except IsADirectoryError:
        raise DatasetError(f"{name}: is a directory, expected a dataset file") from None
    except PermissionError as exc:
        raise DatasetError(f"{name}: cannot read dataset file: {exc.strerror}") from None


def _scan_open(name: str, f: BinaryIO, vocab: Vocabulary | None) -> _Scan:
    header_raw = f.readline()
    if not header_raw:
        raise _HeaderTorn(None)
    header = _parse_line(name, 1, header_raw, torn_ok=not header_raw.endswith(b"\n"))
    if isinstance(header, TornLine):
        raise _HeaderTorn(header)
    data = TransitionDataset(_check_header(name, header, header_raw, vocab))
    reader = _RecordReader(name, data)
    offset = len(header_raw)
    lineno = 1
    torn: TornLine | None = None
    needs_newline = not header_raw.endswith(b"\n")
    for raw in f:
        lineno += 1
        obj = _parse_line(name, lineno, raw, torn_ok=not raw.endswith(b"\n"), offset=offset)
        if isinstance(obj, TornLine):
            torn = obj
            break
        reader.record(lineno, _text(raw), obj)
        offset += len(raw)
        needs_newline = not raw.endswith(b"\n")
    result = LoadResult(data, reader.records, torn, tuple(reader.meta))
    return _Scan(result, offset, needs_newline)


def _text(raw: bytes) -> str:
    return raw.decode("utf-8").rstrip("\n")


def _parse_line(name: str, lineno: int, raw: bytes, *, torn_ok: bool, offset: int = 0) -> dict[str, Any] | TornLine:
    """The JSON object on one line; for an unterminated last line that does not parse
    (``torn_ok``), a :class:`TornLine` instead of an error — a record cut off mid-write
    is never valid JSON, because an object is only complete at its closing brace."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if torn_ok:
            return _torn(lineno, offset, raw, "invalid UTF-8 at its end")
        raise _error(name, lineno, exc.start + 1, "invalid UTF-8 byte; expected UTF-8 text", None) from None
    body = text.rstrip("\n")
    if not body.strip():
        if torn_ok:
            return _torn(lineno, offset, raw, "blank")
        raise _error(name, lineno, 1, "empty line; expected a JSON object record", None)
    try:
        obj = json.loads(body)
    except json.JSONDecodeError as exc:
        if torn_ok:
            return _torn(lineno, offset, raw, f"not valid JSON: {exc.msg}")
        raise _error(
            name, lineno, exc.colno, f"invalid JSON ({exc.msg}); expected one JSON object per line", body
        ) from None
    if not isinstance(obj, dict):
        raise _error(name, lineno, 1, f"expected a JSON object, got {type(obj).__name__}", body)
    return obj


def _torn(lineno: int, offset: int, raw: bytes, reason: str) -> TornLine:
    preview = raw[:40].decode("utf-8", errors="backslashreplace")
    if len(raw) > 40:
        preview += "…"
    return TornLine(lineno, offset, len(raw), repr(preview), reason)


def _check_header(name: str, header: dict[str, Any], raw: bytes, vocab: Vocabulary | None) -> Vocabulary:
    text = _text(raw)
    fmt = header.get("format")
    if fmt != FORMAT:
        raise _error(name, 1, _column(text, "format"), f'expected "format": "{FORMAT}", got {fmt!r}', text)
    version = header.get("version")
    if type(version) is not int:
        raise _error(name, 1, _column(text, "version"), f"expected an integer format version, got {version!r}", text)
    if version != VERSION:
        raise _error(
            name,
            1,
            _column(text, "version"),
            f"unsupported format version {version}; this capver reads version {VERSION}",
            text,
        )
    data = header.get("vocabulary")
    if not isinstance(data, dict):
        raise _error(name, 1, _column(text, "vocabulary"), "expected a vocabulary object in the header", text)
    if vocab is not None:
        expected = _vocab_json(vocab)
        if data != expected:
            raise DatasetError(
                f"{name}:1: the file's vocabulary differs from the expected one: {_vocab_difference(data, expected)}"
            )
        return vocab
    try:
        return Vocabulary.from_json(data)
    except VocabularyError as exc:
        raise _error(name, 1, _column(text, "vocabulary"), f"invalid vocabulary: {exc}", text) from None


class _RecordReader:
    """Validates records one by one and folds them into the dataset."""

    def __init__(self, name: str, data: TransitionDataset) -> None:
        self.name = name
        self.data = data
        self.records = 0
        self.transitions = 0
        self.meta: list[tuple[int, Mapping[str, Any]]] = []

    def record(self, lineno: int, text: str, obj: dict[str, Any]) -> None:
        if "capability" in obj:
            self._capability(lineno, text, obj)
        elif "s" in obj:
            self._transition(lineno, text, obj)
        else:
            raise _error(
                self.name,
                lineno,
                1,
                'expected a capability declaration {"capability": ...} or a transition {"s": ..., "c": ..., "s2": ...}',
                text,
            )
        self.records += 1

    def _fail(self, lineno: int, text: str, key: str | None, what: str) -> DatasetError:
        return _error(self.name, lineno, _column(text, key) if key else 1, what, text)

    def _capability(self, lineno: int, text: str, obj: dict[str, Any]) -> None:
        extra = sorted(set(obj) - _CAPABILITY_KEYS)
        if extra:
            raise self._fail(lineno, text, extra[0], f"unexpected key {extra[0]!r} in a capability declaration")
        name = obj["capability"]
        if not isinstance(name, str) or not name:
            raise self._fail(lineno, text, "capability", f"expected a non-empty capability name, got {name!r}")
        intent_raw = obj.get("intent", [])
        if not isinstance(intent_raw, list):
            raise self._fail(lineno, text, "intent", "expected the intent as a list of [atom, positive] pairs")
        intent = []
        for item in intent_raw:
            if not (
                isinstance(item, list) and len(item) == 2 and isinstance(item[0], str) and isinstance(item[1], bool)
            ):
                raise self._fail(lineno, text, "intent", f"expected an [atom, true|false] pair, got {item!r}")
            try:
                atom = Atom.parse(item[0])
                self.data.vocab.index(atom)
            except VocabularyError as exc:
                raise self._fail(lineno, text, "intent", f"invalid intent literal: {exc}") from None
            intent.append(Literal(atom, item[1]))
        try:
            self.data.declare(Capability(name, tuple(intent)))
        except DatasetError as exc:
            raise self._fail(lineno, text, "capability", str(exc)) from None

    def _transition(self, lineno: int, text: str, obj: dict[str, Any]) -> None:
        extra = sorted(set(obj) - _TRANSITION_KEYS)
        if extra:
            raise self._fail(lineno, text, extra[0], f"unexpected key {extra[0]!r} in a transition")
        for key in ("c", "s2"):
            if key not in obj:
                raise self._fail(lineno, text, None, f"transition lacks the key {key!r}")
        s = self._state(lineno, text, obj, "s")
        s2 = self._state(lineno, text, obj, "s2")
        c = obj["c"]
        if not isinstance(c, str) or c not in self.data.capability_table:
            raise self._fail(lineno, text, "c", f"expected a capability declared on an earlier line, got {c!r}")
        steps = obj.get("steps", 0)
        if type(steps) is not int or steps < 0:
            raise self._fail(lineno, text, "steps", f"expected a non-negative integer step count, got {steps!r}")
        meta = obj.get("meta")
        if meta is not None and not isinstance(meta, dict):
            raise self._fail(lineno, text, "meta", f"expected a JSON object as metadata, got {type(meta).__name__}")
        if meta is not None and meta.get("failure") is not None:
            # A failed execution is kept in the file for the record, never as evidence.
            self.data.add_failure(Transition(s, c, s2), steps=steps, reason=str(meta["failure"]))
        else:
            self.data.add(Transition(s, c, s2), steps=steps)
        if meta is not None:
            self.meta.append((self.transitions, meta))
        self.transitions += 1

    def _state(self, lineno: int, text: str, obj: dict[str, Any], key: str) -> int:
        raw = obj[key]
        if not isinstance(raw, str) or not _HEX.fullmatch(raw):
            raise self._fail(lineno, text, key, f"expected a state as a hexadecimal string, got {raw!r}")
        s = int(raw, 16)
        n = len(self.data.vocab)
        if s >> n:
            raise self._fail(
                lineno, text, key, f"state {raw} sets bit {s.bit_length() - 1} but the vocabulary has {n} atoms"
            )
        return s


def _column(text: str, key: str | None) -> int:
    """1-based column of ``"key"`` in the line (1 if it is not spelled literally)."""
    if key is None:
        return 1
    i = text.find(json.dumps(key))
    return i + 1 if i >= 0 else 1


def _error(name: str, lineno: int, column: int, what: str, text: str | None) -> DatasetError:
    msg = f"{name}:{lineno}:{column}: {what}"
    if text is not None:
        # long lines (large metadata) are shown as a window around the column
        start = max(0, column - 1 - _CONTEXT_WIDTH // 2)
        window = text[start : start + _CONTEXT_WIDTH]
        lead = "…" if start else ""
        msg += f"\n  {lead}{window}\n  {' ' * (len(lead) + column - 1 - start)}^"
    return DatasetError(msg)


def _vocab_json(vocab: Vocabulary) -> dict[str, Any]:
    """The vocabulary exactly as a header stores it after a JSON round trip."""
    result: dict[str, Any] = json.loads(json.dumps(vocab.to_json()))
    return result


def _vocab_difference(saved: Mapping[str, Any], expected: Mapping[str, Any]) -> str:
    parts = []
    for key in ("types", "objects", "predicates"):
        a, b = saved.get(key), expected.get(key)
        if a == b:
            continue
        if not isinstance(a, dict) or not isinstance(b, dict):
            parts.append(f"{key}: file has {a!r}, expected {b!r}")
            continue
        only_file = sorted(set(a) - set(b))
        only_expected = sorted(set(b) - set(a))
        changed = sorted(k for k in set(a) & set(b) if a[k] != b[k])
        bits = []
        if only_file:
            bits.append(f"only in the file {only_file[:5]}")
        if only_expected:
            bits.append(f"missing from the file {only_expected[:5]}")
        for k in changed[:3]:
            bits.append(f"{k!r} is {a[k]!r} in the file, expected {b[k]!r}")
        parts.append(f"{key}: " + ", ".join(bits))
    a_atoms, b_atoms = saved.get("atoms"), expected.get("atoms")
    if a_atoms != b_atoms:
        if not isinstance(a_atoms, list) or not isinstance(b_atoms, list):
            parts.append(f"atoms: file has {a_atoms!r}")
        else:
            first = next((i for i, (x, y) in enumerate(zip(a_atoms, b_atoms)) if x != y), None)
            msg = f"atoms: the file has {len(a_atoms)}, expected {len(b_atoms)}"
            if first is not None:
                msg += f"; atom {first} is {a_atoms[first]!r} in the file, expected {b_atoms[first]!r}"
            parts.append(msg)
    extra = sorted(set(saved) ^ set(expected))
    if extra:
        parts.append(f"keys present in only one of them: {extra}")
    return "; ".join(parts) or "they differ"


# -- writing ------------------------------------------------------------------------------


class DatasetWriter:
    """Appends capability declarations and transitions to a dataset file, one
    ``write(2)`` per record.  Open with :meth:`open` (or :func:`open_or_resume`)."""

    def __init__(self, path: PathLike, fd: int, vocab: Vocabulary, loaded: LoadResult, fsync: bool) -> None:
        self.path = os.fspath(path)
        self.vocab = vocab
        self.loaded = loaded
        self.fsync = fsync
        self.written = 0
        self._fd: int | None = fd
        self._caps: dict[str, Capability] = dict(loaded.dataset.capability_table)

    # -- opening --------------------------------------------------------------------------
    @classmethod
    def open(cls, path: PathLike, vocab: Vocabulary, *, resume: bool, fsync: bool = False) -> DatasetWriter:
        """Create ``path`` with a header, or (``resume``) continue an existing file.

        Without ``resume`` an existing file is an error (nothing saved is ever
        overwritten).  With ``resume`` a missing file is created; an existing one is
        loaded into :attr:`loaded`, its vocabulary must equal ``vocab``, and a torn
        last line is reported (warning + ``loaded.torn``) and cut off.

        ``fsync`` forces each record to stable storage.  It is off by default because
        a process kill cannot lose data that ``write(2)`` has handed to the kernel —
        the page cache outlives the process; only an OS crash or power loss can, and
        guarding against those costs a disk flush per record."""
        name = os.fspath(path)
        if not resume or not os.path.exists(name):
            return cls._create(name, vocab, fsync)
        try:
            fd = os.open(name, os.O_RDWR | os.O_APPEND)
        except OSError as exc:
            raise DatasetError(f"{name}: cannot open dataset file for appending: {exc.strerror}") from None
        try:
            _lock(fd, name)
            try:
                scan = _scan(name, vocab)
            except _HeaderTorn as exc:
                # killed between creating the file and finishing its header: nothing
                # was saved yet, so the header is simply written again
                what = "empty" if exc.torn is None else "a torn header line"
                warnings.warn(f"{name}: file holds {what}; writing the header again", TornRecordWarning, stacklevel=2)
                os.ftruncate(fd, 0)
                _write_all(fd, _header_bytes(vocab))
                if fsync:
                    os.fsync(fd)
                empty = LoadResult(TransitionDataset(vocab), 0, exc.torn)
                return cls(name, fd, vocab, empty, fsync)
            if scan.result.torn is not None:
                warnings.warn(
                    scan.result.torn.describe(name)
                    + f"; cutting it off and resuming after record {scan.result.records}",
                    TornRecordWarning,
                    stacklevel=2,
                )
                os.ftruncate(fd, scan.end)
            if scan.needs_newline:
                _write_all(fd, b"\n")
            if fsync and (scan.result.torn is not None or scan.needs_newline):
                os.fsync(fd)
        except BaseException:
            os.close(fd)
            raise
        return cls(name, fd, vocab, scan.result, fsync)

    @classmethod
    def _create(cls, name: str, vocab: Vocabulary, fsync: bool) -> DatasetWriter:
        try:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
        except FileExistsError:
            raise DatasetError(
                f"{name}: dataset file already exists; open it with resume=True to append to it"
            ) from None
        except OSError as exc:
            raise DatasetError(f"{name}: cannot create dataset file: {exc.strerror}") from None
        try:
            _lock(fd, name)
            _write_all(fd, _header_bytes(vocab))
            if fsync:
                os.fsync(fd)
                _fsync_directory(name)
        except BaseException:
            os.close(fd)
            raise
        return cls(name, fd, vocab, LoadResult(TransitionDataset(vocab), 0, None), fsync)

    # -- writing --------------------------------------------------------------------------
    @property
    def closed(self) -> bool:
        return self._fd is None

    @property
    def capabilities(self) -> Mapping[str, Capability]:
        """Capabilities declared in the file (loaded or written)."""
        return self._caps

    def write_capability(self, c: Capability) -> bool:
        """Declare ``c``; a no-op for an identical earlier declaration.  True if a
        record was written."""
        old = self._caps.get(c.name)
        if old is not None:
            if old.intent != c.intent:
                raise DatasetError(
                    f"{self.path}: capability {c.name!r} is already declared with intent "
                    f"{[str(lit) for lit in old.intent]}, cannot redeclare it as {[str(lit) for lit in c.intent]}"
                )
            return False
        if not isinstance(c.name, str) or not c.name:
            raise DatasetError(f"{self.path}: argument c: expected a capability with a non-empty name, got {c.name!r}")
        intent = []
        for lit in c.intent:
            if lit.atom not in self.vocab:
                raise DatasetError(f"{self.path}: argument c: intent atom {lit.atom} is not in the vocabulary")
            intent.append([str(lit.atom), lit.positive])
        self._append({"capability": c.name, "intent": intent})
        self._caps[c.name] = c
        return True

    def write(self, transition: Transition, steps: int = 0, meta: Mapping[str, Any] | None = None) -> None:
        """Append one transition (declaring its capability, intent-less, if new)."""
        full = self.vocab.full_mask
        for label, s in (("s", transition.s), ("s_next", transition.s_next)):
            if not isinstance(s, int) or s < 0 or s & ~full:
                raise DatasetError(
                    f"{self.path}: argument transition.{label}: expected a state over the "
                    f"{len(self.vocab)} atoms of the vocabulary, got {s!r}"
                )
        if type(steps) is not int or steps < 0:
            raise DatasetError(f"{self.path}: argument steps: expected a non-negative int, got {steps!r}")
        record: dict[str, Any] = {
            "s": format(transition.s, "x"),
            "c": transition.c,
            "s2": format(transition.s_next, "x"),
            "steps": steps,
        }
        if meta is not None:
            if not isinstance(meta, Mapping):
                raise DatasetError(f"{self.path}: argument meta: expected a mapping, got {type(meta).__name__}")
            record["meta"] = dict(meta)
        # serialise before declaring, so a bad meta leaves no declaration behind
        line = self._encode(record, "meta")
        if transition.c not in self._caps:
            self.write_capability(Capability(transition.c))
        self._write_line(line)

    def _append(self, record: dict[str, Any]) -> None:
        self._write_line(self._encode(record, "c"))

    def _encode(self, record: dict[str, Any], argument: str) -> bytes:
        try:
            text = json.dumps(record, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise DatasetError(f"{self.path}: argument {argument}: expected JSON-serialisable data: {exc}") from None
        return text.encode("ascii") + b"\n"

    def _write_line(self, line: bytes) -> None:
        if self._fd is None:
            raise DatasetError(f"{self.path}: the writer is closed")
        _write_all(self._fd, line)
        if self.fsync:
            os.fsync(self._fd)
        self.written += 1

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)  # also releases the lock

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __del__(self) -> None:
        # a writer dropped without close() must not keep its descriptor and lock
        if getattr(self, "_fd", None) is not None:
            self.close()


def open_or_resume(
    path: PathLike, vocab: Vocabulary, capabilities: Iterable[Capability] = (), *, fsync: bool = False
) -> tuple[DatasetWriter, TransitionDataset]:
    """Resume ``path`` (creating it if missing), declare ``capabilities`` in the file
    and in the loaded dataset, and return the writer with the dataset read back.
    Torn-line information is in ``writer.loaded.torn``."""
    writer = DatasetWriter.open(path, vocab, resume=True, fsync=fsync)
    data = writer.loaded.dataset
    try:
        for c in capabilities:
            writer.write_capability(c)
            data.declare(c)
    except BaseException:
        writer.close()
        raise
    return writer, data


def _header_bytes(vocab: Vocabulary) -> bytes:
    header = {"format": FORMAT, "version": VERSION, "vocabulary": vocab.to_json()}
    return json.dumps(header, separators=(",", ":"), ensure_ascii=True).encode("ascii") + b"\n"


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _lock(fd: int, name: str) -> None:
    if fcntl is None:  # pragma: no cover - Windows
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise DatasetError(f"{name}: another process is writing this dataset file") from None


def _fsync_directory(name: str) -> None:
    # a new file's directory entry is only durable once the directory is synced
    dirfd = os.open(os.path.dirname(os.path.abspath(name)), os.O_RDONLY)
    try:
        os.fsync(dirfd)
    finally:
        os.close(dirfd)


__all__ = [
    "FORMAT",
    "VERSION",
    "DatasetWriter",
    "LoadResult",
    "TornLine",
    "TornRecordWarning",
    "load",
    "open_or_resume",
]

"""Persistence of the transition dataset D (capver.io.dataset_file): append + reload
equality, survival of SIGKILL at random instants, torn-line detection and repair,
and clear errors for bad files and bad arguments."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capver.core.dataset import TransitionDataset
from capver.core.state import Capability, Transition
from capver.core.vocabulary import Atom, Literal, Vocabulary
from capver.errors import DatasetError, TornRecordError
from capver.io.dataset_file import (
    DatasetWriter,
    LoadResult,
    TornRecordWarning,
    load,
    open_or_resume,
)
from capver.logic.condition import LogicContext
from capver.synthetic import (
    propositional_vocabulary,
    random_model,
    sample_dataset,
    typed_vocabulary,
)


def snapshot(data: TransitionDataset) -> dict[str, object]:
    """Everything observable about a dataset, for equality checks."""
    return {
        "items": sorted(data.items()),
        "caps": dict(data.capability_table),
        "len": len(data),
        "steps": data.simulator_steps,
        "log": data.changes_since(0),
    }


# -- append + reload ------------------------------------------------------------------


def test_append_then_reload_gives_identical_counts_capabilities_and_intents(tmp_path: Path) -> None:
    vocab = propositional_vocabulary(12)
    ctx = LogicContext(vocab)
    rng = np.random.default_rng(7)
    model = random_model(ctx, rng, n_capabilities=4, total=True)
    transitions = []
    expected = TransitionDataset(vocab, model.capabilities)
    source = sample_dataset(model, rng, 300, n_states=40)  # repeated states ⇒ counts > 1
    for t, n in source.items():
        for _ in range(n):
            transitions.append(t)
    order = rng.permutation(len(transitions))
    path = tmp_path / "d.jsonl"
    with DatasetWriter.open(path, vocab, resume=False) as w:
        for c in model.capabilities:
            assert w.write_capability(c) is True
        for k, i in enumerate(order.tolist()):
            t = transitions[i]
            w.write(t, steps=k % 5, meta={"k": k} if k % 10 == 0 else None)
            expected.add(t, steps=k % 5)
        assert w.written == len(model.capabilities) + len(transitions)
    res = load(path)
    assert isinstance(res, LoadResult)
    assert res.torn is None
    assert res.records == len(model.capabilities) + len(transitions)
    assert snapshot(res.dataset) == snapshot(expected)
    assert sorted(source.items()) == sorted(res.dataset.items())
    assert {c.name: c.intent for c in model.capabilities} == {
        n: c.intent for n, c in res.dataset.capability_table.items()
    }
    assert res.meta == tuple((k, {"k": k}) for k in range(0, len(transitions), 10))


def test_typed_intents_and_vocabulary_round_trip(tmp_path: Path) -> None:
    vocab = typed_vocabulary()
    grab = Capability("grab", (Literal(Atom("holding", ("a",)), True), Literal(Atom("ontable", ("a",)), False)))
    path = tmp_path / "d.jsonl"
    with DatasetWriter.open(path, vocab, resume=False) as w:
        w.write_capability(grab)
        w.write(Transition(vocab.state(["ontable(a)", "handempty"]), "grab", vocab.state(["holding(a)"])), steps=3)
    res = load(path)
    assert res.dataset.vocab == vocab
    assert res.dataset.vocab.to_json() == vocab.to_json()
    assert res.dataset.capability_table == {"grab": grab}
    assert res.dataset.simulator_steps == 3
    assert res.dataset.count(vocab.state(["ontable(a)", "handempty"]), "grab", vocab.state(["holding(a)"])) == 1
    # with vocab= the dataset shares the caller's object (the lattice builder wants one)
    assert load(path, vocab=vocab).dataset.vocab is vocab


def test_transition_of_undeclared_capability_declares_it_without_intent(tmp_path: Path) -> None:
    vocab = propositional_vocabulary(3)
    path = tmp_path / "d.jsonl"
    with DatasetWriter.open(path, vocab, resume=False) as w:
        w.write(Transition(1, "go", 2))
        w.write(Transition(1, "go", 2))
    lines = path.read_text().splitlines()
    assert json.loads(lines[1]) == {"capability": "go", "intent": []}
    assert len(lines) == 4  # header, one declaration, two transitions
    res = load(path)
    assert res.dataset.capability_table == {"go": Capability("go")}
    assert res.dataset.count(1, "go", 2) == 2


# -- kill and reload -----------------------------------------------------------------------

CHILD = r"""
import sys
from capver.synthetic import propositional_vocabulary
from capver.io.dataset_file import open_or_resume
from capver.core.state import Capability, Transition
from capver.core.vocabulary import Atom, Literal

path, stop = sys.argv[1], int(sys.argv[2])
vocab = propositional_vocabulary(24)
caps = [Capability(f"c{k}", (Literal(Atom(f"p{k}"), True),)) for k in range(3)]
writer, data = open_or_resume(path, vocab, caps)
i = len(data)
big = "x" * (1 << 20)
sys.stdout.write("start %d\n" % i)
sys.stdout.flush()
while i < stop:
    t = Transition(i, f"c{i % 3}", (i * 2654435761) & vocab.full_mask)
    # every third record is large, so that a kill can land inside its write(2)
    writer.write(t, steps=i % 7, meta={"i": i, "pad": big} if i % 3 == 0 else {"i": i})
    sys.stdout.write("%d\n" % i)
    sys.stdout.flush()
    i += 1
writer.close()
"""


def expected_transition(i: int, vocab: Vocabulary) -> Transition:
    return Transition(i, f"c{i % 3}", (i * 2654435761) & vocab.full_mask)


def check_prefix(res: LoadResult, n: int, vocab: Vocabulary) -> None:
    """The dataset holds exactly transitions 0..n-1, each once, with its steps."""
    data = res.dataset
    assert len(data) == n
    assert data.simulator_steps == sum(i % 7 for i in range(n))
    for i in range(n):
        t = expected_transition(i, vocab)
        assert data.count(t.s, t.c, t.s_next) == 1
    assert [m["i"] for _, m in res.meta] == list(range(n))
    assert {c.name: c.intent for c in data.capability_table.values()} == {
        f"c{k}": (Literal(Atom(f"p{k}"), True),) for k in range(3)
    }


def run_child(path: Path, stop: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path), str(stop)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def test_sigkill_at_random_instants_loses_at_most_the_record_being_written(tmp_path: Path) -> None:
    vocab = propositional_vocabulary(24)
    path = tmp_path / "killed.jsonl"
    rng = np.random.default_rng(2024)
    size = os.path.getsize
    for _ in range(6):
        proc = run_child(path, 10**9)
        first = proc.stdout.readline() if proc.stdout else b""  # child is past its imports
        assert first.startswith(b"start"), proc.stderr.read() if proc.stderr else b""
        time.sleep(float(rng.uniform(0.0, 0.08)))
        proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate()
        assert proc.returncode == -signal.SIGKILL
        acknowledged = [int(x) for x in out.split()]
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # load itself never warns; it reports
            res = load(path)
        n = len(res.dataset)
        if acknowledged:
            # every record whose write returned is there (the child printed after it)
            assert n >= acknowledged[-1] + 1
        check_prefix(res, n, vocab)
        if res.torn is not None:
            # at most one torn line, and it is the file's tail
            assert res.torn.offset + res.torn.length == size(path)
            assert res.torn.line == res.records + 2
            with pytest.raises(TornRecordError) as info:
                load(path, strict=True)
            assert info.value.line == res.torn.line and info.value.recovered == res.records
    # resume once more and run to completion: everything from all rounds is there
    before = len(load(path).dataset)
    proc = run_child(path, before + 25)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err.decode()
    final = load(path)
    assert final.torn is None
    check_prefix(final, before + 25, vocab)


# -- torn last line ------------------------------------------------------------------------


def write_three(path: Path, vocab: Vocabulary) -> None:
    with DatasetWriter.open(path, vocab, resume=False) as w:
        w.write_capability(Capability("go", (Literal(vocab.atoms[0], True),)))
        w.write(Transition(1, "go", 3), steps=2)
        w.write(Transition(2, "go", 3), steps=5)
        w.write(Transition(1, "go", 3), steps=1)


@pytest.mark.parametrize(
    "tail",
    [b'{"s":"1","c":"go","s2":"3","st', b"{", b'{"s":"1","c":"go","s2":"3","steps":12', b'{"s":"\xe2\x82'],
)
def test_torn_last_line_is_reported_and_repaired_on_resume(tmp_path: Path, tail: bytes) -> None:
    vocab = propositional_vocabulary(4)
    path = tmp_path / "torn.jsonl"
    write_three(path, vocab)
    intact = path.read_bytes()
    path.write_bytes(intact + tail)

    res = load(path)
    assert res.torn is not None
    assert res.torn.line == 6 and res.torn.offset == len(intact) and res.torn.length == len(tail)
    assert res.records == 4
    assert res.dataset.count(1, "go", 3) == 2 and res.dataset.count(2, "go", 3) == 1
    assert res.dataset.simulator_steps == 8
    assert path.read_bytes() == intact + tail  # loading never modifies the file

    with pytest.raises(TornRecordError, match=re.escape(f"{path}:6: torn last line")) as info:
        load(path, strict=True)
    assert (info.value.line, info.value.recovered, info.value.path) == (6, 4, str(path))

    with pytest.warns(TornRecordWarning, match=r":6: torn last line"):
        w = DatasetWriter.open(path, vocab, resume=True)
    with w:
        assert w.loaded.torn == res.torn
        assert path.read_bytes() == intact  # exactly the torn tail was cut
        w.write(Transition(0, "go", 1), steps=4)
    again = load(path)
    assert again.torn is None
    assert again.records == 5
    assert again.dataset.count(0, "go", 1) == 1 and again.dataset.count(1, "go", 3) == 2
    assert again.dataset.simulator_steps == 12


def test_complete_last_record_without_newline_is_kept_and_resume_adds_the_newline(tmp_path: Path) -> None:
    vocab = propositional_vocabulary(4)
    path = tmp_path / "nonl.jsonl"
    write_three(path, vocab)
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    res = load(path)
    assert res.torn is None and res.records == 4 and len(res.dataset) == 3
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with DatasetWriter.open(path, vocab, resume=True) as w:
            w.write(Transition(5, "go", 6))
    res = load(path)
    assert res.torn is None and res.records == 5 and res.dataset.count(5, "go", 6) == 1


def test_empty_file_or_torn_header(tmp_path: Path) -> None:
    vocab = propositional_vocabulary(4)
    for content in (b"", b'{"format":"capver-dat'):
        path = tmp_path / f"h{len(content)}.jsonl"
        path.write_bytes(content)
        with pytest.raises(TornRecordError, match=re.escape(f"{path}:1:")) as info:
            load(path)
        assert (info.value.line, info.value.recovered) == (1, 0)
        with pytest.warns(TornRecordWarning, match="writing the header again"):
            w = DatasetWriter.open(path, vocab, resume=True)
        with w:
            w.write(Transition(1, "go", 2))
        res = load(path)
        assert res.torn is None and res.dataset.count(1, "go", 2) == 1 and res.records == 2


# -- errors -------------------------------------------------------------------------------


def test_resume_with_a_different_vocabulary_names_the_file_and_the_difference(tmp_path: Path) -> None:
    path = tmp_path / "v.jsonl"
    write_three(path, propositional_vocabulary(4))
    before = path.read_bytes()
    with pytest.raises(DatasetError) as info:
        DatasetWriter.open(path, propositional_vocabulary(5), resume=True)
    msg = str(info.value)
    assert msg.startswith(f"{path}:1:")
    assert "atoms: the file has 4, expected 5" in msg
    assert "missing from the file ['p4']" in msg
    renamed = Vocabulary.build(
        propositional_vocabulary(4).predicates.values(),
        atoms=[Atom(a) for a in ("p0", "p2", "p1", "p3")],
    )
    with pytest.raises(DatasetError, match="atom 1 is 'p1' in the file, expected 'p2'"):
        DatasetWriter.open(path, renamed, resume=True)
    with pytest.raises(DatasetError, match="vocabulary differs"):
        load(path, vocab=renamed)
    assert path.read_bytes() == before


def test_garbage_line_in_the_middle_names_line_and_column(tmp_path: Path) -> None:
    vocab = propositional_vocabulary(4)
    path = tmp_path / "g.jsonl"
    write_three(path, vocab)
    lines = path.read_bytes().split(b"\n")
    lines[3] = b'{"s":"2","c":"go" "s2":"3"}'
    path.write_bytes(b"\n".join(lines))
    before = path.read_bytes()
    with pytest.raises(DatasetError, match=re.escape(f"{path}:4:19: invalid JSON (Expecting ',' delimiter)")):
        load(path)
    with pytest.raises(DatasetError, match=re.escape(f"{path}:4:19:")):
        DatasetWriter.open(path, vocab, resume=True)
    assert path.read_bytes() == before  # nothing saved was lost or rewritten


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b'{"s":"2","c":"go","s2":"1g"}', r":3:19: expected a state as a hexadecimal string, got '1g'"),
        (b'{"s":"ff","c":"go","s2":"1"}', r":3:2: state ff sets bit 7 but the vocabulary has 4 atoms"),
        (b'{"s":"2","c":"fly","s2":"1"}', r":3:10: expected a capability declared on an earlier line, got 'fly'"),
        (b'{"s":"2","c":"go","s2":"1","steps":-1}', r":3:28: expected a non-negative integer step count"),
        (b'{"s":"2","c":"go","s2":"1","color":1}', r":3:28: unexpected key 'color' in a transition"),
        (b'{"capability":"go","intent":[["p9",true]]}', r":3:20: invalid intent literal: atom p9 is not in"),
        (b'{"capability":"go","intent":[]}', r":3:2: capability 'go' redeclared with a different intent"),
        (b'{"x":1}', r":3:1: expected a capability declaration"),
        (b"[1, 2]", r":3:1: expected a JSON object, got list"),
        (b"", r":3:1: empty line; expected a JSON object record"),
        (b'{"s":"\xff"}', r":3:7: invalid UTF-8 byte"),
    ],
)
def test_corrupt_record_errors(tmp_path: Path, line: bytes, expected: str) -> None:
    vocab = propositional_vocabulary(4)
    path = tmp_path / "c.jsonl"
    write_three(path, vocab)
    lines = path.read_bytes().split(b"\n")
    lines.insert(2, line)
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(DatasetError, match=re.escape(str(path)) + re.escape(expected)):
        load(path)


def test_unknown_format_version_and_foreign_files(tmp_path: Path) -> None:
    vocab = propositional_vocabulary(2)
    path = tmp_path / "v2.jsonl"
    header = {"format": "capver-dataset", "version": 2, "vocabulary": vocab.to_json()}
    path.write_text(json.dumps(header) + "\n")
    with pytest.raises(
        DatasetError, match=r"v2.jsonl:1:\d+: unsupported format version 2; this capver reads version 1"
    ):
        load(path)
    with pytest.raises(DatasetError, match="unsupported format version 2"):
        DatasetWriter.open(path, vocab, resume=True)
    other = tmp_path / "other.jsonl"
    other.write_text('{"hello": 1}\n')
    with pytest.raises(DatasetError, match=r'other.jsonl:1:1: expected "format": "capver-dataset", got None'):
        load(other)
    with pytest.raises(DatasetError, match="no such dataset file"):
        load(tmp_path / "missing.jsonl")


def test_create_refuses_to_overwrite(tmp_path: Path) -> None:
    vocab = propositional_vocabulary(4)
    path = tmp_path / "d.jsonl"
    write_three(path, vocab)
    before = path.read_bytes()
    with pytest.raises(DatasetError, match="already exists; open it with resume=True"):
        DatasetWriter.open(path, vocab, resume=False)
    assert path.read_bytes() == before


def test_bad_arguments_write_nothing(tmp_path: Path) -> None:
    vocab = propositional_vocabulary(4)
    path = tmp_path / "d.jsonl"
    write_three(path, vocab)
    before = path.read_bytes()
    with DatasetWriter.open(path, vocab, resume=True) as w:
        with pytest.raises(DatasetError, match=r"argument transition.s_next: expected a state over the 4 atoms"):
            w.write(Transition(1, "go", 16))
        with pytest.raises(DatasetError, match=r"argument transition.s: .* got -1"):
            w.write(Transition(-1, "go", 1))
        with pytest.raises(DatasetError, match=r"argument steps: expected a non-negative int, got -2"):
            w.write(Transition(1, "go", 1), steps=-2)
        with pytest.raises(DatasetError, match=r"argument meta: expected JSON-serialisable data"):
            w.write(Transition(1, "new", 1), meta={"x": object()})
        with pytest.raises(DatasetError, match=r"argument meta: expected JSON-serialisable data"):
            w.write(Transition(1, "go", 1), meta={"x": float("nan")})
        with pytest.raises(DatasetError, match=r"capability 'go' is already declared with intent \['p0'\]"):
            w.write_capability(Capability("go"))
        with pytest.raises(DatasetError, match=r"intent atom q is not in the vocabulary"):
            w.write_capability(Capability("q", (Literal(Atom("q"), True),)))
        assert w.write_capability(Capability("go", (Literal(vocab.atoms[0], True),))) is False
        assert w.written == 0
    assert path.read_bytes() == before
    assert "new" not in load(path).dataset.capability_table  # the failed write declared nothing
    w.close()
    with pytest.raises(DatasetError, match="the writer is closed"):
        w.write(Transition(1, "go", 1))


def test_a_second_writer_is_refused_while_the_first_is_open(tmp_path: Path) -> None:
    vocab = propositional_vocabulary(4)
    path = tmp_path / "d.jsonl"
    with DatasetWriter.open(path, vocab, resume=False) as w:
        w.write(Transition(1, "go", 2))
        with pytest.raises(DatasetError, match="another process is writing"):
            DatasetWriter.open(path, vocab, resume=True)
    with DatasetWriter.open(path, vocab, resume=True) as w2:  # released on close
        w2.write(Transition(2, "go", 2))
    assert len(load(path).dataset) == 2


def test_open_or_resume_creates_then_resumes(tmp_path: Path) -> None:
    vocab = propositional_vocabulary(4)
    caps = [Capability("a", (Literal(vocab.atoms[1], False),)), Capability("b")]
    path = tmp_path / "d.jsonl"
    w, data = open_or_resume(path, vocab, caps)
    with w:
        assert len(data) == 0 and dict(data.capability_table) == {c.name: c for c in caps}
        w.write(Transition(3, "a", 1))
    w, data = open_or_resume(path, vocab, caps)
    with w:
        assert w.loaded.torn is None and w.written == 0  # capabilities not written twice
        assert data.count(3, "a", 1) == 1 and dict(data.capability_table) == {c.name: c for c in caps}
    assert load(path).records == 3


# -- for all datasets -------------------------------------------------------------------

VOCAB6 = propositional_vocabulary(6)

transition_st = st.tuples(
    st.integers(0, 63),
    st.sampled_from(["a", "b", "c&d", 'q"uote', "ünï"]),
    st.integers(0, 63),
    st.integers(0, 10**6),
    st.one_of(st.none(), st.dictionaries(st.text(max_size=4), st.integers() | st.text(max_size=6), max_size=3)),
)
intent_st = st.lists(st.tuples(st.integers(0, 5), st.booleans()), max_size=3, unique_by=lambda x: x[0])


@settings(deadline=None)  # example count comes from the conftest profile
@given(
    st.lists(transition_st, max_size=40),
    st.dictionaries(st.sampled_from(["a", "b", "c&d"]), intent_st, max_size=3),
)
def test_write_then_load_is_the_identity_for_all_sequences(
    steps: list[tuple[int, str, int, int, dict[str, object] | None]],
    intents: dict[str, list[tuple[int, bool]]],
) -> None:
    expected = TransitionDataset(VOCAB6)
    metas = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "d.jsonl")
        with DatasetWriter.open(path, VOCAB6, resume=False) as w:
            for name, lits in intents.items():
                cap = Capability(name, tuple(Literal(VOCAB6.atoms[i], pos) for i, pos in lits))
                w.write_capability(cap)
                expected.declare(cap)
            for k, (s, c, s2, n, meta) in enumerate(steps):
                w.write(Transition(s, c, s2), steps=n, meta=meta)
                expected.add(Transition(s, c, s2), steps=n)
                if meta is not None:
                    metas.append((k, meta))
        res = load(path)
    assert res.torn is None
    assert snapshot(res.dataset) == snapshot(expected)
    assert res.meta == tuple(metas)

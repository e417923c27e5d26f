"""proofs/check_theorems.py keeps one obligation per result of appendix A, and every
pytest node id it lists exists — so the status table cannot silently rot."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.helpers.paths import ROOT

SCRIPT = ROOT / "proofs" / "check_theorems.py"

# Every numbered result of appendix A (and the §4.1 results whose proofs it holds or
# cites). The convergence theorem's number is lost in the text extraction ("See 1").
APPENDIX_A = {
    "Theorem 1", "Lemma 2", "Lemma 3", "Lemma 4", "Lemma 5",
    "Convergence theorem", "Theorem 2", "Theorem 3", "Theorem 4", "Theorem 5",
}  # fmt: skip


def _obligations() -> list[dict]:
    out = subprocess.run([sys.executable, str(SCRIPT), "--list"], cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def _collected(paths: set[str]) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *sorted(paths)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    return {line.strip() for line in out.stdout.splitlines() if "::" in line}


def test_every_result_has_exactly_one_obligation() -> None:
    keys = [ob["key"] for ob in _obligations()]
    assert len(keys) == len(set(keys)), "duplicate entries"
    assert set(keys) == APPENDIX_A


def test_entries_are_complete_and_every_node_id_exists() -> None:
    obligations = _obligations()
    nodes = {t for ob in obligations for t in ob["tests"]}
    collected = _collected({n.split("::")[0] for n in nodes})
    for ob in obligations:
        assert ob["statement"] and ob["assumptions"] and ob["not_mechanical"], ob["key"]
        assert ob["tests"], f"{ob['key']} has no test"
        for node in ob["tests"]:
            assert any(c == node or c.startswith((node + "::", node + "[")) for c in collected), (
                f"{ob['key']}: {node} is not a collected test"
            )


def test_obligations_md_is_generated_from_the_registry() -> None:
    text = (ROOT / "proofs" / "obligations.md").read_text()
    for ob in _obligations():
        assert f"## {ob['key']} (" in text, ob["key"]
        for node in ob["tests"]:
            assert f"`{node}`" in text, node

"""Certificates of learned models: written by capver learn, re-checked by capver
certify, refused when a model file or the certificate was changed afterwards."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from capver.io import certificate
from tests.helpers.cli import capver_in_process


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cert") / "run"
    res = capver_in_process(
        "learn",
        "--agent",
        "primitive",
        "--domain",
        "first_responders",
        "--method",
        "random",
        "--max-steps",
        "40",
        "--eval-sequences",
        "5",
        "--out",
        str(out),
        "--quiet",
    )
    assert res.returncode == 0, res.stderr
    return out


def _copy(run_dir: Path, tmp_path: Path) -> Path:
    import shutil

    shutil.copytree(run_dir, tmp_path / "run")
    return tmp_path / "run"


def test_learn_writes_a_certificate_of_the_lattice_bounds(run_dir: Path) -> None:
    cert = certificate.read(run_dir)
    claims = {(c.left, c.right): c for c in cert.claims}
    assert claims[("h_and.capm", "h_or.capm")].holds  # Theorem 3 / the lattice: h∧ ⪯ h∨
    assert claims[("h_and.capm", certificate.TRUTH)].holds  # h∧ only holds observed transitions
    # h⋆ ⪯ h∨ needs effect completeness (Theorem 1); 40 steps do not give it, and the
    # refutation comes with a concrete transition.
    refuted = claims[(certificate.TRUTH, "h_or.capm")]
    assert not refuted.holds and refuted.counterexample and "from {" in refuted.counterexample
    assert cert.models["h_and.capm"] == certificate.sha256(run_dir / "h_and.capm")
    assert cert.versions["z3-solver"] != "unknown"


def test_certify_rechecks_an_untouched_run(run_dir: Path) -> None:
    res = capver_in_process("certify", str(run_dir))
    assert res.returncode == 0, res.stdout + res.stderr
    assert "certificate re-checked" in res.stdout and "h_and.capm ⪯ h_or.capm: proved" in res.stdout


def test_a_model_edited_after_certification_is_refused(run_dir: Path, tmp_path: Path) -> None:
    run = _copy(run_dir, tmp_path)
    with open(run / "h_and.capm", "a", encoding="utf-8") as f:
        f.write("; edited by hand\n")
    res = capver_in_process("certify", str(run))
    assert res.returncode == 2
    assert "modified after certification" in res.stderr and "Traceback" not in res.stderr


def test_a_certificate_whose_verdict_was_changed_fails(run_dir: Path, tmp_path: Path) -> None:
    run = _copy(run_dir, tmp_path)
    body = json.loads((run / certificate.NAME).read_text(encoding="utf-8"))
    for c in body["claims"]:
        if c["left"] == certificate.TRUTH:
            c["holds"], c["counterexample"] = True, None  # claim what z3 refutes
    (run / certificate.NAME).write_text(json.dumps(body), encoding="utf-8")
    res = capver_in_process("certify", str(run))
    assert res.returncode == 1
    assert "CERTIFICATE DOES NOT HOLD" in res.stdout and "z3 now says refuted" in res.stdout


@pytest.mark.parametrize("garbage", ['{"format": 1,', '{"format": 7}', '{"format": 1, "claims": []}'])
def test_a_malformed_certificate_is_a_one_line_error(run_dir: Path, tmp_path: Path, garbage: str) -> None:
    run = _copy(run_dir, tmp_path)
    (run / certificate.NAME).write_text(garbage, encoding="utf-8")
    res = capver_in_process("certify", str(run))
    assert res.returncode == 2 and res.stderr.startswith("capver certify: error: ") and "Traceback" not in res.stderr


def test_learn_writes_and_certifies_the_occam_model(run_dir: Path) -> None:
    cert = certificate.read(run_dir)
    claims = {(c.left, c.right): c for c in cert.claims}
    assert claims[("h_and.capm", certificate.TILDE)].holds  # h∧ ⪯ h̃ (the Occam model)
    assert claims[(certificate.TILDE, "h_or.capm")].holds  # h̃ ⪯ h∨
    assert cert.models[certificate.TILDE] == certificate.sha256(run_dir / certificate.TILDE)
    assert "in words: " in (run_dir / "report.txt").read_text(encoding="utf-8")
    res = capver_in_process("certify", str(run_dir))
    assert res.returncode == 0, res.stdout + res.stderr
    assert "h_and.capm ⪯ h_tilde.capm: proved" in res.stdout and "h_tilde.capm ⪯ h_or.capm: proved" in res.stdout


def test_an_edited_occam_model_is_refused(run_dir: Path, tmp_path: Path) -> None:
    run = _copy(run_dir, tmp_path)
    with open(run / certificate.TILDE, "a", encoding="utf-8") as f:
        f.write("; edited by hand\n")
    res = capver_in_process("certify", str(run))
    assert res.returncode == 2 and "h_tilde.capm: modified after certification" in res.stderr


def test_a_run_without_an_occam_model_still_rechecks(run_dir: Path, tmp_path: Path) -> None:
    # Runs made before the Occam model h̃ have no h_tilde.capm and no claims about it.
    run = _copy(run_dir, tmp_path)
    (run / certificate.TILDE).unlink()
    body = json.loads((run / certificate.NAME).read_text(encoding="utf-8"))
    body["claims"] = [c for c in body["claims"] if certificate.TILDE not in (c["left"], c["right"])]
    del body["models"][certificate.TILDE]
    (run / certificate.NAME).write_text(json.dumps(body), encoding="utf-8")
    res = capver_in_process("certify", str(run))
    assert res.returncode == 0, res.stdout + res.stderr
    assert "h_tilde" not in res.stdout

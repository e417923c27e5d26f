"""Certificates of learned models (section 3.1's lattice, Theorems 1 and 3): the z3
verdicts of h∧ ⪯ h∨ (and h∧ ⪯ h⋆ ⪯ h∨ when the true model is known, and
h∧ ⪯ h̃ ⪯ h∨ for the Occam model of issue 12 when the run has one), bound to the
exact bytes of the model files by their SHA-256, with the solver versions and the
time taken.

``capver learn`` writes ``certificate.json`` beside ``h_and.capm`` / ``h_or.capm`` /
``h_tilde.capm``;
``capver certify`` re-reads the model files, refuses them if a byte changed since
certification, re-runs every check with z3, and fails on any verdict that differs.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from capver.engines.verify import refines
from capver.errors import CapverError
from capver.io import dsl
from capver.io.atomic import replace_text
from capver.model.capability_model import CompoundModel

FORMAT = 1
NAME = "certificate.json"
TILDE = "h_tilde.capm"
"""The Occam model's file: certified when present, optional for older runs."""
TRUTH = "h⋆"
"""How the true model is named in a claim (it is rebuilt from the setting, not a file)."""


class CertificateError(CapverError, ValueError):
    """A certificate that cannot be read, or whose models changed after it was made."""


@dataclass(frozen=True, slots=True)
class Claim:
    """``left ⪯ right`` (every transition of ``left`` is one of ``right``), decided by
    z3: ``holds``, or a counterexample transition in words."""

    left: str
    right: str
    holds: bool
    counterexample: str | None = None

    @property
    def text(self) -> str:
        verdict = "proved" if self.holds else f"REFUTED by {self.counterexample}"
        if not self.holds and self.left == TRUTH:
            # Theorem 1's assumption: h∨ contains h⋆ only where every effect h⋆ can
            # produce for the capability has been observed (effect completeness).
            verdict += " (Theorem 1 assumes effect completeness, which this data does not have yet)"
        return f"{self.left} ⪯ {self.right}: {verdict}"


@dataclass(frozen=True, slots=True)
class Certificate:
    claims: tuple[Claim, ...]
    models: Mapping[str, str]  # file name -> SHA-256 of its bytes
    versions: Mapping[str, str]
    seconds: float

    def to_json(self) -> str:
        body = {
            "format": FORMAT,
            "claims": [asdict(c) for c in self.claims],
            "models": dict(self.models),
            "versions": dict(self.versions),
            "seconds": round(self.seconds, 3),
        }
        return json.dumps(body, indent=2, ensure_ascii=False) + "\n"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def versions() -> dict[str, str]:
    out = {}
    for dist in ("capver", "z3-solver", "pysmt", "dd"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "unknown"
    return out


def _claim(left_name: str, left: CompoundModel, right_name: str, right: CompoundModel) -> Claim:
    verdict = refines(left, right)
    cex = None
    if not verdict.holds and verdict.counterexample is not None:
        t, vocab = verdict.counterexample, left.vocabulary
        cex = f"capability {t.c} from {vocab.format_state(t.s)} to {vocab.format_state(t.s_next)}"
    return Claim(left_name, right_name, verdict.holds, cex)


def lattice_claims(models: Mapping[str, CompoundModel], truth: CompoundModel | None) -> tuple[Claim, ...]:
    """h∧ ⪯ h∨, h∧ ⪯ h̃ ⪯ h∨ when h̃ is among the models, and h∧ ⪯ h⋆ ⪯ h∨ when the
    truth is given (its context must be the models')."""
    h_and, h_or = models["h_and.capm"], models["h_or.capm"]
    claims = [_claim("h_and.capm", h_and, "h_or.capm", h_or)]
    tilde = models.get(TILDE)
    if tilde is not None:
        claims += [_claim("h_and.capm", h_and, TILDE, tilde), _claim(TILDE, tilde, "h_or.capm", h_or)]
    if truth is not None:
        claims += [_claim("h_and.capm", h_and, TRUTH, truth), _claim(TRUTH, truth, "h_or.capm", h_or)]
    return tuple(claims)


def certify(
    directory: Path, truth: CompoundModel | None = None, models: Mapping[str, CompoundModel] | None = None
) -> Certificate:
    """Check the lattice claims on the model files in ``directory`` (or on ``models``,
    the very models those files were written from: the DSL reads back exactly what it
    wrote) and write ``certificate.json`` there."""
    start = time.perf_counter()
    models = dict(models) if models is not None else _read_models(directory)
    if truth is not None:
        truth = _in_context(truth, models["h_and.capm"])
    claims = lattice_claims(models, truth)
    cert = Certificate(claims, {n: sha256(directory / n) for n in models}, versions(), time.perf_counter() - start)
    replace_text(directory / NAME, cert.to_json())
    return cert


def recheck(directory: Path, truth: CompoundModel | None = None) -> tuple[Certificate, tuple[Claim, ...]]:
    """The stored certificate and the claims re-decided now.  Raises
    :class:`CertificateError` when the certificate is missing or malformed, or a
    model file changed after certification."""
    stored = read(directory)
    for name, digest in stored.models.items():
        path = directory / name
        if not path.exists():
            raise CertificateError(f"{path}: missing; the certificate covers it")
        if sha256(path) != digest:
            raise CertificateError(f"{path}: modified after certification (its SHA-256 differs from the one in "
                                   f"{directory / NAME}); certify the models again")
    models = _read_models(directory, TILDE in stored.models)
    needs_truth = any(TRUTH in (c.left, c.right) for c in stored.claims)
    if needs_truth and truth is None:
        raise CertificateError(f"{directory / NAME}: claims about {TRUTH}, but the true model is not known here")
    if truth is not None:
        truth = _in_context(truth, models["h_and.capm"])
    now = lattice_claims(models, truth if needs_truth else None)
    return stored, now


def read(directory: Path) -> Certificate:
    path = directory / NAME
    if not path.exists():
        raise CertificateError(f"{path}: missing; run capver learn (it writes one) or capver certify --write")
    try:
        body: Any = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise CertificateError(f"{path}:{e.lineno}:{e.colno}: {e.msg}; expected a capver certificate") from None
    try:
        if body["format"] != FORMAT:
            raise CertificateError(f"{path}: format {body['format']!r}; expected {FORMAT}")
        claims = tuple(Claim(**c) for c in body["claims"])
        models = {str(k): str(v) for k, v in body["models"].items()}
        cert = Certificate(claims, models, dict(body["versions"]), float(body["seconds"]))
    except (KeyError, TypeError, AttributeError) as e:
        raise CertificateError(f"{path}: malformed ({e!r}); expected the fields claims, models, versions, seconds") \
            from None
    if set(models) - {TILDE} != {"h_and.capm", "h_or.capm"} or not claims:
        raise CertificateError(f"{path}: expected claims over h_and.capm and h_or.capm (and {TILDE})")
    return cert


def differences(stored: Sequence[Claim], now: Sequence[Claim]) -> list[str]:
    """The claims whose verdict is not what the certificate says (or that it lacks)."""
    mine = {(c.left, c.right): c.holds for c in now}
    out = []
    for c in stored:
        if mine.get((c.left, c.right)) != c.holds:
            out.append(f"{c.left} ⪯ {c.right}: the certificate says {'proved' if c.holds else 'refuted'}, "
                       f"z3 now says {'proved' if mine.get((c.left, c.right)) else 'refuted'}")
    return out


def _read_models(directory: Path, tilde: bool | None = None) -> dict[str, CompoundModel]:
    """The run's models in one logic context; h̃ when ``tilde`` (None: when its file
    exists)."""
    first = dsl.read(directory / "h_and.capm")
    source = f"the first model ({directory / 'h_and.capm'})"
    second = dsl.read(directory / "h_or.capm", ctx=first.ctx, ctx_source=source)
    models = {"h_and.capm": first.model, "h_or.capm": second.model}
    if tilde or (tilde is None and (directory / TILDE).exists()):
        models[TILDE] = dsl.read(directory / TILDE, ctx=first.ctx, ctx_source=source).model
    return models


def _in_context(truth: CompoundModel, like: CompoundModel) -> CompoundModel:
    """The true model in the learned models' logic context (z3 compares formulas of
    one context), through the DSL: exact by its round-trip property."""
    if truth.ctx is like.ctx:
        return truth
    return dsl.parse(dsl.emit(truth, name="truth"), ctx=like.ctx, ctx_source="the learned models").model

"""Certificates of learned models (section 3.1's lattice, Theorems 1 and 3): the z3
verdicts of h∧ ⪯ h∨ (and h∧ ⪯ h⋆ ⪯ h∨ when the true model is known, and
h∧ ⪯ h̃ ⪯ h∨ for the Occam model h̃ when the run has one), bound to the
exact bytes of the model files by their SHA-256, with the solver versions and the
time taken.

``capver learn`` writes ``certificate.json`` beside ``h_and.capm`` / ``h_or.capm`` /
``h_tilde.capm``;
``capver certify`` re-reads the model files, refuses them if a byte changed since
certification, re-runs every check with z3, and fails on any verdict that differs.

A certificate may also carry safety invariants (:func:`add_invariant`): a safety
property (``A [ G φ ]``, or a failing ``E [ F φ ]`` / ``E [ ψ U φ ]``) of one model file
of the run, proved by an inductive invariant that IC3
(:mod:`capver.engines.verification.ic3`) found, stored as SMT-LIB text with the model
file's SHA-256 and the initial state.  ``capver certify`` re-checks each with plain z3
(:func:`~capver.engines.verification.ic3.check_invariant`: initiation, consecution,
safety), so the proof needs no trust in the engine that found it.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from importlib import metadata
from pathlib import Path
from typing import Any

from capver.core.state import State
from capver.engines.verification.ic3 import Invariant, invariant_failures, safety_problem
from capver.engines.verification.relations import refines
from capver.errors import CapverError
from capver.io import dsl
from capver.io.atomic import replace_text
from capver.io.literal_text import parse_state
from capver.io.properties_text import parse_property
from capver.io.run_dir import CERTIFICATE, Run
from capver.model.capability_model import CompoundModel
from capver.model.kinds import ModelKind

FORMAT = 1
NAME = CERTIFICATE
AND, OR = ModelKind.AND.file, ModelKind.OR.file
TILDE = ModelKind.TILDE.file
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
class InvariantClaim:
    """The safety property ``property_text`` holds on the model file ``model``
    of the run (whose bytes have SHA-256 ``sha256``) from the state whose true atoms
    ``init`` lists (the syntax of ``--init``), proved by the inductive invariant
    ``invariant`` (an SMT-LIB script, see
    :class:`~capver.engines.verification.ic3.Invariant`) of ``lemmas`` conjuncts and
    ``literals`` literals."""

    property_text: str
    model: str
    sha256: str
    init: str
    invariant: str
    lemmas: int
    literals: int

    @property
    def text(self) -> str:
        lemmas = f"{self.lemmas} lemma" + ("" if self.lemmas == 1 else "s")
        literals = f"{self.literals} literal" + ("" if self.literals == 1 else "s")
        return (
            f"{self.property_text} on {self.model} from {{{self.init.replace(' ', ', ')}}}: holds by an inductive "
            f"invariant ({lemmas}, {literals})"
        )


@dataclass(frozen=True, slots=True)
class Certificate:
    claims: tuple[Claim, ...]
    models: Mapping[str, str]  # file name -> SHA-256 of its bytes
    versions: Mapping[str, str]
    seconds: float
    invariants: tuple[InvariantClaim, ...] = ()

    def to_json(self) -> str:
        body: dict[str, Any] = {
            "format": FORMAT,
            "claims": [asdict(c) for c in self.claims],
            "models": dict(self.models),
            "versions": dict(self.versions),
            "seconds": round(self.seconds, 3),
        }
        # Optional, so that certificates without invariants keep their old bytes (and
        # older capver versions, which ignore unknown fields, still read new ones).
        if self.invariants:
            body["invariants"] = [asdict(c) for c in self.invariants]
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
    h_and, h_or = models[AND], models[OR]
    claims = [_claim(AND, h_and, OR, h_or)]
    tilde = models.get(TILDE)
    if tilde is not None:
        claims += [_claim(AND, h_and, TILDE, tilde), _claim(TILDE, tilde, OR, h_or)]
    if truth is not None:
        claims += [_claim(AND, h_and, TRUTH, truth), _claim(TRUTH, truth, OR, h_or)]
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
        truth = _in_context(truth, models[AND])
    claims = lattice_claims(models, truth)
    cert = Certificate(
        claims,
        {n: sha256(directory / n) for n in models},
        versions(),
        time.perf_counter() - start,
        _kept_invariants(directory),
    )
    replace_text(directory / NAME, cert.to_json())
    return cert


def _kept_invariants(directory: Path) -> tuple[InvariantClaim, ...]:
    """The invariants of the certificate being replaced whose model file still has the
    bytes they were proved on (a re-certification of unchanged models keeps them;
    ``capver certify`` re-checks them either way)."""
    try:
        old = read(directory)
    except CertificateError:
        return ()
    return tuple(
        c for c in old.invariants if (directory / c.model).exists() and sha256(directory / c.model) == c.sha256
    )


def add_invariant(
    directory: Path, prop_text: str, model_name: str, invariant: Invariant, init: State | None = None
) -> InvariantClaim:
    """Record in the run's certificate that the safety property ``prop_text`` holds on
    the model file ``model_name`` of the run directory from ``init`` (default: the
    file's ``(:init ...)``, else the empty state, as ``capver verify`` starts),
    proved by ``invariant``; returns the recorded claim.

    The invariant is re-checked here first (:class:`CertificateError` when it does
    not prove the property, when the property is not a safety property, or when the
    model file changed after the certificate was made).  A claim about the same
    property, model and initial state is replaced."""
    cert = read(directory)
    path = directory / model_name
    if not path.is_file():
        raise CertificateError(f"{path}: missing; expected a model file of the run")
    digest = sha256(path)
    if model_name in cert.models and cert.models[model_name] != digest:
        raise CertificateError(
            f"{path}: modified after certification; certify the models again before adding an invariant"
        )
    parsed = dsl.read(path)
    model = parsed.model
    start = parsed.initial_state()[0] if init is None else init
    vocab = model.vocabulary
    claim = InvariantClaim(
        prop_text,
        model_name,
        digest,
        " ".join(str(a) for a in vocab.atoms_of(start)),
        invariant.smtlib,
        invariant.lemmas,
        invariant.literals,
    )
    failed = _invariant_failures(claim, model)
    if failed:
        raise CertificateError(f"{claim.property_text} on {model_name}: {failed}")
    kept = tuple(
        c
        for c in cert.invariants
        if (c.property_text, c.model, c.init) != (claim.property_text, model_name, claim.init)
    )
    replace_text(directory / NAME, replace(cert, invariants=(*kept, claim)).to_json())
    return claim


def recheck_invariants(directory: Path, claims: Sequence[InvariantClaim]) -> list[tuple[InvariantClaim, str]]:
    """Each invariant claim re-checked by plain z3, with "" when it holds, else what
    fails.  :class:`CertificateError` when a model file it is about is missing or was
    modified after the claim was recorded."""
    out = []
    models: dict[str, CompoundModel] = {}
    for c in claims:
        path = directory / c.model
        if not path.is_file():
            raise CertificateError(f"{path}: missing; the certificate's invariant of {c.property_text} is about it")
        if sha256(path) != c.sha256:
            raise CertificateError(
                f"{path}: modified after its invariant of {c.property_text} was certified (its SHA-256 "
                f"differs from the one in {directory / NAME})"
            )
        if c.model not in models:
            models[c.model] = dsl.read(path).model
        out.append((c, _invariant_failures(c, models[c.model])))
    return out


def _invariant_failures(claim: InvariantClaim, model: CompoundModel) -> str:
    """ "" when the claim's invariant proves its property on ``model``, else why not."""
    vocab = model.vocabulary
    try:
        prop = parse_property(claim.property_text, vocab, tuple(model))
        init = parse_state(claim.init, vocab, what="the initial state")
        problem = safety_problem(prop)
        invariant = Invariant.parse(claim.invariant)
    except (CapverError, TypeError, ValueError) as e:
        return f"not a checkable invariant claim ({e})"
    failed = invariant_failures(
        model, init, problem.safe, invariant, hold=problem.hold, capabilities=problem.capabilities, bound=problem.bound
    )
    return "" if not failed else "the invariant fails " + ", ".join(failed)


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
            raise CertificateError(
                f"{path}: modified after certification (its SHA-256 differs from the one in "
                f"{directory / NAME}); certify the models again"
            )
    models = _read_models(directory, TILDE in stored.models)
    needs_truth = any(TRUTH in (c.left, c.right) for c in stored.claims)
    if needs_truth and truth is None:
        raise CertificateError(f"{directory / NAME}: claims about {TRUTH}, but the true model is not known here")
    if truth is not None:
        truth = _in_context(truth, models[AND])
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
        invariants = tuple(InvariantClaim(**c) for c in body.get("invariants", ()))
        cert = Certificate(claims, models, dict(body["versions"]), float(body["seconds"]), invariants)
    except (KeyError, TypeError, AttributeError) as e:
        raise CertificateError(
            f"{path}: malformed ({e!r}); expected the fields claims, models, versions, seconds"
        ) from None
    if set(models) - {TILDE} != {AND, OR} or not claims:
        raise CertificateError(f"{path}: expected claims over {AND} and {OR} (and {TILDE})")
    return cert


def differences(stored: Sequence[Claim], now: Sequence[Claim]) -> list[str]:
    """The claims whose verdict is not what the certificate says (or that it lacks)."""
    mine = {(c.left, c.right): c.holds for c in now}
    out = []
    for c in stored:
        if mine.get((c.left, c.right)) != c.holds:
            out.append(
                f"{c.left} ⪯ {c.right}: the certificate says {'proved' if c.holds else 'refuted'}, "
                f"z3 now says {'proved' if mine.get((c.left, c.right)) else 'refuted'}"
            )
    return out


def _read_models(directory: Path, tilde: bool | None = None) -> dict[str, CompoundModel]:
    """The run's models in one logic context; h̃ when ``tilde`` (None: when its file
    exists)."""
    run = Run.open(directory)
    models = {AND: run.h_and, OR: run.h_or}
    if tilde or (tilde is None and run.has(TILDE)):
        models[TILDE] = run.h_tilde
    return models


def _in_context(truth: CompoundModel, like: CompoundModel) -> CompoundModel:
    """The true model in the learned models' logic context (z3 compares formulas of
    one context), through the DSL: exact by its round-trip property."""
    if truth.ctx is like.ctx:
        return truth
    return dsl.parse(dsl.emit(truth, name="truth"), ctx=like.ctx, ctx_source="the learned models").model

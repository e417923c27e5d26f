"""``capver certify RUN...``: re-check the certificates of ``capver learn`` runs
(section 3.1's h∧ ⪯ h∨, and h∧ ⪯ h⋆ ⪯ h∨ when the true model is known): every model
file must be byte for byte the one certified, and z3 must reach every verdict the
certificate states, and every safety invariant the certificate carries must still be
an inductive invariant proving its property (initiation, consecution and safety,
re-checked by plain z3).  Exit status 0 when all hold as stated, 1 when a verdict
differs or an invariant fails, 2 when a certificate is missing or malformed or a model
was modified after it.  With ``--write`` it certifies the models as they are now
instead (keeping the invariants of model files whose bytes did not change, which it
re-checks too)."""

from __future__ import annotations

import argparse
from pathlib import Path

from capver.io import certificate, run_dir
from capver.model.capability_model import CompoundModel


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "runs",
        type=Path,
        nargs="+",
        metavar="RUN",
        help="--out directories of capver learn (h_and.capm, h_or.capm, certificate.json)",
    )
    parser.add_argument(
        "--write",
        action="store_true",
        help="instead of re-checking: certify the models as they are now and write RUN/certificate.json "
        "(replacing the certificate capver wrote; use it after changing a model file on purpose)",
    )


def _truth(directory: Path) -> CompoundModel | None:
    """The setting's true model, rebuilt from run.json, when the setting knows it."""
    if not (directory / run_dir.MANIFEST).exists():
        return None
    from capver.settings import assessment_of

    manifest = run_dir.Run.open(directory, require=(run_dir.MANIFEST,)).manifest
    # A setting made in Python has no truth capver knows (the certificate has no h⋆ claims).
    return None if manifest.custom else assessment_of(manifest).truth


def run(args: argparse.Namespace) -> int:
    failed = False
    for directory in args.runs:
        if not directory.is_dir():
            raise certificate.CertificateError(f"{directory}: not a directory; expected the --out directory of a run")
        truth = _truth(directory)
        if args.write:
            cert = certificate.certify(directory, truth)
            print(f"{directory}: wrote {certificate.NAME} ({cert.seconds:.2f} s)")
            for c in cert.claims:
                print(f"  {c.text}")
            failed |= not all(c.holds for c in cert.claims)
            failed |= _invariants(directory, cert.invariants)
            continue
        stored, now = certificate.recheck(directory, truth)
        diff = certificate.differences(stored.claims, now)
        invariants = certificate.recheck_invariants(directory, stored.invariants)
        diff += [
            f"{inv.property_text} on {inv.model}: the certificate says it holds by its invariant, but {why}"
            for inv, why in invariants
            if why
        ]
        if diff:
            failed = True
            print(f"{directory}: CERTIFICATE DOES NOT HOLD")
            for line in diff:
                print(f"  {line}")
        else:
            print(f"{directory}: certificate re-checked; the model files are the ones certified")
            for c in now:
                print(f"  {c.text}")
            for inv, _ in invariants:
                print(f"  {inv.text}: re-checked")
    return 1 if failed else 0


def _invariants(directory: Path, claims: tuple[certificate.InvariantClaim, ...]) -> bool:
    """Re-check the invariants a freshly written certificate kept; print each; True
    when one fails."""
    failed = False
    for inv, why in certificate.recheck_invariants(directory, claims):
        failed |= bool(why)
        print(f"  {inv.text}: {'re-checked' if not why else 'FAILS: ' + why}")
    return failed

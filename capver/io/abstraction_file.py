"""Reading an abstraction for pooled verdicts (:mod:`capver.model.abstraction`) from
what a user types: ``tilde`` (the atoms h̃'s conditions mention), ``symmetry`` (the
objects of each type are interchangeable: :class:`~capver.model.abstraction.Symmetry`),
a file of atoms per capability, or ``module:function``, a Python callable of the
capability and the state's true atoms.

The file has one line per capability, ``CAPABILITY: atom, atom, ...``; ``*`` names
every capability without a line of its own, an empty list makes one class of all
states, and ``#`` starts a comment::

    # pick-up and put-down behave alike wherever these atoms agree
    pick-up(a): holding(a), clear(a), handempty
    *: handempty
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path

from capver.core.state import Capability
from capver.core.vocabulary import Vocabulary
from capver.errors import UsageError
from capver.model.abstraction import Abstraction, Partition, Projection, Symmetry
from capver.model.capability_model import CompoundModel

TILDE = "tilde"
"""The spelling that takes h̃'s condition atoms."""
TILDE_NAME = "h̃'s condition atoms (chosen from the data)"
SYMMETRY = "symmetry"
"""The spelling that takes the symmetry of the objects."""


def parse_abstraction_text(text: str, vocab: Vocabulary, capabilities: tuple[str, ...], source: str) -> Projection:
    """The projection a file states; a mistake is a :class:`UsageError` naming
    ``source``, the line and column, and what was expected."""
    atoms: dict[str, list[str]] = {}
    default: list[str] | None = None
    known = {str(a) for a in vocab.atoms}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        # Atoms never contain ':', capability names might: split at the last one.
        cap, colon, rest = line.rpartition(":")
        if not colon:
            raise UsageError(f"{source}:{number}:1: expected 'CAPABILITY: atom, atom, ...', got {raw.strip()!r}")
        name = cap.strip()
        if name != "*" and name not in capabilities:
            column = len(cap) - len(cap.lstrip()) + 1
            raise UsageError(
                f"{source}:{number}:{column}: unknown capability {name!r}; expected '*' or one of "
                + ", ".join(capabilities[:8])
                + (", ..." if len(capabilities) > 8 else "")
            )
        names: list[str] = []
        column = len(cap) + 2
        for part in rest.split(","):
            atom = part.strip()
            if atom and atom not in known:
                at = column + len(part) - len(part.lstrip())
                raise UsageError(f"{source}:{number}:{at}: {atom!r} is not an atom of the run's vocabulary")
            if atom:
                names.append(atom)
            column += len(part) + 1
        if name == "*":
            default = names
        elif name in atoms:
            raise UsageError(f"{source}:{number}:1: capability {name!r} has a line already")
        else:
            atoms[name] = names
    return Projection.of_atoms(vocab, atoms, source, default)


def abstraction_text(projection: Projection, vocab: Vocabulary, source: str) -> str:
    """The file of ``projection``'s atoms per capability, as :func:`parse_abstraction_text`
    reads it back (the same classes), headed by a comment naming ``source``: h̃'s atoms
    written out for a person to review, edit and pass as ``--abstraction FILE``."""
    lines = [
        f"# The classes of {source}: per capability, the atoms whose values make a class",
        "# (capver verify --abstraction FILE reads this file; an empty list is one class).",
    ]
    for c, mask in projection.masks:
        lines.append(f"{c}: " + ", ".join(str(a) for a in vocab.atoms_of(mask)))
    if projection.default is not None:
        lines.append("*: " + ", ".join(str(a) for a in vocab.atoms_of(projection.default)))
    return "\n".join(line.rstrip() for line in lines) + "\n"


def load_abstraction(
    spec: str, vocab: Vocabulary, capabilities: Sequence[Capability], h_tilde: Callable[[], CompoundModel]
) -> Abstraction:
    """``tilde``, ``symmetry``, a file, or ``module:function`` (see the module
    docstring) over the run's ``capabilities``; ``h_tilde`` gives h̃ when it is asked for."""
    if spec == TILDE:
        # h̃ was fit to the data it is then tested and pooled on, which the statistics do
        # not account for; a verdict says so, and learn --resume --abstraction tilde
        # pools only the executions after h̃ was fixed.
        return Projection.of_model(h_tilde(), TILDE_NAME)
    if spec == SYMMETRY:
        return Symmetry.of_objects(vocab, capabilities)
    path = Path(spec)
    if path.is_file():
        return parse_abstraction_text(path.read_text(), vocab, tuple(c.name for c in capabilities), str(path))
    module, colon, name = spec.partition(":")
    if not colon or not module or not name or "/" in module:
        raise UsageError(
            f"--abstraction {spec!r}: expected {TILDE!r}, {SYMMETRY!r}, an existing file of atoms per capability, "
            "or module:function"
        )
    try:
        function = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise UsageError(f"--abstraction {spec!r}: cannot load {name!r} from module {module!r} ({exc})") from exc
    if not callable(function):
        raise UsageError(f"--abstraction {spec!r}: {name!r} is not callable")
    key: Callable[[str, frozenset[str]], Hashable] = function
    return Partition(spec, vocab, key)


__all__ = ["SYMMETRY", "TILDE", "abstraction_text", "load_abstraction", "parse_abstraction_text"]

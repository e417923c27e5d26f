"""Argument types shared by the sub-commands: each rejects bad input with a message
that says what was expected (argparse names the option)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from capver.errors import UsageError


def theta(text: str) -> int | None:
    """Temporal length Θ: a positive integer, or 'inf' for no bound."""
    if text.lower() in ("inf", "infinity", "none"):
        return None
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer or 'inf', got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer or 'inf', got {text!r}")
    return value


def _integer_at_least(text: str, low: int, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a {what} integer, got {text!r}") from None
    if value < low:
        raise argparse.ArgumentTypeError(f"expected a {what} integer, got {text!r}")
    return value


def non_negative(text: str) -> int:
    return _integer_at_least(text, 0, "non-negative")


def positive(text: str) -> int:
    return _integer_at_least(text, 1, "positive")


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value


def open_unit_interval(text: str) -> float:
    """A number strictly between 0 and 1, e.g. a confidence level's δ."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {text!r}") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {text}")
    return value


def refuse_to_overwrite(
    path: Path, option: str, force: bool = False, ours: Callable[[Path], bool] | None = None
) -> None:
    """No command overwrites a file it did not create: an existing ``path`` is an
    error unless the user passed ``--force``, or ``ours(path)`` recognises it as a
    file capver wrote (by the mark capver puts in it), which capver may replace."""
    if path.exists() and not force and not (ours is not None and not path.is_symlink() and ours(path)):
        raise UsageError(
            f"{option} {path}: exists; capver does not overwrite files it did not create "
            "(remove it, choose another path, or pass --force)"
        )


def add_environment_option(parser: argparse.ArgumentParser) -> None:
    """``--ignore-environment``, shared by ``capver learn`` and ``capver verify``."""
    parser.add_argument(
        "--ignore-environment",
        action="store_true",
        help="decide the properties from the agent's data alone: do not use the states the environment "
        "reaches (known for the PPDDL settings), which settle some properties exactly for every agent",
    )

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


def _number(text: str, ok: Callable[[float], bool], what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
    if not ok(value):
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
    return value


def seconds(text: str) -> float:
    return _number(text, lambda v: v > 0, "a positive number of seconds")


def seconds_or_off(text: str) -> float:
    """Seconds, where 0 turns the thing off."""
    return _number(text, lambda v: v >= 0, "a non-negative number of seconds (0: off)")


def positive_number(text: str) -> float:
    return _number(text, lambda v: v > 0 and v != float("inf"), "a positive number")


def non_negative_number(text: str) -> float:
    return _number(text, lambda v: v >= 0 and v != float("inf"), "a non-negative number")


def non_negative_list(text: str) -> list[int]:
    """Comma-separated non-negative integers, e.g. seeds."""
    items = [x.strip() for x in text.split(",") if x.strip()]
    if not items or not all(x.isdigit() for x in items):
        raise argparse.ArgumentTypeError(f"expected comma-separated non-negative integers, got {text!r}")
    return [int(x) for x in items]


def open_unit_interval(text: str) -> float:
    """A number strictly between 0 and 1, e.g. a confidence level's δ."""
    return _number(text, lambda v: 0 < v < 1, "a number in (0, 1)")


def unit_interval(text: str) -> float:
    """A number from 0 to 1, e.g. a share."""
    return _number(text, lambda v: 0 <= v <= 1, "a number in [0, 1]")


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
        "reaches (known for the PPDDL settings), which settle some properties exactly for every agent and "
        "narrow the bounds on the agent's probabilities (0 where no run of the environment reaches the goal)",
    )

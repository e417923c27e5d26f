"""The one Markdown table writer of the benchmarks' ``table.md`` files (GitHub
pipe tables): a header row, a ``|---|`` rule, one row per result."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def table_row(cells: Iterable[object]) -> str:
    """One row of a pipe table: ``| a | b |``."""
    return "| " + " | ".join(str(c) for c in cells) + " |"


def markdown_table(head: Sequence[object], rows: Iterable[Iterable[object]] = ()) -> list[str]:
    """The lines of a pipe table with header ``head`` and the given ``rows`` (every
    cell printed with ``str``)."""
    return [table_row(head), "|" + "---|" * len(head), *(table_row(r) for r in rows)]


__all__ = ["markdown_table", "table_row"]

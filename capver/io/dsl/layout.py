"""Page layout of the capability-model language (``.capm``, paper section 2): how an
s-expression, a comment and a long section are broken into lines of at most
:data:`~capver.io.dsl.syntax.WIDTH` characters."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from capver.io.dsl.syntax import WIDTH, Sexp, flat


def _comment(text: str, indent: str) -> list[str]:
    # Atom names hold hyphens (fire-unit-at): break lines only at spaces.
    return [f"{indent}; {ln}" for ln in textwrap.wrap(text, WIDTH - len(indent) - 2, break_on_hyphens=False)]


def _param_names(k: int) -> list[str]:
    base = ["?x", "?y", "?z", "?u", "?v", "?w"]
    return base[:k] if k <= len(base) else [f"?x{i + 1}" for i in range(k)]


def _wrapped_section(keyword: str, items: Sequence[str], indent: str) -> list[str]:
    one = f"{indent}({keyword} {' '.join(items)})" if items else f"{indent}({keyword})"
    if len(one) <= WIDTH:
        return [one]
    lines = [f"{indent}({keyword}"]
    inner = indent + "  "
    cur = inner
    for it in items:
        if cur != inner and len(cur) + 1 + len(it) > WIDTH:
            lines.append(cur)
            cur = inner
        cur = cur + it if cur == inner else cur + " " + it
    lines.append(cur + ")")
    return lines


def _filled_and(items: Sequence[str], col: int, head: str = "and") -> list[str]:
    """``(and ...)`` (or ``(head ...)``) at column ``col`` with its items filled into
    lines like a paragraph (every item fits on a line of its own)."""
    lead = len(head) + 2
    pad = " " * (col + lead)
    lines = []
    cur, end = f"({head} " + items[0], col + lead + len(items[0])
    for item in items[1:]:
        if end + 1 + len(item) > WIDTH:
            lines.append(cur)
            cur, end = pad + item, col + lead + len(item)
        else:
            cur, end = cur + " " + item, end + 1 + len(item)
    return [*lines, cur + ")"]


def _layout(e: Sexp, col: int, *, fill_or: bool = False) -> list[str]:
    """Lines printing ``e`` when its first character sits at column ``col``: on one line
    if it fits; else ``(not X)`` keeps X on its first line, the literals of an ``and``
    (with ``fill_or``, also the plain items of an ``or``: lists of named states) are
    filled into lines like a paragraph, and other lists put one argument per line."""
    one = flat(e)
    if isinstance(e, str) or col + len(one) <= WIDTH or len(e) < 2:
        return [one]
    head = flat(e[0])
    if head == "not" and len(e) == 2:
        lines = _layout(e[1], col + 5, fill_or=fill_or)
        return ["(not " + lines[0], *lines[1:-1], lines[-1] + ")"] if len(lines) > 1 else ["(not " + lines[0] + ")"]
    if head == "and" and all(col + 5 + len(flat(x)) <= WIDTH for x in e[1:]):
        return _filled_and([flat(x) for x in e[1:]], col)
    if fill_or and head == "or" and all(isinstance(x, str) and col + 4 + len(x) <= WIDTH for x in e[1:]):
        return _filled_and([flat(x) for x in e[1:]], col, "or")
    pad = " " * (col + 2)
    lines = ["(" + head]
    for x in e[1:]:
        sub = _layout(x, col + 2, fill_or=fill_or)
        lines += [pad + sub[0], *sub[1:]]
    lines[-1] += ")"
    return lines

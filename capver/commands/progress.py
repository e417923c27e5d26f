"""What a long command shows while it runs.

On a terminal a tqdm bar with ETA is redrawn in place; when stderr is a file or a
pipe, every update is a plain line of its own (a ``\\r`` redraw would pile up into one
enormous line there), at most one every ``interval`` seconds.  Phases that may take
more than a second (collecting D′, writing the models) print a line when they start
and their time when they end, so no minute of a run passes in silence.  Each phase's
time is kept as printed (:attr:`ProgressReport.phases`), so that a summary adding
phases up gives the sum of the lines the user saw.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from tqdm import tqdm


class ProgressReport:
    """Progress lines of one command (``prog``, e.g. ``capver learn``) on ``stream``."""

    def __init__(self, prog: str, *, quiet: bool = False, stream: TextIO | None = None, interval: float = 10.0) -> None:
        self.prog = prog
        self.quiet = quiet
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self.terminal = bool(getattr(self.stream, "isatty", lambda: False)())
        self._bar: tqdm[None] | None = None
        self._last_line = -float("inf")
        self._total: int | None = None
        self._unit = ""
        self.phases: list[tuple[str, float]] = []
        """(what, seconds rounded to the 0.1 s printed) of every phase so far, quiet or not."""

    def say(self, text: str) -> None:
        """One line, even while a bar is shown (quiet mode included: it is the
        command's own message, not progress)."""
        if self._bar is not None:
            self._bar.write(text, file=self.stream)
        else:
            print(text, file=self.stream, flush=True)

    @contextmanager
    def phase(self, what: str) -> Iterator[None]:
        """``capver learn: WHAT ...`` then ``... done in X s``."""
        start = time.perf_counter()
        if not self.quiet:
            self.say(f"{self.prog}: {what} ...")
        yield
        seconds = round(time.perf_counter() - start, 1)
        self.phases.append((what, seconds))
        if not self.quiet:
            self.say(f"{self.prog}: {what}: done in {seconds:.1f} s")

    def seconds_since(self, first: int) -> float:
        """The printed times of the phases from index ``first`` on, added up (to the
        0.1 s they are printed with)."""
        return round(sum(s for _, s in self.phases[first:]), 1)

    def start_bar(self, total: int | None, initial: int, unit: str) -> None:
        self._total, self._unit = total, unit
        if self.quiet or not self.terminal:
            return
        self._bar = tqdm(
            total=total, initial=initial, unit=unit, file=self.stream, dynamic_ncols=True, leave=False, smoothing=0.1
        )

    def update(self, position: int, status: str) -> None:
        """Move the bar to ``position`` with ``status`` beside it; off a terminal, a
        line ``position/total unit, status`` every ``interval`` seconds."""
        if self.quiet:
            return
        if self._bar is not None:
            self._bar.n = position
            self._bar.set_postfix_str(status, refresh=False)
            self._bar.refresh()
            return
        now = time.monotonic()
        if now - self._last_line >= self.interval:
            self._last_line = now
            of = f"/{self._total}" if self._total is not None else ""
            print(f"{self.prog}: {position}{of} {self._unit}s; {status}", file=self.stream, flush=True)

    def close_bar(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

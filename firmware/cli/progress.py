"""Progress of a long command on stderr, so slow is never mistaken for hung.

On a terminal: one bar redrawn in place (at most :data:`REDRAW_S` apart), with the time left.
Elsewhere (a log, a pipe, CI): one plain line every :data:`LINE_EVERY_S` seconds, so a run of a
few seconds prints nothing and a 2,000-photo eval prints a line now and then with the rate and
the time left.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO

__all__ = ["LINE_EVERY_S", "REDRAW_S", "Progress", "time_left"]

#: Shortest time between two redraws of the terminal bar.
REDRAW_S = 0.1
#: Time between two progress lines when stderr is not a terminal.
LINE_EVERY_S = 10.0


def time_left(seconds: float) -> str:
    """``about 40 s left``, ``about 12 min left``: minutes once seconds are too many to read."""
    if seconds == float("inf"):
        return "time left unknown"
    if seconds < 120:
        return f"about {seconds:.0f} s left"
    return f"about {seconds / 60:.0f} min left"


class Progress:
    """Report ``i`` of ``total`` items (``unit``) of ``name``; :meth:`close` clears the bar."""

    def __init__(
        self,
        out: TextIO,
        name: str,
        total: int,
        *,
        clock: Callable[[], float] = time.monotonic,
        unit: str = "photos",
    ) -> None:
        self.out, self.name, self.total, self.clock, self.unit = out, name, total, clock, unit
        try:
            self.tty = out.isatty()
        except (AttributeError, ValueError):
            self.tty = False
        self.start = self.last = clock()
        self.drawn = False

    def step(self, i: int) -> None:
        now = self.clock()
        rate = i / max(now - self.start, 1e-9)
        left = (self.total - i) / rate if rate > 0 else float("inf")
        if self.tty:
            if now - self.last >= REDRAW_S or i == self.total:
                self.last, self.drawn = now, True
                width = 30
                done = round(width * i / self.total) if self.total else width
                self.out.write(
                    f"\r{self.name} [{'#' * done}{'.' * (width - done)}] {i}/{self.total}, {time_left(left)}"
                    "\033[K"
                )
                self.out.flush()
        elif now - self.last >= LINE_EVERY_S:
            self.last = now
            self.out.write(
                f"dicetower: {self.name}: {i}/{self.total} {self.unit}, {rate:.1f}/s, {time_left(left)}\n"
            )
            self.out.flush()

    def close(self) -> None:
        if self.tty and self.drawn:
            self.out.write("\r\033[K")
            self.out.flush()

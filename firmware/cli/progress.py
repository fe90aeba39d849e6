"""Progress of a long command on stderr, so slow is never mistaken for hung.

On a terminal: one bar redrawn in place (at most :data:`REDRAW_S` apart). Elsewhere (a log, a
pipe, CI): one plain line every :data:`LINE_EVERY_S` seconds, so a run of a few seconds
prints nothing and a 2,000-photo eval prints a line now and then with the rate and the time
left.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO

__all__ = ["LINE_EVERY_S", "REDRAW_S", "Progress"]

#: Shortest time between two redraws of the terminal bar.
REDRAW_S = 0.1
#: Time between two progress lines when stderr is not a terminal.
LINE_EVERY_S = 10.0


class Progress:
    """Report ``i`` of ``total`` items of ``name``; :meth:`close` clears the bar."""

    def __init__(
        self, out: TextIO, name: str, total: int, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.out, self.name, self.total, self.clock = out, name, total, clock
        try:
            self.tty = out.isatty()
        except (AttributeError, ValueError):
            self.tty = False
        self.start = self.last = clock()
        self.drawn = False

    def step(self, i: int) -> None:
        now = self.clock()
        if self.tty:
            if now - self.last >= REDRAW_S or i == self.total:
                self.last, self.drawn = now, True
                width = 30
                done = round(width * i / self.total) if self.total else width
                self.out.write(f"\r{self.name} [{'#' * done}{'.' * (width - done)}] {i}/{self.total}")
                self.out.flush()
        elif now - self.last >= LINE_EVERY_S:
            self.last = now
            rate = i / max(now - self.start, 1e-9)
            left = (self.total - i) / rate if rate > 0 else float("inf")
            self.out.write(
                f"dicetower: {self.name}: {i}/{self.total} photos, {rate:.1f}/s, about {left:.0f} s left\n"
            )
            self.out.flush()

    def close(self) -> None:
        if self.tty and self.drawn:
            self.out.write("\r\033[K")
            self.out.flush()

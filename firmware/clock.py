"""Time for the tower: real, or virtual so that shakes and settle timeouts run without sleeping.

Why a clock object: the shaker times pulses and the roll cycle times settling, and tests
and the benchmark must check those timings (a 10 s duty window, a 4 s settle timeout)
without waiting for them. Everything that waits does it through :meth:`Clock.wait`, which
on a :class:`VirtualClock` moves time on at once. :class:`VirtualClockFactory` is
gpiozero's own :class:`~gpiozero.pins.mock.MockFactory` whose pins stamp their recorded
states with the same clock, so ``MockPin.states`` shows the on-times the pin really had.
"""

from __future__ import annotations

import contextlib
import math
import sys
import threading
import time
from collections.abc import Iterator
from functools import cache
from typing import Any

__all__ = [
    "PUNCTUAL_SWITCH_S",
    "Clock",
    "RealClock",
    "VirtualClock",
    "VirtualClockFactory",
    "mock_factory",
]

#: The interpreter's thread switch interval while a :meth:`RealClock.punctual` block runs (Python's
#: default is 5 ms). A thread whose wait has ended asks for the GIL and gets it after at most this
#: long from a busy thread, so a pulse's off comes that much sooner under load.
PUNCTUAL_SWITCH_S = 0.0005


class Clock:
    """Monotonic seconds and an interruptible wait.

    Subclasses *must* override :meth:`ticks` and :meth:`wait`. They *may* set :attr:`margin_s`.
    """

    #: How late a wait may return, at the least: a deadline that must not be passed is aimed this
    #: much early (the shaker's pulses; it adds what it sees on top). 0 for a clock that is exact.
    margin_s: float = 0.0

    def ticks(self) -> float:
        raise NotImplementedError

    def wait(self, event: threading.Event, seconds: float) -> bool:
        """Wait up to ``seconds`` or until ``event`` is set; True when it was set."""
        raise NotImplementedError

    def sleep(self, seconds: float) -> None:
        self.wait(threading.Event(), seconds)

    def punctual(self) -> contextlib.AbstractContextManager[None]:
        """A block whose waits should return on time (a pulse); nothing to do on an exact clock."""
        return contextlib.nullcontext()


class RealClock(Clock):
    """``time.monotonic``; a wait returns late by however long the thread waits for the CPU and the GIL."""

    margin_s = 0.010

    def ticks(self) -> float:
        return time.monotonic()

    def wait(self, event: threading.Event, seconds: float) -> bool:
        return event.wait(max(0.0, seconds))

    def punctual(self) -> contextlib.AbstractContextManager[None]:
        """Lower the interpreter's switch interval to :data:`PUNCTUAL_SWITCH_S` for the block.

        Why: a wait that ends needs the GIL back before its thread can act, and a busy thread
        holds it for up to the switch interval (5 ms by default, longer with several busy
        threads); under load a wait returns about half as late with it. The setting is the
        whole interpreter's, so it is counted: the first block in lowers it, the last one out
        restores what was there.
        """
        return _punctual()


class VirtualClock(Clock):
    """Time that moves only when something waits: a wait of ``s`` seconds moves it ``s`` on, at once."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = float(start)
        self._lock = threading.Lock()

    def ticks(self) -> float:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> None:
        """Move time on by ``seconds`` (a negative is 0); a non-finite step is a ValueError: time at
        infinity would make every interval measured on it zero."""
        if not math.isfinite(seconds):
            raise ValueError(f"a virtual clock moves on by a finite number of seconds, not {seconds!r}")
        with self._lock:
            self._now += max(0.0, seconds)

    def wait(self, event: threading.Event, seconds: float) -> bool:
        if event.is_set():
            return True
        self.advance(seconds)
        return event.is_set()


_punctual_lock = threading.Lock()
_punctual_state: list[float] = []  #: [interval to restore] while any punctual block runs, else []
_punctual_depth = [0]


@contextlib.contextmanager
def _punctual() -> Iterator[None]:
    with _punctual_lock:
        if _punctual_depth[0] == 0:
            _punctual_state[:] = [sys.getswitchinterval()]
            sys.setswitchinterval(min(PUNCTUAL_SWITCH_S, _punctual_state[0]))
        _punctual_depth[0] += 1
    try:
        yield
    finally:
        with _punctual_lock:
            _punctual_depth[0] -= 1
            if _punctual_depth[0] == 0 and _punctual_state:
                sys.setswitchinterval(_punctual_state.pop())


@cache
def _pin_classes() -> tuple[type, type]:
    from gpiozero.pins.mock import MockFactory, MockPin, PinState

    class VirtualClockPin(MockPin):
        """A mock pin whose recorded states are stamped with its factory's clock."""

        def _change_state(self, value: bool) -> bool:
            if self._state != value:
                t = self.factory.ticks()
                self._state = value
                self.states.append(PinState(t - self._last_change, value))
                self._last_change = t
                return True
            return False

        def clear_states(self) -> None:
            self._last_change = self.factory.ticks()
            self.states = [PinState(0.0, self._state)]

    class _Factory(MockFactory):
        def __init__(self, clock: Clock, **kw: Any) -> None:
            self.clock = clock
            super().__init__(pin_class=VirtualClockPin, **kw)

        def ticks(self) -> float:  # type: ignore[override]
            return self.clock.ticks()

        @staticmethod
        def ticks_diff(later: float, earlier: float) -> float:
            return later - earlier

    return VirtualClockPin, _Factory


def VirtualClockFactory(clock: Clock, **kw: Any) -> Any:
    """A :class:`~gpiozero.pins.mock.MockFactory` on ``clock`` (gpiozero imported only when called)."""
    return _pin_classes()[1](clock, **kw)


def mock_factory(clock: Clock | None = None) -> Any:
    """gpiozero's mock pins: stamped by ``clock`` when it is virtual, by real time otherwise."""
    if clock is None or isinstance(clock, RealClock):
        from gpiozero.pins.mock import MockFactory

        return MockFactory()
    return VirtualClockFactory(clock)

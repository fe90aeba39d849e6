"""Time for the tower: real, or virtual so that shakes and settle timeouts run without sleeping.

Why a clock object: the shaker times pulses and the roll cycle times settling, and tests
and the benchmark must check those timings (a 10 s duty window, a 4 s settle timeout)
without waiting for them. Everything that waits does it through :meth:`Clock.wait`, which
on a :class:`VirtualClock` moves time on at once. :class:`VirtualClockFactory` is
gpiozero's own :class:`~gpiozero.pins.mock.MockFactory` whose pins stamp their recorded
states with the same clock, so ``MockPin.states`` shows the on-times the pin really had.
"""

from __future__ import annotations

import threading
import time
from functools import cache
from typing import Any

__all__ = ["Clock", "RealClock", "VirtualClock", "VirtualClockFactory", "mock_factory"]


class Clock:
    """Monotonic seconds and an interruptible wait.

    Subclasses *must* override :meth:`ticks` and :meth:`wait`.
    """

    def ticks(self) -> float:
        raise NotImplementedError

    def wait(self, event: threading.Event, seconds: float) -> bool:
        """Wait up to ``seconds`` or until ``event`` is set; True when it was set."""
        raise NotImplementedError

    def sleep(self, seconds: float) -> None:
        self.wait(threading.Event(), seconds)


class RealClock(Clock):
    def ticks(self) -> float:
        return time.monotonic()

    def wait(self, event: threading.Event, seconds: float) -> bool:
        return event.wait(max(0.0, seconds))


class VirtualClock(Clock):
    """Time that moves only when something waits: a wait of ``s`` seconds moves it ``s`` on, at once."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = float(start)
        self._lock = threading.Lock()

    def ticks(self) -> float:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._now += max(0.0, seconds)

    def wait(self, event: threading.Event, seconds: float) -> bool:
        if event.is_set():
            return True
        self.advance(seconds)
        return event.is_set()


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

"""The solenoid shaker, and the hard limits that keep it from ever being left on.

Every pulse the tower makes passes through :class:`Shaker`, the one place the limits live:

* **max on-time**: a single pulse longer than ``max_on_s`` is shortened to it. On a clock whose
  waits can return late (the real one: the thread waits for the CPU and the GIL), a pulse ends
  early by a margin: the clock's own (:attr:`~dicetower.firmware.clock.Clock.margin_s`) or
  :data:`LATE_FACTOR` times the worst lateness seen in the last :data:`LATE_SAMPLES` waits,
  whichever is more, so the on-time the pin shows stays under ``max_on_s``; when the margin
  leaves less than :data:`MIN_PULSE_S`, the pulse is refused;
* **duty**: the solenoid is on at most ``max_duty`` of any ``window_s`` sliding window. A
  pulse is shortened to what is left of that budget (less the same margin), and refused when
  less than :data:`MIN_PULSE_S` is left (a 12 V push solenoid rated for intermittent duty
  overheats when held; the budget is what keeps it within its rating);
* **min off-time**: a rest shorter than ``min_off_s`` between pulses is lengthened to it
  (the coil and the MOSFET get their time to recover, and the plunger to return);
* **times that are times**: every on-time and rest asked for is a finite number of seconds, not
  negative, within its bound (:func:`~dicetower.firmware.pattern.seconds`), or
  :class:`~dicetower.firmware.errors.ShakerTimingError` before anything moves.

Each shortened, lengthened or refused request is logged and reported in the returned
:class:`Pulse`; no request past a limit reaches the pin.

**The pin is low on every way out of a pulse.** Each pulse's on, wait and off run on a thread of
their own, the off in a ``finally``. Python runs signal handlers (``KeyboardInterrupt``, the
``SystemExit`` of :mod:`~dicetower.firmware.signals`) in the main thread only, so nothing raised
by a signal can land between that thread's on and its off; a clock that raises is caught by the
same ``finally``. The caller waits for the thread; if the caller is interrupted, it cuts the pulse
short at once (``off``), and if even that is interrupted the thread still ends the pulse on time.
The wait is an ``Event.wait`` (through the clock), so :meth:`Shaker.off` and :meth:`Shaker.close`
cut a pulse short at once. A watchdog thread forces the pin low if an on-time ever runs past
``max_on_s`` plus :data:`WATCHDOG_GRACE_S` (a stalled pulse thread). The pin starts low
(``initial_value=False``) and is driven low by ``close()``, which the CLI and service call on
every way out, SIGTERM and SIGINT included
(:func:`~dicetower.firmware.signals.install_signal_handlers`).

What no software guarantees: a process killed outright (SIGKILL, the out-of-memory killer, a
power cut of the Pi alone) runs no ``finally``; the gate's pull-down and its coupling capacitor
(``hardware/``) let the solenoid go within about 1.2 s of the pin being left high. A process so
starved of CPU that a wait returns later than the margin allows can overrun ``max_on_s`` by that
lateness; the margin grows with the lateness seen, and the watchdog bounds the overrun.

The shaker owns its :class:`~dicetower.firmware.pattern.ShakePattern` (built from the config):
:meth:`Shaker.paced_shake` and :meth:`Shaker.paced_tap` wait for the duty budget to have room
for the pattern's shake or tap, then give it, so every caller paces the same way.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import deque
from dataclasses import dataclass, replace
from typing import Any

from .clock import Clock, RealClock
from .errors import ShakerClosedError
from .pattern import MAX_PATTERN_PULSES, MAX_REST_S, ShakePattern, ShakerLimits, seconds

__all__ = [
    "LATE_FACTOR",
    "LATE_MEMORY_S",
    "LATE_SAMPLES",
    "MIN_PULSE_S",
    "PROBE_AFTER_S",
    "PROBE_S",
    "WATCHDOG_GRACE_S",
    "Pulse",
    "ShakePattern",
    "Shaker",
    "ShakerLimits",
]

log = logging.getLogger(__name__)

#: A pulse the duty budget would cut below this is refused rather than given as a twitch.
MIN_PULSE_S = 0.005
#: How far past ``max_on_s`` the watchdog lets an on-time run before it forces the pin low.
WATCHDOG_GRACE_S = 0.05
#: How often the watchdog looks at the pin (real seconds).
WATCHDOG_POLL_S = 0.01
#: Waits whose lateness is remembered (each pulse's end, each rest, each probe), on a clock with a margin:
#: the last :data:`LATE_SAMPLES` of the last :data:`LATE_MEMORY_S` seconds, so a CPU that is idle again
#: gives full pulses again.
LATE_SAMPLES = 32
LATE_MEMORY_S = 5.0
#: A pulse ends this many times the worst remembered lateness before ``max_on_s`` (at least the
#: clock's margin).
LATE_FACTOR = 2.0
#: With no lateness seen for this long (real clock), a pulse first waits :data:`PROBE_S` to see how late
#: waits return now: a CPU that became busy since the last pulse is seen before the pin goes high.
PROBE_AFTER_S = 0.5
PROBE_S = 0.002


@dataclass(frozen=True)
class Pulse:
    """One pulse as asked and as given; ``given_s == 0`` means refused, ``note`` says why."""

    asked_s: float
    given_s: float
    note: str = ""

    @property
    def refused(self) -> bool:
        return self.given_s <= 0.0

    def to_json(self) -> dict[str, Any]:
        asked, given = round(self.asked_s * 1000, 1), round(self.given_s * 1000, 1)
        return {"asked_ms": asked, "given_ms": given, "note": self.note}


class Shaker:
    """A push solenoid behind a logic-level MOSFET, driven by a gpiozero ``DigitalOutputDevice``.

    Wiring (``hardware/wiring.svg``; parts in ``hardware/bom.md``): GPIO ``pin`` -> R1 470 Ω ->
    C2 10 µF -> gate of the MOSFET Q1, with R2 100 kΩ and a clamp diode D2 from the gate to
    ground (R2 holds the gate low while the Pi boots); the solenoid between +12 V and the drain,
    a flyback diode across it; the source to the ground shared with the Pi. C2 makes the drive
    pulse-only: a pin left high lets the gate decay through R2, so the solenoid lets go within
    about 1.2 s even if no software is left to drive it low.

    ``pattern`` is the shake and the tap :meth:`paced_shake` and :meth:`paced_tap` give, and
    its limits are the ones enforced below every caller (see the module docstring); ``limits``,
    when given, replaces the pattern's. ``clock`` times the pulses (a
    :class:`~dicetower.firmware.clock.VirtualClock` makes them take no real time).

    Example::

        from gpiozero.pins.mock import MockFactory
        with Shaker(17, pin_factory=MockFactory()) as shaker:
            shaker.paced_shake()  # the pattern's: 6 pulses of 80 ms, 120 ms apart
            shaker.shake(count=4, on_s=0.08, off_s=0.12)
            shaker.tap(0.025)
    """

    def __init__(
        self,
        pin: int | str,
        *,
        pattern: ShakePattern | None = None,
        limits: ShakerLimits | None = None,
        active_high: bool = True,
        pin_factory: Any = None,
        clock: Clock | None = None,
    ) -> None:
        from gpiozero import DigitalOutputDevice

        pattern = pattern or ShakePattern()
        if limits is not None:
            pattern = replace(pattern, limits=limits)
        #: the shake and tap this shaker gives when asked for "the" shake or tap
        self.pattern = pattern
        self.limits = pattern.limits
        self.clock = clock or RealClock()
        self._device = DigitalOutputDevice(
            pin, active_high=active_high, initial_value=False, pin_factory=pin_factory
        )
        try:
            # re-entrant: a signal handler calling off() in the main thread may land while that
            # thread holds the lock (reading the history); a plain lock would deadlock there
            self._lock = threading.RLock()  #: guards the pin, ``_on_since`` and the history
            self._run_lock = threading.Lock()  #: one pattern at a time
            self._stop = threading.Event()  #: set by off()/close(): cut the pattern short
            self._closing = threading.Event()
            self._history: deque[tuple[float, float]] = deque()  #: (on, off) ticks inside the window
            self._on_since: float | None = None
            self._on_since_real: float | None = None  #: the watchdog's own measure, in real time
            self._last_off: float | None = None
            self._pattern: threading.Thread | None = None
            self._pulse_thread: threading.Thread | None = None
            self._late: deque[tuple[float, float]] = deque(maxlen=LATE_SAMPLES)  #: (tick, how late)
            self._late_at = -float("inf")  #: clock ticks when lateness was last seen
            self._watchdog = threading.Thread(target=self._watch, name="shaker-watchdog", daemon=True)
            self._watchdog.start()
        except BaseException:
            self._device.close()
            raise

    # -- gpiozero vocabulary

    @property
    def pin(self) -> Any:
        """The gpiozero pin (a ``MockPin`` under ``MockFactory``)."""
        return self._device.pin

    @property
    def value(self) -> int:
        return 0 if self.closed else int(self._device.value)

    @property
    def is_active(self) -> bool:
        return bool(self.value)

    @property
    def closed(self) -> bool:
        return self._device.closed

    def off(self) -> None:
        """Drive the pin low now and cut any running pattern short."""
        self._stop.set()
        if self._force_off("") is not None:
            log.info("solenoid pulse cut short by off()")

    def close(self) -> None:
        """Pin low, threads stopped, pin released. Idempotent."""
        if self.closed:
            return
        self._closing.set()
        self.off()
        for thread in (self._pattern, self._pulse_thread):
            if thread is not None and thread is not threading.current_thread():
                thread.join(timeout=2.0)
        if self._watchdog is not threading.current_thread():
            self._watchdog.join(timeout=2.0)
        with self._lock:
            self._device.off()
            self._device.close()

    def __enter__(self) -> Shaker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- what callers ask for

    def pulse(self, on_s: float) -> Pulse:
        """One pulse of ``on_s`` seconds, through the limits; blocks until the pin is low again.

        ``on_s`` that is not a positive, finite number of seconds is a
        :class:`~dicetower.firmware.errors.ShakerTimingError`.
        """
        seconds("on_s", on_s)
        with self._run_lock:
            self._start_pattern()
            return self._pulse(on_s)

    def tap(self, on_s: float = 0.025) -> Pulse:
        """One short pulse: settles a leaning die without re-rolling the rest."""
        return self.pulse(on_s)

    def shake(
        self, count: int = 6, on_s: float = 0.08, off_s: float = 0.12, *, wait: bool = True
    ) -> list[Pulse]:
        """``count`` pulses of ``on_s`` with ``off_s`` rests; ``wait=False`` runs it on a thread.

        Returns the pulses as given (empty when ``wait=False``; see :meth:`wait`). A refused
        pulse ends the pattern: the duty budget is spent. An on-time or rest that is not a
        finite number of seconds (on-time over 0, rest 0 to :data:`~.pattern.MAX_REST_S`) is a
        :class:`~dicetower.firmware.errors.ShakerTimingError`, before any pulse.
        """
        count = int(count)
        if not 0 <= count <= MAX_PATTERN_PULSES:
            raise ValueError(f"a shake is 0..{MAX_PATTERN_PULSES} pulses, got {count}")
        on_s = seconds("on_s", on_s)
        off_s = seconds("off_s", off_s, zero=True, most=MAX_REST_S)
        if not wait:
            self._check_open()
            done: list[Pulse] = []
            thread = threading.Thread(
                target=self._pattern_thread,
                args=(done, count, on_s, off_s),
                name="shaker-pattern",
                daemon=True,
            )
            self._pattern = thread
            thread.start()
            return done
        out: list[Pulse] = []
        self._pattern_into(out, count, on_s, off_s)
        return out

    def paced_shake(self, pattern: ShakePattern | None = None) -> list[Pulse]:
        """The shake of ``pattern`` (default: this shaker's), once the duty budget has room for it.

        Waiting first means a busy table is paced by the duty limit instead of having its
        shakes cut short. The limits stay this shaker's whatever the pattern says.
        """
        p = pattern or self.pattern
        self.wait_for_budget(p.shake_s, p.shake_count)
        return self.shake(p.shake_count, p.shake_on_s, p.shake_off_s)

    def paced_tap(self, pattern: ShakePattern | None = None) -> Pulse:
        """The tap of ``pattern`` (default: this shaker's), once the duty budget has room for it."""
        p = pattern or self.pattern
        self.wait_for_budget(p.tap_on_s)
        return self.tap(p.tap_on_s)

    def wait_for_budget(self, on_s: float, pulses: int = 1) -> float:
        """Wait (on the clock) until ``on_s`` of on-time in ``pulses`` pulses fits the duty budget;
        returns the seconds waited.

        :meth:`paced_shake` and :meth:`paced_tap` call this first. Each pulse may run late by the
        margin, so room for that is waited for too. Bounded: at most one window.
        """
        on_s = seconds("on_s", on_s, zero=True)
        need = min(on_s + max(1, int(pulses)) * self._margin(), self.limits.budget_s)
        waited = 0.0
        for _ in range(64):  # each step waits for the oldest interval to leave the window
            left = self.limits.budget_s - self._used_in_window()
            if left >= need or waited >= self.limits.window_s:
                break
            with self._lock:
                oldest = self._history[0] if self._history else None
            if oldest is None:
                break
            step = max(MIN_PULSE_S, oldest[1] - (self.clock.ticks() - self.limits.window_s))
            step = min(step, need - left + MIN_PULSE_S, self.limits.window_s - waited)
            if self.clock.wait(self._closing, step):
                break
            waited += step
        return waited

    def wait(self, timeout: float | None = None) -> None:
        """Wait for a pattern started with ``wait=False`` to end."""
        thread = self._pattern
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    # -- internals

    def _check_open(self) -> None:
        if self.closed or self._closing.is_set():
            raise ShakerClosedError("the shaker is closed")

    def _start_pattern(self) -> None:
        self._check_open()
        self._stop.clear()

    def _pattern_into(self, out: list[Pulse], count: int, on_s: float, off_s: float) -> None:
        with self._run_lock, self.clock.punctual():
            self._start_pattern()
            for i in range(count):
                if i and self._rest(off_s):
                    break
                p = self._pulse(on_s)
                out.append(p)
                if p.refused or self._stop.is_set():
                    break

    def _pattern_thread(self, out: list[Pulse], count: int, on_s: float, off_s: float) -> None:
        """A pattern started with ``wait=False``: a shaker closed under it just ends it."""
        with contextlib.suppress(ShakerClosedError):
            self._pattern_into(out, count, on_s, off_s)

    def _pulse(self, on_s: float) -> Pulse:
        """The one path to the pin: check every limit, then on, wait, off (:meth:`_give`).

        Punctual throughout (:meth:`~dicetower.firmware.clock.Clock.punctual`): the rest before the
        pulse measures lateness under the same conditions as the pulse's own end.
        """
        asked = seconds("on_s", on_s)
        with self.clock.punctual():
            return self._checked_pulse(asked)

    def _checked_pulse(self, asked: float) -> Pulse:
        lim = self.limits
        notes = []
        given = asked
        if given > lim.max_on_s:
            given = lim.max_on_s
            notes.append(f"shortened to max_on {lim.max_on_s * 1000:g} ms")
        if self._last_off is not None:
            rest = lim.min_off_s - (self.clock.ticks() - self._last_off)
            if rest > 0:
                notes.append(f"rest lengthened by {rest * 1000:.0f} ms to min_off {lim.min_off_s * 1e3:g} ms")
                if self._rest(rest):
                    return self._refuse(asked, "cut short by off()")
        if self._probe():
            return self._refuse(asked, "cut short by off()")
        margin = self._margin()
        if margin:
            cap = lim.max_on_s - margin
            if cap < MIN_PULSE_S:
                late = f"waits return up to {margin / LATE_FACTOR * 1000:.0f} ms late (a busy CPU)"
                return self._refuse(asked, f"{late}; no pulse could be sure to end within max_on")
            if given > cap:
                given = cap
                notes.append(
                    f"shortened to {cap * 1000:.0f} ms, {margin * 1000:.0f} ms inside max_on"
                    " for the clock's lateness"
                )
        left = lim.budget_s - self._used_in_window() - margin
        if left < min(MIN_PULSE_S, given):
            spent = f"duty budget spent ({lim.max_duty:g} of {lim.window_s:g} s)"
            return self._refuse(asked, f"{spent}; {max(left, 0) * 1000:.0f} ms left")
        if given > left:
            given = left
            notes.append(f"shortened to the {left * 1000:.0f} ms left of the duty budget")
        note = "; ".join(notes)
        if any(n.startswith("shortened") for n in notes):
            log.warning("solenoid pulse of %.0f ms: %s", asked * 1000, note)
        elif note:
            log.info("solenoid pulse of %.0f ms: %s", asked * 1000, note)
        return self._give(asked, given, notes)

    def _give(self, asked: float, given: float, notes: list[str]) -> Pulse:
        """Run one checked pulse on its own thread (:meth:`_on_wait_off`) and wait for it.

        Why a thread: an exception raised in the caller (a signal's ``KeyboardInterrupt`` or
        ``SystemExit``) cannot reach it, so the off that follows the on always runs. An interrupted
        caller cuts the pulse short on its way out.
        """
        out: list[Any] = []
        worker = threading.Thread(
            target=self._on_wait_off, args=(given, out), name="shaker-pulse", daemon=False
        )
        ended = False
        try:
            self._pulse_thread = worker
            worker.start()
            worker.join()
            ended = True
        finally:
            if not ended:  # the caller was interrupted: the pulse ends now, not at its time
                self._stop.set()
                self._force_off("")
        got = out[0] if out else None
        if isinstance(got, BaseException):
            raise got
        if got is None:
            return self._refuse(asked, "cut short by off()")
        start, end, cut = got
        note = "; ".join(notes)
        if cut:
            actual = max(0.0, (end if end is not None else self.clock.ticks()) - start)
            return Pulse(asked, min(actual, given), "; ".join([*notes, "cut short by off()"]))
        return Pulse(asked, given, note)

    def _on_wait_off(self, target: float, out: list[Any]) -> None:
        """Pin high, wait ``target`` seconds from the on, pin low in a ``finally``; the result in ``out``.

        Runs on a thread that is not the main thread, where no signal handler runs: only the
        clock can raise between the on and the off, and the ``finally`` catches that too. The
        result is ``(start, end, cut)``, None when ``off()`` came before the on, or the exception.
        """
        try:
            try:
                with self._lock:
                    self._check_open()
                    if self._stop.is_set():
                        out.append(None)
                        return
                    start = self.clock.ticks()
                    self._on_since = start
                    self._on_since_real = time.monotonic()
                    self._device.on()
                cut = self.clock.wait(self._stop, start + target - self.clock.ticks())
            finally:
                end = self._force_off("")
            if not cut and end is not None:
                self._note_late(end - start - target)
            out.append((start, end, cut))
        except BaseException as exc:  # handed to the caller, who raises it
            out.append(exc)

    def _rest(self, seconds: float) -> bool:
        """Wait ``seconds`` on the clock (noting how late it returned); True when ``off()`` cut it."""
        t0 = self.clock.ticks()
        cut = self.clock.wait(self._stop, seconds)
        if not cut:
            self._note_late(self.clock.ticks() - t0 - seconds)
        return cut

    def _probe(self) -> bool:
        """On a clock with a margin and no lateness seen lately, a short wait to see how late waits
        return now; True when ``off()`` cut it."""
        if not self.clock.margin_s or self.clock.ticks() - self._late_at < PROBE_AFTER_S:
            return False
        return self._rest(PROBE_S)

    def _note_late(self, late: float) -> None:
        if self.clock.margin_s:
            now = self.clock.ticks()
            with self._lock:
                self._late.append((now, max(0.0, late)))
                self._late_at = now

    def _margin(self) -> float:
        """How much before ``max_on_s`` (and the duty budget) a pulse aims to end: 0 on an exact clock."""
        if not self.clock.margin_s:
            return 0.0
        since = self.clock.ticks() - LATE_MEMORY_S
        with self._lock:
            worst = max((late for at, late in self._late if at >= since), default=0.0)
        return max(self.clock.margin_s, LATE_FACTOR * worst)

    def _refuse(self, asked: float, why: str) -> Pulse:
        log.warning("solenoid pulse of %.0f ms refused: %s", asked * 1000, why)
        return Pulse(asked, 0.0, f"refused: {why}")

    def _force_off(self, why: str) -> float | None:
        """Pin low; record the on-interval. Returns the off tick when the pin was on."""
        with self._lock:
            if self._device.closed:
                return None
            self._device.off()
            start, self._on_since = self._on_since, None
            self._on_since_real = None
            if start is None:
                return None
            end = self.clock.ticks()
            self._last_off = end
            self._history.append((start, end))
            if why:
                log.error("solenoid forced off by %s after %.0f ms", why, (end - start) * 1000)
            return end

    def _used_in_window(self) -> float:
        """On-time inside the last ``window_s`` (drops intervals that left it: the deque stays bounded)."""
        now = self.clock.ticks()
        lo = now - self.limits.window_s
        with self._lock:
            h = self._history
            while h and h[0][1] <= lo:
                h.popleft()
            return sum(end - max(start, lo) for start, end in h)

    def _watch(self) -> None:
        """Force the pin low if an on-time overruns ``max_on_s`` (a pulse thread that stalled).

        Measured in real time whatever the shaker's clock: the coil heats in real time.
        """
        limit = self.limits.max_on_s + WATCHDOG_GRACE_S
        while not self._closing.wait(WATCHDOG_POLL_S):
            since = self._on_since_real
            if since is not None and time.monotonic() - since > limit:
                self._force_off("the watchdog")
            elif since is None and self._device_on():
                # the pin is high though no pulse of ours is running: time it from now
                with self._lock:
                    if self._on_since is None:
                        self._on_since = self.clock.ticks()
                        self._on_since_real = time.monotonic()

    def _device_on(self) -> bool:
        try:
            return not self._device.closed and bool(self._device.value)
        except Exception:  # a closed pin mid-teardown
            return False

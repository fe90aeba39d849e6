"""What the solenoid is asked to do and the limits it is held to, in seconds: one definition.

Why one module: the tower's roll cycle, ``dicetower tower shake|tap``, the simulated camera
(which tells a shake from a tap on the pin it watches) and the config's defaults all need the
same timings. They read them here. :meth:`ShakePattern.from_config` turns the config's
milliseconds into seconds, the one place that conversion happens; the ``[shaker]`` section's
defaults are these defaults in milliseconds (:func:`milliseconds`).

Every time given to the shaker passes :func:`seconds` first: a number, finite, not negative and
within its bound, or :class:`~dicetower.firmware.errors.ShakerTimingError`. Only the standard
library and the tower's errors are imported, so the config can read its defaults without loading
gpiozero.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from numbers import Real
from typing import Any

from .errors import ShakerTimingError

__all__ = [
    "MAX_PATTERN_PULSES",
    "MAX_REST_S",
    "MAX_WINDOW_S",
    "ShakePattern",
    "ShakerLimits",
    "milliseconds",
    "seconds",
]

#: Most pulses one shake may ask for (bounds the loop whatever the caller passes).
MAX_PATTERN_PULSES = 50
#: Longest rest a shake may ask for between its pulses (and longest ``min_off_s``): longer is two shakes.
MAX_REST_S = 60.0
#: Longest duty window: the config allows 600 s; a bound keeps the clock's sums exact.
MAX_WINDOW_S = 3600.0


def seconds(name: str, value: Any, *, zero: bool = False, most: float = math.inf) -> float:
    """``value`` as seconds, or :class:`ShakerTimingError` naming ``name``.

    Refused: what is not a real number (a bool, a string, None), NaN, infinities, negatives, zero
    unless ``zero``, and more than ``most``. Why every entry checks: the shaker's sums over a
    window are only right for finite times, and an infinite rest on a virtual clock moves it to
    infinity, where each on-time measures zero and the duty budget never fills.
    """
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ShakerTimingError(f"{name} must be a number of seconds, got {value!r}")
    if not math.isfinite(value):
        raise ShakerTimingError(f"{name} must be a finite number of seconds, got {value!r}")
    if value < 0 or (value == 0 and not zero):
        raise ShakerTimingError(f"{name} must be {'0 or more' if zero else 'over 0'} s, got {value!r}")
    if value > most:
        raise ShakerTimingError(f"{name} must be at most {most:g} s, got {value!r}")
    return float(value)


def milliseconds(seconds: float) -> float:
    """``seconds`` in milliseconds, rounded to the microsecond so defaults read as written (``150.0``)."""
    return round(seconds * 1000, 3)


@dataclass(frozen=True)
class ShakerLimits:
    """The solenoid's hard limits (seconds and a fraction); :class:`~.shaker.Shaker` enforces them."""

    max_on_s: float = 0.150
    min_off_s: float = 0.040
    window_s: float = 10.0
    max_duty: float = 0.25

    def __post_init__(self) -> None:
        seconds("max_on_s", self.max_on_s, most=1.0)
        seconds("min_off_s", self.min_off_s, most=MAX_REST_S)
        seconds("window_s", self.window_s, most=MAX_WINDOW_S)
        duty = self.max_duty
        if isinstance(duty, bool) or not isinstance(duty, Real) or not 0 < duty <= 0.5:
            raise ShakerTimingError(f"max_duty must be in (0, 0.5], got {duty!r}")
        if self.max_on_s > self.max_duty * self.window_s:
            raise ShakerTimingError(
                f"max_on_s = {self.max_on_s:g} s does not fit in the duty budget"
                f" (max_duty * window_s = {self.max_duty * self.window_s:g} s)"
            )

    @property
    def budget_s(self) -> float:
        """Most on-time in any window."""
        return self.max_duty * self.window_s


@dataclass(frozen=True)
class ShakePattern:
    """The shake (``shake_count`` pulses of ``shake_on_s``, ``shake_off_s`` apart), the tap (one
    pulse of ``tap_on_s``) and the :class:`ShakerLimits` they pass through.

    A pattern is a request, not a promise: the shaker shortens, lengthens or refuses any pulse
    past its limits, so a pattern is checked for sense (counts and times that are numbers in
    range), not against the limits.
    """

    shake_count: int = 6
    shake_on_s: float = 0.080
    shake_off_s: float = 0.120
    tap_on_s: float = 0.025
    limits: ShakerLimits = field(default_factory=ShakerLimits)

    def __post_init__(self) -> None:
        count = self.shake_count
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_PATTERN_PULSES:
            raise ShakerTimingError(
                f"shake_count must be a whole number 1..{MAX_PATTERN_PULSES}, got {count!r}"
            )
        seconds("shake_on_s", self.shake_on_s)
        seconds("tap_on_s", self.tap_on_s)
        seconds("shake_off_s", self.shake_off_s, zero=True, most=MAX_REST_S)

    @classmethod
    def from_config(cls, cfg: Any) -> ShakePattern:
        """From a :class:`~dicetower.firmware.config.ShakerConfig`: its milliseconds made seconds."""

        def s(ms: float) -> float:
            return ms / 1000

        limits = ShakerLimits(s(cfg.max_on_ms), s(cfg.min_off_ms), s(cfg.duty_window_ms), cfg.max_duty)
        return cls(cfg.shake_count, s(cfg.shake_on_ms), s(cfg.shake_off_ms), s(cfg.tap_on_ms), limits)

    @property
    def shake_s(self) -> float:
        """The shake's on-time, all pulses together: what a paced shake waits for the duty budget
        to have room for (at most a whole budget; the shaker cuts what is over it)."""
        return self.shake_count * self.shake_on_s

    def is_shake(self, pulses: int, on_s: float) -> bool:
        """Whether a burst seen on the pin (``pulses`` pulses, ``on_s`` on-time in all) is this shake.

        Two or more pulses are a shake; one pulse is a shake when its on-time is nearer the
        shake's than the tap's. The tap is one pulse of at most ``tap_on_s`` (shortened, never
        lengthened), so the split sits halfway between the two on-times, out of reach of the
        jitter a real-time clock adds to a pulse.
        """
        if pulses < 1:
            return False
        if pulses >= 2:
            return True
        return abs(on_s - self.shake_on_s) < abs(on_s - self.tap_on_s)

"""What the solenoid is asked to do and the limits it is held to, in seconds: one definition.

Why one module: the tower's roll cycle, ``dicetower tower shake|tap``, the simulated camera
(which tells a shake from a tap on the pin it watches) and the config's defaults all need the
same timings. They read them here. :meth:`ShakePattern.from_config` turns the config's
milliseconds into seconds, the one place that conversion happens; the ``[shaker]`` section's
defaults are these defaults in milliseconds (:func:`milliseconds`).

Only the standard library is imported, so the config can read its defaults without loading
gpiozero.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

__all__ = ["MAX_PATTERN_PULSES", "ShakePattern", "ShakerLimits", "milliseconds"]

#: Most pulses one shake may ask for (bounds the loop whatever the caller passes).
MAX_PATTERN_PULSES = 50


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
        if not (0 < self.max_on_s <= 1.0 and self.min_off_s > 0 and self.window_s > 0):
            raise ValueError(f"shaker limits out of range: {self}")
        if not 0 < self.max_duty <= 0.5:
            raise ValueError(f"max_duty must be in (0, 0.5], got {self.max_duty}")
        if self.max_on_s > self.max_duty * self.window_s:
            raise ValueError("max_on_s must fit in the duty budget (max_duty * window_s)")

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
            raise ValueError(f"shake_count must be a whole number 1..{MAX_PATTERN_PULSES}, got {count!r}")
        for name in ("shake_on_s", "tap_on_s", "shake_off_s"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise ValueError(f"{name} must be a finite number of seconds, got {value!r}")
            if value < 0 or (value == 0 and name != "shake_off_s"):
                raise ValueError(f"{name} must be {'0 or more' if name == 'shake_off_s' else 'over 0'} s")

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

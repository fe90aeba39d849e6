"""The tower's front panel: the start button, three status LEDs and the tray light.

Why one class: the roll cycle reports its state once (:meth:`Panel.show`) and the panel
decides which LED means it; the tray light is switched on only while a frame is taken
(:meth:`Panel.lit`), so the dice are lit the same way for the empty-tray reference and
every roll, and the LEDs never light the tray. All pins come from ``[pins]`` in the config.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from enum import StrEnum
from typing import Any

__all__ = ["Panel", "TowerState"]


class TowerState(StrEnum):
    """What the tower is doing, for the LEDs, ``tower watch`` and systemd's STATUS line."""

    IDLE = "idle"
    SHAKING = "shaking"
    SETTLING = "settling"
    CAPTURING = "capturing"
    READING = "reading"
    TAPPING = "tapping"
    ATTENTION = "attention"  #: a failed throw: someone must look at the tray
    CLOSED = "closed"


_ROLLING = frozenset(
    {TowerState.SHAKING, TowerState.SETTLING, TowerState.CAPTURING, TowerState.READING, TowerState.TAPPING}
)


class Panel:
    """Start button (pull-up, pressed = low), idle/rolling/attention LEDs and the tray light.

    ``pins`` is a :class:`~dicetower.firmware.config.PinsConfig`; ``pin_factory`` the gpiozero
    factory shared with the shaker.
    """

    def __init__(self, pins: Any, *, pin_factory: Any = None) -> None:
        from gpiozero import LED, Button

        self._devices: list[Any] = []
        try:
            self.button = self._add(
                Button(pins.button, pull_up=True, bounce_time=None, pin_factory=pin_factory)
            )
            self.led_idle = self._add(LED(pins.led_idle, initial_value=False, pin_factory=pin_factory))
            self.led_rolling = self._add(LED(pins.led_rolling, initial_value=False, pin_factory=pin_factory))
            self.led_attention = self._add(
                LED(pins.led_attention, initial_value=False, pin_factory=pin_factory)
            )
            self.tray_light = (
                None
                if pins.tray_light is None
                else self._add(LED(pins.tray_light, initial_value=False, pin_factory=pin_factory))
            )
        except BaseException:
            self.close()
            raise
        self.state = TowerState.IDLE
        self.show(TowerState.IDLE)

    def _add(self, device: Any) -> Any:
        self._devices.append(device)
        return device

    def show(self, state: TowerState) -> None:
        """Light the LED that means ``state`` (idle, rolling, or needs attention)."""
        self.state = state
        if self.closed:
            return
        self.led_idle.value = state is TowerState.IDLE
        self.led_rolling.value = state in _ROLLING
        self.led_attention.value = state is TowerState.ATTENTION

    @contextlib.contextmanager
    def lit(self) -> Iterator[None]:
        """The tray light on for the ``with`` block (a no-op without one)."""
        if self.tray_light is None or self.closed:
            yield
            return
        self.tray_light.on()
        try:
            yield
        finally:
            self.tray_light.off()

    def wait_for_press(self, timeout: float | None) -> bool:
        """True when the start button was pressed within ``timeout`` seconds."""
        return bool(self.button.wait_for_press(timeout))

    @property
    def closed(self) -> bool:
        return not self._devices

    def close(self) -> None:
        """Every LED off and every pin released. Idempotent."""
        devices, self._devices = self._devices, []
        for d in reversed(devices):
            with contextlib.suppress(Exception):
                if hasattr(d, "off"):
                    d.off()
            with contextlib.suppress(Exception):
                d.close()
        self.state = TowerState.CLOSED

    def __enter__(self) -> Panel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

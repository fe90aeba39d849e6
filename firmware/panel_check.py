"""A builder's check of the front panel: each light in turn, then the button, the solenoid untouched.

Why its own step: after soldering the panel (BUILD.md §2), a builder needs to know that each LED
and the tray light sit on the pin the config says and that the button closes, before the first
roll mixes those faults with the camera's and the reader's. The check opens the panel's pins
only (:class:`~dicetower.firmware.panel.Panel`): the solenoid's pin is never claimed, so nothing
here can fire it, whatever a caller passes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .clock import Clock

__all__ = ["LIGHTS", "PanelCheck", "check_panel"]

#: The panel's lights in the order they are lit: (the Panel's attribute, what a builder calls it,
#: the config key under ``[pins]``).
LIGHTS: tuple[tuple[str, str, str], ...] = (
    ("led_idle", "green idle LED", "led_idle"),
    ("led_rolling", "amber rolling LED", "led_rolling"),
    ("led_attention", "red attention LED", "led_attention"),
    ("tray_light", "tray light", "tray_light"),
)


@dataclass
class PanelCheck:
    """What the check did: the lights it lit, in order, and whether the button was pressed in time."""

    lit: list[str] = field(default_factory=list)  #: the ``[pins]`` keys, in the order they were lit
    pressed: bool = False
    waited_s: float = 0.0  #: how long it waited for the press
    #: the button read pressed before the prompt (shorted to ground, or normally closed): not waited on
    stuck: bool = False


def check_panel(
    panel: Any,
    pins: Any,
    *,
    clock: Clock,
    hold_s: float,
    wait_s: float,
    say: Callable[[str], None],
) -> PanelCheck:
    """Light each of ``panel``'s lights for ``hold_s`` seconds in turn, then wait ``wait_s`` for a press.

    ``pins`` is the config's ``[pins]`` (for the GPIO numbers ``say`` reports); ``say`` gets one
    line per step, before the step, so a person knows which light should be on. Every light is
    off again when this returns or raises. A button that reads pressed before anyone is asked to
    press it is reported as stuck, not waited on: a wait would pass at once.
    """
    if not 0 <= hold_s <= 60:
        raise ValueError(f"hold must be 0 to 60 seconds, got {hold_s:g}")
    if not 0 < wait_s <= 600:
        raise ValueError(f"wait must be more than 0 and at most 600 seconds, got {wait_s:g}")
    result = PanelCheck()
    for attribute, name, key in LIGHTS:
        device = getattr(panel, attribute)
        if device is None:
            say(f"  {name}: none configured ([pins] {key})")
            continue
        say(f"  {name} (GPIO{getattr(pins, key)}): on for {hold_s:g} s")
        device.on()
        try:
            clock.sleep(hold_s)
        finally:
            device.off()
        result.lit.append(key)
    if panel.button.is_pressed:
        result.stuck = True
        return result
    say(f"press the button (GPIO{pins.button}) within {wait_s:g} s")
    start = clock.ticks()
    result.pressed = panel.wait_for_press(wait_s)
    result.waited_s = clock.ticks() - start
    return result

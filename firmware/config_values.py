"""The checks of single values in the tower's config: each returns the value to store, or raises
``ValueError`` saying what is allowed (the config adds the file, the section and the key).

Why a module of their own: :mod:`dicetower.firmware.config` declares each key with its check as
field metadata; keeping the checks here keeps that module to the sections and how a file is read.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from .cameras import BACKENDS

__all__ = [
    "FAULTS",
    "GPIO",
    "PIN_FACTORIES",
    "boolean",
    "camera_backend",
    "device",
    "faults",
    "int_in",
    "num_in",
    "one_of",
    "optional_gpio",
    "text",
    "tray_bgr",
    "tray_colour",
]

#: ``[pins] factory`` values: gpiozero pin factories by their names.
PIN_FACTORIES = ("mock", "default", "lgpio", "rpigpio", "pigpio", "native")
#: Faults the simulated camera can inject (``[sim] faults``).
FAULTS = ("cocked", "touching", "blurred", "frozen", "black", "disconnect", "leaves_tray", "jam")
_HEX_COLOUR = re.compile(r"#[0-9A-Fa-f]{6}")


def int_in(lo: int, hi: int) -> Callable[[Any], int]:
    def check(v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
            raise ValueError(f"a whole number {lo}..{hi}")
        return v

    return check


def num_in(lo: float, hi: float) -> Callable[[Any], float]:
    def check(v: Any) -> float:
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or not lo <= v <= hi:
            raise ValueError(f"a number {lo:g}..{hi:g}")
        return float(v)

    return check


def one_of(choices: tuple[str, ...]) -> Callable[[Any], str]:
    def check(v: Any) -> str:
        if v not in choices:
            raise ValueError(f"one of {', '.join(choices)}")
        return v

    return check


def text(max_len: int = 4096) -> Callable[[Any], str]:
    def check(v: Any) -> str:
        if not isinstance(v, str) or len(v) > max_len:
            raise ValueError(f"a string of at most {max_len} characters")
        return v

    return check


def camera_backend(v: Any) -> str:
    """A name in the camera backends' own registry, :data:`dicetower.firmware.cameras.BACKENDS`.

    Read when the value is checked, so a backend registered there is known here with no second
    list to keep in step; only the names are read, so no backend (picamera2, OpenCV) is imported.
    """
    if not isinstance(v, str) or v not in BACKENDS:
        raise ValueError(f"one of {', '.join(BACKENDS)}")
    return v


def boolean(v: Any) -> bool:
    if not isinstance(v, bool):
        raise ValueError("true or false")
    return v


#: BCM GPIO numbers on the 40-pin header (0 and 1 are the HAT EEPROM's I2C).
GPIO = int_in(2, 27)


def optional_gpio(v: Any) -> int | None:
    if v is False:
        return None
    try:
        return GPIO(v)
    except ValueError:
        raise ValueError("a BCM GPIO number 2..27, or false for none") from None


def faults(v: Any) -> tuple[str, ...]:
    if not isinstance(v, list) or not all(isinstance(x, str) and x in FAULTS for x in v):
        raise ValueError(f"a list drawn from {', '.join(FAULTS)}")
    return tuple(dict.fromkeys(v))


def device(v: Any) -> str:
    if isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 63:
        return str(v)
    if isinstance(v, str) and 0 < len(v) <= 4096:
        return v
    raise ValueError("a device index 0..63 or a device path such as /dev/video0")


def tray_colour(v: Any) -> str:
    """``""`` (no white balance), ``"neutral"`` (a grey, black or white tray) or ``"#RRGGBB"``: six hex
    digits and nothing else (``int(..., 16)`` alone would take ``"#1_2_34"``, which fails when used)."""
    if v in ("", "neutral"):
        return v
    if isinstance(v, str) and _HEX_COLOUR.fullmatch(v):
        return v.lower()
    raise ValueError('"" (colours as seen), "neutral" (a grey, black or white tray) or "#RRGGBB"')


def tray_bgr(value: str) -> tuple[int, int, int] | None:
    """A ``#RRGGBB`` tray colour as BGR; ``None`` for ``"neutral"`` (:func:`tray_colour`'s values)."""
    if not value.startswith("#"):
        return None
    r, g, b = (int(value[i : i + 2], 16) for i in (1, 3, 5))
    return b, g, r

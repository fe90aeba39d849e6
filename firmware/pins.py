"""Which gpiozero pin factory ``[pins] factory`` names, started on demand.

Why its own module: the factory is chosen by name from the config, and each real one is imported
only when chosen (lgpio, RPi.GPIO, pigpio are absent off a Pi), the way gpiozero loads its own
default factory lazily. Mock pins run on the tower's clock, so tests and benchmarks time pulses
without waiting.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from .clock import Clock, mock_factory
from .errors import TowerError

__all__ = ["FACTORIES", "pin_factory"]

#: The real factories by config name: (module, class).
FACTORIES: dict[str, tuple[str, str]] = {
    "lgpio": ("gpiozero.pins.lgpio", "LGPIOFactory"),
    "rpigpio": ("gpiozero.pins.rpigpio", "RPiGPIOFactory"),
    "pigpio": ("gpiozero.pins.pigpio", "PiGPIOFactory"),
    "native": ("gpiozero.pins.native", "NativeFactory"),
}


def pin_factory(name: str, clock: Clock) -> Any:
    """The factory ``name`` names: mock pins on ``clock``, None (gpiozero chooses) or a real one."""
    if name == "mock":
        return mock_factory(clock)
    if name == "default":
        return None  # gpiozero chooses (lgpio on a Pi 5) and says so if it falls back
    module, cls = FACTORIES[name]
    try:
        return getattr(import_module(module), cls)()
    except Exception as exc:
        raise TowerError(f"[pins] factory = {name!r}: cannot start it: {exc}") from None

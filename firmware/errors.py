"""Every error the tower raises, under one base, so the CLI and the server catch :class:`TowerError` once.

The subclasses say what went wrong in words a caller can show: the camera is missing, a
frame was garbage, the tray holds no die of a kind, a throw failed (with its last photo).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .records import ThrowRecord

__all__ = [
    "CalibrationError",
    "CameraDisconnectedError",
    "CameraError",
    "CameraFrameError",
    "CameraUnavailableError",
    "ConfigError",
    "ShakerClosedError",
    "ShakerTimingError",
    "ThrowFailedError",
    "TowerError",
    "TrayKindError",
]


class TowerError(Exception):
    """Base of every error the tower raises."""


class ConfigError(TowerError, ValueError):
    """A configuration that cannot be used; names the file, the key and what is allowed.

    The message is the first problem found; ``problems`` holds every one (``tower config --check``
    prints them all).
    """

    def __init__(self, message: str, problems: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.problems: tuple[str, ...] = tuple(problems) or (message,)


class ShakerClosedError(TowerError, RuntimeError):
    """The shaker was closed; it drives its pin no more."""


class ShakerTimingError(TowerError, ValueError):
    """A time asked of the shaker that is not a time: not a number, not finite, negative, or past its bound.

    Refused before anything moves: an infinite rest would move a virtual clock to infinity, where
    every on-time measures zero and the duty budget never fills.
    """


class CameraError(TowerError):
    """A camera that cannot deliver a usable frame."""


class CameraUnavailableError(CameraError):
    """The camera cannot be opened (not connected, wrong index or path, its library missing)."""


class CameraDisconnectedError(CameraError):
    """The camera stopped answering mid-roll; the tower retries, then gives up with this."""


class CameraFrameError(CameraError, ValueError):
    """The camera answered with something that is not an image (wrong shape, type or size)."""


class CalibrationError(TowerError):
    """No usable calibration (empty-tray reference and locked camera settings) for this camera."""


class TrayKindError(TowerError, ValueError):
    """A request for a die kind (or role) that the tray is not loaded with."""


class ThrowFailedError(TowerError):
    """A throw that could not be read after the bounded retries.

    ``reason`` is a :class:`~dicetower.firmware.records.FailureReason` value (``jam``,
    ``die_missing`` ...); ``record`` the throw's record, whose photo is the last frame seen.
    The solenoid is off when this is raised.
    """

    def __init__(self, reason: Any, message: str, record: ThrowRecord | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.record = record

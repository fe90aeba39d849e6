"""Every camera behind one interface, picked by name from the config (as gpiozero picks a pin factory).

Backends live one to a file and are imported only when chosen, so ``picamera2`` (which
exists only on Raspberry Pi OS) is never imported elsewhere:

========== ====================================================================
``sim``     renders the tray with :mod:`dicetower.vision.synth`; knows the truth; injects faults
``replay``  plays a folder in the ``manifest.jsonl`` format; knows each photo's truth
``opencv``  a USB webcam (or a video file) through ``cv2.VideoCapture``
``picamera2`` the Raspberry Pi camera (Camera Module 3)
========== ====================================================================

Nothing falls back to ``sim``: a camera that cannot be opened is an error to report.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator
from importlib import import_module
from typing import TYPE_CHECKING, Any

from ..clock import Clock, RealClock
from ..errors import CameraFrameError, CameraUnavailableError
from ..pattern import ShakePattern

if TYPE_CHECKING:
    import numpy as np

    from ...vision.manifest import LabelledDie
    from ..config import Config

__all__ = ["BACKENDS", "CameraBackend", "SolenoidWatch", "camera_class", "open_camera"]

#: backend name -> "module:Class", imported on first use
BACKENDS: dict[str, str] = {
    "sim": "dicetower.firmware.cameras.sim:SimCamera",
    "replay": "dicetower.firmware.cameras.replay:ReplayCamera",
    "opencv": "dicetower.firmware.cameras.opencv:OpenCVCamera",
    "picamera2": "dicetower.firmware.cameras.picamera2:PiCamera2Camera",
}


class CameraBackend(ABC):
    """One camera. Build with :func:`open_camera`; use as a context manager.

    Subclasses *must* override:

    * :meth:`capture` - return the next frame as a BGR ``uint8`` array (HxWx3). Raise
      :class:`~dicetower.firmware.errors.CameraDisconnectedError` when the device stopped
      answering, so the roll cycle can :meth:`reopen` it;
    * :meth:`from_config` - build the camera from the whole config (a backend registered in
      :data:`BACKENDS` is opened by :func:`open_camera` through it and nothing else).

    Subclasses *may* override:

    * :meth:`close` - release the device (call ``super().close()``; must be idempotent);
    * :meth:`lock_settings` - freeze exposure, gain, white balance and focus and return them
      (``tower calibrate`` saves them); :meth:`apply_settings` - restore saved ones at start;
    * :meth:`reopen` - reconnect after a disconnect (default: nothing to do);
    * :attr:`truth` - what the last frame really shows (sim and replay know it);
    * :meth:`empty_tray` - a context in which frames show the tray without dice (sim and
      replay, which set :attr:`can_show_empty_tray`); a real camera needs a person to empty it;
    * :meth:`watch_solenoid` - simulated cameras learn of shakes and taps from the pin, told
      apart by the shaker's :class:`~dicetower.firmware.pattern.ShakePattern`;
    * :attr:`live` - False for stills that repeat bit for bit (replay), so an identical frame
      is not taken for a frozen camera.

    The clock (:meth:`ticks`, :meth:`wait`) is the backend's, so the roll cycle's settle
    timeout is measured on it and a simulated camera on a virtual clock tests it without sleeping.
    """

    name: str = ""
    live: bool = True
    can_show_empty_tray: bool = False

    def __init__(self, *, clock: Clock | None = None) -> None:
        self.clock = clock or RealClock()
        self._closed = False
        self._never = threading.Event()

    @classmethod
    def from_config(cls, config: Config, *, clock: Clock | None = None) -> CameraBackend:
        """The camera ``config`` describes (``[camera]``, and ``[sim]``, ``[dice]`` ... as the
        backend needs), timed by ``clock``.

        Subclasses registered in :data:`BACKENDS` *must* override it: read what the backend
        needs from ``config``, pass ``clock`` on to ``__init__``, and raise
        :class:`~dicetower.firmware.errors.CameraUnavailableError` for a device that cannot be
        opened. Not abstract, so a camera made only in code (a test's) need not.
        """
        raise NotImplementedError(f"{cls.__name__} cannot be built from the config")

    @abstractmethod
    def capture(self) -> np.ndarray:
        """The next frame (BGR ``uint8``)."""

    def read_frame(self) -> np.ndarray:
        """:meth:`capture`, checked: anything that is not a usable image is a :class:`CameraFrameError`."""
        if self._closed:
            raise CameraUnavailableError(f"{self.name} camera is closed")
        frame = self.capture()
        from ...vision.imageio import ImageError, check_frame

        try:
            return check_frame(frame, f"{self.name} camera frame")
        except ImageError as exc:
            raise CameraFrameError(str(exc)) from None

    def lock_settings(self) -> dict[str, Any]:
        """Freeze what the camera adjusts by itself; return the values to save."""
        return {}

    def apply_settings(self, settings: dict[str, Any]) -> None:  # noqa: B027 - optional hook
        """Restore settings saved by :meth:`lock_settings`."""

    def reopen(self) -> None:  # noqa: B027 - optional hook
        """Reconnect after :class:`CameraDisconnectedError`."""

    @property
    def truth(self) -> tuple[LabelledDie, ...] | None:
        """The dice the last frame really shows, when the backend knows (sim, replay)."""
        return None

    @contextlib.contextmanager
    def empty_tray(self) -> Iterator[None]:
        """Frames taken inside show the empty tray. The default cannot: someone must empty it."""
        yield

    def watch_solenoid(  # noqa: B027 - optional hook
        self, pin: Any, pattern: ShakePattern | None = None
    ) -> None:
        """Told the solenoid's (mock) pin and the pattern the shaker gives (default: the built-in
        one); simulated cameras learn of shakes and taps from them."""

    def ticks(self) -> float:
        return self.clock.ticks()

    def ticks_diff(self, later: float, earlier: float) -> float:
        return later - earlier

    def wait(self, seconds: float) -> None:
        self.clock.wait(self._never, seconds)

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        self._closed = True

    def __enter__(self) -> CameraBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {'closed' if self._closed else 'open'}>"


class SolenoidWatch:
    """Reads a mock pin's recorded states since the last look: was the tray shaken, tapped, or left?

    The burst is told a shake or a tap by ``pattern`` (:meth:`ShakePattern.is_shake`: two or
    more pulses, or one nearer the shake's on-time than the tap's, are a shake), the pattern
    the shaker on that pin gives, so the simulated world and the shaker share one definition.
    """

    def __init__(self, pin: Any, pattern: ShakePattern | None = None) -> None:
        self.pin = pin
        self.pattern = pattern or ShakePattern()
        self._seen = len(pin.states)

    def take(self) -> str | None:
        states = self.pin.states
        seen, self._seen = self._seen, len(states)
        window = states[max(0, seen - 1) :]  # from the last state already seen, to pair its edge
        pulses = sum(1 for s in states[seen:] if s.state)
        on_s = sum(s.timestamp for prev, s in itertools.pairwise(window) if prev.state and not s.state)
        if not pulses:
            return None
        return "shake" if self.pattern.is_shake(pulses, on_s) else "tap"


def camera_class(name: str) -> type[CameraBackend]:
    """The backend class registered as ``name`` (its module imported now)."""
    try:
        target = BACKENDS[name]
    except KeyError:
        raise CameraUnavailableError(
            f"unknown camera backend {name!r}; known: {', '.join(BACKENDS)}"
        ) from None
    module, _, cls = target.partition(":")
    return getattr(import_module(module), cls)


def open_camera(config: Config, *, clock: Clock | None = None) -> CameraBackend:
    """Open the camera ``config.camera.backend`` names, built from the whole config."""
    return camera_class(config.camera.backend).from_config(config, clock=clock)

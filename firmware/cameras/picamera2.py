"""The Raspberry Pi camera (Camera Module 3) through ``picamera2``; runs only on a Pi.

Thin on purpose: it cannot be tested off a Pi. ``picamera2`` comes from Raspberry Pi OS
(``apt install python3-picamera2``; make the venv with ``--system-site-packages``) and is
imported only when this backend is chosen. One still configuration is set up once at open,
so no roll pays for a mode switch. ``RGB888`` is asked for because libcamera names formats
by their order in a little-endian word: its ``RGB888`` arrays are B, G, R in memory, which
is what OpenCV wants. :meth:`PiCamera2Camera.lock_settings` freezes exposure, gain, white
balance and focus at what the automatic controls settled on, for ``tower calibrate`` to save.

The sensor mode is asked for by :data:`SENSOR_FIELD`: left to itself libcamera picks the mode
nearest the output size, which on a Camera Module 3 for a 640 x 480 image is a cropped one, and
the tray would no longer fit the frame that ``hardware/tower.scad``'s camera height is worked
out for (the whole sensor height, ``hardware/lighting.md``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..clock import Clock
from ..errors import CameraDisconnectedError, CameraUnavailableError
from . import CameraBackend

if TYPE_CHECKING:
    from ..config import Config

__all__ = ["PiCamera2Camera"]

_SAVED = ("ExposureTime", "AnalogueGain", "ColourGains", "LensPosition")
#: The sensor mode asked for: the Camera Module 3's full field, 2 x 2 binned.
SENSOR_FIELD = (2304, 1296)


class PiCamera2Camera(CameraBackend):
    name = "picamera2"

    def __init__(self, *, size: tuple[int, int] = (2304, 1296), clock: Clock | None = None) -> None:
        super().__init__(clock=clock)
        try:
            from picamera2 import Picamera2
        except ImportError as exc:
            raise CameraUnavailableError(
                "picamera2 is not installed: apt install python3-picamera2, and make the venv with "
                f"--system-site-packages ({exc})"
            ) from None
        try:
            self._cam = Picamera2()
            config = self._cam.create_still_configuration(
                main={"size": size, "format": "RGB888"}, sensor={"output_size": SENSOR_FIELD}
            )
            self._cam.configure(config)
            self._cam.start()
        except Exception as exc:  # libcamera raises plain RuntimeError/IndexError with no camera
            raise CameraUnavailableError(f"picamera2: cannot open the camera: {exc}") from None

    @classmethod
    def from_config(cls, config: Config, *, clock: Clock | None = None) -> PiCamera2Camera:
        return cls(size=(config.camera.width, config.camera.height), clock=clock)

    def capture(self) -> np.ndarray:
        try:
            return self._cam.capture_array("main")
        except Exception as exc:
            raise CameraDisconnectedError(f"picamera2: capture failed: {exc}") from None

    def lock_settings(self) -> dict[str, Any]:
        meta = self._cam.capture_metadata()
        controls: dict[str, Any] = {k: meta[k] for k in _SAVED if k in meta}
        self.apply_settings(controls)
        return {k: list(v) if isinstance(v, tuple) else v for k, v in controls.items()}

    def apply_settings(self, settings: dict[str, Any]) -> None:
        controls: dict[str, Any] = {"AeEnable": False, "AwbEnable": False}
        for k in _SAVED:
            if k in settings:
                v = settings[k]
                controls[k] = tuple(v) if isinstance(v, list) else v
        if "LensPosition" in controls:
            controls["AfMode"] = 0  # manual focus at the saved lens position
        self._cam.set_controls(controls)

    def close(self) -> None:
        if not self.closed:
            try:
                self._cam.stop()
            finally:
                self._cam.close()
        super().close()

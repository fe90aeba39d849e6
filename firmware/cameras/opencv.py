"""A USB webcam (or a video file) through ``cv2.VideoCapture``.

``device`` is an index (``"0"``) or a path (``/dev/video2``, a video file). Settings are
locked where the driver allows it (V4L2 honours most of them; others ignore some, which
:meth:`OpenCVCamera.lock_settings` reports by leaving them out of what it returns).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import cv2
import numpy as np

from ..clock import Clock
from ..errors import CameraDisconnectedError, CameraUnavailableError
from . import CameraBackend

if TYPE_CHECKING:
    from ..config import Config

__all__ = ["OpenCVCamera"]

#: property name -> (cv2 property, value that turns the automatic control off)
_AUTO_OFF = {
    "auto_exposure": (cv2.CAP_PROP_AUTO_EXPOSURE, 1.0),  # V4L2: 1 = manual, 3 = aperture priority
    "auto_wb": (cv2.CAP_PROP_AUTO_WB, 0.0),
    "autofocus": (cv2.CAP_PROP_AUTOFOCUS, 0.0),
}
_LOCKED = {
    "exposure": cv2.CAP_PROP_EXPOSURE,
    "gain": cv2.CAP_PROP_GAIN,
    "wb_temperature": cv2.CAP_PROP_WB_TEMPERATURE,
    "focus": cv2.CAP_PROP_FOCUS,
}


class OpenCVCamera(CameraBackend):
    name = "opencv"

    def __init__(
        self, device: str | int = 0, *, size: tuple[int, int] | None = None, clock: Clock | None = None
    ) -> None:
        super().__init__(clock=clock)
        self.device: int | str = int(device) if str(device).isdigit() else str(device)
        self.size = size
        self._settings: dict[str, Any] = {}
        self._cap = self._open()

    @classmethod
    def from_config(cls, config: Config, *, clock: Clock | None = None) -> OpenCVCamera:
        cam = config.camera
        return cls(cam.device, size=(cam.width, cam.height), clock=clock)

    def _open(self) -> Any:
        cap = cv2.VideoCapture(self.device)
        if not cap.isOpened():
            cap.release()
            raise CameraUnavailableError(
                f"opencv: cannot open camera {self.device!r} (not connected, or busy)"
            )
        if self.size is not None and isinstance(self.device, int):
            cap.set(cv2.CAP_PROP_FRAME_WIDTH, self.size[0])
            cap.set(cv2.CAP_PROP_FRAME_HEIGHT, self.size[1])
        for name, value in self._settings.items():
            prop = _AUTO_OFF.get(name, (None,))[0] if name in _AUTO_OFF else _LOCKED.get(name)
            if prop is not None:
                cap.set(prop, float(value))
        return cap

    def capture(self) -> np.ndarray:
        ok, frame = self._cap.read()
        if not ok or frame is None:
            raise CameraDisconnectedError(f"opencv: camera {self.device!r} returned no frame")
        return frame

    def reopen(self) -> None:
        self._cap.release()
        self._cap = self._open()

    def lock_settings(self) -> dict[str, Any]:
        got: dict[str, Any] = {}
        for name, prop in _LOCKED.items():
            value = self._cap.get(prop)
            if value not in (-1.0, 0.0) or name in ("exposure", "gain"):
                got[name] = float(value)
        for name, (prop, off) in _AUTO_OFF.items():
            if self._cap.set(prop, off):
                got[name] = off
        for name, value in got.items():
            if name in _LOCKED:
                self._cap.set(_LOCKED[name], value)
        self._settings = got
        return dict(got)

    def apply_settings(self, settings: dict[str, Any]) -> None:
        self._settings = {k: v for k, v in settings.items() if k in _LOCKED or k in _AUTO_OFF}
        for name, value in self._settings.items():
            prop = _AUTO_OFF[name][0] if name in _AUTO_OFF else _LOCKED[name]
            self._cap.set(prop, float(value))

    def close(self) -> None:
        if not self.closed:
            self._cap.release()
        super().close()

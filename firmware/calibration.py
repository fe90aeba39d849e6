"""The empty-tray reference and locked camera settings that every reading is made against.

Why calibrate: the reader finds dice by what changed against a photo of the empty tray
taken under the same light, and a camera that re-adjusts exposure or white balance between
rolls makes that photo wrong. ``dicetower tower calibrate`` locks the camera's automatic
controls, averages a few frames of the empty tray and saves both in
``[calibration] dir``/``BACKEND``/ (``reference.png``, ``calibration.json``). The simulated
and replay cameras can show their empty tray at any time, so they calibrate when opened.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from ..vision.files import read_bounded
from .errors import CalibrationError
from .records import write_atomic

__all__ = ["MAX_CALIBRATION_BYTES", "REFERENCE_FRAMES", "Calibration"]

#: Frames averaged into the reference (sensor noise falls with the square root of this).
REFERENCE_FRAMES = 4
#: ``calibration.json`` is at most this long (it holds a few settings and the tray's outline).
MAX_CALIBRATION_BYTES = 1 << 20


@dataclass
class Calibration:
    reference: np.ndarray  #: BGR photo of the empty tray
    backend: str
    settings: dict[str, Any] = field(default_factory=dict)  #: the camera's locked controls
    tray: list[list[float]] | None = None  #: the tray's outline, ``[[x, y], ...]`` in frame pixels

    @property
    def size(self) -> tuple[int, int]:
        return int(self.reference.shape[1]), int(self.reference.shape[0])

    def tray_array(self) -> np.ndarray | None:
        return None if self.tray is None else np.asarray(self.tray, np.float32)

    def save(self, folder: str | Path) -> Path:
        folder = Path(folder) / self.backend
        folder.mkdir(parents=True, exist_ok=True)
        ok, png = cv2.imencode(".png", self.reference)
        if not ok:  # pragma: no cover - a valid uint8 image always encodes
            raise CalibrationError("cannot encode the reference photo")
        write_atomic(folder / "reference.png", png.tobytes())
        meta = {
            "schema": "dicetower.calibration/1",
            "backend": self.backend,
            "size": list(self.size),
            "settings": self.settings,
            "tray": self.tray,
        }
        write_atomic(folder / "calibration.json", (json.dumps(meta, indent=2) + "\n").encode())
        return folder

    @classmethod
    def load(cls, folder: str | Path, backend: str) -> Calibration:
        folder = Path(folder) / backend
        hint = "run 'dicetower tower calibrate' with the tray empty"
        try:
            meta = json.loads(
                read_bounded(folder / "calibration.json", MAX_CALIBRATION_BYTES).decode("utf-8")
            )
        except FileNotFoundError:
            raise CalibrationError(f"no calibration in {folder}: {hint}") from None
        except (OSError, ValueError) as exc:
            raise CalibrationError(f"{folder}/calibration.json is unreadable ({exc}): {hint}") from None
        from ..vision.imageio import ImageError, load_image

        try:
            reference = load_image(folder / "reference.png")
        except ImageError as exc:
            raise CalibrationError(f"{exc}: {hint}") from None
        if not isinstance(meta, dict) or meta.get("backend") != backend:
            raise CalibrationError(f"{folder}/calibration.json is not a {backend} calibration: {hint}")
        tray = meta.get("tray")
        if tray is not None and not (
            isinstance(tray, list)
            and len(tray) >= 3
            and all(isinstance(p, list) and len(p) == 2 for p in tray)
        ):
            raise CalibrationError(
                f"{folder}/calibration.json: tray must be [[x, y], ...] (3 points or more)"
            )
        settings = meta.get("settings") or {}
        if not isinstance(settings, dict):
            raise CalibrationError(f"{folder}/calibration.json: settings must be an object")
        return cls(reference, backend, settings, tray)

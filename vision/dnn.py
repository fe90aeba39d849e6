"""Load an ONNX model into ``cv2.dnn`` with the engine that runs our small nets fastest.

Why one place: both models (detector, face reader) are small CNNs run a photo at a time on
one core of a Pi, and OpenCV 5's classic engine runs the face reader about twice as fast as
its new default engine (25 crops: 9.7 against 17.9 ms, interleaved runs on one core);
the detector runs the same on both, so it takes the same path. OpenCV 4 has no engine
choice, so the plain loader is the fallback.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cv2

__all__ = ["load_onnx"]


def load_onnx(path: str | Path) -> Any:
    """A ``cv2.dnn.Net`` for ``path``; raises the last ``cv2.error`` when no engine loads it."""
    engines = [getattr(cv2.dnn, "ENGINE_CLASSIC", None), None]
    last: cv2.error | None = None
    for engine in engines:
        try:
            if engine is None:
                return cv2.dnn.readNetFromONNX(str(path))
            return cv2.dnn.readNetFromONNX(str(path), engine)
        except cv2.error as exc:
            last = exc
    assert last is not None
    raise last

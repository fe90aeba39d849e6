"""The CNN die detector: ``vision/models/detector.onnx`` run through ``cv2.dnn``.

Why cv2.dnn: the Pi has OpenCV already and never runs torch; the model is a tiny
CenterNet (heatmap of die centres at stride 4 + box size per centre), so decoding is a
3x3 max filter and a threshold, and touching dice remain two separate peaks.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from .dnn import MAX_CARD_BYTES, load_onnx
from .errors import VisionError
from .files import read_bounded
from .models import shipped_dir

__all__ = [
    "INPUT_SIZE",
    "MODEL_PATH",
    "STRIDE",
    "Detection",
    "DetectorError",
    "DieDetector",
    "letterbox",
]

INPUT_SIZE = 384  #: the square the model was trained at (the model card's ``input_size`` is what it sees)
STRIDE = 4  #: heatmap cell size in model pixels
MODEL_PATH = shipped_dir() / "detector.onnx"
#: A small photo is enlarged at most this much: a 128 px crop of one die becomes a ~170 px
#: die, within the sizes the model was trained on, instead of a 384 px one.
MAX_UPSCALE = 1.5
#: At most this many peaks are decoded (bounds the work on a noisy heatmap).
MAX_DETECTIONS = 100


class DetectorError(VisionError, RuntimeError):
    """The detector model is missing or unreadable."""


@dataclass(frozen=True)
class Detection:
    box: tuple[float, float, float, float]  #: x, y, w, h in the input frame's pixels
    score: float


def letterbox(frame: np.ndarray, size: int = INPUT_SIZE) -> tuple[np.ndarray, float]:
    """Fit ``frame`` into a ``size`` square (top-left aligned, grey padding); returns image, scale."""
    h, w = frame.shape[:2]
    scale = min(size / max(h, w), MAX_UPSCALE)
    nw, nh = max(1, round(w * scale)), max(1, round(h * scale))
    # Area averaging only where linear would alias badly: it is 4x slower at 640 -> 384.
    interp = cv2.INTER_AREA if scale < 0.5 else cv2.INTER_LINEAR
    out = np.full((size, size, 3), 114, np.uint8)
    out[:nh, :nw] = cv2.resize(frame, (nw, nh), interpolation=interp)
    return out, scale


class DieDetector:
    """Loads the ONNX model once; :meth:`detect` returns die boxes in frame pixels.

    >>> det = DieDetector()                          # doctest: +SKIP
    >>> det.detect(cv2.imread("roll.jpg"))           # doctest: +SKIP
    [Detection(box=(243.0, 350.1, 43.5, 43.5), score=0.93), ...]
    """

    def __init__(self, model_path: str | Path = MODEL_PATH, *, threshold: float = 0.3) -> None:
        path = Path(model_path)
        if not path.is_file():
            raise DetectorError(f"detector model not found: {path}")
        try:
            self._net = load_onnx(path)
        except cv2.error as exc:
            raise DetectorError(f"cannot load detector model {path}: {exc}") from None
        meta_path = path.with_suffix(".json")
        try:
            self.meta = json.loads(read_bounded(meta_path, MAX_CARD_BYTES)) if meta_path.exists() else {}
        except (OSError, ValueError) as exc:
            raise DetectorError(
                f"{meta_path}: bad metadata: {getattr(exc, 'strerror', None) or exc}"
            ) from None
        self.input_size = int(self.meta.get("input_size", INPUT_SIZE))
        self.stride = int(self.meta.get("stride", STRIDE))
        self.threshold = threshold
        self._lock = threading.Lock()  # a cv2.dnn Net is not safe to run from two threads at once

    def heatmap(self, frame: np.ndarray) -> tuple[np.ndarray, float]:
        """Raw model output (5, H/4, W/4) for a BGR frame, and the letterbox scale."""
        img, scale = letterbox(frame, self.input_size)
        blob = cv2.dnn.blobFromImage(img, 1.0 / 255.0)
        with self._lock:
            self._net.setInput(blob)
            out = self._net.forward()
        return np.asarray(out)[0], scale

    def detect(self, frame: np.ndarray, threshold: float | None = None) -> list[Detection]:
        """Die boxes in ``frame`` pixels, best first."""
        if frame.ndim == 2:
            frame = cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR)
        out, scale = self.heatmap(frame)
        thr = self.threshold if threshold is None else threshold
        logit = out[0]
        # sigmoid(x) > thr  <=>  x > logit(thr): threshold before any exp.
        lthr = float(np.log(thr / (1 - thr)))
        peaks = (logit == cv2.dilate(logit, np.ones((3, 3), np.uint8))) & (logit > lthr)
        ys, xs = np.nonzero(peaks)
        if len(xs) > MAX_DETECTIONS:
            order = np.argsort(-logit[ys, xs])[:MAX_DETECTIONS]
            ys, xs = ys[order], xs[order]
        h, w = frame.shape[:2]
        # All peaks at once (a crowded frame has 25+, and numpy scalar maths costs ~10 us each).
        k = self.stride / scale
        scores = 1.0 / (1.0 + np.exp(-logit[ys, xs].astype(np.float64)))
        cxs = (xs + out[1, ys, xs]) * k
        cys = (ys + out[2, ys, xs]) * k
        bws = np.exp(np.clip(out[3, ys, xs], -3, 6)).astype(np.float64) * k
        bhs = np.exp(np.clip(out[4, ys, xs], -3, 6)).astype(np.float64) * k
        inside = (cxs >= 0) & (cxs < w) & (cys >= 0) & (cys < h)  # else a peak in the letterbox padding
        dets = [
            Detection((cx - bw / 2, cy - bh / 2, bw, bh), score)
            for cx, cy, bw, bh, score in zip(
                cxs[inside].tolist(),
                cys[inside].tolist(),
                bws[inside].tolist(),
                bhs[inside].tolist(),
                scores[inside].tolist(),
                strict=True,
            )
        ]
        dets.sort(key=lambda d: -d.score)
        return dets

"""Draw a :class:`Reading` (and optionally the labels it was scored against) on a frame.

Used by ``dicetower read --annotate``, ``dicetower eval --save-failures`` and the overlay.
Colours: green = read, orange = unreadable (with the reason), cyan dashes = the label box,
red = a failed label (wrong / missed / rejected) or a false positive.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from ..reading import DieReading, Reading, ReadStatus
from .evaluate import PhotoResult

__all__ = ["annotate_reading", "annotate_result", "crop_box"]

_GREEN = (60, 200, 60)
_ORANGE = (0, 140, 255)
_RED = (40, 40, 230)
_CYAN = (230, 200, 0)


Colour = tuple[int, int, int]


def _text(img: np.ndarray, text: str, org: tuple[int, int], colour: Colour, scale: float) -> None:
    thickness = max(1, round(scale * 2))
    cv2.putText(img, text, org, cv2.FONT_HERSHEY_SIMPLEX, scale, (0, 0, 0), thickness + 2, cv2.LINE_AA)
    cv2.putText(img, text, org, cv2.FONT_HERSHEY_SIMPLEX, scale, colour, thickness, cv2.LINE_AA)


def _rect(img: np.ndarray, box: Sequence[float], colour: tuple[int, int, int], thickness: int) -> None:
    x, y, w, h = (round(v) for v in box)
    cv2.rectangle(img, (x, y), (x + w, y + h), colour, thickness)


def _font_scale(img: np.ndarray) -> float:
    return max(0.4, max(img.shape[:2]) / 1200)


def _draw_die(img: np.ndarray, d: DieReading, colour: tuple[int, int, int] | None = None) -> None:
    fs = _font_scale(img)
    if d.status is ReadStatus.READ:
        colour = colour or _GREEN
        label = f"{d.face}" if d.kind == "d6" else f"{d.kind} {d.face}"
    else:
        colour = colour or _ORANGE
        label = f"? {d.reason.value if d.reason else ''}".strip()
    if d.contour:
        cv2.polylines(img, [np.array(d.contour, np.int32).reshape(-1, 1, 2)], True, colour, 2)
    else:
        _rect(img, d.box, colour, 2)
    if d.face_centre is not None:  # where the read face is: off the box's centre at a slant
        cx, cy = (round(v) for v in d.face_centre)
        cv2.drawMarker(img, (cx, cy), colour, cv2.MARKER_CROSS, max(6, round(12 * fs)), 1, cv2.LINE_AA)
    x, y = round(d.box[0]), round(d.box[1])
    _text(img, label, (x, max(12, y - 4)), colour, fs)


def annotate_reading(frame: np.ndarray, reading: Reading) -> np.ndarray:
    """A copy of ``frame`` with each read die outlined and labelled with its face or reason, and a
    cross where its read face's centre was found."""
    img = frame.copy()
    for d in reading.dice:
        _draw_die(img, d)
    return img


def annotate_result(frame: np.ndarray, result: PhotoResult) -> np.ndarray:
    """A copy of ``frame`` showing labels (cyan; red when failed), read dice and false positives."""
    img = frame.copy()
    fs = _font_scale(img)
    if result.reading is not None:
        for d in result.reading.dice:
            _draw_die(img, d)
        for d in result.false_positives:
            _draw_die(img, d, _RED)
    for s in result.scored:
        colour = _CYAN if s.right else _RED
        _rect(img, s.box, colour, 1)
        x, y, _, h = s.box
        tag = f"L{s.label.face}{' cocked' if s.label.cocked else ''}"
        if not s.right:
            tag += f" {s.outcome.value}"
        _text(img, tag, (round(x), min(img.shape[0] - 4, round(y + h + 14 * fs))), colour, fs * 0.8)
    if result.error:
        _text(img, "error: " + result.error[-60:], (4, img.shape[0] - 8), _RED, fs * 0.7)
    return img


def crop_box(frame: np.ndarray, box: Sequence[float], margin: float = 0.25) -> np.ndarray:
    """The region of ``box`` grown by ``margin`` of its size on each side, clipped to the frame."""
    h, w = frame.shape[:2]
    x, y, bw, bh = box
    mx, my = bw * margin, bh * margin
    x0, y0 = max(0, int(x - mx)), max(0, int(y - my))
    x1, y1 = min(w, round(x + bw + mx)), min(h, round(y + bh + my))
    if x1 <= x0 or y1 <= y0:
        return frame[0:1, 0:1].copy()
    return frame[y0:y1, x0:x1].copy()

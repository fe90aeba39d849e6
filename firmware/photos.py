"""A throw's pictures as kept: the photo and each die's crop, encoded once from the raw frame.

The roll log serves and hashes these bytes as they are, so they are cut and encoded here,
when the throw is read, from the frame the reader saw. Cutting crops out of the stored
photo instead would decode a JPEG and encode its pieces again, a second loss of quality
and time spent on every roll.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

__all__ = ["CROP_MARGIN", "CROP_QUALITY", "JPEG_QUALITY", "crop_jpeg", "die_crops", "encode_jpeg"]

#: JPEG quality of a throw's photo.
JPEG_QUALITY = 90
#: JPEG quality of a die's crop.
CROP_QUALITY = 88
#: extra margin around a die's box in its crop, as a share of the box's larger side
CROP_MARGIN = 0.18


def encode_jpeg(frame: np.ndarray, quality: int = JPEG_QUALITY) -> bytes:
    """``frame`` as JPEG bytes; empty when OpenCV cannot encode it."""
    ok, data = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, quality])
    return data.tobytes() if ok else b""


def crop_jpeg(frame: np.ndarray, box: Sequence[float]) -> bytes | None:
    """The square around an ``[x, y, w, h]`` box, with a margin, clipped to the frame, as JPEG.

    None when the box is not four numbers or its square hardly overlaps the frame.
    """
    try:
        x, y, w, h = (float(v) for v in box)
    except (TypeError, ValueError):
        return None
    h_img, w_img = frame.shape[:2]
    side = max(w, h) * (1 + 2 * CROP_MARGIN)
    cx, cy = x + w / 2, y + h / 2
    x0, y0 = max(0, int(cx - side / 2)), max(0, int(cy - side / 2))
    x1, y1 = min(w_img, int(cx + side / 2)), min(h_img, int(cy + side / 2))
    if x1 - x0 < 2 or y1 - y0 < 2:
        return None
    return encode_jpeg(frame[y0:y1, x0:x1], CROP_QUALITY) or None


def die_crops(frame: np.ndarray, boxes: Sequence[Sequence[float]]) -> list[bytes | None]:
    """One :func:`crop_jpeg` per box, in order."""
    return [crop_jpeg(frame, box) for box in boxes]

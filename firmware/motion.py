"""Has anything moved? Frame differencing on small grey thumbnails, for the settle step.

Why thumbnails: comparing frames at a fixed small side is cheap on a Pi and blind to sensor
noise, while a die that rolls or rocks still changes many thumbnail pixels.
"""

from __future__ import annotations

import cv2
import numpy as np

__all__ = ["MOTION_LEVEL", "MOTION_SHARE", "MOTION_SIDE", "moved", "thumbnail"]

#: A pixel changed when its grey level moved more than this between two frames.
MOTION_LEVEL = 24
#: Two frames differ (the dice moved) when more than this share of their pixels changed.
MOTION_SHARE = 0.002
#: Side of the grey thumbnails frames are compared at (cheap, and deaf to sensor noise).
MOTION_SIDE = 160


def thumbnail(frame: np.ndarray) -> np.ndarray:
    """The frame as a grey thumbnail whose longer side is :data:`MOTION_SIDE`."""
    h, w = frame.shape[:2]
    f = MOTION_SIDE / max(h, w)
    grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame
    return cv2.resize(grey, (max(1, round(w * f)), max(1, round(h * f))), interpolation=cv2.INTER_AREA)


def moved(a: np.ndarray, b: np.ndarray) -> bool:
    """Did anything move between frames ``a`` and ``b`` (thumbnails from :func:`thumbnail`)?"""
    if a.shape != b.shape:
        return True
    changed = np.count_nonzero(cv2.absdiff(a, b) > MOTION_LEVEL)
    return changed > MOTION_SHARE * a.size

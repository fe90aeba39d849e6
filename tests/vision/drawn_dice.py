"""A die drawn flat from above, at any turn: what the reader tests read and the training tests cut."""

from __future__ import annotations

import math

import cv2
import numpy as np

__all__ = ["draw_die"]

#: Pip centres on a unit face, per face value (the standard layout).
_LAYOUT = {
    1: [(0.5, 0.5)],
    2: [(0.25, 0.25), (0.75, 0.75)],
    3: [(0.25, 0.25), (0.5, 0.5), (0.75, 0.75)],
    4: [(0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)],
    5: [(0.25, 0.25), (0.75, 0.25), (0.5, 0.5), (0.25, 0.75), (0.75, 0.75)],
    6: [(0.25, 0.22), (0.75, 0.22), (0.25, 0.5), (0.75, 0.5), (0.25, 0.78), (0.75, 0.78)],
}


def draw_die(
    face: int,
    angle: float = 0.0,
    *,
    side: int = 60,
    body: tuple[int, int, int] = (235, 235, 235),
    pip: tuple[int, int, int] = (20, 20, 20),
    background: tuple[int, int, int] = (120, 120, 120),
    canvas: int = 160,
) -> tuple[np.ndarray, tuple[float, float, float, float]]:
    """A BGR frame with one top-down die (rounded square, ``face`` pips) rotated by ``angle``."""
    img = np.full((canvas, canvas, 3), background, np.uint8)
    c = canvas / 2
    rot = math.radians(angle)

    def to_frame(u: float, v: float) -> tuple[float, float]:
        x, y = (u - 0.5) * side, (v - 0.5) * side
        return (c + x * math.cos(rot) - y * math.sin(rot), c + x * math.sin(rot) + y * math.cos(rot))

    corners = np.array([to_frame(u, v) for u, v in ((0, 0), (1, 0), (1, 1), (0, 1))], np.float32)
    cv2.fillPoly(img, [np.round(corners * 16).astype(np.int32)], body, cv2.LINE_AA, shift=4)
    for u, v in _LAYOUT[face]:
        x, y = to_frame(u, v)
        cv2.circle(
            img, (round(x * 16), round(y * 16)), round(side * 0.09 * 16), pip, -1, cv2.LINE_AA, shift=4
        )
    img = cv2.GaussianBlur(img, (3, 3), 0.7)
    x0, y0 = corners.min(axis=0)
    x1, y1 = corners.max(axis=0)
    return img, (float(x0), float(y0), float(x1 - x0), float(y1 - y0))

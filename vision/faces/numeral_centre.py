"""Find where the numeral on top of a die lies inside its box.

Why: the upright reader (:mod:`.glyphs`) reads a square cut around a centre; the box's own
centre is the numeral's on a d20 seen from above, but not on a d10 (its upper kite's numeral
sits toward the kite's wide end) nor on a die seen a little from the side. Ink is what differs
from its surroundings: strokes lighter or darker than the local body colour, each about a
numeral's height (a tenth to a half of the box's side). The stroke group that is biggest and
nearest the box's centre is the top face's numeral; its digits (``17``, ``70``) are joined.
"""

from __future__ import annotations

import cv2
import numpy as np

from .ink import ink_grey

__all__ = ["WORK_SIDE", "numeral_centre"]

#: The box's middle is searched at this side (px): numerals are found by shape, not detail.
WORK_SIDE = 96
#: The middle searched, as a share of the box's longer side.
REACH = 0.8
#: How fast a stroke loses weight with its distance from the box's centre (share of the side).
NEAR = 0.22
#: A stroke's longer extent, as a share of the box's side: smaller is speckle, larger an edge.
STROKE_EXTENT = (0.08, 0.45)
#: Least ink difference from the local body (grey levels of :func:`ink_grey`).
MIN_CONTRAST = 12


def _strokes(diff: np.ndarray, side: float) -> list[tuple[np.ndarray, float, float]]:
    """``(centre, extent, area)`` of each numeral-sized component where ``diff`` is positive."""
    ink = (diff > max(MIN_CONTRAST, float(np.abs(diff).std()))).astype(np.uint8)
    n, _labels, stats, centres = cv2.connectedComponentsWithStats(ink, connectivity=8)
    lo, hi = STROKE_EXTENT
    out = []
    for i in range(1, n):
        extent = float(max(stats[i, 2], stats[i, 3]))
        area = float(stats[i, 4])
        if area >= 0.002 * side * side and lo * side <= extent <= hi * side:
            out.append((centres[i], extent, area))
    return out


def numeral_centre(frame: np.ndarray, box: tuple[float, float, float, float]) -> tuple[float, float] | None:
    """The centre (frame px) of the numeral nearest the middle of ``box``, or ``None`` when none is seen.

    Both inks are tried (light numerals on a dark body and dark on light); the likelier group
    wins: its area, weighted by nearness to the box's centre (:data:`NEAR`), and a little more
    for a group of two digits.
    """
    x, y, w, h = box
    cx, cy = x + w / 2, y + h / 2
    side = max(w, h)
    half = REACH * side / 2
    fh, fw = frame.shape[:2]
    x0, y0 = max(0, int(cx - half)), max(0, int(cy - half))
    x1, y1 = min(fw, int(cx + half) + 1), min(fh, int(cy + half) + 1)
    if x1 - x0 < 8 or y1 - y0 < 8:
        return None
    region = frame[y0:y1, x0:x1]
    if region.ndim == 3:
        m = 0.3 * side  # the colour axis is taken from the die's middle, as the reader takes it
        sample = region[
            max(0, int(cy - m) - y0) : max(1, int(cy + m) - y0),
            max(0, int(cx - m) - x0) : max(1, int(cx + m) - x0),
        ]
        region = ink_grey(region, sample)
    k = WORK_SIDE / max(region.shape)
    grey = cv2.GaussianBlur(cv2.resize(region, None, fx=k, fy=k, interpolation=cv2.INTER_AREA), (3, 3), 0)
    diff = grey.astype(np.int16) - cv2.medianBlur(grey, 21).astype(np.int16)
    s = side * k
    middle = np.array([(cx - x0) * k, (cy - y0) * k])
    best: tuple[float, np.ndarray] | None = None
    for sign in (1, -1):
        strokes = _strokes(sign * diff, s)
        if not strokes:
            continue
        score = [
            a * np.exp(-float(np.sum((c - middle) ** 2)) / (2 * (NEAR * s) ** 2)) for c, _e, a in strokes
        ]
        j = int(np.argmax(score))
        c, e, a = strokes[j]
        group = [
            (cc, aa) for cc, _ee, aa in strokes if np.hypot(*(cc - c)) <= 1.1 * e and 0.3 * a <= aa <= 3 * a
        ]
        total = sum(aa for _c, aa in group)
        centre = sum(cc * aa for cc, aa in group) / total
        value = score[j] * (1.2 if len(group) > 1 else 1.0)
        if best is None or value > best[0]:
            best = (value, centre)
    if best is None:
        return None
    return float(best[1][0] / k + x0), float(best[1][1] / k + y0)

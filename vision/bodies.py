"""Die bodies as blobs that stand out from the tray: whole-die boxes the numeral reader can check.

Why: the die detector learnt pip d6; on a large d20 or d10 it boxes the numerals, not the die
(face-sized fragments). The body of a die differs from the tray around it in colour or
lightness, and the tray is what the frame's border shows (or, in the tower, the empty-tray
reference). A body found here is only a proposal: :class:`~dicetower.vision.reader.FrameReader`
keeps it when the numeral reader names it a numeral kind, and then drops the fragments inside.
"""

from __future__ import annotations

import cv2
import numpy as np

from .locate import foreground_small

__all__ = ["BODY_SIDE", "MAX_BODIES", "body_boxes", "tray_distance_mask"]

#: The tray-colour mask is worked at most this many pixels across (a body is coarse; speed
#: matters); against a reference the locator's own coarse mask is used.
BODY_SIDE = 192
#: At most this many bodies per frame (largest first): bounds the numeral reads they cost.
MAX_BODIES = 12
#: The border strip taken for the tray, as a share of the frame side.
_BORDER = 0.06
#: "Not tray": this many times the border's 95th-percentile spread, in lightness or in colour,
#: and never under these floors (Lab units, 8-bit scale).
_K_SPREAD = 1.5
_MIN_L = 14.0
_MIN_AB = 8.0


def tray_distance_mask(frame: np.ndarray) -> np.ndarray:
    """Pixels (0/255, at most BODY_SIDE across) far in Lab from the colour of the frame's border."""
    h, w = frame.shape[:2]
    s = min(1.0, BODY_SIDE / max(h, w))
    small = cv2.resize(frame, (max(1, round(w * s)), max(1, round(h * s))), interpolation=cv2.INTER_AREA)
    lab = cv2.cvtColor(cv2.GaussianBlur(small, (5, 5), 0), cv2.COLOR_BGR2LAB).astype(np.float32)
    sh, sw = lab.shape[:2]
    b = max(2, round(_BORDER * min(sh, sw)))
    strips = (lab[:b], lab[-b:], lab[:, :b], lab[:, -b:])
    border = np.concatenate([strip.reshape(-1, 3) for strip in strips])
    centre = np.median(border, axis=0)
    # Lightness and colour each against the tray's own spread: wood grain varies in lightness far
    # more than in colour, white card in neither.
    bl = np.abs(border[:, 0] - centre[0])
    bab = np.sqrt(((border[:, 1:] - centre[1:]) ** 2).sum(axis=1))
    thr_l = max(_MIN_L, _K_SPREAD * float(np.percentile(bl, 95)))
    thr_ab = max(_MIN_AB, _K_SPREAD * float(np.percentile(bab, 95)))
    dl = lab[:, :, 0] - centre[0]
    dab = np.sqrt(((lab[:, :, 1:] - centre[1:]) ** 2).sum(axis=2))
    # A shadow dims the tray and keeps its colour: darker by 5-65 %, chroma within the tray's.
    ratio = (lab[:, :, 0] + 1.0) / (centre[0] + 1.0)
    shadow = (ratio > 0.35) & (ratio < 0.95) & (dab < thr_ab)
    mask = (((np.abs(dl) > thr_l) | (dab > thr_ab)) & ~shadow).astype(np.uint8) * 255
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8))
    return cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))


def body_boxes(
    frame: np.ndarray, reference: np.ndarray | None = None, *, min_side: float = 24.0
) -> list[tuple[float, float, float, float]]:
    """Boxes ``[x, y, w, h]`` (frame pixels) of blobs that could be one die, largest first.

    ``reference`` (the empty tray) gives the changed pixels; without it the tray is the border's
    colour. A blob is kept when it is at least ``min_side`` px, at most 70 % of the frame's
    shorter side, roughly square (sides within 1.8x) and fills at least half its box.
    """
    h, w = frame.shape[:2]
    if reference is not None and reference.shape[:2] == frame.shape[:2]:
        mask, _scale = foreground_small(frame, reference)  # the locator's own coarse mask
    else:
        mask = tray_distance_mask(frame)
    s = mask.shape[1] / w
    n, _labels, stats, _ = cv2.connectedComponentsWithStats(mask)
    if n <= 1:
        return []
    order = np.argsort(-stats[1:, cv2.CC_STAT_AREA]) + 1
    out: list[tuple[float, float, float, float]] = []
    for i in order[: 4 * MAX_BODIES]:
        x, y, bw, bh, area = (int(v) for v in stats[i])
        side = max(bw, bh) / s
        if side < min_side or side > 0.7 * min(h, w):
            continue
        if max(bw, bh) > 1.8 * min(bw, bh) or area < 0.5 * bw * bh:
            continue
        out.append((x / s, y / s, bw / s, bh / s))
        if len(out) >= MAX_BODIES:
            break
    return out

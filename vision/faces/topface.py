"""Where a read die's top face lies in the frame, found from its pips.

Why: a die seen from above at an angle shows its top face off the centre of its outline, the
side faces filling the rest. The box says where the die is; the face that was read is where
its pips are. The overlay should point at that face, and eval matches dice by centre, where
some datasets box only the pip area of a face (``matteop65-d6-wood`` boxes a 1 by its pip).

Every d6 pip layout is point-symmetric about the face's centre, so the mean of the pips'
centres is the face's centre, whatever the face. The pips are located only once the reader
has said which face it sees: the blobs are kept only when exactly that many are found, else
the die keeps its outline's centre (``None`` here), never a guess from a partial count.

Cost: the reader's own crops and grey planes are reused (no warp from the frame), and all dice
of a frame are labelled together, tiled into one image, with their moments summed by
``bincount``: each OpenCV call from Python costs 10-30 us here, so one ``findContours`` pass
per crop came to 0.2 ms a die (5 ms on a 25-dice frame); tiled, it is 2.5 ms on byler-d6's
25-dice photos (``bench/vision_stages.py``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import cv2
import numpy as np

from .pips import CROP_MARGIN, INPUT, crop_greys, crop_transform, warp_crop

__all__ = ["face_centre", "face_centres"]

#: A pip's blob is at least this share of the crop's area and at most this share (in a 64 px
#: crop of a die with its margin a 6's pips are ~20 px in area, a large 1 ~300 px).
_MIN_AREA, _MAX_AREA = 6 / 64**2, 520 / 64**2
#: Pips are round; a blob longer than this over its width is a pip seen edge on (a side face) or
#: a streak (wood grain, a tray wall).
_MAX_ELONGATION = 2.0
#: A pip fills at least this share of the ellipse with its second moments (a solid disc or
#: ellipse fills it all); a ring, a crescent or a pip joined to a gap between faces fill less.
_MIN_FILL = 0.8
#: With more blobs than the face has pips, the ``face`` largest are taken only when they are at
#: least this many times the next one: the top face's pips are seen nearest square on, a side
#: face's foreshortened, so a step in size separates them; without one the count is ambiguous.
#: Chosen on matteop65-d6-wood's train photos: 811 of 841 dice right at 1.0-1.15, 807 at 1.3,
#: 805 at 1.5; the largest step on the plateau is kept.
_SIZE_STEP = 1.15
#: Light pips are looked for first when the light side of a crop's threshold covers less than
#: this share of the die's square: light pips cover 2-13 % of it on drawn dice, while the light
#: body of a die with dark pips covers 30-47 % (its bevel and the tray in the square's corners
#: fall on the dark side). Only the order of the two tries depends on it.
_LIGHT_PIPS_BELOW = 0.25
#: Pips of one face are one size: a kept set whose size spread (sd/mean) exceeds this is not one.
_MAX_SIZE_SPREAD = 0.45

Blob = tuple[float, float, float]  #: a blob's centre x, y and size (area x roundness), in crop pixels


@functools.lru_cache(maxsize=8)
def _crop_edges(rows: int, cols: int, t: int) -> np.ndarray:
    """Raveled indices, on a board of ``rows`` x ``cols`` tiles of side ``t``, of each tile's crop
    edge (the ring just inside its empty 1 px frame)."""
    tile_edge = np.zeros((t, t), bool)
    tile_edge[1, 1:-1] = tile_edge[-2, 1:-1] = tile_edge[1:-1, 1] = tile_edge[1:-1, -2] = True
    return np.flatnonzero(np.tile(tile_edge, (rows, cols)))


def _tiled_blobs(masks: np.ndarray, inside: tuple[float, float, float, float]) -> list[list[Blob]]:
    """The pip-like spots of each 0/255 mask ``(N, S, S)``: clear of its border, centred ``inside``.

    Why only spots clear of the crop's border: a pip is a spot the face surrounds on every side.
    The dark corners of the crop around a turned die, its shadow and the gap to a touching die
    reach the border, so they are never pips, whatever their size. The masks are labelled as
    one image, each in a tile with a 1 px empty frame so no spot runs into the next tile, and
    each spot is described by its moments (``bincount`` over the board): OpenCV's own
    statistics cost six times the labelling here (514 against 87 us on 25 tiles).
    """
    n, s = masks.shape[0], masks.shape[1]
    t = s + 2
    cols = math.ceil(math.sqrt(n))
    rows = math.ceil(n / cols)
    board = np.zeros((rows * cols, t, t), np.uint8)
    board[:n, 1:-1, 1:-1] = masks
    board = board.reshape(rows, cols, t, t).transpose(0, 2, 1, 3).reshape(rows * t, cols * t)
    count, labels = cv2.connectedComponents(board, connectivity=8)
    out: list[list[Blob]] = [[] for _ in range(n)]
    if count < 2:
        return out
    edge = _crop_edges(rows, cols, t)
    flat = labels.ravel()
    pixels = float(s * s)
    # Sizes first, over the whole board in one pass; the moments below only over the pixels of
    # spots that can still be pips (a few per cent of the board): each full pass costs ~0.1 ms.
    area = np.bincount(flat, minlength=count).astype(np.float64)
    maybe = (area >= _MIN_AREA * pixels) & (area <= _MAX_AREA * pixels)
    maybe[0] = False  # the background
    maybe[flat[edge]] = False  # reaches its crop's border
    on = np.flatnonzero(maybe[flat])
    lab = flat[on]
    y, x = np.divmod(on, board.shape[1])
    x, y = x.astype(np.float64), y.astype(np.float64)
    area[0] = 1.0  # no division by zero (the background is never kept)
    cx = np.bincount(lab, weights=x, minlength=count) / area
    cy = np.bincount(lab, weights=y, minlength=count) / area
    # Central second moments (+1/12: a pixel is a unit square, not a point; keeps a 1-px-wide
    # streak from reading as a line of zero width).
    mu20 = np.bincount(lab, weights=x * x, minlength=count) / area - cx * cx + 1 / 12
    mu02 = np.bincount(lab, weights=y * y, minlength=count) / area - cy * cy + 1 / 12
    mu11 = np.bincount(lab, weights=x * y, minlength=count) / area - cx * cy
    root = np.sqrt((mu20 - mu02) ** 2 + 4.0 * mu11 * mu11)
    major, minor = (mu20 + mu02 + root) / 2, np.maximum((mu20 + mu02 - root) / 2, 1e-9)
    # The ellipse with these moments has semi-axes 2 sqrt(eigenvalue): a solid disc or ellipse
    # fills it (1.0), a ring or a crescent does not.
    fill = area / (4.0 * math.pi * np.sqrt(major * minor))
    roundness = np.sqrt(minor / major)
    keep = maybe & (roundness * _MAX_ELONGATION >= 1.0) & (fill >= _MIN_FILL)
    kept = np.flatnonzero(keep)[: 200 * n]  # bounded: noisy crops cannot stretch the loop below
    tile_x, tile_y = (cx[kept] // t).astype(np.int64), (cy[kept] // t).astype(np.int64)
    px, py = cx[kept] - (tile_x * t + 1), cy[kept] - (tile_y * t + 1)  # within the crop
    x0, y0, x1, y1 = inside
    on_die = (px >= x0) & (px <= x1) & (py >= y0) & (py <= y1)
    tiles = (tile_y * cols + tile_x)[on_die].tolist()
    for tile, bx, by, size in zip(
        tiles,
        px[on_die].tolist(),
        py[on_die].tolist(),
        (area * roundness)[kept][on_die].tolist(),
        strict=True,
    ):
        out[tile].append((bx, by, size))
    return out


def _pick(blobs: list[Blob], face: int) -> list[Blob] | None:
    """The ``face`` largest blobs if they stand out from the rest and are one size, else ``None``."""
    found = sorted(blobs, key=lambda b: -b[2])
    if len(found) < face or (len(found) > face and found[face - 1][2] < _SIZE_STEP * found[face][2]):
        return None
    chosen = found[:face]
    mean = sum(b[2] for b in chosen) / face
    sd = math.sqrt(sum((b[2] - mean) ** 2 for b in chosen) / face)
    return chosen if sd <= _MAX_SIZE_SPREAD * mean else None


def face_centres(
    greys: Sequence[np.ndarray | None], maps: Sequence[np.ndarray], faces: Sequence[int | None]
) -> list[tuple[float, float] | None]:
    """The centre of each read face, in frame pixels, found in the crops the reader read.

    ``greys[i]`` is die ``i``'s square crop as one grey plane (:func:`~.pips.crop_greys` of the
    reader's crops: the die in its middle, all one size), ``maps[i]`` the 2 x 3 frame-to-crop
    map it was cut with, ``faces[i]`` the face read (``None``: not read, no centre). Reusing the
    reader's crops costs no further warp from the frame. A die gets ``None`` unless exactly that
    many pips of one size are found; its box's centre then stands.

    Pips are looked for on one side of each crop's Otsu threshold (light pips first where the
    light side is small, :data:`_LIGHT_PIPS_BELOW`), then on the other side for the dice where
    that failed: one labelling pass each, for all the dice at once.
    """
    out: list[tuple[float, float] | None] = [None] * len(greys)
    todo = [i for i, f in enumerate(faces) if f is not None and 1 <= f <= 6 and greys[i] is not None]
    if not todo:
        return out
    planes = np.clip(np.stack([greys[i] for i in todo]), 0, 255).astype(np.uint8)  # type: ignore[misc]
    s = planes.shape[1]
    light = np.empty_like(planes)
    for k in range(len(todo)):
        cv2.threshold(planes[k], 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU, dst=light[k])
    # The die fills the middle 1 / CROP_MARGIN of its crop; pips lie on it, not in the margin.
    half, c = s / (2.0 * CROP_MARGIN), s / 2.0
    inside = (c - half, c - half, c + half, c + half)
    a, b = round(c - half), round(c + half)
    light_first = (light[:, a:b, a:b] > 0).mean(axis=(1, 2)) < _LIGHT_PIPS_BELOW
    first = np.where(light_first[:, None, None], light, 255 - light)
    picked: list[list[Blob] | None] = [
        _pick(blobs, int(faces[i] or 0)) for blobs, i in zip(_tiled_blobs(first, inside), todo, strict=True)
    ]
    again = [k for k, p in enumerate(picked) if p is None]
    if again:
        second = 255 - first[again]
        for k, blobs in zip(again, _tiled_blobs(second, inside), strict=True):
            picked[k] = _pick(blobs, int(faces[todo[k]] or 0))
    for k, pips in enumerate(picked):
        if pips is None:
            continue
        mx = sum(p[0] for p in pips) / len(pips)
        my = sum(p[1] for p in pips) / len(pips)
        back = cv2.invertAffineTransform(np.asarray(maps[todo[k]], np.float64))
        out[todo[k]] = (
            float(back[0, 0] * mx + back[0, 1] * my + back[0, 2]),
            float(back[1, 0] * mx + back[1, 1] * my + back[1, 2]),
        )
    return out


def face_centre(
    frame: np.ndarray, box: tuple[float, float, float, float], face: int, size: int = INPUT
) -> tuple[float, float] | None:
    """:func:`face_centres` of one die, cut from ``frame`` unturned (tests, one-off use)."""
    m = crop_transform(box, size)
    return face_centres(list(crop_greys([warp_crop(frame, m, size)])), [m], [face])[0]

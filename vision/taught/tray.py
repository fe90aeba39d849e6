"""The empty tray a taught model compares against: a calibration photo, or one derived from the rolls.

Why derived: dice land somewhere else on every throw, so at each pixel most photos show the
tray. The per-pixel median of a few dozen photos of one camera is the tray with the dice gone
(a die that never moves, a jam, would stay: the tower's own calibration photo is better when
there is one, and is used first).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import cv2
import numpy as np

from ..imageio import ImageError, load_image
from .teaching import TeachingSet

__all__ = ["MAX_COVERED", "MEDIAN_PHOTOS", "derive_tray", "median_tray", "most_covered"]

#: Photos the median is taken over (spread evenly through the folder).
MEDIAN_PHOTOS = 31
#: No tray is derived when some spot is under a die in more than this share of the photos.
MAX_COVERED = 0.3
#: The grid the photos' die boxes are counted on, per side.
_GRID = 32


def median_tray(photos: list[np.ndarray]) -> np.ndarray | None:
    """The per-pixel median of the photos of the most common size, or None when there are fewer than 3."""
    if not photos:
        return None
    shape, count = Counter(p.shape for p in photos).most_common(1)[0]
    if count < 3:
        return None
    stack = np.stack([p for p in photos if p.shape == shape])
    return np.median(stack, axis=0).astype(np.uint8)


def most_covered(teaching: TeachingSet) -> float:
    """The largest share of photos in which one spot lies inside a die's box (boxes only).

    Dice thrown into a tray land anywhere, so each spot is under a die in few photos; photos of a
    die centred by hand (or a die that never moved) cover one spot in most of them.
    """
    boxes: dict[object, list[tuple[float, float, float, float]]] = {}
    for die in teaching.dice:
        for e in die.examples:
            if e.box is not None:
                boxes.setdefault(e.image, []).append(e.box)
    if not boxes:
        return 1.0
    right = max(x + w for bs in boxes.values() for x, _y, w, _h in bs)
    bottom = max(y + h for bs in boxes.values() for _x, y, _w, h in bs)
    counts = np.zeros((_GRID, _GRID))
    for bs in boxes.values():
        mask = np.zeros((_GRID, _GRID), bool)
        for x, y, w, h in bs:
            x0, x1 = int(_GRID * x / right), int(np.ceil(_GRID * (x + w) / right))
            y0, y1 = int(_GRID * y / bottom), int(np.ceil(_GRID * (y + h) / bottom))
            mask[y0:y1, x0:x1] = True
        counts += mask
    return float(counts.max() / len(boxes))


def derive_tray(teaching: TeachingSet, out: Path, given: Path | None = None) -> str:
    """Write the empty tray to ``out``; returns a note saying where it came from.

    ``given`` (an empty-tray photo) comes first, then the folder's own reference photo, then
    the median of the folder's photos. A folder of single-die crops yields none. A ``given``
    photo that cannot be read raises :class:`~dicetower.vision.imageio.ImageError`: it was asked for.
    """
    if given is not None:  # asked for by name: a photo that cannot be read is an error (ImageError)
        cv2.imwrite(str(out), load_image(given))
        return f"empty tray: the given empty-tray photo ({given.name})"
    own = teaching.references[0] if teaching.references else None
    if own is not None:
        try:
            frame = load_image(own)
        except ImageError as exc:
            return f"empty tray: the folder's empty-tray photo could not be read ({exc}); none kept"
        cv2.imwrite(str(out), frame)
        return f"empty tray: the folder's empty-tray photo ({own.name})"
    if all(e.box is None for die in teaching.dice for e in die.examples):
        return "empty tray: none (each photo is one die, with no tray around it)"
    covered = most_covered(teaching)
    if covered > MAX_COVERED:
        return (
            f"empty tray: none (a die lies on the same spot in {covered:.0%} of the photos, so their median"
            " shows it; give an empty-tray photo with --tray)"
        )
    paths = list(teaching.photos())
    step = max(1, len(paths) // MEDIAN_PHOTOS)
    frames = []
    for path in paths[::step][:MEDIAN_PHOTOS]:
        try:
            frames.append(load_image(path))
        except ImageError:
            continue
    tray = median_tray(frames)
    if tray is None:
        return "empty tray: none (too few photos of one size to derive it)"
    cv2.imwrite(str(out), tray)
    return f"empty tray: the per-pixel median of {len(frames)} photos"

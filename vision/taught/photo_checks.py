"""The photos a fit reads, checked before any is decoded: their size, their dice's boxes, the given tray.

Why before: a fit decodes its photos again and again while it reads their crops at many turns
(:mod:`.photo_store`), so a folder of huge photos (60 photos of 120 MP) would cost gigabytes and
minutes before anything useful happened. Each photo's width and height are read from its header, as the image
loaders read them (:func:`~dicetower.vision.imageio.image_size`), and a photo larger than the
tower's camera takes is refused, naming it, before a pixel is decoded. A die's box that lies
mostly outside its photo would teach a crop of padding under the die's name, so it is refused
with the manifest line and the reason. An empty-tray photo given to the fit that cannot be read
(a decompression bomb, ``/dev/zero``) is an error, not a note: the owner asked for that tray.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..files import read_bounded
from ..imageio import MAX_FILE_BYTES, ImageError, image_size, load_image
from .features import TaughtModelError
from .teaching import TeachingSet

__all__ = ["MAX_TEACH_PIXELS", "MIN_BOX_INSIDE", "check_tray", "checked_photos"]

#: The most pixels a photo to teach on may have: the largest frame the tower's camera config takes
#: (4608 x 3456, 15.9 MP).
MAX_TEACH_PIXELS = 4608 * 3456
#: The least share of a die's box that must lie inside its photo.
MIN_BOX_INSIDE = 0.5


def check_tray(path: Path) -> np.ndarray:
    """The given empty-tray photo, or a :class:`TaughtModelError` saying why it cannot be one."""
    try:
        return load_image(path)
    except ImageError as exc:
        raise TaughtModelError(f"--tray: {exc}") from None


def _inside(box: tuple[float, float, float, float], width: int, height: int) -> float:
    """The share of ``box`` (x, y, w, h in photo pixels) that lies inside a ``width`` x ``height`` photo."""
    x, y, w, h = box
    if not w > 0 or not h > 0:
        return 0.0
    across = max(0.0, min(x + w, width) - max(x, 0.0))
    down = max(0.0, min(y + h, height) - max(y, 0.0))
    return across * down / (w * h)


def _read(path: Path) -> bytes | None:
    try:
        return read_bounded(path, MAX_FILE_BYTES)
    except OSError:
        return None


def _check_photo(
    path: Path, size: tuple[int, int], boxes: list[tuple[int, tuple[float, float, float, float]]]
) -> None:
    width, height = size
    if width * height > MAX_TEACH_PIXELS:
        raise TaughtModelError(
            f"{path}: {width}x{height} is {width * height / 1e6:.0f} MP, more than the"
            f" {MAX_TEACH_PIXELS / 1e6:.1f} MP a photo to teach on may have (the tower's largest"
            " frame): teach on the tower's own photos, or downscale these"
        )
    for line, box in boxes:
        share = _inside(box, width, height)
        if share < MIN_BOX_INSIDE:
            where = "outside" if share == 0 else "mostly outside"
            raise TaughtModelError(
                f"manifest line {line}: the box {[round(v, 1) for v in box]} lies {where} its"
                f" {width}x{height} photo ({path.name}): a crop there shows no die"
            )


def checked_photos(teaching: TeachingSet) -> list[Path]:
    """The photos of ``teaching`` whose headers can be read, each checked before any is decoded.

    Refused with a :class:`TaughtModelError`: a photo of more than :data:`MAX_TEACH_PIXELS`, and a
    die whose box lies less than :data:`MIN_BOX_INSIDE` inside it. A photo whose header cannot be
    read is left out (the photo store counts it as one that could not be read).
    """
    boxes: dict[Path, list[tuple[int, tuple[float, float, float, float]]]] = {}
    for die in teaching.dice:
        for e in die.examples:
            if e.box is not None:
                boxes.setdefault(e.image, []).append((e.line, e.box))
    readable = []
    for path in teaching.photos():
        data = _read(path)
        size = image_size(data) if data is not None else None
        if size is not None:
            _check_photo(path, size, boxes.get(path, []))
        readable.append(path)
    return readable

"""The built tower's scale: how wide its tray and its dice come out in the camera's frame.

Why here: ``hardware/spec.toml`` is the one source of the tower's figures, but it is not in the
wheel, and three parts need them at run time: the simulated camera draws the tray and the dice at
this scale, ``dicetower tower calibrate`` says how wide the dice should be, and the reader's imaging
budget is compared with it. The values below mirror spec.toml (``[tray]``, ``[camera]``,
``[dice_mm]``); ``tests/hardware/test_hardware_spec.py`` fails when the two differ, and the
documents quote the figures worked out here (``tests/vision/test_tower_scale.py``).

A die's figure is its size across at the dice's tops: 16 mm at 4.4 px/mm is 70 px for a d6, 22 mm
is 97 px for a d20. The reading's box is square to the frame, so a d6's box measures its side when
the die lies square to the frame and up to √2 of it when the die is turned 45 degrees; a numeral
die's outline is about as wide whichever way it turns (:func:`box_px`).
"""

from __future__ import annotations

import math

__all__ = [
    "DICE_MM",
    "DIE_TOP_MM",
    "FRAME_WIDTH",
    "LENS_HEIGHT_MM",
    "PX_PER_MM",
    "TRAY_D_MM",
    "box_px",
    "die_px",
    "tray_radius_px",
]

#: The capture width the scale is given at (spec.toml ``[camera] capture_px``): the same lens at
#: another width scales every figure in proportion.
FRAME_WIDTH = 640
#: Pixels per millimetre at the dice's tops in a :data:`FRAME_WIDTH` frame (``[camera] px_per_mm``).
PX_PER_MM = 4.4
#: The height above the floor where that scale holds: a 16 mm d6's top face (``[camera] die_top_mm``).
DIE_TOP_MM = 16.0
#: The lens above the tray floor (``[camera] lens_height_mm``).
LENS_HEIGHT_MM = 165.0
#: The tray floor's inner diameter (``[tray] inner_d_mm``, tower.scad's ``tray_d``).
TRAY_D_MM = 105.0
#: The dice across, by kind as a config names it (``[dice_mm]``; a d10t is a d10's body).
DICE_MM: dict[str, float] = {"d6": 16.0, "d10": 18.0, "d10t": 18.0, "d20": 22.0}
#: Kinds whose top face is a square: their box grows to √2 of the side as the die turns.
_SQUARE_TOPS = frozenset({"d6"})


def _scale(width: int) -> float:
    if width <= 0:
        raise ValueError(f"width must be a positive number of pixels, got {width}")
    return PX_PER_MM * width / FRAME_WIDTH


def die_px(kind: str, width: int = FRAME_WIDTH) -> float | None:
    """A ``kind`` die's side in a frame ``width`` pixels wide (None: a kind the tower has no size for)."""
    mm = DICE_MM.get(kind)
    return None if mm is None else mm * _scale(width)


def box_px(kind: str, width: int = FRAME_WIDTH) -> tuple[float, float] | None:
    """The range of the longer side of a ``kind`` die's box in the reading (None: no size known).

    A d6: its side when it lies square to the frame, up to √2 of it turned 45 degrees. A numeral
    die: its size across, whichever way it turns.
    """
    side = die_px(kind, width)
    if side is None:
        return None
    return (side, side * math.sqrt(2)) if kind in _SQUARE_TOPS else (side, side)


def tray_radius_px(width: int = FRAME_WIDTH) -> float:
    """The tray wall's radius at the dice's tops: a die against the wall is inside this circle."""
    return TRAY_D_MM / 2 * _scale(width)

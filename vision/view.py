"""Which way the camera looks at a frame, judged from the boxes of its dice.

Why: the reader's worst mistake is confident and geometric. A die seen from low down turns a
large side face to the camera, and the reader reads that face instead of the foreshortened top
(a 4 on top read as the 2 in front, at p 0.9-0.99: BENCHMARKS.md). A camera
looking straight down sees no side face, so that mistake cannot happen there; one threshold set
priced on both kinds of frame makes top-down towers reject dice they read right, to pay for
mistakes only oblique cameras make. A card may therefore carry thresholds for frames seen from
above (``"view"`` in ``d6_reader.json``, chosen by ``dicetower calibrate --view top_down``); a
tower's camera looks down on its tray, so it is read with them.

How the view is judged: a cube seen from straight above shows one square face, and a square's
axis-aligned bounding box is square at any turn, so ``ln(height / width)`` of its box is 0. Seen
from elevation e (the camera's angle above the table), its outline also shows the side faces
toward the camera, stretched along the image axis the camera looks along: for an orthographic
view of a die turned psi the box is ``sin e + cos e / (|cos psi| + |sin psi|)`` times as tall as
wide (about 1.17 at e = 75 degrees averaged over the turn, ln 0.158). A frame's *tilt* is the
absolute median of that log ratio over its dice (a photo turned a quarter makes the boxes wide
instead of tall, hence the absolute value; the median, because one box may be off), and the
frame is top-down when its tilt is under :data:`TOP_DOWN_TILT` = 0.15: fixed by that geometry,
not fitted to photos. By the formula, one die alone is called top-down at any turn from 80
degrees up and oblique at any turn from 37 to 73 degrees; between 74 and 79 it depends on the turn.

What the tilt cannot tell: it measures square boxes, not the camera. Below about 36 degrees a die
turned near 45 degrees shows side faces wide enough to square its box again, so a frame of one
such die seen from very low is called top-down; dice lying at various turns give the frame away
(the median), one die may not. The real photos measure what this costs: ``epanemu-dice3``'s phone
shots are seen from low, and the top-down thresholds are priced on every frame judged top-down,
its included (BENCHMARKS.md). Dice clipped by the frame edge or too small to read are
left out (their boxes say nothing of the camera); a frame with none left is oblique, the careful
answer. Wide-angle lenses tilt the boxes of dice near the frame's edges outward in every
direction, which the median over the frame cancels.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

__all__ = ["TOP_DOWN_TILT", "FrameView", "View", "frame_view"]

#: A frame whose tilt is under this is seen from above (see the module docstring).
TOP_DOWN_TILT = 0.15


class View(StrEnum):
    """How the camera sees a frame's dice."""

    TOP_DOWN = "top_down"
    OBLIQUE = "oblique"


@dataclass(frozen=True)
class FrameView:
    """A frame's view and the tilt it was judged from (None: no box to judge by)."""

    view: View
    tilt: float | None


def frame_view(boxes: Sequence[Sequence[float]], cut: float = TOP_DOWN_TILT) -> FrameView:
    """The view of a frame whose readable dice have these ``[x, y, width, height]`` boxes."""
    logs = sorted(math.log(float(b[3]) / float(b[2])) for b in boxes if float(b[2]) > 0 and float(b[3]) > 0)
    if not logs:
        return FrameView(View.OBLIQUE, None)
    mid = len(logs) // 2
    median = logs[mid] if len(logs) % 2 else (logs[mid - 1] + logs[mid]) / 2
    tilt = abs(median)
    return FrameView(View.TOP_DOWN if tilt < cut else View.OBLIQUE, tilt)

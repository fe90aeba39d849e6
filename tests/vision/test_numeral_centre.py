"""The numeral's own centre: found where the renderer drew it, off the box's centre on a d10."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from dicetower.vision.faces.numeral_centre import numeral_centre
from dicetower.vision.kinds import KINDS
from dicetower.vision.synth.numerals import render_crop_top


def test_a_numeral_off_the_middle_is_found_where_it_is() -> None:
    frame = np.full((200, 200, 3), (40, 40, 180), np.uint8)  # a red die filling the box
    cv2.putText(frame, "7", (105, 95), cv2.FONT_HERSHEY_SIMPLEX, 1.4, (240, 240, 240), 4)
    at = numeral_centre(frame, (20.0, 20.0, 160.0, 160.0))
    assert at is not None
    assert abs(at[0] - 118) < 10 and abs(at[1] - 80) < 10  # the 7, not the box's centre (100, 100)


def test_a_blank_die_has_no_numeral() -> None:
    frame = np.full((120, 120, 3), 200, np.uint8)
    assert numeral_centre(frame, (10.0, 10.0, 100.0, 100.0)) is None
    assert numeral_centre(frame, (200.0, 200.0, 50.0, 50.0)) is None  # a box off the frame


@pytest.mark.parametrize("kind", ["d10", "d10t", "d20"])
def test_rendered_numerals_are_found_nearer_than_the_box_centre(kind: str) -> None:
    nearer = 0
    for i in range(8):
        face = KINDS[kind].faces[(3 * i + 1) % len(KINDS[kind].faces)]
        frame, box, top = render_crop_top(9_000 + i, kind, face)
        side = max(box[2], box[3])
        at = numeral_centre(frame, box)
        middle = (box[0] + box[2] / 2, box[1] + box[3] / 2)
        if at is not None:
            found = np.hypot(at[0] - top.centre[0], at[1] - top.centre[1]) / side
            blind = np.hypot(middle[0] - top.centre[0], middle[1] - top.centre[1]) / side
            nearer += found < 0.06 or found < blind
    assert nearer >= 6

"""Where the read face lies: pips located once the face is known (``vision.faces.topface``)."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest
from dicetower.vision.faces.topface import face_centre
from dicetower.vision.reader import FrameReader
from dicetower.vision.synth.render import draw_face, render_scene

GREY = (120, 125, 118)


def _tray(w: int = 320, h: int = 260) -> np.ndarray:
    frame = np.empty((h, w, 3), np.uint8)
    frame[:] = GREY
    return frame


def _paste(frame: np.ndarray, patch: np.ndarray, mask: np.ndarray, x: int, y: int) -> None:
    h, w = mask.shape
    roi = frame[y : y + h, x : x + w]
    a = (mask.astype(np.float32) / 255.0)[:, :, None]
    roi[:] = (patch * a + roi * (1 - a)).astype(np.uint8)


@pytest.mark.parametrize("face", [1, 2, 3, 4, 5, 6])
@pytest.mark.parametrize(("body", "pip"), [((235, 235, 235), (20, 20, 20)), ((40, 40, 200), (240, 240, 240))])
def test_face_centre_of_a_square_on_die_is_its_middle(face: int, body: tuple, pip: tuple) -> None:
    """Black on white and white on red: every face's pips average to the face's centre."""
    frame = _tray()
    patch, mask = draw_face(face, 60, body, pip)
    _paste(frame, patch, mask, 100, 80)
    got = face_centre(frame, (100.0, 80.0, 60.0, 60.0), face)
    if got is None:
        # At the reader's 48 px a drawn 6's pips, 1-2 px apart, can run together: then no
        # centre (the box's stands), never a wrong one. Every other face is found.
        assert face == 6
        return
    assert math.dist(got, (129.5, 109.5)) < 1.5


def _die_seen_at_an_angle(face: int) -> tuple[np.ndarray, tuple[float, float, float, float]]:
    """A top face above a shaded side face whose three pips are squashed to ellipses."""
    frame = _tray()
    side = np.zeros((30, 60, 3), np.uint8)
    side[:] = (170, 170, 170)
    for cx in (14, 30, 46):
        cv2.ellipse(side, (cx, 15), (5, 3), 0, 0, 360, (20, 20, 20), -1, cv2.LINE_AA)
    frame[138:168, 100:160] = side
    patch, mask = draw_face(face, 60, (235, 235, 235), (20, 20, 20))
    _paste(frame, patch, mask, 100, 80)
    return frame, (100.0, 80.0, 60.0, 88.0)


@pytest.mark.parametrize("face", [1, 2, 4])
def test_side_face_pips_do_not_pull_the_centre(face: int) -> None:
    """The side face's foreshortened pips are left out: the centre is the top face's, not the box's."""
    frame, box = _die_seen_at_an_angle(face)
    got = face_centre(frame, box, face)
    assert got is not None
    assert math.dist(got, (129.5, 109.5)) < 2.0
    assert math.dist(got, (130.0, 124.0)) > 12.0  # the box's centre, pulled down by the side face


def test_no_centre_without_exactly_that_many_pips() -> None:
    """Asked for a count the die does not show, or for a blank die: no centre, never a guess."""
    frame = _tray()
    patch, mask = draw_face(2, 60, (235, 235, 235), (20, 20, 20))
    _paste(frame, patch, mask, 100, 80)
    box = (100.0, 80.0, 60.0, 60.0)
    assert face_centre(frame, box, 4) is None
    assert face_centre(frame, box, 7) is None
    blank = _tray()
    cv2.rectangle(blank, (100, 80), (159, 139), (235, 235, 235), -1)
    assert face_centre(blank, box, 1) is None


def test_dark_background_around_a_turned_die_is_not_a_pip() -> None:
    """The corners of the box around a turned die are tray, not holes in the die."""
    frame = np.zeros((260, 320, 3), np.uint8)  # black tray: its corners are as dark as a pip
    patch, mask = draw_face(1, 60, (235, 235, 235), (20, 20, 20))
    turn = cv2.getRotationMatrix2D((30, 30), 30, 1.0)
    turn[:, 2] += 12
    patch = cv2.warpAffine(patch, turn, (84, 84))
    mask = cv2.warpAffine(mask, turn, (84, 84))
    _paste(frame, patch, mask, 100, 80)
    ys, xs = np.nonzero(mask)
    box = (100.0 + xs.min(), 80.0 + ys.min(), float(xs.max() - xs.min() + 1), float(ys.max() - ys.min() + 1))
    got = face_centre(frame, box, 1)
    assert got is not None
    assert math.dist(got, (100 + 42, 80 + 42)) < 2.0  # the pip, turned with the die about (42, 42)


def test_reader_reports_face_centres_on_rendered_dice() -> None:
    """End to end: read dice carry a face centre near the middle of their top-down box."""
    reader = FrameReader()
    found = near = 0
    for seed in range(4):
        frame, _ref, _labels = render_scene(seed, 6)
        for d in reader.read(frame).dice:
            if d.face is None:
                assert d.face_centre is None
                continue
            centre = d.face_centre
            assert d.to_json()["face_centre"] == (None if centre is None else [round(v, 1) for v in centre])
            if d.face_centre is not None:
                found += 1
                x, y, w, h = d.box
                near += math.dist(d.face_centre, (x + w / 2, y + h / 2)) < 0.2 * max(w, h)
    assert found >= 12
    assert near == found


def test_annotation_marks_the_read_face_centre() -> None:
    """The annotated photo shows where the read face is, not only the box."""
    from dicetower.vision.eval.annotate import annotate_reading
    from dicetower.vision.reading import DieReading, Reading

    frame = _tray()
    box = (100.0, 80.0, 60.0, 88.0)
    plain = annotate_reading(frame, Reading((DieReading(box, face=1),), 320, 260))
    marked = annotate_reading(
        frame, Reading((DieReading(box, face=1, face_centre=(129.0, 109.0)),), 320, 260)
    )
    assert (plain[109, 129] == frame[109, 129]).all()  # the box alone leaves the middle as it was
    assert (marked[109, 129] != frame[109, 129]).any()  # a cross where the face is

"""The mixed-dice renderer: deterministic, every kind drawn where its label says, bad specs refused."""

from __future__ import annotations

import numpy as np
import pytest
from dicetower.vision.kinds import DRAWN_KINDS, KINDS
from dicetower.vision.synth.numerals import (
    NumeralStyle,
    TrayDie,
    render_crop,
    render_crop_top,
    render_tray,
    render_tray_tops,
)
from dicetower.vision.synth.render import SynthError

CLEAN = NumeralStyle(blur=0.0, noise=0.0, perspective=0.0, light=0.0, shadows=False)
MIXED = [
    ("d6", 4, "red"),
    ("d6n", 6, "white"),
    ("d10", 9, "blue"),
    ("d10t", 70, "black"),
    ("d20", 17, "green"),
]


def test_same_seed_same_tray() -> None:
    a = render_tray(5, MIXED, touching=True)
    b = render_tray(5, MIXED, touching=True)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]) and a[2] == b[2]
    c = render_tray(6, MIXED)
    assert not np.array_equal(a[0], c[0])


def test_labels_name_kinds_and_faces_in_order() -> None:
    _, _, labels = render_tray(1, MIXED, size=(480, 360))
    assert [(d.die, d.face) for d in labels] == [("d6", 4), ("d6", 6), ("d10", 9), ("d10t", 70), ("d20", 17)]
    for d in labels:
        assert d.box is not None and not d.cocked
        x, y, w, h = d.box
        assert x >= 0 and y >= 0 and x + w <= 480 and y + h <= 360 and 15 < w < 90 and 15 < h < 90


@pytest.mark.parametrize("kind", DRAWN_KINDS)
def test_each_kind_is_inside_its_box(kind: str) -> None:
    dice = [TrayDie(kind, f, "yellow", "solid") for f in KINDS[kind].faces[:3]]
    frame, ref, labels = render_tray(11, dice, style=CLEAN)
    diff = np.abs(frame.astype(int) - ref.astype(int)).max(axis=2) > 30
    inside = np.zeros_like(diff)
    for d in labels:
        assert d.box is not None
        x, y, w, h = (round(v) for v in d.box)
        inside[y : y + h, x : x + w] = True
        assert diff[y : y + h, x : x + w].mean() > 0.5  # the die fills its box
    assert diff[~inside].mean() < 0.002


def test_faces_differ_in_the_drawing() -> None:
    (a, box), (b, _) = (render_crop(3, "d20", f, colour="white", neighbour=False) for f in (6, 9))
    x, y, w, h = (round(v) for v in box)
    assert np.abs(a.astype(int) - b.astype(int))[y : y + h, x : x + w].mean() > 1.0


def test_cocked_die_is_labelled_cocked() -> None:
    _, _, labels = render_tray(2, [TrayDie("d20", 5, "red"), TrayDie("d10", 3, "blue", cocked=True)])
    assert [d.cocked for d in labels] == [False, True]


@pytest.mark.parametrize(
    "dice",
    [
        [("d10", 10, "red")],
        [("d10t", 5, "red")],
        [("d12", 1, "red")],
        [("d20", 0, "red")],
        [("d6n", 1, "teal")],
    ],
)
def test_bad_specs_are_refused(dice: list[tuple]) -> None:
    with pytest.raises(SynthError):
        render_tray(0, dice)


def test_top_faces_come_with_the_same_tray() -> None:
    frame, ref, labels = render_tray(5, MIXED, touching=True)
    frame2, ref2, labels2, tops = render_tray_tops(5, MIXED, touching=True)
    assert np.array_equal(frame, frame2) and np.array_equal(ref, ref2) and labels == labels2
    assert len(tops) == len(labels)
    for top, d in zip(tops, labels, strict=True):
        x, y, w, h = d.box
        assert x <= top.centre[0] <= x + w and y <= top.centre[1] <= y + h
        assert 0.0 <= top.upright < 360.0


@pytest.mark.parametrize("kind", ["d20", "d10", "d10t", "d6n"])
def test_the_top_face_turn_stands_its_numeral_upright(kind: str) -> None:
    """The glyph reader, taught upright numerals only, likes the numeral best at the recorded turn."""
    from dicetower.vision.faces.glyphs import TEXTS, GlyphReader, central_crops
    from dicetower.vision.training.glyphs.renders import face_text

    try:
        reader = GlyphReader()
    except RuntimeError:
        pytest.skip("no shipped glyph reader")
    best_upright = 0
    for i in range(6):
        face = KINDS[kind].faces[(5 * i + 1) % len(KINDS[kind].faces)]
        frame, box, top = render_crop_top(7_000 + i, kind, face)
        frame2, box2 = render_crop(7_000 + i, kind, face)
        assert np.array_equal(frame, frame2) and box == box2
        at = (top.centre[0] - box[2] / 2, top.centre[1] - box[3] / 2, box[2], box[3])
        turns = top.upright + np.arange(0.0, 360.0, 45.0)
        p = reader.probabilities(central_crops(frame, at, turns))[:, 1 + TEXTS.index(face_text(kind, face))]
        best_upright += int(np.argmax(p)) == 0
    assert best_upright >= 5

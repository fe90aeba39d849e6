"""Die bodies found against the tray, and numeral dice put back together from the detector's fragments."""

from __future__ import annotations

import numpy as np
import pytest
from dicetower.vision.bodies import MAX_BODIES, body_boxes
from dicetower.vision.faces.numerals import NumeralReader
from dicetower.vision.locate import DieCandidate
from dicetower.vision.reader import FrameReader
from dicetower.vision.synth.numerals import NumeralStyle, TrayDie, render_tray
from dicetower.vision.training.numerals.data import TEST_SEED


def _iou(a, b) -> float:
    ix = max(0.0, min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1]))
    return ix * iy / (a[2] * a[3] + b[2] * b[3] - ix * iy)


BIG = NumeralStyle(blur=0.0, noise=1.0, die_size=(150.0, 170.0))


@pytest.fixture(scope="module")
def numerals() -> NumeralReader:
    return NumeralReader()


@pytest.mark.parametrize("with_reference", [False, True])
def test_each_die_body_is_found_with_or_without_the_empty_tray(with_reference: bool) -> None:
    dice = [TrayDie("d20", 7, "blue", "solid"), TrayDie("d10", 3, "white", "solid")]
    frame, ref, labels = render_tray(TEST_SEED + 11, dice, style=BIG)
    found = body_boxes(frame, ref if with_reference else None)
    for die in labels:
        assert max(_iou(b, die.box) for b in found) > 0.6


def test_an_empty_tray_has_no_body_and_noise_never_makes_more_than_the_bound() -> None:
    _frame, ref, _ = render_tray(TEST_SEED + 12, [TrayDie("d20", 7, "blue", "solid")], style=BIG)
    assert body_boxes(ref) == []
    rng = np.random.default_rng(0)
    speckle = rng.integers(0, 256, (480, 640, 3), dtype=np.uint8)
    assert len(body_boxes(speckle)) <= MAX_BODIES


def test_a_d20_boxed_in_fragments_is_read_as_one_whole_die(numerals: NumeralReader) -> None:
    frame, ref, labels = render_tray(TEST_SEED + 13, [TrayDie("d20", 20, "blue", "solid")], style=BIG)
    x, y, w, h = labels[0].box

    def fragments(_f: np.ndarray, _r: object, _t: object) -> list[DieCandidate]:
        # what the pip-d6 detector does to a large d20: boxes round single numerals
        return [
            DieCandidate(box=(x + 0.3 * w, y + 0.3 * h, 0.3 * w, 0.3 * h)),
            DieCandidate(box=(x + 0.1 * w, y + 0.55 * h, 0.25 * w, 0.25 * h)),
        ]

    plain = FrameReader(locate=fragments).read(frame, ref)
    assert all(d.kind == "d6" for d in plain.dice)  # fragments: read as pip d6 or dropped
    whole = FrameReader(locate=fragments, numerals=numerals).read(frame, ref)
    assert [d.kind for d in whole.dice] == ["d20"]
    assert _iou(whole.dice[0].box, labels[0].box) > 0.6


def test_bodies_leave_pip_d6_to_the_detector(numerals: NumeralReader) -> None:
    dice = [TrayDie("d6", f, c) for f, c in ((2, "white"), (5, "red"), (6, "white"))]
    frame, ref, labels = render_tray(TEST_SEED + 14, dice, style=NumeralStyle(blur=0.0, noise=1.0))

    def labelled(_f: np.ndarray, _r: object, _t: object) -> list[DieCandidate]:
        return [DieCandidate(box=d.box) for d in labels]

    got = FrameReader(locate=labelled, numerals=numerals).read(frame, ref)
    assert [d.kind for d in got.dice] == ["d6"] * 3
    assert [d.box for d in got.dice] == [tuple(float(v) for v in d.box) for d in labels]

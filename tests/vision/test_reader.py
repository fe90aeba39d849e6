"""The d6 face reader and the frame reader: synthetic dice drawn here, and real labelled photos."""

from __future__ import annotations

import json
import math
from pathlib import Path

import cv2
import numpy as np
import pytest
from dicetower.vision.faces.pips import D6Reader, ReaderModelError, blur_score, crop_die
from dicetower.vision.locate import DieCandidate
from dicetower.vision.reader import FrameReader
from dicetower.vision.reading import ReadStatus, UnreadableReason
from drawn_dice import draw_die

DATASETS = Path(__file__).parents[2] / ".." / "shared" / "datasets"
MODELS = Path(__file__).parents[2] / "vision" / "models"


def _fixed(*cands: DieCandidate):
    return lambda frame, reference, tray: list(cands)


def _read_all(reader: D6Reader, angles: tuple[float, ...], **style: object) -> list[tuple[int, int | None]]:
    out = []
    for face in range(1, 7):
        for angle in angles:
            frame, box = draw_die(face, angle, **style)  # type: ignore[arg-type]
            (r,) = reader.read_crops([crop_die(frame, box)])
            out.append((face, r.face))
    return out


RED = {"body": (40, 40, 200), "pip": (240, 240, 240), "background": (200, 200, 200)}


#: Sharp-cornered, flat drawn dice (``draw_die``) are cruder than any real die: the shipped reader
#: rejects more of the white-on-red ones, and
#: reads a white-on-red 5 lying square to its crop as a 4. Rounded, bevelled dice of the same
#: colours (the synthetic renderer's, ``test_rendered_dice_square_or_turned_are_never_misread``)
#: it reads right at every size and turn.
#: Kept as strict xfails so the day a reader fixes them the run says so.
DRAWN_WHITE_ON_RED = pytest.param(
    RED,
    marks=pytest.mark.xfail(
        strict=True,
        reason="the shipped reader rejects 7 of these 24 drawn white-on-red dice (every 5, p 0.76-0.95 "
        "under face 5's threshold, and three 3s); it misreads none",
    ),
    id="white-on-red",
)


@pytest.mark.parametrize("style", [{}, RED], ids=["black-on-white", "white-on-red"])
def test_synthetic_rotated_dice_are_never_misread(reader: D6Reader, style: dict) -> None:
    reads = _read_all(reader, (27.0, 61.0, 200.0, 295.0), **style)
    assert [(f, got) for f, got in reads if got is not None and got != f] == []


@pytest.mark.parametrize("style", [{}, DRAWN_WHITE_ON_RED], ids=["black-on-white", "white-on-red"])
def test_synthetic_rotated_dice_are_mostly_read(reader: D6Reader, style: dict) -> None:
    reads = _read_all(reader, (27.0, 61.0, 200.0, 295.0), **style)
    assert sum(got == f for f, got in reads) >= 0.75 * len(reads)


@pytest.mark.parametrize("style", [{}, DRAWN_WHITE_ON_RED], ids=["black-on-white", "white-on-red"])
def test_synthetic_rotated_dice_show_every_face_readable(reader: D6Reader, style: dict) -> None:
    reads = _read_all(reader, (27.0, 61.0, 200.0, 295.0), **style)
    assert {got for _f, got in reads} - {None} == set(range(1, 7))


@pytest.mark.parametrize(
    "style",
    [
        {},
        pytest.param(
            RED,
            marks=pytest.mark.xfail(
                strict=True,
                reason="the shipped reader reads this sharp-cornered drawn white-on-red 5, square to its "
                "60 px crop, as a 4 (p 0.95); the renderer's rounded dice it reads right",
            ),
        ),
    ],
    ids=["black-on-white", "white-on-red"],
)
def test_synthetic_axis_aligned_dice_are_never_misread(reader: D6Reader, style: dict) -> None:
    reads = _read_all(reader, (0.0,), **style)
    assert [(f, got) for f, got in reads if got is not None and got != f] == []


@pytest.mark.parametrize(
    "body, pip, background",
    [((235, 235, 235), (20, 20, 20), (120, 120, 120)), (RED["body"], RED["pip"], RED["background"])],
    ids=["black-on-white", "white-on-red"],
)
def test_rendered_dice_square_or_turned_are_never_misread(
    reader: D6Reader, body: tuple, pip: tuple, background: tuple
) -> None:
    """Dice drawn as the synthetic renderer draws them (rounded, bevelled), every face, 30-90 px,
    square to the frame or turned: none read as another face, nearly all read."""
    from dicetower.vision.synth.render import draw_face

    reads = []
    for face in range(1, 7):
        for side in (30, 45, 60, 90):
            patch, mask = draw_face(face, side, body, pip)
            canvas = np.full((3 * side, 3 * side, 3), background, np.uint8)
            canvas[side : 2 * side, side : 2 * side][mask > 0] = patch[mask > 0]
            for angle in (0.0, 27.0, 61.0):
                m = cv2.getRotationMatrix2D((1.5 * side, 1.5 * side), angle, 1.0)
                frame = cv2.warpAffine(canvas, m, canvas.shape[1::-1], borderValue=background)
                frame = cv2.GaussianBlur(frame, (3, 3), 0.7)
                a = math.radians(angle)
                ext = side * (abs(math.cos(a)) + abs(math.sin(a)))
                box = (1.5 * side - ext / 2, 1.5 * side - ext / 2, ext, ext)
                (r,) = reader.read_crops([crop_die(frame, box)])
                reads.append((face, r.face))
    assert [(f, got) for f, got in reads if got is not None and got != f] == []
    assert sum(got == f for f, got in reads) >= 0.95 * len(reads)


def test_blank_crop_is_unreadable(reader: D6Reader) -> None:
    frame = np.full((120, 120, 3), 128, np.uint8)
    (r,) = reader.read_crops([crop_die(frame, (30, 30, 60, 60))])
    assert r.face is None
    assert r.reason in (UnreadableReason.LOW_CONFIDENCE, UnreadableReason.BLURRED)


def test_heavily_blurred_die_is_unreadable(reader: D6Reader) -> None:
    frame, box = draw_die(5, 10.0)
    blurred = cv2.GaussianBlur(frame, (0, 0), 12)
    (r,) = reader.read_crops([crop_die(blurred, box)])
    assert r.face is None
    assert blur_score(crop_die(blurred, box)) < blur_score(crop_die(frame, box))


def test_confidence_is_a_probability(reader: D6Reader) -> None:
    frame, box = draw_die(3, 40.0)
    probs = reader.probabilities([crop_die(frame, box)])
    assert probs.shape == (1, 7)
    assert np.isclose(probs.sum(), 1.0, atol=1e-5)
    (r,) = reader.read_crops([crop_die(frame, box)])
    assert 0.0 < r.confidence <= 1.0


def test_the_second_look_on_its_own_network_copy_changes_nothing(reader: D6Reader) -> None:
    """The second network (kept for its own batch shape) is the same model as the first."""
    from dicetower.vision.faces.pips import looked_twice, to_blob

    crops = [crop_die(*draw_die(face, 17.0 * face, side=40 + 3 * face)) for face in range(1, 7)]
    crops += [np.full((48, 48, 3), 120, np.uint8), cv2.GaussianBlur(crops[4], (0, 0), 3.0)]
    blob = to_blob(crops)
    one_net = looked_twice(reader._forward, blob, 1.01)  # every crop gets its extra look
    two_nets = looked_twice(reader._forward, blob, 1.01, reader._forward_again)
    assert np.allclose(one_net, two_nets, atol=1e-5)
    # And the batch sizes a frame alternates between leave the first network's answers alone.
    first = reader._forward(blob)
    reader._forward_again(blob[:3])
    assert np.allclose(reader._forward(blob), first, atol=1e-5)


def test_missing_model_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ReaderModelError, match="missing"):
        D6Reader(tmp_path)


def test_model_metadata_is_sane() -> None:
    meta_path = MODELS / "d6_reader.json"
    if not meta_path.is_file():
        pytest.skip("face-reader model not built")
    meta = json.loads(meta_path.read_text())
    assert meta["input"] == 48
    assert 0.05 < meta["temperature"] < 20
    assert set(meta["thresholds"]) == {str(f) for f in range(1, 7)}
    assert all(0.0 < t < 1.0 for t in meta["thresholds"].values())
    assert (MODELS / "d6_reader.onnx").stat().st_size < 2_000_000


def test_frame_reader_composes_locate_read_colour(reader: D6Reader) -> None:
    left, box_l = draw_die(6, 20.0, body=(40, 40, 200), pip=(240, 240, 240))
    right, box_r = draw_die(2, 70.0)
    frame = np.hstack([left, right])
    box_r = (box_r[0] + left.shape[1], *box_r[1:])
    fr = FrameReader(locate=_fixed(DieCandidate(box_l), DieCandidate(box_r)))
    reading = fr.read(frame)
    assert reading.faces == [6, 2]
    assert [d.colour for d in reading.dice] == ["red", "white"]
    assert (reading.width, reading.height) == (frame.shape[1], frame.shape[0])
    assert {"locate", "read", "colour"} <= set(reading.timings_ms)
    assert reading.to_json()["dice"][0]["face"] == 6


def test_frame_reader_reasons_for_boxes_it_cannot_or_would_not_read(reader: D6Reader) -> None:
    frame, box = draw_die(4, 30.0)
    x, y, w, h = box
    blank = (5.0, 5.0, 40.0, 40.0)  # plain background: nothing to read
    cands = (
        DieCandidate((10, 10, 6, 6)),  # a speck
        DieCandidate((x, y, w * 0.4, h), cut_off=True),  # clipped by the edge to a sliver
        DieCandidate(box, cut_off=True),  # at the edge but whole: read
        DieCandidate(box, touching=True),  # split from its neighbour: read
        DieCandidate(blank, touching=True),  # not read, and touching says why
        DieCandidate(box),
    )
    keep_all = FrameReader(locate=_fixed(*cands))
    keep_all.not_a_die_drop = 1.01  # report every candidate, even sure non-dice
    reading = keep_all.read(frame)
    assert [d.reason for d in reading.dice] == [
        UnreadableReason.TOO_SMALL,
        UnreadableReason.CUT_OFF,
        None,
        None,
        UnreadableReason.TOUCHING,
        None,
    ]
    assert [d.face for d in reading.dice] == [None, None, 4, 4, None, 4]
    assert reading.dice[0].status is ReadStatus.UNREADABLE
    assert len(reading.unreadable) == 3


def test_sure_non_dice_are_dropped_not_reported_unreadable(reader: D6Reader) -> None:
    # An unreadable die makes the tower throw again; a patch of tray the reader is sure is
    # no die must not. The real die next to it is still read.
    frame, box = draw_die(4, 30.0)
    blank = (5.0, 5.0, 40.0, 40.0)
    reading = FrameReader(locate=_fixed(DieCandidate(blank), DieCandidate(box))).read(frame)
    assert [d.face for d in reading.dice] == [4]


def test_frame_reader_on_an_empty_frame(reader: D6Reader) -> None:
    reading = FrameReader(locate=_fixed()).read(np.zeros((50, 80), np.uint8))
    assert reading.dice == ()
    assert reading.status.value == "tray_empty"


def _gt_accuracy(dataset: str, split: str, limit: int) -> tuple[float, float, int]:
    from dicetower.vision.training.d6.evaluate import evaluate_dataset

    r = evaluate_dataset(FrameReader(), DATASETS / dataset, split, "gt", limit)
    return r["correct"], r["wrong"], r["dice"]


# Regression floors for the reader alone (labelled boxes, no detector) on the first 40 test
# photos: well under what the shipped model measures, so they catch a broken reader, not a
# slightly worse one (the end-to-end figures are tests/vision/test_datasets.py's).
@pytest.mark.datasets
@pytest.mark.skipif(not DATASETS.is_dir(), reason="../shared/datasets not present")
@pytest.mark.parametrize(
    ("dataset", "floor", "max_wrong"),
    [("byler-d6", 0.70, 0.03), ("matteop65-d6-wood", 0.95, 0.02), ("tomitomi3-gray-d6", 0.97, 0.0)],
)
def test_reads_held_out_photos_with_labelled_boxes(
    reader: D6Reader, dataset: str, floor: float, max_wrong: float
) -> None:
    correct, wrong, n = _gt_accuracy(dataset, "test", 40)
    assert n >= 30
    assert correct >= floor
    assert wrong <= max_wrong


def test_the_reader_looks_again_at_unsure_crops_mirrored(tmp_path: Path) -> None:
    for name in ("d6_reader.onnx", "d6_reader.json"):
        (tmp_path / name).write_bytes((MODELS / name).read_bytes())
    reader = D6Reader(tmp_path)
    frame, box = draw_die(5, 20.0, side=50)
    crops = [np.full((48, 48, 3), 120, np.uint8), crop_die(frame, box)]
    reader.second_look_below = 1.01  # every crop gets its second look
    calls: list[np.ndarray] = []
    reader._forward_again = lambda b: (calls.append(b.copy()), reader._forward(b))[1]  # type: ignore[method-assign]
    reader.probabilities(crops)
    from dicetower.vision.faces.pips import to_blob

    assert len(calls) == 1 and np.allclose(calls[0], to_blob(crops)[..., ::-1])

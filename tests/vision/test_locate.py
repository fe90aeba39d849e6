"""locate_dice on frames drawn here with cv2 and, where present, on the shared dataset photos."""

from __future__ import annotations

import math
import time
from pathlib import Path

import cv2
import numpy as np
import pytest
from dicetower.vision.detector import MODEL_PATH, Detection, DetectorError, DieDetector, letterbox
from dicetower.vision.locate import (
    RING_CHECK_BELOW,
    DieCandidate,
    LocateError,
    foreground_mask,
    locate_dice,
)

DATASETS = Path(__file__).parents[2] / ".." / "shared" / "datasets"

PIPS = {
    1: [(0, 0)],
    2: [(-1, -1), (1, 1)],
    3: [(-1, -1), (0, 0), (1, 1)],
    4: [(-1, -1), (1, -1), (-1, 1), (1, 1)],
    5: [(-1, -1), (1, -1), (0, 0), (-1, 1), (1, 1)],
    6: [(-1, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (1, 1)],
}


def tray(w: int = 640, h: int = 640, seed: int = 0) -> np.ndarray:
    """A grey felt tray with a darker wall band and mild noise (no dice)."""
    rng = np.random.default_rng(seed)
    img = np.full((h, w, 3), (150, 150, 145), np.uint8)
    cv2.rectangle(img, (0, 0), (w - 1, h - 1), (70, 70, 75), max(4, w // 40))
    noise = rng.normal(0, 3, img.shape)
    return np.clip(img + noise, 0, 255).astype(np.uint8)


def draw_die(
    img: np.ndarray,
    centre: tuple[float, float],
    side: float,
    face: int,
    angle: float = 0.0,
    body: tuple[int, int, int] = (235, 235, 235),
    pip: tuple[int, int, int] = (20, 20, 20),
) -> tuple[float, float, float, float]:
    """Draw a top-down die with a soft shadow; returns its axis-aligned box."""
    cx, cy = centre
    rect = ((cx, cy), (side, side), angle)
    corners = cv2.boxPoints(rect).astype(np.int32)
    shadow = cv2.boxPoints(((cx + side * 0.08, cy + side * 0.08), (side, side), angle)).astype(np.int32)
    over = img.copy()
    cv2.fillConvexPoly(over, shadow, (90, 90, 90), cv2.LINE_AA)
    img[:] = cv2.addWeighted(over, 0.5, img, 0.5, 0)
    cv2.fillConvexPoly(img, corners, body, cv2.LINE_AA)
    cv2.polylines(
        img, [corners], True, tuple(int(c * 0.7) for c in body), max(1, int(side / 30)), cv2.LINE_AA
    )
    a = math.radians(angle)
    for u, v in PIPS[face]:
        px = cx + 0.28 * side * (u * math.cos(a) - v * math.sin(a))
        py = cy + 0.28 * side * (u * math.sin(a) + v * math.cos(a))
        cv2.circle(img, (round(px), round(py)), max(1, round(side * 0.09)), pip, -1, cv2.LINE_AA)
    x, y, w, h = cv2.boundingRect(corners)
    return float(x), float(y), float(w), float(h)


def centre(box: tuple[float, float, float, float]) -> tuple[float, float]:
    return box[0] + box[2] / 2, box[1] + box[3] / 2


def matched(boxes: list[tuple[float, float, float, float]], cands: list[DieCandidate]) -> int:
    """Labels hit by a distinct candidate centre within half the label's size."""
    used: set[int] = set()
    for b in boxes:
        lx, ly = centre(b)
        for j, c in enumerate(cands):
            if j not in used and math.dist((lx, ly), c.centre) <= max(b[2], b[3]) / 2:
                used.add(j)
                break
    return len(used)


def scene(seed: int = 1) -> tuple[np.ndarray, np.ndarray, list[tuple[float, float, float, float]]]:
    """Empty tray, the same tray with 5 separated dice of varied colour and size, their boxes."""
    ref = tray(seed=seed)
    frame = ref.copy()
    specs = [
        ((160, 170), 52, 3, 10, (235, 235, 235), (20, 20, 20)),
        ((420, 150), 44, 5, 35, (40, 40, 200), (240, 240, 240)),
        ((300, 330), 60, 6, 0, (60, 160, 60), (250, 250, 250)),
        ((170, 470), 36, 2, 60, (30, 200, 230), (10, 10, 10)),
        ((470, 450), 48, 4, 20, (235, 235, 235), (30, 30, 160)),
    ]
    boxes = [draw_die(frame, *s) for s in specs]
    return ref, frame, boxes


pytestmark = pytest.mark.skipif(not MODEL_PATH.is_file(), reason="detector model not built")


def test_finds_drawn_dice_with_reference() -> None:
    ref, frame, boxes = scene()
    cands = locate_dice(frame, reference=ref)
    assert matched(boxes, cands) == len(boxes)
    assert len(cands) == len(boxes)
    assert all(isinstance(c, DieCandidate) and 0 < c.score <= 1 for c in cands)


def test_finds_drawn_dice_without_reference() -> None:
    _, frame, boxes = scene(seed=3)
    cands = locate_dice(frame)
    assert matched(boxes, cands) >= len(boxes) - 1
    assert len(cands) <= len(boxes) + 1


def test_empty_tray_gives_no_candidates() -> None:
    ref = tray(seed=5)
    assert locate_dice(ref) == []
    assert locate_dice(tray(seed=6), reference=ref) == []


def test_reference_difference_ignores_the_tray() -> None:
    """Die-like marks printed on the tray are in the reference too: only the real die is kept."""
    ref = tray(seed=7)
    for i, c in enumerate([(150, 150), (480, 160), (150, 480)]):
        draw_die(ref, c, 46, 1 + i, 15 * i)  # decals on the tray floor
    frame = ref.copy()
    die = draw_die(frame, (430, 440), 50, 5, 25, (40, 40, 200), (240, 240, 240))
    cands = locate_dice(frame, reference=ref)
    assert len(cands) == 1
    assert matched([die], cands) == 1


def test_shadow_is_not_foreground() -> None:
    ref = tray(seed=8)
    frame = ref.copy()
    shade = frame.copy()
    cv2.circle(shade, (320, 320), 80, (0, 0, 0), -1)
    frame = cv2.addWeighted(shade, 0.35, frame, 0.65, 0)  # a soft dark patch, same colour
    fg = foreground_mask(frame, ref)
    assert np.count_nonzero(fg) < 0.05 * math.pi * 80 * 80


def test_touching_dice_are_separated() -> None:
    """Dice edge to edge are two candidates; split cleanly, so not flagged."""
    ref = tray(seed=9)
    frame = ref.copy()
    a = draw_die(frame, (290, 320), 56, 2)
    b = draw_die(frame, (347, 320), 56, 5)
    far = draw_die(frame, (150, 140), 50, 3)
    cands = locate_dice(frame, reference=ref)
    assert matched([a, b, far], cands) == 3
    assert len(cands) == 3


@pytest.mark.xfail(
    strict=True,
    reason="the shipped detector proposes these two drawn dice as boxes 75-92 px wide that overlap, so "
    "both are flagged touching (unreadable: a re-roll, never a wrong face)",
)
def test_touching_dice_split_cleanly_are_not_flagged() -> None:
    ref = tray(seed=9)
    frame = ref.copy()
    draw_die(frame, (290, 320), 56, 2)
    draw_die(frame, (347, 320), 56, 5)
    draw_die(frame, (150, 140), 50, 3)
    assert not any(c.touching for c in locate_dice(frame, reference=ref))


def test_row_of_three_dice_gives_three_candidates() -> None:
    ref = tray(seed=16)
    frame = ref.copy()
    row = [
        draw_die(frame, (230 + 58 * i, 330), 57, 1 + 2 * i, 0, (40, 40, 200), (240, 240, 240))
        for i in range(3)
    ]
    cands = locate_dice(frame, reference=ref)
    assert matched(row, cands) == 3
    assert len(cands) == 3


def test_dice_pressed_together_are_flagged_touching() -> None:
    """Two dice turned 45 degrees, edge to edge on a diagonal.

    Whether the model splits them (boxes overlapping: each crop holds part of the other) or
    not (one peak on a two-dice blob), every candidate on the pair must say ``touching`` so
    the reader does not read a face off a crop of two dice; the lone die must not.
    """
    ref = tray(seed=15)
    frame = ref.copy()
    a = draw_die(frame, (270, 300), 56, 3, 45)
    b = draw_die(frame, (310, 340), 56, 6, 45)
    far = draw_die(frame, (150, 140), 50, 1, 10)
    cands = locate_dice(frame, reference=ref)
    lone = [c for c in cands if math.dist(c.centre, centre(far)) < 25]
    pair = [c for c in cands if a[0] <= c.centre[0] <= b[0] + b[2] and a[1] <= c.centre[1] <= b[1] + b[3]]
    assert len(lone) == 1 and not lone[0].touching
    assert pair and all(c.touching for c in pair)
    assert len(cands) == 1 + len(pair)


def test_cut_off_die_is_flagged() -> None:
    ref = tray(seed=10)
    frame = ref.copy()
    edge = draw_die(frame, (14, 320), 60, 6)
    inner = draw_die(frame, (330, 300), 56, 4)
    cands = locate_dice(frame, reference=ref)
    near_edge = [c for c in cands if math.dist(c.centre, centre(edge)) < 40]
    near_inner = [c for c in cands if math.dist(c.centre, centre(inner)) < 28]
    assert near_edge and near_edge[0].cut_off
    assert near_inner and not near_inner[0].cut_off


def test_tray_polygon_excludes_outside() -> None:
    ref, frame, boxes = scene(seed=11)
    poly = np.array([[0, 0], [639, 0], [639, 300], [0, 300]])  # top half only
    cands = locate_dice(frame, reference=ref, tray=poly)
    top = [b for b in boxes if centre(b)[1] < 300]
    assert matched(top, cands) == len(top)
    assert all(c.centre[1] < 300 for c in cands)
    mask = np.zeros(frame.shape[:2], np.uint8)
    mask[:300] = 255
    assert [c.box for c in locate_dice(frame, reference=ref, tray=mask)] == [c.box for c in cands]


def test_boxes_are_in_frame_pixels_at_any_size() -> None:
    ref, frame, boxes = scene(seed=12)
    big = cv2.resize(frame, (1920, 1920), interpolation=cv2.INTER_LINEAR)
    big_ref = cv2.resize(ref, (1920, 1920), interpolation=cv2.INTER_LINEAR)
    cands = locate_dice(big, reference=big_ref)
    assert matched([tuple(v * 3 for v in b) for b in boxes], cands) == len(boxes)


def test_fifty_megapixel_frame_is_bounded() -> None:
    _, frame, _ = scene(seed=13)
    big = cv2.resize(frame, (8660, 5774), interpolation=cv2.INTER_NEAREST)
    t = time.perf_counter()
    cands = locate_dice(big)
    assert time.perf_counter() - t < 3.0
    assert all(c.box[0] >= 0 and c.box[0] + c.box[2] <= 8660 + 1e-6 for c in cands)


def test_grey_and_bgra_frames_are_accepted_and_bad_input_refused() -> None:
    _, frame, boxes = scene(seed=14)
    grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    assert matched(boxes, locate_dice(grey)) >= len(boxes) - 2
    assert len(locate_dice(cv2.cvtColor(frame, cv2.COLOR_BGR2BGRA))) == len(locate_dice(frame))
    with pytest.raises(LocateError):
        locate_dice(np.zeros((0, 0, 3), np.uint8))
    with pytest.raises(LocateError):
        locate_dice(np.zeros((10, 10, 5), np.uint8))


def test_missing_model_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(DetectorError, match="not found"):
        DieDetector(tmp_path / "nope.onnx")
    (tmp_path / "bad.onnx").write_bytes(b"not a model")
    with pytest.raises(DetectorError, match="cannot load"):
        DieDetector(tmp_path / "bad.onnx")


def test_letterbox_keeps_aspect_and_bounds_upscale() -> None:
    img, scale = letterbox(np.zeros((480, 640, 3), np.uint8), 384)
    assert img.shape == (384, 384, 3) and scale == pytest.approx(0.6)
    _, small = letterbox(np.zeros((128, 128, 3), np.uint8), 384)
    assert small == pytest.approx(1.5)


# ----------------------------------------------------------------------------- real photos


def _dataset_recall(name: str, limit: int) -> tuple[float, float]:
    from dicetower.vision.training.detector.evaluate import evaluate

    r = evaluate(name, "val", DieDetector(), limit=limit)
    return r["recall"], r["precision"]


@pytest.mark.datasets
@pytest.mark.skipif(not DATASETS.is_dir(), reason="../shared/datasets not present")
@pytest.mark.parametrize(
    ("name", "min_recall", "min_precision"),
    [
        ("byler-d6", 0.98, 0.7),
        ("tomitomi3-gray-d6", 0.98, 0.9),
        ("matteop65-d6-wood", 0.95, 0.7),
        ("epanemu-dice3", 0.7, 0.4),
    ],
)
def test_real_photos_val_split(name: str, min_recall: float, min_precision: float) -> None:
    """Regression guard a little under what the packaged model measured on the first 30 val
    photos (byler 99.5% / 77%, tomitomi 100% / 100%, matteop65 98.5% / 79%, epanemu 78% / 49%).
    Precision is low where the photos show die-like things outside any tray (byler's rubber
    feet) or sensor-noise specks (epanemu); the tower's reference photo removes those."""
    recall, precision = _dataset_recall(name, limit=30)
    assert recall >= min_recall
    assert precision >= min_precision


def test_touching_flags_match_the_pairwise_overlap_rule() -> None:
    """The all-pairs ``_touching`` must flag exactly the boxes the scalar rule flags."""
    from dicetower.vision.locate import TOUCH_OVERLAP, _touching

    def _overlap(a: tuple[float, ...], b: tuple[float, ...]) -> float:
        """Intersection of two boxes as a share of the smaller one (the rule, pair by pair)."""
        iw = min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0])
        ih = min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1])
        if iw <= 0 or ih <= 0:
            return 0.0
        return iw * ih / max(1e-6, min(a[2] * a[3], b[2] * b[3]))

    rng = np.random.default_rng(7)
    for n in (0, 1, 2, 5, 30):
        xy = rng.uniform(0, 200, (n, 2))
        wh = rng.uniform(5, 60, (n, 2))
        boxes = [(float(a), float(b), float(c), float(d)) for (a, b), (c, d) in zip(xy, wh, strict=True)]
        expected = [
            any(_overlap(boxes[i], boxes[j]) > TOUCH_OVERLAP for j in range(n) if j != i) for i in range(n)
        ]
        assert _touching(boxes).tolist() == expected


class ScriptedDetector(DieDetector):
    """The packaged detector with its proposals fixed, to pin down what locate does with them."""

    def __init__(self, proposals: list[Detection]) -> None:
        super().__init__()
        self.proposals = proposals

    def detect(self, frame: np.ndarray, threshold: float | None = None) -> list[Detection]:
        return list(self.proposals)


def test_only_unsure_proposals_must_stand_out_from_their_ring() -> None:
    frame = np.full((400, 400, 3), 128, np.uint8)  # nothing stands out anywhere
    sure = Detection((40.0, 40.0, 50.0, 50.0), RING_CHECK_BELOW + 0.1)
    unsure = Detection((250.0, 250.0, 50.0, 50.0), RING_CHECK_BELOW - 0.1)
    kept = locate_dice(frame, detector=ScriptedDetector([sure, unsure]))
    assert [c.box for c in kept] == [sure.box]
    # The same unsure proposal on a real (drawn) die is kept: the die differs from its ring.
    draw_die(frame, (275.0, 275.0), 50.0, 3)
    kept = locate_dice(frame, detector=ScriptedDetector([sure, unsure]))
    assert sorted(c.box for c in kept) == sorted([sure.box, unsure.box])

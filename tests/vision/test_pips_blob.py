"""The reader's input blob (contrast grey and colour planes) and its second look at unsure crops."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from dicetower.vision.faces.pips import (
    CHANNELS,
    INPUT,
    D6Reader,
    crop_greys,
    looked_twice,
    standardise,
    to_blob,
)

_PIPS = {
    1: [(1, 1)],
    4: [(0, 0), (0, 2), (2, 0), (2, 2)],
    6: [(0, 0), (0, 1), (0, 2), (2, 0), (2, 1), (2, 2)],
}


def _die_crop(face: int) -> np.ndarray:
    """A white top-down die with black pips filling a crop as :func:`crop_die` frames it."""
    img = np.full((INPUT, INPUT, 3), 120, np.uint8)
    cv2.rectangle(img, (4, 4), (43, 43), (235, 235, 235), -1)
    for r, c in _PIPS[face]:
        cv2.circle(img, (12 + 12 * c, 12 + 12 * r), 4, (20, 20, 20), -1, cv2.LINE_AA)
    return cv2.GaussianBlur(img, (3, 3), 0.7)


def _crops(n: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, (INPUT, INPUT, 3), dtype=np.uint8) for _ in range(n)]


def test_colour_blob_keeps_the_grey_plane_and_adds_bgr_standardised_together() -> None:
    crops = _crops(3)
    grey = standardise(crop_greys(crops)[:, None])
    colour = to_blob(crops)
    assert colour.shape == (3, CHANNELS, INPUT, INPUT) and colour.dtype == np.float32
    assert np.allclose(colour[:, :1], grey, atol=1e-5)  # channel 0: the contrast grey, on its own
    planes = colour[:, 1:].reshape(3, -1)
    assert np.allclose(planes.mean(1), 0.0, atol=1e-4)  # one mean over B, G and R together ...
    # ... so a plane brighter than the others stays brighter (colour relations survive).
    red_die = np.zeros((INPUT, INPUT, 3), np.uint8)
    red_die[..., 2] = 200
    red_die[20:28, 20:28] = 30  # a dark pip
    b = to_blob([red_die])[0]
    assert b[3].mean() > b[1].mean() + 1.0


def test_grey_crops_repeat_their_level_in_the_colour_planes() -> None:
    g = np.random.default_rng(1).integers(0, 256, (INPUT, INPUT), dtype=np.uint8)
    b = to_blob([g])[0]
    assert np.allclose(b[1], b[2]) and np.allclose(b[2], b[3])


def _orientation_logits(blob: np.ndarray) -> np.ndarray:
    """A toy net that is unsure exactly when the top-left corner is dark, and left-right biased."""
    n = blob.shape[0]
    out = np.zeros((n, 7), np.float32)
    corner = blob[:, 0, 0, 0]
    out[np.arange(n), 3] = np.where(corner > 0, 9.0, 0.4)  # sure of 3, or barely leaning to it
    out[:, 5] = blob[:, 0, :, :4].mean(axis=(1, 2))  # depends on what is on the left
    return out


def test_second_look_only_for_unsure_crops_and_it_averages_the_mirrored_look() -> None:
    calls: list[int] = []

    def forward(b: np.ndarray) -> np.ndarray:
        calls.append(len(b))
        return _orientation_logits(b)

    blob = np.zeros((3, 1, 8, 8), np.float32)
    blob[0, 0, 0, 0] = 1.0  # sure
    blob[1:, 0, 0, 0] = -1.0  # unsure
    blob[2, 0, 1, :4] = 5.0  # unsure, and the left half of its top edge is bright
    logits = looked_twice(forward, blob, gate=0.9)
    assert calls == [3, 2]  # one look for all, one more for the two unsure ones only
    assert np.allclose(logits[0], _orientation_logits(blob[:1])[0])
    mirrored = blob[2:, ..., ::-1]
    expected = (_orientation_logits(blob[2:]) + _orientation_logits(mirrored)) / 2
    assert not np.allclose(_orientation_logits(blob[2:]), expected)  # the mirrored look counts
    assert np.allclose(logits[2], expected[0])
    calls.clear()
    assert np.allclose(looked_twice(forward, blob, gate=0.0), _orientation_logits(blob))  # all sure
    assert calls == [3]


def test_shipped_reader_reads_colour_and_agrees_with_itself_turned() -> None:
    reader = D6Reader()
    for face in (1, 4, 6):
        crop = _die_crop(face)
        p = reader.probabilities([crop, np.ascontiguousarray(np.rot90(crop))])
        assert p.shape == (2, 7)
        assert np.allclose(p.sum(1), 1.0, atol=1e-5)
        assert p[0].argmax() == p[1].argmax()


def test_leaning_dice_are_reported_cocked_and_flat_dice_never() -> None:
    from dicetower.vision.faces.pips import crop_die
    from dicetower.vision.reading import UnreadableReason
    from dicetower.vision.synth import render_scene

    reader = D6Reader()
    reasons: dict[bool, list[UnreadableReason | None]] = {True: [], False: []}
    for seed in range(40):
        frame, _reference, labels = render_scene(9000 + seed, 5, cocked=2)
        reads = reader.read_crops([crop_die(frame, d.box) for d in labels])
        for d, r in zip(labels, reads, strict=True):
            reasons[bool(d.cocked)].append(r.reason)
    cocked, flat = reasons[True], reasons[False]
    assert UnreadableReason.COCKED not in flat  # a die with a face up is never called cocked
    assert cocked.count(UnreadableReason.COCKED) >= 0.15 * len(cocked)  # measured ~1/3


def test_reader_metadata_with_an_impossible_input_is_refused_at_load(tmp_path) -> None:
    import json
    import shutil

    from dicetower.vision.faces.pips import ReaderModelError
    from dicetower.vision.models import shipped_dir as shipped

    for name in ("d6_reader.onnx", "d6_reader.json"):
        shutil.copy(shipped() / name, tmp_path / name)
    meta = json.loads((tmp_path / "d6_reader.json").read_text())
    D6Reader(tmp_path)  # the copy loads as shipped
    for key, bad in (
        ("input", 64),
        ("channels", 1),
        ("views", 4),
        ("second_view", "quarter"),
        ("upright", True),
    ):
        (tmp_path / "d6_reader.json").write_text(json.dumps({**meta, key: bad}))
        with pytest.raises(ReaderModelError, match=key):
            D6Reader(tmp_path)

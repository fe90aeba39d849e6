"""The reader's input blob (grey or colour planes) and its second look at unsure crops."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from dicetower.vision.pips import INPUT, D6Reader, looked_twice, to_blob, with_views

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
    grey = to_blob(crops, 1)
    colour = to_blob(crops, 4)
    assert colour.shape == (3, 4, INPUT, INPUT) and colour.dtype == np.float32
    assert np.allclose(colour[:, :1], grey, atol=1e-5)  # channel 0 is what a 1-channel model sees
    planes = colour[:, 1:].reshape(3, -1)
    assert np.allclose(planes.mean(1), 0.0, atol=1e-4)  # one mean over B, G and R together ...
    # ... so a plane brighter than the others stays brighter (colour relations survive).
    red_die = np.zeros((INPUT, INPUT, 3), np.uint8)
    red_die[..., 2] = 200
    red_die[20:28, 20:28] = 30  # a dark pip
    b = to_blob([red_die], 4)[0]
    assert b[3].mean() > b[1].mean() + 1.0


def test_grey_crops_repeat_their_level_in_the_colour_planes() -> None:
    g = np.random.default_rng(1).integers(0, 256, (INPUT, INPUT), dtype=np.uint8)
    b = to_blob([g], 4)[0]
    assert np.allclose(b[1], b[2]) and np.allclose(b[2], b[3])


def test_blob_refuses_an_unknown_channel_count() -> None:
    with pytest.raises(ValueError, match="1 or 4"):
        to_blob(_crops(1), 3)


def test_views_are_quarter_turns_of_the_same_crop() -> None:
    blob = to_blob(_crops(2), 4)
    v = with_views(blob, 4)
    assert v.shape == (8, 4, INPUT, INPUT)
    assert np.array_equal(v[:2], blob)
    assert np.array_equal(v[2:4], np.rot90(blob, 1, axes=(2, 3)))
    assert np.array_equal(v[6:8], np.rot90(blob, 3, axes=(2, 3)))
    with pytest.raises(ValueError, match="views"):
        with_views(blob, 3)


def _orientation_logits(blob: np.ndarray) -> np.ndarray:
    """A toy net that is unsure exactly when the top-left corner is dark, and orientation-biased."""
    n = blob.shape[0]
    out = np.zeros((n, 7), np.float32)
    corner = blob[:, 0, 0, 0]
    out[np.arange(n), 3] = np.where(corner > 0, 9.0, 0.4)  # sure of 3, or barely leaning to it
    out[:, 5] = blob[:, 0, :4, :].mean(axis=(1, 2))  # depends on which edge is on top
    return out


def test_second_look_only_for_unsure_crops_and_it_averages_all_views() -> None:
    calls: list[int] = []

    def forward(b: np.ndarray) -> np.ndarray:
        calls.append(len(b))
        return _orientation_logits(b)

    blob = np.zeros((3, 1, 8, 8), np.float32)
    blob[0, 0, 0, 0] = 1.0  # sure
    blob[1:, 0, 0, 0] = -1.0  # unsure
    blob[2, 0, 1, :] = 5.0  # unsure, and its top edge is bright
    logits = looked_twice(forward, blob, 4, gate=0.9)
    assert calls == [3, 6]  # one look for all, three more for the two unsure ones only
    assert np.allclose(logits[0], _orientation_logits(blob[:1])[0])
    expected = _orientation_logits(with_views(blob[2:], 4)).mean(axis=0)
    assert np.allclose(logits[2], expected)
    calls.clear()
    assert np.allclose(looked_twice(forward, blob, 1, gate=0.9), _orientation_logits(blob))
    assert calls == [3]


def test_shipped_reader_reads_colour_and_agrees_with_itself_turned() -> None:
    reader = D6Reader()
    assert reader.channels in (1, 4) and reader.views in (1, 2, 4)
    for face in (1, 4, 6):
        crop = _die_crop(face)
        p = reader.probabilities([crop, np.ascontiguousarray(np.rot90(crop))])
        assert p.shape == (2, 7)
        assert np.allclose(p.sum(1), 1.0, atol=1e-5)
        assert p[0].argmax() == p[1].argmax()


def test_leaning_dice_are_reported_cocked_and_flat_dice_never() -> None:
    from dicetower.vision.pips import crop_die
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

    from dicetower.vision.pips import ReaderModelError
    from dicetower.vision.pips import _default_model_dir as shipped

    for name in ("d6_reader.onnx", "d6_reader.json"):
        shutil.copy(shipped() / name, tmp_path / name)
    meta = json.loads((tmp_path / "d6_reader.json").read_text())
    D6Reader(tmp_path)  # the copy loads as shipped
    for bad in ({"channels": 3}, {"views": 3}):
        (tmp_path / "d6_reader.json").write_text(json.dumps({**meta, **bad}))
        with pytest.raises(ReaderModelError, match="channels must be 1 or 4"):
            D6Reader(tmp_path)

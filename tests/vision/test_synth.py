"""The synthetic renderer: deterministic, labels where the dice are, manifests eval can read."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from dicetower.vision.imageio import load_image
from dicetower.vision.manifest import read_manifest
from dicetower.vision.synth import (
    MARBLED_COLOURS,
    PIP_LAYOUT,
    SceneStyle,
    SynthError,
    draw_face,
    render_scene,
    write_dataset,
)

CLEAN = SceneStyle(blur=0.0, noise=0.0, perspective=0.0, light=0.0, shadows=False)


def test_same_seed_same_scene() -> None:
    a = render_scene(7, 6, cocked=1, touching=True)
    b = render_scene(7, 6, cocked=1, touching=True)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]) and a[2] == b[2]


def test_other_seed_other_scene() -> None:
    a, _, la = render_scene(1, 4)
    b, _, lb = render_scene(2, 4)
    assert not np.array_equal(a, b) and la != lb


def test_shapes_and_labels() -> None:
    frame, ref, labels = render_scene(3, 5, size=(320, 240), faces=[1, 2, 3, 4, 5])
    assert frame.shape == ref.shape == (240, 320, 3) and frame.dtype == np.uint8
    assert [d.face for d in labels] == [1, 2, 3, 4, 5]
    for d in labels:
        assert d.die == "d6" and not d.cocked and d.box is not None
        x, y, w, h = d.box
        assert x >= 0 and y >= 0 and x + w <= 320 and y + h <= 240
        assert 10 < w < 60 and 10 < h < 60


def test_dice_are_inside_their_boxes() -> None:
    frame, ref, labels = render_scene(11, 4, style=CLEAN)
    diff = np.abs(frame.astype(int) - ref.astype(int)).max(axis=2) > 30
    inside = np.zeros_like(diff)
    for d in labels:
        assert d.box is not None
        x, y, w, h = (round(v) for v in d.box)
        inside[y : y + h, x : x + w] = True
        assert diff[y : y + h, x : x + w].mean() > 0.4  # a die fills much of its box
    assert diff[~inside].mean() < 0.002  # the rest is the empty tray


def test_reference_is_the_empty_tray() -> None:
    _, ref, _ = render_scene(5, 8, style=CLEAN)
    _, ref0, labels0 = render_scene(5, 0, style=CLEAN)
    assert labels0 == []
    # with no dice the frame *is* the reference, and the reference ignores the dice
    frame0, _, _ = render_scene(5, 0, style=CLEAN)
    assert np.array_equal(frame0, ref0)
    assert ref.std() < 20


def test_cocked_and_touching() -> None:
    _, _, labels = render_scene(9, 4, cocked=1, touching=True, style=CLEAN)
    assert [d.cocked for d in labels] == [False, False, False, True]
    a, b = labels[0].box, labels[1].box
    assert a is not None and b is not None
    ca = np.array([a[0] + a[2] / 2, a[1] + a[3] / 2])
    cb = np.array([b[0] + b[2] / 2, b[1] + b[3] / 2])
    # flush: centres about one die side apart (boxes of rotated dice are up to 1.41 sides)
    assert np.linalg.norm(ca - cb) < 0.8 * (a[2] + b[2])


def test_wild_die_is_red() -> None:
    frame, _, labels = render_scene(4, 3, style=SceneStyle(wild_die=True, body="white", light=0.0, noise=0.0))
    box = labels[0].box
    assert box is not None
    x, y, w, h = (round(v) for v in box)
    patch = frame[y + h // 3 : y + 2 * h // 3, x + w // 3 : x + 2 * w // 3].reshape(-1, 3).astype(int)
    b, g, r = np.median(patch, axis=0)
    assert r > 120 and r > 2 * g and r > 2 * b


@pytest.mark.parametrize("shape", ["round", "square", "ring"])
@pytest.mark.parametrize("face", sorted(PIP_LAYOUT))
def test_draw_face_has_that_many_pips(face: int, shape: str) -> None:
    img, mask = draw_face(face, 90, (235, 235, 235), (20, 20, 20), shape)
    dark = ((cv2.cvtColor(img, cv2.COLOR_BGR2GRAY) < 100) & (mask > 0)).astype(np.uint8)
    _, _, stats, _ = cv2.connectedComponentsWithStats(dark)
    assert sum(1 for s in stats[1:] if s[cv2.CC_STAT_AREA] > 20) == face


@pytest.mark.parametrize("face", sorted(PIP_LAYOUT))
def test_a_marbled_face_keeps_its_pips_and_shows_its_swirls(face: int) -> None:
    body, pips, swirl = MARBLED_COLOURS["smoke"]
    plain, mask = draw_face(face, 90, body, pips[0])
    img, _ = draw_face(face, 90, body, pips[0], swirl=swirl, swirl_seed=face)
    red = (img[..., 2].astype(int) - img[..., 1] > 60) & (mask > 0)  # the red pips, swirls are grey
    _, _, stats, _ = cv2.connectedComponentsWithStats(red.astype(np.uint8))
    assert sum(1 for s in stats[1:] if s[cv2.CC_STAT_AREA] > 20) == face
    pale = (cv2.cvtColor(img, cv2.COLOR_BGR2GRAY) > 120) & (mask > 0)
    assert pale.sum() > 0.02 * (mask > 0).sum()  # streaks over the dark body
    assert not ((cv2.cvtColor(plain, cv2.COLOR_BGR2GRAY) > 120) & (mask > 0)).any()
    again, _ = draw_face(face, 90, body, pips[0], swirl=swirl, swirl_seed=face)
    assert np.array_equal(img, again)  # seeded


def test_marbling_is_off_unless_asked_and_bounded() -> None:
    assert render_scene(5, 4)[0].tobytes() == render_scene(5, 4, style=SceneStyle(marbled=0.0))[0].tobytes()
    assert render_scene(5, 4)[0].tobytes() != render_scene(5, 4, style=SceneStyle(marbled=1.0))[0].tobytes()
    with pytest.raises(SynthError, match="marbled"):
        render_scene(0, 1, style=SceneStyle(marbled=1.5))


def test_bad_requests() -> None:
    with pytest.raises(SynthError, match="n_dice"):
        render_scene(0, -1)
    with pytest.raises(SynthError, match="cannot fit"):
        render_scene(0, 40, size=(128, 128))
    with pytest.raises(SynthError, match="faces"):
        render_scene(0, 2, faces=[1, 7])
    with pytest.raises(SynthError, match="cocked"):
        render_scene(0, 1, cocked=2)
    with pytest.raises(SynthError, match="size"):
        render_scene(0, 1, size=(10, 10))
    with pytest.raises(SynthError, match="faces 1-6"):
        draw_face(0, 40, (0, 0, 0), (255, 255, 255))


def test_write_dataset_round_trips(tmp_path: Path) -> None:
    manifest = write_dataset(tmp_path / "synth", 4, seed=3, size=(200, 160), max_dice=3, cocked_share=0.5)
    entries = list(read_manifest(manifest.parent))
    assert len(entries) == 4
    for i, e in enumerate(entries):
        assert e.relpath == f"images/scene_{i:04d}.png"
        assert 1 <= len(e.dice) <= 3
        assert e.reference is not None and e.reference.is_file()
        frame = load_image(e.image)
        assert frame.shape == (160, 200, 3)
    assert any(d.cocked for e in entries for d in e.dice)
    again = write_dataset(tmp_path / "again", 4, seed=3, size=(200, 160), max_dice=3, cocked_share=0.5)
    assert again.read_text() == manifest.read_text()
    for e in entries:
        assert (again.parent / e.relpath).read_bytes() == e.image.read_bytes()


def test_parallax_shows_the_sides_facing_the_centre() -> None:
    flat = SceneStyle(parallax=0.0, perspective=0.0)
    tall = SceneStyle(parallax=0.3, perspective=0.0)
    _, _, a = render_scene(13, 6, style=flat)
    _, _, b = render_scene(13, 6, style=tall)
    grew = 0
    for da, db in zip(a, b, strict=True):
        assert da.box is not None and db.box is not None
        xa, ya, wa, ha = da.box
        xb, yb, wb, hb = db.box
        # the top face is where it was; the walls only add towards the frame centre
        assert xb <= xa + 0.2 and yb <= ya + 0.2 and xb + wb >= xa + wa - 0.2 and yb + hb >= ya + ha - 0.2
        grew += wb * hb > wa * ha * 1.05
    assert grew >= 3

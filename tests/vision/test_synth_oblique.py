"""The oblique-die renderer: a real die's layout, the labelled face on top, deterministic pictures."""

from __future__ import annotations

import math

import numpy as np
import pytest
from dicetower.vision.faces.pips import D6Reader, crop_die
from dicetower.vision.synth import SynthError
from dicetower.vision.synth.oblique import (
    _NORMALS,
    ObliqueStyle,
    _Camera,
    _face_corners,
    cube_faces,
    render_oblique,
)

#: Straight down, alone, clean: the picture the shipped reader is known to read.
_TOP_DOWN = ObliqueStyle(
    elevation=(86.0, 89.9), neighbours=(0, 0), speckle=0.0, blur=(0.0, 0.3), noise=(0.5, 1.5), marbled=0.0
)


@pytest.mark.parametrize("top", range(1, 7))
def test_cube_faces_are_a_real_die(top: int) -> None:
    rng = np.random.default_rng(top)
    hands = set()
    for _ in range(40):
        f = cube_faces(top, rng)
        assert f["+z"] == top
        assert sorted(f.values()) == [1, 2, 3, 4, 5, 6]
        assert f["+z"] + f["-z"] == f["+x"] + f["-x"] == f["+y"] + f["-y"] == 7
        hands.add((f["+x"], f["+y"]))
    assert len(hands) > 2  # the side faces vary, not one fixed layout


def test_cube_faces_refuse_a_face_a_d6_lacks() -> None:
    with pytest.raises(SynthError, match="1-6"):
        cube_faces(7, np.random.default_rng(0))


def test_face_corners_wind_round_their_face_and_lie_on_it() -> None:
    for key, n in _NORMALS.items():
        q = _face_corners(key)
        assert np.allclose(q @ n, 0.5)  # on the face's plane
        edges = np.roll(q, -1, axis=0) - q
        assert np.allclose(np.linalg.norm(edges, axis=1), 1.0)  # a unit square
        # TL, TR, BR, BL run clockwise seen from outside, as a picture's corners do (y down),
        # so a face's texture is never drawn mirrored
        assert np.allclose(np.cross(edges[:-1], edges[1:]) @ n, -1.0)


@pytest.mark.parametrize("elevation", [30.0, 55.0, 80.0])
def test_a_camera_above_sees_the_top_never_the_bottom_and_the_top_is_drawn_highest(elevation: float) -> None:
    cam = _Camera(elevation, 8.0, focal=100.0, centre=(0.0, 0.0))
    for azimuth in np.linspace(0, 2 * math.pi, 7):
        c, s = math.cos(azimuth), math.sin(azimuth)
        rot = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
        seen = [k for k, n in _NORMALS.items() if cam.sees((_face_corners(k) @ rot.T).mean(0), rot @ n)]
        assert "+z" in seen and "-z" not in seen
        assert 2 <= len(seen) <= 3  # the top and one or two sides
        top = cam.project(_face_corners("+z") @ rot.T).mean(0)
        for k in seen:
            if k != "+z":  # image y grows downwards: the top face is above every side face
                assert top[1] < cam.project(_face_corners(k) @ rot.T).mean(0)[1]


def test_render_is_deterministic_and_labels_the_asked_face() -> None:
    a, la = render_oblique(7, face=3)
    b, lb = render_oblique(7, face=3)
    assert np.array_equal(a, b) and la == lb
    assert a.shape == (256, 256, 3) and a.dtype == np.uint8
    assert la.face == 3 and la.die == "d6" and not la.cocked
    x, y, w, h = la.box
    assert min(x, y) >= 0 and max(x + w, y + h) <= 256
    assert 20 <= max(w, h) <= 120
    c, _ = render_oblique(8, face=3)
    assert not np.array_equal(a, c)


def test_render_refuses_sizes_and_faces_out_of_range() -> None:
    with pytest.raises(SynthError, match="size"):
        render_oblique(0, size=16)
    with pytest.raises(SynthError, match="1-6"):
        render_oblique(0, face=0)


def test_top_down_renders_show_the_labelled_face_to_the_shipped_reader() -> None:
    """Seen from straight above, the picture's face is the label: the reader, which reads
    top-down renders, finds it (a wrong layout or a side face on top would show here)."""
    crops, labels = [], []
    for seed in range(24):
        img, label = render_oblique(seed, face=seed % 6 + 1, style=_TOP_DOWN)
        crops.append(crop_die(img, label.box))
        labels.append(label.face)
    reads = [r.face for r in D6Reader().read_crops(crops)]
    right = sum(r == f for r, f in zip(reads, labels, strict=True))
    wrong = sum(r is not None and r != f for r, f in zip(reads, labels, strict=True))
    assert wrong == 0 and right >= 22


@pytest.mark.parametrize(
    ("style", "says"),
    [
        (ObliqueStyle(elevation=(0.0, 40.0)), "elevation"),
        (ObliqueStyle(elevation=(60.0, 30.0)), "elevation"),
        (ObliqueStyle(distance=(0.5, 3.0)), "distance"),
        (ObliqueStyle(die_px=(30.0, 500.0)), "die_px"),
        (ObliqueStyle(neighbours=(0, 50)), "neighbours"),
        (ObliqueStyle(marbled=1.5), "marbled"),
    ],
)
def test_render_refuses_style_ranges_that_draw_nonsense(style: ObliqueStyle, says: str) -> None:
    with pytest.raises(SynthError, match=says):
        render_oblique(0, style=style)


def test_read_renders_counts_each_readers_right_and_wrong_per_band(capsys) -> None:
    from dicetower.vision.training.d6.read_renders import main, read_band

    got = read_band({"shipped": D6Reader()}, (86.0, 89.9), 12)
    right, wrong = got["shipped"]
    assert 0 <= wrong <= right <= 12 and right >= 9  # seen from above, the shipped reader reads them
    assert main(["shipped", "--renders", "6", "--band", "86,89.9"]) == 0
    out = capsys.readouterr().out
    assert "| 86-89.9 degrees |" in out and "right" in out


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["shipped", "--renders", "0"], "--renders"),
        (["shipped", "--band", "80,20"], "need LO <= HI"),
        (["shipped", "--band", "x"], "expected LO,HI"),
        (["/nonexistent/reader"], "missing d6_reader"),
    ],
)
def test_read_renders_refuses_bad_arguments(args: list[str], says: str, capsys) -> None:
    from dicetower.vision.training.d6.read_renders import main

    with pytest.raises(SystemExit) as exc:
        main(args)
    assert exc.value.code == 2 and says in capsys.readouterr().err

"""A frame's view (top-down or oblique) and the thresholds it chooses (``vision/view.py``)."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from dicetower.vision.detector import MODEL_PATH
from dicetower.vision.faces.pips import D6Reader, ReaderModelError
from dicetower.vision.locate import DieCandidate
from dicetower.vision.reader import FrameReader
from dicetower.vision.synth.render import render_scene
from dicetower.vision.view import TOP_DOWN_TILT, View, frame_view

SHIPPED = MODEL_PATH.parent


def _cube_box(elevation_deg: float, turn_deg: float, side: float = 50.0) -> tuple[float, float, float, float]:
    """The image box of a cube on the table, turned ``turn_deg`` and seen from ``elevation_deg``.

    Orthographic: the image's x axis is the table's x, its up axis the table's y tipped toward
    the camera; a camera straight above (90) sees only the top face.
    """
    e, t = math.radians(elevation_deg), math.radians(turn_deg)
    corners = np.array([(x, y, z) for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (0.0, 1.0)]) * side
    turn = np.array([[math.cos(t), -math.sin(t), 0], [math.sin(t), math.cos(t), 0], [0, 0, 1]])
    pts = corners @ turn.T
    up = np.array([0.0, math.sin(e), math.cos(e)])  # perpendicular to the line of sight, toward the sky
    u, v = pts[:, 0], pts @ up
    return (float(u.min()), float(-v.max()), float(np.ptp(u)), float(np.ptp(v)))


@pytest.mark.parametrize("elevation", [90.0, 85.0, 80.0])
def test_a_camera_near_straight_down_is_top_down_at_any_turn(elevation: float) -> None:
    boxes = [_cube_box(elevation, turn) for turn in range(0, 90, 7)]
    for box in boxes:  # one die alone says it too
        assert frame_view([box]).view is View.TOP_DOWN
    seen = frame_view(boxes)
    assert seen.view is View.TOP_DOWN and seen.tilt is not None and seen.tilt < TOP_DOWN_TILT


@pytest.mark.parametrize("elevation", [72.0, 60.0, 45.0, 38.0])
def test_a_camera_37_to_73_degrees_over_the_table_is_oblique_at_any_turn(elevation: float) -> None:
    for turn in range(0, 90, 7):
        box = _cube_box(elevation, turn)
        assert frame_view([box]).view is View.OBLIQUE, (elevation, turn)
        x, y, w, h = box
        assert frame_view([(y, x, h, w)]).view is View.OBLIQUE  # the photo turned a quarter


def test_a_camera_lower_still_is_told_by_a_frame_of_dice_but_not_by_one_turned_die() -> None:
    # The blind spot the module docstring names: seen from 30 degrees, a die turned 45 degrees
    # shows its side faces wide enough to square its box ...
    assert frame_view([_cube_box(30.0, 45.0)]).view is View.TOP_DOWN
    assert frame_view([_cube_box(30.0, 0.0)]).view is View.OBLIQUE
    # ... while dice lying at various turns, as thrown dice do, give the frame away.
    assert frame_view([_cube_box(30.0, turn) for turn in range(0, 90, 7)]).view is View.OBLIQUE


def test_the_median_box_decides_and_no_box_is_the_careful_answer() -> None:
    square = (0.0, 0.0, 40.0, 40.0)
    tall = (0.0, 0.0, 40.0, 60.0)
    assert frame_view([square, square, tall]).view is View.TOP_DOWN  # one odd box is outvoted
    assert frame_view([square, tall, tall]).view is View.OBLIQUE
    assert frame_view([]) == frame_view([(0.0, 0.0, 0.0, 10.0)])  # no usable box
    assert frame_view([]).view is View.OBLIQUE and frame_view([]).tilt is None
    assert frame_view([tall], cut=0.5).view is View.TOP_DOWN  # a card may set its own cut


def _card_folder(tmp_path: Path, edit) -> Path:
    folder = tmp_path / "card"
    folder.mkdir()
    shutil.copyfile(SHIPPED / "d6_reader.onnx", folder / "d6_reader.onnx")
    card = json.loads((SHIPPED / "d6_reader.json").read_text())
    edit(card)
    (folder / "d6_reader.json").write_text(json.dumps(card))
    return folder


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ([1, 2], "must be an object"),
        ({"thresholds": {"sideways": dict.fromkeys("123456", 0.5)}}, "unknown view 'sideways'"),
        ({"thresholds": {"top_down": dict.fromkeys("12345", 0.5)}}, "for each face 1-6"),
        ({"thresholds": {"top_down": dict.fromkeys("123456", 1.5)}}, "for each face 1-6"),
        ({"tilt_cut": 0, "thresholds": {}}, "tilt_cut must be a number between 0 and 1"),
    ],
)
def test_a_bad_view_block_is_refused_with_its_reason(tmp_path: Path, block, message: str) -> None:
    folder = _card_folder(tmp_path, lambda card: card.update(view=block))
    with pytest.raises(ReaderModelError, match=message):
        D6Reader(folder)


def test_a_card_without_a_view_block_reads_every_frame_with_its_thresholds(tmp_path: Path) -> None:
    reader = D6Reader(_card_folder(tmp_path, lambda card: card.pop("view", None)))
    assert reader.view_thresholds == {}
    assert reader.thresholds_for(View.TOP_DOWN) == reader.thresholds == reader.thresholds_for(None)


def test_thresholds_at_zero_take_every_face_and_put_the_card_back() -> None:
    reader = D6Reader()
    before = reader.thresholds, dict(reader.view_thresholds)
    assert View.TOP_DOWN in reader.view_thresholds  # the shipped card has top-down thresholds
    with pytest.raises(RuntimeError), reader.thresholds_at_zero():
        assert reader.thresholds_for(View.TOP_DOWN) == dict.fromkeys(range(1, 7), 0.0)
        assert reader.thresholds_for(View.OBLIQUE) == dict.fromkeys(range(1, 7), 0.0)
        raise RuntimeError("a read that fails")
    assert (reader.thresholds, reader.view_thresholds) == before


def _labelled_candidates(labels, stretch: float) -> list[DieCandidate]:
    """The drawn dice's own boxes, each made ``stretch`` times as tall about its centre."""
    out = []
    for d in labels:
        x, y, w, h = d.box
        out.append(DieCandidate((x, y - h * (stretch - 1) / 2, w, h * stretch)))
    return out


def test_the_frames_view_chooses_the_thresholds_it_is_read_with(tmp_path: Path) -> None:
    # Every face is taken in oblique frames (0) and none in top-down ones (1): which one a frame
    # got shows in what it reads.
    def edit(card: dict) -> None:
        card["thresholds"] = dict.fromkeys("123456", 0.0)
        card["view"] = {"tilt_cut": TOP_DOWN_TILT, "thresholds": {"top_down": dict.fromkeys("123456", 1.0)}}

    folder = _card_folder(tmp_path, edit)
    frame, _reference, labels = render_scene(7, 6)
    for stretch, view in ((1.0, View.TOP_DOWN), (1.4, View.OBLIQUE)):
        cands = _labelled_candidates(labels, stretch)
        reader = FrameReader(folder, locate=lambda f, r, t, cands=cands: cands)
        reading = reader.read(frame)
        assert reading.view == view.value and reading.to_json()["view"] == view.value
        assert reading.tilt is not None and reading.to_json()["tilt"] == round(reading.tilt, 4)
        read = [d for d in reading.dice if d.face is not None]
        assert len(reading.dice) == 6
        assert (len(read) == 0) if view is View.TOP_DOWN else (len(read) == 6)


def test_eval_counts_the_dice_of_each_view(tmp_path: Path, capsys) -> None:
    from dicetower.firmware.cli import main
    from dicetower.vision.synth.dataset import write_dataset

    folder = write_dataset(tmp_path / "drawn", 4, seed=5, max_dice=6).parent
    assert main(["eval", str(folder), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    views = report["per_view"]
    assert sum(v["dice"] for v in views.values()) == report["dice"] > 0
    assert sum(v["correct"] for v in views.values()) == report["correct"]
    # Drawn trays are seen from above; a small frame whose boxes come out wide (two touching
    # dice in one box, a leaning die) is judged oblique, the careful side.
    assert views["top_down"]["dice"] >= report["dice"] / 2
    assert main(["eval", str(folder)]) == 0
    assert f"top_down: {views['top_down']['dice']} dice" in capsys.readouterr().out

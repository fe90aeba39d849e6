"""The simulated camera shows the tower's tray: its walls around a round floor, dice of one size per kind."""

from __future__ import annotations

import io
import math
import re
from pathlib import Path

import cv2
import numpy as np
import pytest
from dicetower.firmware.cameras.sim import DIE_PX, TOWER, SimCamera
from dicetower.firmware.cli import main
from dicetower.firmware.config import DEFAULT_CONFIG, TrayDie
from dicetower.firmware.die_sizes import DieSize, die_sizes
from dicetower.firmware.tower import open_tower
from dicetower.vision.kinds import min_px_of
from dicetower.vision.reading import DieReading, Reading, ReadStatus, UnreadableReason
from dicetower.vision.tower_scale import box_px

BUILD = Path(__file__).resolve().parents[2] / "hardware" / "BUILD.md"

MIXED = [TrayDie("d20", "blue"), TrayDie("d6", "white"), TrayDie("d6", "red"), TrayDie("d10t", "red", "tens")]
MIXED += [TrayDie("d10", "white", "units"), TrayDie("d20", "green")]


def _frames(dice: list[TrayDie] | None, throws: int, size: tuple[int, int] = (640, 480)):
    cam = SimCamera(dice, seed=5, size=size)
    with cam.empty_tray():
        reference = cam.capture()
    for _ in range(throws):
        cam.throw()
        for _ in range(8):  # the dice settle (at most 6 moving frames)
            frame = cam.capture()
        yield frame, reference, cam.truth


def _widths(frame: np.ndarray, reference: np.ndarray, boxes: list) -> list[float]:
    """Each die's width from the photo itself: the longer side of the least rectangle round what changed."""
    changed = (cv2.absdiff(frame, reference).max(axis=2) > 30).astype(np.uint8)
    widths = []
    for x, y, w, h in boxes:
        x0, y0 = max(0, int(x) - 2), max(0, int(y) - 2)
        roi = changed[y0 : int(y + h) + 3, x0 : int(x + w) + 3]
        contours, _ = cv2.findContours(roi, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        _centre, sides, _angle = cv2.minAreaRect(max(contours, key=cv2.contourArea))
        widths.append(max(sides))
    return widths


def test_every_pip_d6_is_one_size_in_every_frame() -> None:
    widths = []
    for frame, reference, truth in _frames(None, 4):
        widths += _widths(frame, reference, [d.box for d in truth])
    assert len(widths) == 20
    assert max(widths) - min(widths) <= 3.0, sorted(widths)
    assert abs(float(np.median(widths)) - DIE_PX["d6"]) <= 3.0  # the top face is DIE_PX wide


def test_every_die_of_a_kind_is_one_size_in_a_mixed_tray() -> None:
    boxes: dict[str, list[float]] = {}
    d20: list[float] = []
    for frame, reference, truth in _frames(MIXED, 4):
        for label, width in zip(truth, _widths(frame, reference, [d.box for d in truth]), strict=True):
            boxes.setdefault(label.die, []).append(max(label.box[2], label.box[3]))
            if label.die == "d20":
                d20.append(width)
    for kind, sides in boxes.items():
        assert max(sides) - min(sides) <= 4.0, (kind, sorted(sides))
        assert abs(float(np.median(sides)) - DIE_PX[kind]) <= 0.1 * DIE_PX[kind]
    # the photo agrees, within the edge a die near the wall (where the ring light falls off) loses
    assert max(d20) - min(d20) <= 5.0, sorted(d20)
    # one camera height: a d20 is wider than a d10, wider than a d6
    assert np.median(boxes["d20"]) > np.median(boxes["d10"]) > np.median(boxes["d6"])


def test_the_tray_edge_and_walls_are_in_the_photo_and_the_dice_on_its_floor() -> None:
    _frame, reference, truth = next(_frames(None, 1))
    grey = cv2.cvtColor(reference, cv2.COLOR_BGR2GRAY).astype(np.float32)
    h, w = grey.shape
    r = TOWER.floor_radius(w)
    row = grey[h // 2]
    floor = row[int(w / 2 - r + 8) : int(w / 2 + r - 8)]
    # the walls' inner faces just beyond the floor's edge, both sides
    walls = np.concatenate(
        [row[int(w / 2 - r - 24) : int(w / 2 - r - 4)], row[int(w / 2 + r + 4) : int(w / 2 + r + 24)]]
    )
    assert floor.std() < 6  # an even, matte floor
    assert abs(float(floor.mean()) - float(walls.mean())) > 10  # the walls are not the floor
    # the floor's edge is a step where the tray says it is, on both sides
    step = np.abs(np.diff(cv2.GaussianBlur(row[None, :], (9, 1), 0)[0]))
    for edge in (w / 2 - r, w / 2 + r):
        near = step[int(edge) - 6 : int(edge) + 6]
        assert near.max() > 3 * np.median(step)
    for label in truth:
        x, y, bw, bh = label.box
        assert math.hypot(x + bw / 2 - w / 2, y + bh / 2 - h / 2) + max(bw, bh) / 2 <= r + 2


def test_every_die_lands_inside_the_tray_outline_the_build_guide_calibrates_with() -> None:
    numbers = [int(v) for v in re.search(r"--tray ([\d,]{20,})", BUILD.read_text()).group(1).split(",")]  # type: ignore[union-attr]
    outline = np.array(numbers, np.float32).reshape(-1, 1, 2)
    for dice in (None, MIXED):
        for _frame, _reference, truth in _frames(dice, 6):
            for label in truth:
                x, y, w, h = label.box
                # a box's corners reach past a turned die: the middles of its edges touch the die
                for point in ((x + w / 2, y), (x + w / 2, y + h), (x, y + h / 2), (x + w, y + h / 2)):
                    assert cv2.pointPolygonTest(outline, point, True) >= -2, (label, point)


def test_the_readers_boxes_on_the_simulated_tower_are_the_towers_scale() -> None:
    """What a builder compares: the reading's boxes, within the range calibrate and the documents give."""
    lo, hi = box_px("d6")  # type: ignore[misc]
    tower = open_tower(DEFAULT_CONFIG)
    widths: list[float] = []
    try:
        for _ in range(12):
            tower.camera.throw()
            for _ in range(8):
                frame = tower.camera.capture()
            widths += [max(d.box[2], d.box[3]) for d in tower.read(frame).dice]
    finally:
        tower.close()
    assert len(widths) >= 55
    assert lo * 0.98 <= min(widths) and max(widths) <= hi * 1.02, sorted(widths)
    assert lo < float(np.median(widths)) < hi


def test_a_tray_of_small_dice_is_warned_about_at_calibration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the same camera at a quarter of the pixels: a d20 spans DIE_PX / 2.5 = 38 px. One seeded
    # landing: the check measures the one photo it takes, and a rare unseeded landing measures
    # the two d6 at 22 px and warns
    cfg = tmp_path / "small.toml"
    cfg.write_text(
        '[camera]\nbackend = "sim"\nwidth = 256\nheight = 192\n[dice]\nplain = ["blue d20", "2 white d6"]\n'
    )
    assert main(["tower", "calibrate", "--tower", "config", "--config", str(cfg), "--sim-seed", "1"]) == 0
    out, err = capsys.readouterr()
    need = min_px_of("d20")
    assert f"numerals need {need:.0f} px: lower the camera or use the standard lens" in err
    assert err.count("dicetower: warning: d20 dice are ") == 1
    assert "d6 dice" in out and "warning: d6" not in err  # 29 px d6 are still read


def test_the_default_tray_passes_calibration(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tower", "calibrate", "--tower", "sim"]) == 0
    out, err = capsys.readouterr()
    lo, hi = box_px("d6")  # type: ignore[misc]
    assert f"(the tower shows {lo:.0f}-{hi:.0f}; the reader needs" in out and "warning" not in err


def test_dice_off_the_towers_scale_are_warned_about() -> None:
    lo, hi = box_px("d6")  # type: ignore[misc]
    big = DieSize("d6", hi * 1.3, min_px_of("d6"), 5, (lo, hi))
    small = DieSize("d6", lo * 0.7, min_px_of("d6"), 5, (lo, hi))
    assert big.ok and small.ok and not big.on_scale and not small.on_scale
    assert DieSize("d6", (lo + hi) / 2, min_px_of("d6"), 5, (lo, hi)).on_scale
    assert "the camera is lower than tower.scad puts it" in big.scale_warning()
    assert "the camera is higher than tower.scad puts it" in small.scale_warning()


def test_die_sizes_count_a_die_as_its_loaded_kind_by_colour() -> None:
    # a d20 too small for its kind to be read comes out as an unreadable "d6": its colour says d20
    reading = Reading(
        dice=(
            DieReading(
                box=(10, 10, 31, 29),
                status=ReadStatus.UNREADABLE,
                reason=UnreadableReason.TOO_SMALL,
                colour="blue",
                hsv=(110, 200, 150),
            ),
            DieReading(box=(60, 10, 24, 24), kind="d6", face=3, colour="white", hsv=(0, 10, 240)),
        )
    )
    sizes = die_sizes(reading, [TrayDie("d20", "blue"), TrayDie("d6", "white")])
    assert sizes == [
        DieSize("d20", 31.0, min_px_of("d20"), 1, box_px("d20")),
        DieSize("d6", 24.0, min_px_of("d6"), 1, box_px("d6")),
    ]
    assert not sizes[0].ok
    need = min_px_of("d20")
    assert sizes[0].warning() == (
        f"d20 dice are 31 px across; numerals need {need:.0f} px: lower the camera or use the standard lens"
    )


def test_a_camera_that_cannot_empty_its_tray_asks_for_the_dice_first(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from dicetower.firmware.die_sizes import report_die_sizes

    tower = open_tower(DEFAULT_CONFIG)
    try:
        tower.camera.can_show_empty_tray = False  # as a real camera: the tray was emptied by hand
        assert report_die_sizes(tower, ask=False) == []
        assert "die sizes not checked (--yes" in capsys.readouterr().out
        monkeypatch.setattr("sys.stdin", io.StringIO("\n"))
        sizes = report_die_sizes(tower, ask=True)
        out, err = capsys.readouterr()
        assert "Load the dice, then press Enter" in err
        assert [s.kind for s in sizes] == ["d6"] and sizes[0].seen == 5 and "d6 dice: " in out
    finally:
        tower.close()


def _pip_colour(frame: np.ndarray, box: tuple[float, float, float, float], body: np.ndarray) -> np.ndarray:
    """The median colour of a die's pips: the pixels near its centre (on its top face, however it is
    turned) that are far from its body's colour."""
    x, y, w, h = box
    cx, cy, r = x + w / 2, y + h / 2, 0.4 * min(w, h) / 1.2
    ys, xs = np.mgrid[0 : frame.shape[0], 0 : frame.shape[1]]
    near = (xs - cx) ** 2 + (ys - cy) ** 2 <= r * r
    pixels = frame[near].astype(np.float32)
    pips = pixels[np.linalg.norm(pixels - body, axis=1) > 90]
    return np.median(pips, axis=0)


def test_each_pip_d6_keeps_its_pip_colour_from_throw_to_throw() -> None:
    from dicetower.vision.synth.render import BODY_COLOURS

    colours: dict[int, list[np.ndarray]] = {}
    cam = SimCamera(seed=11)
    for _ in range(8):
        cam.throw()
        for _ in range(8):
            frame = cam.capture()
        for i, (tray_die, label) in enumerate(cam.truth_dice):
            body = np.array(BODY_COLOURS[tray_die.colour][0], np.float32)
            if not label.cocked:
                colours.setdefault(i, []).append(_pip_colour(frame, label.box, body))
    assert len(colours) == 5
    for i, seen in colours.items():
        spread = np.ptp(np.array(seen), axis=0).max()
        assert spread < 45, (i, np.array(seen).round())

"""The running empty tray: the median of the recent photos without their dice, and when it is none."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from dicetower.vision.reader import open_reader
from dicetower.vision.running_tray import (
    MIN_THROWS,
    RunningTray,
    RunningTrayReader,
    TrayChoice,
    light_drifted,
    tray_light,
)

SIDE = 44


def tray(seed: int = 0, shape: tuple[int, int] = (360, 480)) -> np.ndarray:
    """A grey tray with a little texture (a liner under a lamp)."""
    rng = np.random.default_rng(seed)
    return cv2.GaussianBlur(np.clip(rng.normal(110, 6, (*shape, 3)), 0, 255).astype(np.uint8), (5, 5), 0)


def unfamiliar_die(frame: np.ndarray, x: int, y: int, label: str) -> tuple[float, float, float, float]:
    """A blue die with a white numeral: no die the general detector trained on looks like it."""
    cv2.rectangle(frame, (x, y), (x + SIDE, y + SIDE), (200, 120, 40), -1)
    cv2.putText(frame, label, (x + 8, y + 32), cv2.FONT_HERSHEY_SIMPLEX, 0.9, (255, 255, 255), 2)
    return (float(x), float(y), float(SIDE), float(SIDE))


def throw(empty: np.ndarray, seed: int, dice: int = 3) -> tuple[np.ndarray, list[tuple[float, ...]]]:
    """The tray with ``dice`` dice where a seeded throw lands them (apart from each other)."""
    frame, boxes = empty.copy(), []
    rng = np.random.default_rng(seed)
    while len(boxes) < dice:
        x, y = (
            int(rng.integers(20, empty.shape[1] - SIDE - 20)),
            int(rng.integers(20, empty.shape[0] - SIDE - 20)),
        )
        if all(abs(x - b[0]) > SIDE + 8 or abs(y - b[1]) > SIDE + 8 for b in boxes):
            boxes.append(unfamiliar_die(frame, x, y, str(len(boxes) + 7)))
    return frame, boxes


def test_the_median_of_recent_throws_is_the_empty_tray_once_it_has_enough_of_them() -> None:
    empty = tray()
    running = RunningTray()
    for i in range(MIN_THROWS):
        frame, boxes = throw(empty, i)
        assert running.reference(frame) is None
        assert "photos so far" in running.why_none or "first photo" in running.why_none
        running.add(frame, boxes)
    frame, _boxes = throw(empty, 99)
    ref = running.reference(frame)
    assert ref is not None and ref.shape == frame.shape
    assert float(np.abs(ref.astype(int) - empty.astype(int)).mean()) < 3.0


def test_dice_that_gather_on_one_spot_are_left_out_of_the_median_where_they_were_found() -> None:
    empty = tray()
    running = RunningTray()
    frames = []
    for i in range(9):  # a die in the middle in 6 of 9 throws: a plain median shows it
        frame, boxes = throw(empty, i, dice=1)
        if i % 3:
            frame = empty.copy()
            boxes = [unfamiliar_die(frame, 200, 150, "8")]
        frames.append(frame)
        running.add(frame, boxes)
    middle = (slice(160, 190), slice(210, 240))
    plain = np.median(np.stack(frames), axis=0)
    assert np.abs(plain[middle] - empty[middle]).mean() > 40  # the die, in the plain median
    ref = running.reference(throw(empty, 50, dice=1)[0])
    assert ref is not None
    assert np.abs(ref[middle].astype(int) - empty[middle].astype(int)).mean() < 5


def test_a_die_on_one_spot_in_nearly_every_photo_gives_no_tray() -> None:
    empty = tray()
    running = RunningTray()
    for _ in range(8):  # crops of one centred die
        frame = empty.copy()
        running.add(frame, [unfamiliar_die(frame, 200, 150, "8")])
    assert running.reference(empty) is None
    assert "one spot" in running.why_none


def test_a_moving_camera_gives_no_tray() -> None:
    running = RunningTray()
    yy, xx = np.mgrid[0:600, 0:800]
    grain = 110 + 45 * np.sin(xx / 9.0 + 3 * np.sin(yy / 40.0))  # wood grain across the table
    big = np.repeat(grain[..., None], 3, axis=2).astype(np.uint8)
    for i in range(8):  # a hand-held camera: the tray's pattern sits elsewhere in every photo
        x, y = 30 * i, 20 * i
        running.add(big[y : y + 360, x : x + 480].copy(), [])
    assert running.reference(big[200:560, 300:780].copy()) is None
    assert "the camera moves" in running.why_none


def test_another_scene_or_size_starts_the_history_again() -> None:
    running = RunningTray()
    for i in range(8):
        running.add(*throw(tray(0), i))
    other = np.full((360, 480, 3), (60, 140, 60), np.uint8)  # green felt in place of the grey liner
    assert running.reference(other) is None
    assert "another scene" in running.why_none
    assert len(running) == 0
    for i in range(8):
        running.add(*throw(tray(0), i))
    assert running.reference(tray(0, (240, 320))) is None
    assert running.why_none == "the first photo of this size"


def test_the_light_check_reads_the_tray_around_the_dice() -> None:
    empty = tray()
    frame, boxes = throw(empty, 1)
    assert tray_light(frame, empty, boxes) == pytest.approx(1.0, abs=0.02)
    dim = cv2.convertScaleAbs(frame, alpha=0.75)
    assert tray_light(dim, empty, boxes) == pytest.approx(0.75, abs=0.03)
    assert light_drifted(dim, empty, boxes)
    assert not light_drifted(frame, empty, boxes)
    with pytest.raises(ValueError, match="reference is 320x240"):
        tray_light(frame, tray(0, (240, 320)), boxes)


def test_the_choice_keeps_the_photo_while_its_light_holds_and_takes_the_running_median_after() -> None:
    empty = tray()
    choice = TrayChoice()
    for i in range(MIN_THROWS + 1):
        frame, boxes = throw(empty, i)
        assert choice.pick(frame, empty) is empty
        assert choice.source == "photo"
        choice.seen(frame, boxes)
    dim_empty = cv2.convertScaleAbs(empty, alpha=0.7)
    for i in range(MIN_THROWS + 1):  # the lamp dims: the photo no longer holds
        frame, boxes = throw(dim_empty, 20 + i)
        choice.pick(frame, empty)
        choice.seen(frame, boxes)
    assert choice.source == "running"  # the history started again when the light changed
    assert len(choice.running) == MIN_THROWS + 1  # the dim photos only
    frame, _ = throw(dim_empty, 40)
    ref = choice.pick(frame, empty)
    assert ref is not None and float(np.abs(ref.astype(int) - dim_empty.astype(int)).mean()) < 3.0
    assert choice.pick(frame[:100], None) is None and choice.source == "none"


def test_the_general_reader_finds_unfamiliar_dice_against_the_running_tray_and_not_without() -> None:
    """Dice are what differs from the tray: dice unlike any the detector saw are found as blobs."""
    empty = tray()
    plain, running = open_reader(), RunningTrayReader(open_reader())
    found_plain = found_running = total = 0
    for i in range(MIN_THROWS + 6):
        frame, boxes = throw(empty, i)
        a, b = plain.read(frame), running.read(frame)
        if i < MIN_THROWS:
            assert running.choice.source == "none"
            continue
        assert running.choice.source == "running"
        total += len(boxes)

        def found(reading: object, boxes: list = boxes) -> int:
            centres = [d.box[0] + d.box[2] / 2 for d in reading.dice]  # type: ignore[attr-defined]
            return sum(any(abs(c - (x + w / 2)) < w / 2 for c in centres) for x, _y, w, _h in boxes)

        found_plain += found(a)
        found_running += found(b)
    assert found_running >= total - 1
    assert found_plain <= total // 2
    assert running.choice.counts == {"none": MIN_THROWS, "running": 6}

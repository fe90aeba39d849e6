"""``teach collect`` takes the empty tray again when the light on the tray changes, and names it per line."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from dicetower.firmware.collect import Collector
from dicetower.vision.imageio import load_image
from dicetower.vision.manifest import read_manifest
from dicetower.vision.running_tray import MIN_THROWS, RECENT_THROWS
from dicetower.vision.taught.folder import TeachFolder


def collector(tower: Any, out: Path, lines: list[str]) -> tuple[Collector, TeachFolder]:
    folder = TeachFolder.open(out, [(d.kind, d.colour) for d in tower.dice])
    folder.use_reference(tower.calibration.reference)
    return Collector(tower, folder, min_per_face=8, check_every=0, log=lines.append), folder


def test_the_empty_tray_is_photographed_again_when_the_lamp_dims(
    sim_tower: Callable[..., Any], tmp_path: Path
) -> None:
    tower = sim_tower(3)
    outline = [[40.0, 40.0], [600.0, 40.0], [600.0, 440.0], [40.0, 440.0]]
    tower.calibration.tray = outline
    lines: list[str] = []
    col, _folder = collector(tower, tmp_path / "teach", lines)
    first = tower.calibration.reference.copy()
    assert col.run(3).written == 3
    assert lines == [] and col.empty_trays == []  # the light held: no new empty tray
    tower.camera.light = 0.7
    result = col.run(3)
    assert result.written == 3
    assert result.empty_trays == ["images/empty-2.png"]  # taken once, after the first dim throw
    assert any("the light on the tray changed: photographed the empty tray again" in line for line in lines)
    refs = [
        e.reference.name if e.reference else None for e in read_manifest(tmp_path / "teach", unnamed=True)
    ]
    assert refs == ["empty.png"] * 4 + ["empty-2.png"] * 2
    again = load_image(tmp_path / "teach" / "images" / "empty-2.png")
    assert float(again.mean()) == np.float64(again.mean())
    assert 0.65 < float(again.mean()) / float(first.mean()) < 0.75  # the dimmed tray, not the old one
    assert tower.calibration.tray == outline  # the tray's outline is kept


def test_without_a_camera_that_shows_the_tray_empty_the_recent_throws_median_takes_its_place(
    sim_tower: Callable[..., Any], tmp_path: Path
) -> None:
    tower = sim_tower(4)
    tower.camera.can_show_empty_tray = False  # as a real camera: the dice stay in the tray
    lines: list[str] = []
    col, _folder = collector(tower, tmp_path / "teach", lines)
    first = tower.calibration.reference.copy()
    tower.camera.light = 0.75
    col.run(MIN_THROWS - 1)
    assert col.empty_trays == []  # too few dim throws for a median yet, and nothing else to take
    # five dice in the 105 mm tray keep some spot covered in every one of the first throws: the median
    # waits until each spot shows the tray in at least one of the recent photos
    col.run(RECENT_THROWS)
    assert col.empty_trays == ["images/empty-2.png"], col.recent.why_none
    assert any("took the median of the last" in line for line in lines)
    median = load_image(tmp_path / "teach" / "images" / "empty-2.png")
    assert 0.7 < float(median.mean()) / float(first.mean()) < 0.8
    assert tower.calibration.reference is not first and np.array_equal(tower.calibration.reference, median)

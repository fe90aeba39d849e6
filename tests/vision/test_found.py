"""The found report: dice found, missed and falsely found per set, each way of getting the empty tray."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path

import cv2
from dicetower.vision.manifest import LabelledDie, write_manifest_line
from dicetower.vision.running_tray import MIN_THROWS
from dicetower.vision.training.found import main
from test_running_tray import throw, tray

PHOTOS = MIN_THROWS + 5


def write_set(root: Path, *, with_photo: bool) -> Path:
    """A labelled set of unfamiliar dice thrown on one tray, file names in capture order."""
    folder = root / ("with-photo" if with_photo else "rig")
    (folder / "images").mkdir(parents=True)
    empty = tray()
    cv2.imwrite(str(folder / "images" / "empty.png"), empty)
    with open(folder / "manifest.jsonl", "w", encoding="utf-8") as fh:
        for i in range(PHOTOS):
            frame, boxes = throw(empty, i)
            cv2.imwrite(str(folder / "images" / f"{i:02d}.png"), frame)
            dice = [LabelledDie("d6", 4, b) for b in boxes]  # type: ignore[arg-type]
            write_manifest_line(fh, f"images/{i:02d}.png", dice, "images/empty.png" if with_photo else None)
    return folder


def report(root: Path, name: str) -> dict[str, dict]:
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["--datasets", str(root), "--sets", name]) == 0
    return {line["way"]: line for line in map(json.loads, out.getvalue().splitlines())}


def test_each_way_is_reported_and_the_running_tray_finds_what_the_detector_alone_misses(
    tmp_path: Path,
) -> None:
    write_set(tmp_path, with_photo=False)
    lines = report(tmp_path, "rig")
    assert set(lines) == {"none", "photo", "all", "running"}
    assert lines["photo"] == {"set": "rig", "way": "photo", "skipped": "no empty-tray photo"}
    dice = 3 * PHOTOS
    for way in ("none", "all", "running"):
        line = lines[way]
        assert line["photos"] == PHOTOS and line["dice"] == dice
        assert line["found"] + line["missed"] == dice
        lo, hi = line["found_interval"]
        assert lo <= line["found"] / dice <= hi
    assert lines["running"]["trays"] == {"none": MIN_THROWS, "running": PHOTOS - MIN_THROWS}
    assert lines["running"]["found"] >= lines["none"]["found"] + 5  # the blue dice are found as blobs
    assert lines["all"]["found"] >= dice - 2  # one tray, dice everywhere: the median of all is the tray


def test_a_set_with_an_empty_tray_photo_is_read_against_it(tmp_path: Path) -> None:
    write_set(tmp_path, with_photo=True)
    lines = report(tmp_path, "with-photo")
    assert lines["photo"]["found"] >= 3 * PHOTOS - 1
    assert lines["photo"]["found"] > lines["none"]["found"]

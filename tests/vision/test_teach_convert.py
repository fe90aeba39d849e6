"""A folder of photos made a teach folder: in place or beside it, photos left out with their reasons."""

from __future__ import annotations

import json
import os
from pathlib import Path

import cv2
import numpy as np
import pytest
from dicetower.vision.manifest import read_manifest
from dicetower.vision.reader import open_reader
from dicetower.vision.taught.convert import (
    CONVERTING,
    RECORD_MANIFEST,
    convert_folder,
    finish_cut_off,
    infer_loaded,
)
from dicetower.vision.taught.folder import TRUTH, TeachFolderError
from drawn_dice import draw_die

FACES = [1, 3, 4, 2, 5, 6]
#: the photo that shows a second die beside the first: left out, one die being loaded
TWO_DICE = 4
GREY = np.full((160, 160, 3), 120, np.uint8)


@pytest.fixture(scope="module")
def reader():
    return open_reader(numerals=True)


def write_photos(root: Path, labelled: bool) -> None:
    """A folder as ``dicetower record`` writes it: photos, the empty tray, one line each."""
    (root / "images").mkdir(parents=True)
    cv2.imwrite(str(root / "images/empty.png"), np.hstack([GREY, GREY]))
    with open(root / "manifest.jsonl", "w") as fh:
        for n, face in enumerate(FACES, 1):
            frame, box = draw_die(face, 20.0 * face)
            beside = draw_die(6, 10.0)[0] if n == TWO_DICE else GREY
            cv2.imwrite(str(root / f"images/roll-{n:05d}.jpg"), np.hstack([frame, beside]))
            dice = [{"die": "d6", "face": face, "box": [round(v, 1) for v in box]}] if labelled else []
            line = {"image": f"images/roll-{n:05d}.jpg", "reference": "images/empty.png", "dice": dice}
            fh.write(json.dumps(line) + "\n")


def test_unlabelled_photos_are_converted_in_place_the_record_s_manifest_kept(tmp_path: Path, reader) -> None:
    write_photos(tmp_path, labelled=False)
    record = (tmp_path / "manifest.jsonl").read_text()
    done = convert_folder(tmp_path, reader=reader)
    assert done.in_place and done.dice == [("d6", "white")] and done.lines == 5
    assert dict(done.skipped) == {"2 dice found, 1 loaded": 1}
    assert (tmp_path / RECORD_MANIFEST).read_text() == record and not (tmp_path / CONVERTING).exists()
    entries = list(read_manifest(tmp_path, unnamed=True))
    assert [e.relpath for e in entries] == [f"images/roll-{n:05d}.jpg" for n in (1, 2, 3, 5, 6)]
    assert [d.crop for e in entries for d in e.dice][-1] == "crops/white-d6/00005.png"  # by line
    for e in entries:
        (d,) = e.dice
        assert (d.die, d.colour, d.face) == ("d6", "white", None) and (tmp_path / d.crop).is_file()
    assert not (tmp_path / TRUTH).exists()  # nothing was labelled
    with pytest.raises(TeachFolderError, match="already a teach folder"):
        convert_folder(tmp_path, reader=reader)


def test_labelled_photos_go_to_a_new_folder_their_faces_to_the_truth_file(tmp_path: Path, reader) -> None:
    src, out = tmp_path / "recorded", tmp_path / "teach"
    write_photos(src, labelled=True)
    with pytest.raises(TeachFolderError, match="its photos are labelled"):
        convert_folder(src, reader=reader)
    done = convert_folder(src, out, reader=reader, loaded=[("d6", "white")])
    assert not done.in_place and done.lines == 5 and not (src / "crops").exists()
    truth = [json.loads(line)["faces"] for line in (out / TRUTH).read_text().splitlines()]
    assert truth == [[1], [3], [4], [5], [6]]  # the left-out photo showed the 2
    assert (
        os.path.samefile(out / "images/roll-00001.jpg", src / "images/roll-00001.jpg")
        or (out / "images/roll-00001.jpg").read_bytes() == (src / "images/roll-00001.jpg").read_bytes()
    )


def test_a_conversion_cut_off_between_its_renames_is_finished(tmp_path: Path, reader) -> None:
    write_photos(tmp_path, labelled=False)
    convert_folder(tmp_path, reader=reader)
    os.replace(tmp_path / "manifest.jsonl", tmp_path / CONVERTING)  # the state between the two renames
    finish_cut_off(tmp_path)
    assert len(list(read_manifest(tmp_path, unnamed=True))) == 5


def test_the_loaded_dice_are_what_most_clean_photos_show() -> None:
    from dicetower.vision.reading import DieReading, Reading, ReadStatus, UnreadableReason

    def reading(*colours: str) -> Reading:
        return Reading(
            tuple(DieReading((10.0 * i, 0, 9, 9), "d6", 2, colour=c) for i, c in enumerate(colours))
        )

    leaning = Reading((DieReading((0, 0, 9, 9), "d6", None, ReadStatus.UNREADABLE, UnreadableReason.COCKED),))
    photos = [
        reading("white", "red"),
        reading("red", "white"),
        reading("translucent", "red"),
        leaning,
        leaning,
    ]
    assert infer_loaded(photos) == [("d6", "red"), ("d6", "white")]

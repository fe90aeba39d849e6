"""The teach folder on disk: written whole, carried on after a crash, refused when it is not one."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from dicetower.vision.manifest import LabelledDie, read_manifest
from dicetower.vision.taught import folder as folder_module
from dicetower.vision.taught.folder import (
    HINTS,
    MANIFEST,
    TRUTH,
    TeachFolder,
    TeachFolderError,
    read_side_file,
    truth_faces,
)
from teach_helpers import drawn_throw, write_drawn_folder

GREY = np.full((160, 160, 3), 120, np.uint8)


def test_a_throw_is_a_photo_its_crops_and_a_manifest_line_without_faces(tmp_path: Path) -> None:
    folder = write_drawn_folder(tmp_path / "t", [3, 5])
    entries = list(read_manifest(folder.root, unnamed=True))
    assert [e.relpath for e in entries] == ["images/roll-00001.jpg", "images/roll-00002.jpg"]
    die = entries[0].dice[0]
    assert (die.die, die.face, die.colour, die.crop) == ("d6", None, "white", "crops/white-d6/00001.png")
    assert die.box is not None and entries[0].reference == (folder.root / "images/empty.png").resolve()
    assert cv2.imread(str(folder.root / die.crop)).shape == (128, 128, 3)
    assert [v["faces"] for v in read_side_file(folder.root / TRUTH).values()] == [[3], [5]]
    assert [v["faces"] for v in read_side_file(folder.root / HINTS).values()] == [[None], [None]]
    assert "face" not in (folder.root / MANIFEST).read_text()


def test_two_dice_of_one_kind_and_colour_are_one_die_with_two_crops_a_throw(tmp_path: Path) -> None:
    folder = TeachFolder.open(tmp_path, [("d6", "white"), ("d6", "white")])
    folder.use_reference(GREY)
    photo, a = drawn_throw(2, 0)
    _, b = drawn_throw(4, 30)
    folder.add(photo, [a, b])
    (entry,) = read_manifest(tmp_path, unnamed=True)
    assert [d.crop for d in entry.dice] == ["crops/white-d6/00001.png", "crops/white-d6/00001-2.png"]
    assert not (tmp_path / TRUTH).exists()  # a camera that knows no truth writes none


def test_a_crash_mid_throw_leaves_a_complete_shorter_folder_and_the_next_throw_takes_its_number(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "t"
    write_drawn_folder(root, [1, 2])
    folder = TeachFolder.open(root, [("d6", "white")])
    folder.use_reference(GREY)
    real = folder_module.write_atomic

    def crop_fails(path: Path, data: bytes) -> None:
        if path.suffix == ".png" and "crops" in path.parts:
            raise OSError("disk full")
        real(path, data)

    monkeypatch.setattr(folder_module, "write_atomic", crop_fails)
    photo, die = drawn_throw(6, 0)
    with pytest.raises(OSError, match="disk full"):
        folder.add(photo, [die], truth=[6], hints=[6])
    monkeypatch.setattr(folder_module, "write_atomic", real)
    assert (root / "images/roll-00003.jpg").is_file()  # written, but no line names it
    assert len(list(read_manifest(root, unnamed=True))) == 2
    again = TeachFolder.open(root, [("d6", "white")], resume=True)
    assert (again.lines, again.next_roll) == (2, 3)
    again.use_reference(GREY)
    assert again.add(photo, [die], truth=[6], hints=[6]) == "images/roll-00003.jpg"
    assert [e.line for e in read_manifest(root, unnamed=True)] == [1, 2, 3]
    assert list(read_side_file(root / TRUTH)) == [f"images/roll-0000{n}.jpg" for n in (1, 2, 3)]


def test_a_torn_last_line_and_side_lines_no_manifest_line_names_are_dropped_on_carrying_on(
    tmp_path: Path,
) -> None:
    root = tmp_path / "t"
    write_drawn_folder(root, [1, 2])
    with open(root / MANIFEST, "a") as fh:
        fh.write('{"image": "images/roll-00003.jpg", "dic')  # a power cut mid-line
    with open(root / TRUTH, "a") as fh:
        fh.write(json.dumps({"image": "images/roll-00003.jpg", "faces": [4]}) + "\n")
    folder = TeachFolder.open(root, [("d6", "white")])
    assert folder.lines == 2 and (root / MANIFEST).read_text().endswith("}\n")
    assert list(read_side_file(root / TRUTH)) == ["images/roll-00001.jpg", "images/roll-00002.jpg"]


def test_a_collect_cut_off_before_its_first_line_is_started_anew(tmp_path: Path) -> None:
    first = TeachFolder.open(tmp_path, [("d6", "white")])
    first.use_reference(GREY)
    photo, _ = drawn_throw(1, 0)
    (tmp_path / "images/roll-00001.jpg").write_bytes(photo)  # the photo went in, its line did not
    again = TeachFolder.open(tmp_path, [("d6", "white")])
    assert (again.lines, again.next_roll) == (0, 1)


def test_a_new_calibration_between_runs_is_kept_beside_the_old_reference(tmp_path: Path) -> None:
    folder = TeachFolder.open(tmp_path, [("d6", "white")])
    assert folder.use_reference(GREY) == "images/empty.png"
    assert folder.use_reference(GREY) == "images/empty.png"
    assert folder.use_reference(GREY + 9) == "images/empty-2.png"
    assert folder.use_reference(GREY + 9) == "images/empty-2.png"


@pytest.mark.parametrize(
    ("setup", "dice", "resume", "message"),
    [
        (
            "other",
            [("d20", "blue")],
            False,
            "a teach folder of other dice (white d6); the tower holds blue d20",
        ),
        ("junk", [("d6", "white")], False, "not empty and not a teach folder"),
        (
            "record",
            [("d6", "white")],
            False,
            "a folder of photos, not a teach folder: 'dicetower teach group",
        ),
        ("empty", [("d6", "white")], True, "no throw to resume"),
    ],
)
def test_a_folder_that_is_not_a_teach_folder_of_these_dice_is_refused(
    tmp_path: Path, setup: str, dice: list[tuple[str, str]], resume: bool, message: str
) -> None:
    root = tmp_path / "t"
    if setup == "other":
        write_drawn_folder(root, [1])
    elif setup == "junk":
        root.mkdir()
        (root / "notes.txt").write_text("mine")
    elif setup == "record":
        root.mkdir()
        (root / "images").mkdir()
        cv2.imwrite(str(root / "images/a.png"), GREY)
        (root / MANIFEST).write_text('{"image": "images/a.png", "dice": []}\n')
    with pytest.raises(TeachFolderError, match=message.replace("(", r"\(").replace(")", r"\)")):
        TeachFolder.open(root, dice, resume=resume)


def test_side_faces_must_match_the_dice_and_nothing_is_written_when_they_do_not(tmp_path: Path) -> None:
    folder = TeachFolder.open(tmp_path, [("d6", "white")])
    photo, die = drawn_throw(1, 0)
    with pytest.raises(ValueError, match="2 faces for 1 dice"):
        folder.add(photo, [die], truth=[1, 2])
    assert not (tmp_path / "images/roll-00001.jpg").exists() and not (tmp_path / MANIFEST).exists()


def test_truth_faces_pair_each_located_box_with_the_label_whose_centre_it_is_nearest() -> None:
    labels = [LabelledDie("d6", 2, (100, 100, 40, 40)), LabelledDie("d6", 5, (10, 10, 40, 40))]
    boxes = [(12, 8, 40, 42), (300, 300, 40, 40), (98, 103, 41, 40)]
    assert truth_faces(boxes, labels) == [5, None, 2]

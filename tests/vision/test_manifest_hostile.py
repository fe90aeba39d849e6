"""Manifests a hostile (or careless) user writes: impossible labels, paths out of the folder.

Each bad line must be refused as one ``dicetower: error:`` line naming the file, the line and
the field, by ``eval`` and ``calibrate`` alike, before any photo is scored; a folder with
nothing to score must not end in a 0 % table with exit code 0.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import cv2
import numpy as np
import pytest
from dicetower.firmware.cli import main
from dicetower.vision.manifest import DIE_FACES, ManifestError, read_manifest

GOOD = {"image": "images/a.png", "dice": [{"die": "d6", "face": 5, "box": [10, 10, 40, 40]}]}


def _folder(tmp_path: Path, *lines: object, name: str = "set") -> Path:
    folder = tmp_path / name
    (folder / "images").mkdir(parents=True)
    cv2.imwrite(str(folder / "images" / "a.png"), np.full((120, 160, 3), 90, np.uint8))
    text = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    (folder / "manifest.jsonl").write_text(text, encoding="utf-8")
    return folder


def _die(**fields: object) -> dict[str, object]:
    return {"image": "images/a.png", "dice": [{"die": "d6", "face": 5, "box": [10, 10, 40, 40], **fields}]}


BAD_LINES = {
    "face 7 on a d6": (_die(face=7), "dice[0].face: 7 is not on a d6 (faces 1-6)"),
    "face 0 on a d6": (_die(face=0), "dice[0].face: 0 is not on a d6 (faces 1-6)"),
    "face -3 on a d6": (_die(face=-3), "dice[0].face: -3 is not on a d6"),
    "face 10 on a d10": (_die(die="d10", face=10), "dice[0].face: 10 is not on a d10 (faces 0-9)"),
    "face 35 on a d10t": (
        _die(die="d10t", face=35),
        "dice[0].face: 35 is not on a d10t (faces 0-90 in steps of 10)",
    ),
    "face 21 on a d20": (_die(die="d20", face=21), "dice[0].face: 21 is not on a d20 (faces 1-20)"),
    "face 5.0": (_die(face=5.0), "dice[0].face: must be an integer, got a number 5.0"),
    "face true": (_die(face=True), "dice[0].face: must be an integer, got a boolean true"),
    "no face": ({"image": "images/a.png", "dice": [{"die": "d6"}]}, "dice[0].face: missing"),
    "kind d7": (
        _die(die="d7"),
        "dice[0].die: 'd7' is not a die kind (one of d4, d6, d8, d10, d10t, d12, d20)",
    ),
    "kind D6": (_die(die="D6"), "dice[0].die: 'D6' is not a die kind"),
    "kind empty": (_die(die=""), "dice[0].die: '' is not a die kind"),
    "kind missing": (
        {"image": "images/a.png", "dice": [{"face": 5}]},
        "dice[0].die: missing is not a die kind",
    ),
    "negative box": (_die(box=[-5, 10, 40, 40]), "dice[0].box: x and y must be at least 0"),
    "zero-width box": (_die(box=[5, 10, 0, 40]), "dice[0].box: width and height must be positive"),
    "text in box": (_die(box=[5, "10", 40, 40]), "dice[0].box: must be four numbers"),
    "boolean in box": (_die(box=[5, True, 40, 40]), "dice[0].box: must be four numbers"),
    "three-number box": (_die(box=[5, 10, 40]), "dice[0].box: must be [x, y, width, height]"),
    "box object": (_die(box={"x": 1}), "dice[0].box: must be [x, y, width, height]"),
    "cocked 'no'": (_die(cocked="no"), 'dice[0].cocked: must be true or false, got a string "no"'),
    "cocked 1": (_die(cocked=1), "dice[0].cocked: must be true or false, got a number 1"),
    "dice an object": ({"image": "images/a.png", "dice": {"die": "d6"}}, "dice: must be a list of objects"),
    "dice a string": (
        {"image": "images/a.png", "dice": "d6"},
        "dice: must be a list of objects, got a string",
    ),
    "die a list": ({"image": "images/a.png", "dice": [["d6", 5]]}, "dice[0]: each die is a JSON object"),
    "die a number": (
        {"image": "images/a.png", "dice": [6]},
        "dice[0]: each die is a JSON object, got a number",
    ),
    "not json": ("{image: a.png}", "line: not JSON"),
    "a list": ("[1, 2]", "line: expected a JSON object, got a list"),
    "no image": ({"dice": []}, "image: missing"),
    "absolute image": ({"image": "/etc/shadow", "dice": []}, 'image: "/etc/shadow" is absolute'),
    "image up and out": ({"image": "../other/x.jpg", "dice": []}, 'image: "../other/x.jpg" is outside'),
    "image down, up and out": (
        {"image": "images/../../x.jpg", "dice": []},
        "is outside the manifest's folder",
    ),
    "reference out": ({"image": "images/a.png", "reference": "../../etc/passwd"}, "reference: "),
    "image with NUL": ({"image": "images/a\u0000.png", "dice": []}, "image: path holds a NUL character"),
}


@pytest.mark.parametrize("case", sorted(BAD_LINES))
def test_bad_line_is_an_error_naming_file_line_and_field(tmp_path: Path, case: str) -> None:
    line, why = BAD_LINES[case]
    folder = _folder(tmp_path, GOOD, "", line)  # line 3: a blank line still counts
    with pytest.raises(ManifestError) as info:
        list(read_manifest(folder))
    assert str(info.value).startswith(f"{folder / 'manifest.jsonl'}:3: bad manifest line: "), info.value
    assert why in str(info.value), info.value


@pytest.mark.parametrize("case", ["face 7 on a d6", "cocked 'no'", "dice an object", "absolute image"])
@pytest.mark.parametrize("command", ["eval", "calibrate"])
def test_eval_and_calibrate_refuse_the_line_in_one_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, command: str
) -> None:
    line, why = BAD_LINES[case]
    folder = _folder(tmp_path, GOOD, line)
    extra = ["--out", str(tmp_path / "card")] if command == "calibrate" else []
    assert main([command, str(folder), *extra]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith(f"dicetower: error: {folder / 'manifest.jsonl'}:2: bad manifest line: ")
    assert why in lines[0]
    assert not (tmp_path / "card").exists()


def test_every_face_of_every_kind_is_accepted(tmp_path: Path) -> None:
    lines = [
        {"image": "images/a.png", "dice": [{"die": k, "face": f}]} for k, fs in DIE_FACES.items() for f in fs
    ]
    entries = list(read_manifest(_folder(tmp_path, *lines)))
    assert len(entries) == sum(len(fs) for fs in DIE_FACES.values()) == 4 + 6 + 8 + 10 + 10 + 12 + 20


def test_cocked_must_be_a_json_boolean(tmp_path: Path) -> None:
    entries = list(read_manifest(_folder(tmp_path, _die(cocked=True), _die(cocked=False), _die())))
    assert [e.dice[0].cocked for e in entries] == [True, False, False]


def test_symlink_out_of_the_folder_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "secret.png"
    cv2.imwrite(str(outside), np.full((60, 60, 3), 1, np.uint8))
    folder = _folder(tmp_path, {"image": "images/link.png", "dice": []})
    os.symlink(outside, folder / "images" / "link.png")
    with pytest.raises(ManifestError, match=r"manifest\.jsonl:1: bad manifest line: image: .* is outside"):
        list(read_manifest(folder))


def test_symlink_within_the_folder_is_fine(tmp_path: Path) -> None:
    folder = _folder(tmp_path, {"image": "images/link.png", "dice": []})
    os.symlink(folder / "images" / "a.png", folder / "images" / "link.png")
    (entry,) = read_manifest(folder)
    assert entry.image == (folder / "images" / "a.png").resolve()


def test_a_folder_reached_through_a_symlink_still_reads(tmp_path: Path) -> None:
    folder = _folder(tmp_path, GOOD)
    alias = tmp_path / "alias"
    os.symlink(folder, alias, target_is_directory=True)
    (entry,) = read_manifest(alias)
    assert entry.image == (folder / "images" / "a.png").resolve()


def test_box_outside_the_photo_is_an_error_when_the_photo_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _folder(tmp_path, GOOD, _die(box=[150, 10, 40, 40]))  # the photo is 160 wide
    assert main(["eval", str(folder)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    assert line.startswith(
        f"dicetower: error: {folder / 'manifest.jsonl'}:2: bad manifest line: dice[0].box: "
    )
    assert "reaches outside the 160x120 photo images/a.png" in line


def test_box_on_the_edge_is_inside(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _folder(tmp_path, _die(box=[120, 80, 40, 40]))
    assert main(["eval", str(folder), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["dice"] == 1


def test_empty_manifest_is_not_a_zero_percent_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _folder(tmp_path, name="empty")
    (folder / "manifest.jsonl").write_text("\n\n")
    assert main(["eval", str(folder)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    why = "no photos to score (the manifest is empty, or --split/--kinds left none)"
    assert captured.err == f"dicetower: error: {folder}: {why}\n"


@pytest.mark.parametrize("command", ["eval", "calibrate"])
def test_a_folder_where_no_photo_reads_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    folder = _folder(tmp_path, _die(), _die())
    (folder / "images" / "a.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 50)  # cut short
    extra = ["--out", str(tmp_path / "card")] if command == "calibrate" else []
    assert main([command, str(folder), *extra]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    assert "none of its 2 photos could be read" in line, line


def test_an_unnamed_die_is_refused_unless_asked_for(tmp_path: Path) -> None:
    line = {"image": "images/a.png", "dice": [{"die": "d20", "box": [10, 10, 40, 40], "colour": "blue"}]}
    folder = _folder(tmp_path, line)
    with pytest.raises(ManifestError, match=r"dice\[0\].face: missing .*dicetower teach name"):
        list(read_manifest(folder))
    (entry,) = read_manifest(folder, unnamed=True)
    assert entry.dice[0].face is None and entry.dice[0].colour == "blue"
    assert entry.dice[0].to_json() == {"die": "d20", "box": [10.0, 10.0, 40.0, 40.0], "colour": "blue"}


def test_a_named_die_is_still_checked_when_unnamed_ones_are_allowed(tmp_path: Path) -> None:
    folder = _folder(tmp_path, _die(face=9))
    with pytest.raises(ManifestError, match="9 is not on a d6"):
        list(read_manifest(folder, unnamed=True))


def test_a_crop_outside_the_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match=r"dice\[0\].crop: .* is outside the manifest's folder"):
        list(read_manifest(_folder(tmp_path, _die(crop="../elsewhere.png"))))
    with pytest.raises(ManifestError, match=r"dice\[0\].colour: must be a colour name"):
        list(read_manifest(_folder(tmp_path, _die(colour=7), name="other")))


def test_colour_and_crop_travel_through_a_manifest_line(tmp_path: Path) -> None:
    (entry,) = read_manifest(_folder(tmp_path, _die(colour="red", crop="crops/red-d6/00001.png")))
    assert entry.dice[0].colour == "red" and entry.dice[0].crop == "crops/red-d6/00001.png"
    assert entry.dice[0].to_json()["crop"] == "crops/red-d6/00001.png"

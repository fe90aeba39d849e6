"""manifest.jsonl: round trip, the optional extensions, and one clear error per bad line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dicetower.vision.manifest import LabelledDie, ManifestError, read_manifest, write_manifest_line


def _write(folder: Path, *lines: str) -> Path:
    (folder / "manifest.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return folder


def test_round_trip_with_extensions(tmp_path: Path) -> None:
    dice = [
        LabelledDie("d6", 5, (10.0, 20.5, 30.0, 31.0)),
        LabelledDie("d6", 2, (100.0, 20.0, 30.0, 30.0), cocked=True),
        LabelledDie("d20", 17),
    ]
    with (tmp_path / "manifest.jsonl").open("w", encoding="utf-8") as fh:
        write_manifest_line(fh, "images/a.png", dice, reference="images/empty.png")
        write_manifest_line(fh, "images/b.png", [])
    a, b = read_manifest(tmp_path)
    assert a.dice == tuple(dice)
    assert a.image == (tmp_path / "images/a.png").resolve()
    assert a.relpath == "images/a.png" and a.line == 1
    assert a.reference == (tmp_path / "images/empty.png").resolve()
    assert b.dice == () and b.reference is None and b.line == 2


def test_unset_extensions_are_not_written(tmp_path: Path) -> None:
    with (tmp_path / "manifest.jsonl").open("w", encoding="utf-8") as fh:
        write_manifest_line(fh, "x.jpg", [LabelledDie("d6", 3, (1, 2, 3, 4)), LabelledDie("d6", 4)])
    obj = json.loads((tmp_path / "manifest.jsonl").read_text())
    assert obj["image"] == "x.jpg"
    assert obj["dice"] == [{"die": "d6", "face": 3, "box": [1, 2, 3, 4]}, {"die": "d6", "face": 4}]


def test_shared_dataset_line_parses(tmp_path: Path) -> None:
    line = '{"image": "images/I.jpg", "dice": [{"die": "d6", "face": 5, "box": [243, 350.1, 43.5, 43.5]}]}'
    (entry,) = read_manifest(_write(tmp_path, line, "", "   "))
    assert entry.dice == (LabelledDie("d6", 5, (243, 350.1, 43.5, 43.5)),)


def test_missing_manifest(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match=r"no manifest\.jsonl"):
        list(read_manifest(tmp_path))


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("{not json", "bad manifest line"),
        ("[1, 2]", "expected a JSON object"),
        ('{"dice": []}', "image"),
        ('{"image": "", "dice": []}', "non-empty"),
        ('{"image": "a.jpg", "dice": [{"die": "d6"}]}', "face"),
        ('{"image": "a.jpg", "dice": [{"die": "d6", "face": "five"}]}', "integer"),
        ('{"image": "a.jpg", "dice": [{"die": "d6", "face": true}]}', "integer"),
        ('{"image": "a.jpg", "dice": [{"die": "d6", "face": 5, "box": [1, 2, 3]}]}', "box"),
        ('{"image": "a.jpg", "dice": [{"die": "d6", "face": 5, "box": [1, 2, 0, 3]}]}', "positive"),
        ('{"image": "a.jpg", "dice": [{"die": "d6", "face": 5, "box": [1, 2, "x", 3]}]}', "bad"),
        ('{"image": "a.jpg", "reference": 7, "dice": []}', "reference"),
    ],
)
def test_bad_line_names_file_and_line(tmp_path: Path, line: str, why: str) -> None:
    good = '{"image": "ok.jpg", "dice": []}'
    with pytest.raises(ManifestError, match=rf"manifest\.jsonl:2: .*{why}"):
        list(read_manifest(_write(tmp_path, good, line)))

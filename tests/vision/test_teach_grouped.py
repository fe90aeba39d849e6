"""A teach folder's crops grouped by face into teach.json and contact sheets, names never overwritten."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import pytest
from dicetower.vision.taught.grouped import (
    TeachFileError,
    folder_crops,
    group_folder,
    has_names,
    hint_counts,
)
from dicetower.vision.taught.naming import SCHEMA, load_teach
from dicetower.vision.taught.naming import TEACH_FILE as TEACH
from teach_helpers import write_drawn_folder

FACES = [1, 3, 5, 1, 3, 5, 1, 3, 5, 1, 3, 5]


def test_each_die_s_crops_are_grouped_by_face_into_teach_json_and_a_contact_sheet(tmp_path: Path) -> None:
    write_drawn_folder(tmp_path, FACES)
    ((die, groups),) = group_folder(tmp_path)
    assert die.id == "white d6" and len(die.crops) == len(FACES)
    doc = json.loads((tmp_path / TEACH).read_text())
    assert doc["schema"] == SCHEMA
    (entry,) = doc["dice"]
    assert entry == {
        "id": "white d6",
        "slug": "white-d6",
        "kind": "d6",
        "colour": "white",
        "faces": [1, 2, 3, 4, 5, 6],
        "crops": [{"crop": f"crops/white-d6/{n:05d}.png", "line": n, "index": 0} for n in range(1, 13)],
        "groups": groups,
        "names": {},
        "loose": [],
        "loose_names": {},
        "work": {"names": 0, "moves": 0, "splits": 0, "undos": 0},
        "touched": [],
    }
    assert load_teach(tmp_path).dice[0].names == (None,) * len(groups)  # what naming reads
    assert sorted(i for g in groups for i in g) == list(range(len(FACES)))
    assert [len(g) for g in groups] == sorted((len(g) for g in groups), reverse=True)
    # drawn dice at any turn: no group mixes two faces
    assert all(len({FACES[i] for i in g}) == 1 for g in groups)
    sheet = cv2.imread(str(tmp_path / "sheets" / "white-d6.png"))
    assert sheet is not None and sheet.shape[0] > 64 * len([g for g in groups if g])


def test_grouping_again_refuses_a_teach_json_with_names_unless_forced(tmp_path: Path) -> None:
    write_drawn_folder(tmp_path, FACES[:6])
    group_folder(tmp_path, sheets=False)
    assert not has_names(tmp_path) and not (tmp_path / "sheets").exists()
    doc = json.loads((tmp_path / TEACH).read_text())
    doc["dice"][0]["names"] = {"0": 3}
    (tmp_path / TEACH).write_text(json.dumps(doc))
    with pytest.raises(TeachFileError, match="holds names; grouping again loses them"):
        group_folder(tmp_path)
    group_folder(tmp_path, force=True)
    assert not has_names(tmp_path)
    (tmp_path / TEACH).write_text("{not json")
    assert has_names(tmp_path)  # unreadable: it may hold names


def test_the_general_reader_s_sure_faces_are_counted_per_die_as_a_hint(tmp_path: Path) -> None:
    folder = write_drawn_folder(tmp_path, [1, 2])
    lines = (folder.root / "hints.jsonl").read_text().replace("[null]", "[4]", 1)
    (folder.root / "hints.jsonl").write_text(lines)
    (die,) = folder_crops(tmp_path)
    assert hint_counts(tmp_path, die) == {4: 1}


def test_a_folder_without_crops_is_not_grouped(tmp_path: Path) -> None:
    (tmp_path / "manifest.jsonl").write_text(
        '{"image": "images/a.png", "dice": [{"die": "d6", "face": 2}]}\n'
    )
    with pytest.raises(TeachFileError, match=r"dice\[0\] has no crop: not a teach folder"):
        group_folder(tmp_path)

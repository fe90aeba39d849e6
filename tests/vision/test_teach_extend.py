"""A named teach folder collected on: its new crops join their groups, and every name stays."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from dicetower.vision.taught.extend import assign_new, extend_folder
from dicetower.vision.taught.folder import TeachFolder
from dicetower.vision.taught.grouped import TeachFileError, group_folder
from dicetower.vision.taught.naming import TEACH_FILE, load_teach, move_out, name, name_loose, save_teach
from teach_helpers import drawn_throw, write_drawn_folder

FIRST = [1, 2, 3, 4, 5, 6] * 2
LATER = [6, 5, 4, 3, 2, 1, 3]


def _named_folder(root: Path) -> list[int]:
    """A white d6 of FIRST grouped and each group named by its crops' face; the faces by crop."""
    write_drawn_folder(root, FIRST)
    group_folder(root, sheets=False)
    teach = load_teach(root)
    (die,) = teach.dice
    for members in reversed(die.groups):  # the last group first: a merge never shifts those left to name
        g = die.groups.index(members)
        die = name(die, g, FIRST[members[0]])
    save_teach(root, teach.with_die(die))
    return list(FIRST)


def _carry_on(root: Path, faces: list[int]) -> None:
    folder = TeachFolder.open(root, [("d6", "white")], resume=True)
    for n, face in enumerate(faces, start=len(FIRST)):
        photo, die = drawn_throw(face, 17.0 * n + 5.0)
        folder.add(photo, [die], truth=[face], hints=[None])


def test_new_crops_join_the_group_named_their_face_and_no_name_changes(tmp_path: Path) -> None:
    faces = _named_folder(tmp_path)
    before = load_teach(tmp_path).dice[0]
    assert all(f is not None for f in before.names)
    _carry_on(tmp_path, LATER)
    logged: list[str] = []
    (extended,) = extend_folder(tmp_path, sheets=False, log=logged.append)
    die = load_teach(tmp_path).dice[0]
    assert die == extended.die
    assert extended.new == len(LATER) and extended.into_named + extended.loose == len(LATER)
    assert die.names == before.names and die.work == before.work and die.touched == before.touched
    assert die.crops[: len(FIRST)] == before.crops and len(die.crops) == len(FIRST) + len(LATER)
    assert [g[: len(b)] for g, b in zip(die.groups, before.groups, strict=True)] == list(before.groups)
    faces += LATER
    for members, face in zip(die.groups, die.names, strict=True):
        assert {faces[i] for i in members} == {face}  # drawn dice: each new crop with its own face
    assert extended.into_named == len(LATER) and extended.loose == 0
    assert logged == ["white d6: 7 new crops: 7 joined named groups, 0 unnamed groups, 0 left loose"]
    again = extend_folder(tmp_path, sheets=False)
    assert again[0].new == 0 and load_teach(tmp_path).dice[0] == die  # nothing new: nothing changes


def test_loose_crops_their_names_and_the_owner_s_work_are_kept(tmp_path: Path) -> None:
    _named_folder(tmp_path)
    teach = load_teach(tmp_path)
    die = name_loose(move_out(teach.dice[0], 4), 4, 5)  # the owner took crop 4 out and named it alone
    save_teach(tmp_path, teach.with_die(die))
    _carry_on(tmp_path, LATER[:2])
    (extended,) = extend_folder(tmp_path, sheets=False)
    after = load_teach(tmp_path).dice[0]
    assert after.loose[:1] == (4,) and after.loose_faces[:1] == (5,)
    assert after.work == die.work and after.touched == die.touched == frozenset({4})
    assert extended.new == 2 and len(after.crops) == len(FIRST) + 2


def test_a_crop_between_two_groups_is_left_loose() -> None:
    likeness = np.array(
        [
            [1.0, 0.9, 0.1, 0.1, 0.5, 0.1],
            [0.9, 1.0, 0.1, 0.1, 0.5, 0.1],
            [0.1, 0.1, 1.0, 0.8, 0.4, 0.7],
            [0.1, 0.1, 0.8, 1.0, 0.4, 0.7],
            [0.5, 0.5, 0.4, 0.4, 1.0, 0.1],
            [0.1, 0.1, 0.7, 0.7, 0.1, 1.0],
        ]
    )
    groups, loose = assign_new(likeness, [[0, 1], [2, 3]], [4, 5])
    # crop 4: 0.5 to group 0, whose crops share 0.9, and 0.4 to group 1: nearer the runner-up
    # crop 5: 0.7 to group 1 (its crops share 0.8), 0.1 to group 0: it joins
    assert loose == [4] and groups == [[0, 1], [2, 3, 5]]
    groups, loose = assign_new(likeness, [[0, 1], [2]], [3, 4])
    # a one-crop group is held to the die's other groups' floor (0.9): crop 3 (0.8 against 0.1) joins
    assert groups == [[0, 1], [2, 3]] and loose == [4]


def test_a_teach_json_of_other_crops_is_not_extended(tmp_path: Path) -> None:
    _named_folder(tmp_path)
    doc = json.loads((tmp_path / TEACH_FILE).read_text())
    doc["dice"][0]["crops"][0]["crop"], doc["dice"][0]["crops"][1]["crop"] = (
        doc["dice"][0]["crops"][1]["crop"],
        doc["dice"][0]["crops"][0]["crop"],
    )
    (tmp_path / TEACH_FILE).write_text(json.dumps(doc))
    _carry_on(tmp_path, LATER[:1])
    with pytest.raises(
        TeachFileError, match="not the manifest's first crops of it; 'dicetower teach group --force'"
    ):
        extend_folder(tmp_path, sheets=False)
    assert json.loads((tmp_path / TEACH_FILE).read_text()) == doc  # nothing written

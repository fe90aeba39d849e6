"""Naming a teach folder's groups: teach.json checked, each step, the labels file, the labelled manifest.

Every test runs on a real teach folder (``tests/teach_folders.py``): drawn PNG crops, a
manifest, a teach.json with a misfit and a mixed group.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from dicetower.vision.manifest import ManifestError, read_manifest
from dicetower.vision.taught import naming
from dicetower.vision.taught.naming import (
    TeachError,
    Work,
    apply_labels,
    crop_faces,
    labels_applied,
    load_teach,
    move_out,
    name,
    name_loose,
    parse_teach,
    progress,
    read_labels,
    save_teach,
    split,
    teach_json,
    undone,
    unname,
    write_labelled,
)
from teach_folders import TeachFolder

#: names the right groups of the test folder, moves the d6's misfit out and names it
LABELS = {
    "white d6": {"groups": {"0": 3, "1": 5, "2": 1, "3": 6}, "crops": {"crops/white-d6/00007.png": 2}},
    "blue-d20": {
        "groups": {"0": 17, "2": 12, "3": 20, "1": 4},
        "crops": {"crops/blue-d20/00006.png": 9, "crops/blue-d20/00007.png": 9},
    },
}


def _raw(folder: TeachFolder) -> dict[str, Any]:
    return json.loads((folder.path / "teach.json").read_text())


def test_teach_json_round_trips(teach_folder: TeachFolder) -> None:
    teach = load_teach(teach_folder.path)
    assert [d.id for d in teach.dice] == ["white d6", "blue d20"]
    d6 = teach.die("white-d6")
    assert d6.kind == "d6" and d6.faces == (1, 2, 3, 4, 5, 6) and len(d6.crops) == 10
    assert d6.crops[6].crop == "crops/white-d6/00007.png" and d6.crops[6].line == 7 and d6.crops[6].index == 0
    out = teach_json(teach)
    assert parse_teach(out) == teach
    raw = _raw(teach_folder)
    for mine, theirs in zip(out["dice"], raw["dice"], strict=True):
        assert {k: mine[k] for k in theirs} == theirs
        assert mine["work"] == {"names": 0, "moves": 0, "splits": 0, "undos": 0} and mine["touched"] == []


def test_save_is_atomic_and_leaves_no_temporary_file(teach_folder: TeachFolder) -> None:
    teach = load_teach(teach_folder.path)
    d6 = name(teach.die("white d6"), 0, 3)
    save_teach(teach_folder.path, teach.with_die(d6))
    assert load_teach(teach_folder.path).die("white d6").names[0] == 3
    assert sorted(p.name for p in teach_folder.path.iterdir() if p.name.startswith(".")) == []


def test_name_and_unname(teach_folder: TeachFolder) -> None:
    d20 = load_teach(teach_folder.path).die("blue d20")
    named = name(d20, 0, 17)
    assert named.names == (17, None, None, None) and named.work == Work(names=1)
    assert progress(named)["text"] == "blue d20: 1 of 20 faces named, 7 crops left"
    assert unname(named, 0).names == (None,) * 4 and unname(named, 0).work.names == 2
    assert d20.names == (None,) * 4  # the steps return new states


def test_a_face_already_named_merges_the_groups(teach_folder: TeachFolder) -> None:
    d20 = name(load_teach(teach_folder.path).die("blue d20"), 2, 12)
    merged = name(d20, 0, 12)
    assert merged.groups == ((3, 4, 5, 6), (7, 8, 0, 1, 2), (9,))
    assert merged.names == (None, 12, None)
    assert merged.work.names == 2
    assert name(d20, 2, 12).groups == d20.groups  # naming a group its own face again changes nothing


def test_move_out_puts_a_misfit_in_loose_and_counts_it(teach_folder: TeachFolder) -> None:
    d6 = name(load_teach(teach_folder.path).die("white d6"), 1, 5)
    out = move_out(d6, 6)
    assert out.groups[1] == (3, 4, 5) and out.names[1] == 5
    assert out.loose == (6,) and out.loose_faces == (None,)
    assert out.work == Work(names=1, moves=1) and out.touched == {6}
    assert crop_faces(out) == {3: 5, 4: 5, 5: 5}
    named = name_loose(out, 6, 2)
    assert crop_faces(named)[6] == 2 and named.work.names == 2
    assert progress(named)["named"] == 2 and progress(named)["touched_share"] == 0.1
    assert name_loose(named, 6, None).loose_faces == (None,)


def test_a_group_left_empty_goes_with_its_name(teach_folder: TeachFolder) -> None:
    d6 = name(load_teach(teach_folder.path).die("white d6"), 3, 6)
    out = move_out(d6, 9)
    assert out.groups == ((0, 1, 2), (3, 4, 5, 6), (7, 8)) and out.names == (None, None, None)
    assert out.loose == (9,)


def test_split_keeps_the_name_with_the_first_part_and_inserts_the_second(teach_folder: TeachFolder) -> None:
    d20 = name(name(load_teach(teach_folder.path).die("blue d20"), 1, 4), 2, 12)
    out = split(d20, 1, [[3, 4], [6, 5]])
    assert out.groups == ((0, 1, 2), (3, 4), (5, 6), (7, 8), (9,))
    assert out.names == (None, 4, None, 12, None)
    assert out.work.splits == 1 and out.touched == {5, 6}


@pytest.mark.parametrize(
    "parts",
    [[[3, 4, 5, 6], []], [[3, 4], [5]], [[3, 4], [5, 6, 7]], [[3, 4, 5], [5, 6]], [[3], [4], [5, 6]]],
    ids=["empty part", "a crop left out", "a crop of another group", "a crop twice", "three parts"],
)
def test_a_split_must_share_out_the_group(teach_folder: TeachFolder, parts: list[list[int]]) -> None:
    d20 = load_teach(teach_folder.path).die("blue d20")
    with pytest.raises(TeachError) as exc:
        split(d20, 1, parts)
    assert exc.value.field == "parts"


@pytest.mark.parametrize(
    ("step", "field", "message"),
    [
        (lambda d: name(d, 4, 3), "group", "4 is not a group of white d6 (it has 4)"),
        (lambda d: name(d, 0, 7), "face", "7 is not a face of white d6"),
        (lambda d: name(d, 0, True), "face", "true is not a face"),
        (lambda d: move_out(d, 10), "crop", "10 is not a crop of white d6 (it has 10)"),
        (lambda d: move_out(move_out(d, 6), 6), "crop", "crop 6 is already loose"),
        (lambda d: name_loose(d, 6, 2), "crop", "crop 6 is not loose"),
    ],
)
def test_a_bad_step_names_its_field(teach_folder: TeachFolder, step: Any, field: str, message: str) -> None:
    d6 = load_teach(teach_folder.path).die("white d6")
    with pytest.raises(TeachError) as exc:
        step(d6)
    assert exc.value.field == field and message in str(exc.value)


def test_undone_restores_the_names_and_keeps_the_work(teach_folder: TeachFolder) -> None:
    d20 = load_teach(teach_folder.path).die("blue d20")
    before = name(d20, 0, 17)
    after = move_out(before, 5)
    back = undone(after, before)
    assert back.groups == before.groups and back.loose == () and back.names == before.names
    assert back.work == Work(names=1, moves=1, undos=1) and back.touched == {5}


def _broken(folder: TeachFolder, change: Any) -> str:
    raw = _raw(folder)
    change(raw)
    with pytest.raises(TeachError) as exc:
        parse_teach(raw)
    return str(exc.value)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda t: t.update(schema="dicetower.teach/2"), "teach.json: schema: "),
        (lambda t: t["dice"][0].update(kind="d7"), 'dice[0].kind: "d7" is not a die kind'),
        (lambda t: t["dice"][1].update(slug="white-d6"), "dice[1].slug: 'white-d6' names two dice"),
        (lambda t: t["dice"][0].update(slug="White D6"), 'dice[0].slug: "White D6" is not a slug'),
        (lambda t: t["dice"][0].update(id=""), "dice[0].id: "),
        (lambda t: t["dice"][0]["faces"].append(9), "dice[0].faces[6]: 9 is not a face of a d6"),
        (lambda t: t["dice"][0]["groups"][0].append(3), "dice[0].groups[1][0]: crop 3 is in two places"),
        (lambda t: t["dice"][0]["groups"].pop(), "dice[0].groups: crop 9 is in no group and not loose"),
        (lambda t: t["dice"][0]["groups"][0].append(57), "dice[0].groups[0][3]: 57 is not a crop of white"),
        (lambda t: t["dice"][0]["groups"].append([]), "dice[0].groups[4]: a group holds at least one crop"),
        (lambda t: t["dice"][0].update(names={"0": 3, "1": 3}), "dice[0].names.1: face 3 names two groups"),
        (lambda t: t["dice"][0].update(names={"9": 3}), "dice[0].names.9: 9 is not a group of white d6"),
        (lambda t: t["dice"][0].update(names={"x": 3}), 'dice[0].names: key "x" is not an index'),
        (lambda t: t["dice"][1].update(names={"0": 21}), "dice[1].names.0: 21 is not a face of blue d20"),
        (lambda t: t["dice"][0].update(loose_names={"2": 3}), "dice[0].loose_names.2: crop 2 is not loose"),
        (
            lambda t: t["dice"][0]["crops"][0].update(crop="crops/../../etc/passwd"),
            'dice[0].crops[0].crop: "crops/../../etc/passwd" is not a file in crops/white-d6/',
        ),
        (
            lambda t: t["dice"][0]["crops"][1].update(crop="crops/white-d6/00001.png"),
            "a crop is listed twice",
        ),
        (
            lambda t: t["dice"][0]["crops"][0].update(line=0),
            "dice[0].crops[0].line: 0 is not a manifest line",
        ),
        (lambda t: t["dice"][0].update(work={"names": -1}), "dice[0].work.names: -1 is not a count"),
        (lambda t: t.update(dice={}), "teach.json: dice: must be a list"),
    ],
)
def test_a_bad_teach_json_names_the_field(teach_folder: TeachFolder, change: Any, message: str) -> None:
    assert message in _broken(teach_folder, change)


def test_too_many_dice_or_a_file_too_large_is_refused(
    teach_folder: TeachFolder, monkeypatch: pytest.MonkeyPatch
) -> None:
    raw = _raw(teach_folder)
    raw["dice"] = raw["dice"] * 40
    with pytest.raises(TeachError, match=r"dice: 80 items; at most 64"):
        parse_teach(raw)
    monkeypatch.setattr(naming, "MAX_TEACH_BYTES", 100)
    with pytest.raises(TeachError, match="larger than"):
        load_teach(teach_folder.path)
    (teach_folder.path / "teach.json").unlink()
    with pytest.raises(TeachError, match=r"no teach\.json"):
        load_teach(teach_folder.path)


def test_labels_and_the_labelled_manifest(teach_folder: TeachFolder) -> None:
    folder = teach_folder.path
    original = (folder / "manifest.jsonl").read_bytes()
    teach = apply_labels(folder, LABELS)
    assert load_teach(folder) == teach  # saved
    d6, d20 = teach.die("white d6"), teach.die("blue d20")
    assert d6.work == Work(names=5, moves=1) and d6.touched == {6}
    assert d20.work == Work(names=6, moves=2) and d20.touched == {5, 6}
    assert progress(d20)["text"] == "blue d20: 5 of 20 faces named, 0 crops left"
    summary = write_labelled(folder)
    assert (summary.named, summary.unnamed, summary.lines) == (20, 0, 10)
    assert (folder / "manifest.unnamed.jsonl").read_bytes() == original
    entries = list(read_manifest(folder))  # faces required: every die named
    for die_id, column in (("white d6", 0), ("blue d20", 1)):
        assert [e.dice[column].face for e in entries] == teach_folder.truth[die_id]
    assert entries[0].dice[1].crop == "crops/blue-d20/00001.png" and entries[0].dice[1].colour == "blue"
    assert entries[0].reference == (folder / "images" / "empty.png").resolve()


def test_a_name_taken_back_is_taken_off_the_manifest(teach_folder: TeachFolder) -> None:
    folder = teach_folder.path
    original = (folder / "manifest.jsonl").read_bytes()
    write_labelled(folder, apply_labels(folder, LABELS))
    teach = apply_labels(folder, {"blue d20": {"groups": {"0": None}}})
    assert write_labelled(folder, teach).unnamed == 3
    with pytest.raises(ManifestError, match=r"dice\[1\]\.face: missing"):
        list(read_manifest(folder))
    faces = [e.dice[1].face for e in read_manifest(folder, unnamed=True)]
    assert faces == [None, None, None, 4, 4, 9, 9, 12, 12, 20]
    assert (folder / "manifest.unnamed.jsonl").read_bytes() == original  # kept from the first save


def test_labels_move_a_face_between_groups_without_merging(teach_folder: TeachFolder) -> None:
    teach = load_teach(teach_folder.path)
    wrong = teach.with_die(name(name(teach.die("white d6"), 0, 5), 1, 3))
    fixed = labels_applied(wrong, {"white d6": {"groups": {"1": 5, "0": 3}}})
    assert fixed.die("white d6").groups == teach.die("white d6").groups
    assert fixed.die("white d6").names == (3, 5, None, None)


def test_labels_naming_one_face_twice_merge_the_groups(teach_folder: TeachFolder) -> None:
    teach = labels_applied(load_teach(teach_folder.path), {"white d6": {"groups": {"2": 1, "3": 1}}})
    assert teach.die("white d6").groups == ((0, 1, 2), (3, 4, 5, 6), (7, 8, 9))


@pytest.mark.parametrize(
    ("labels", "message"),
    [
        (
            {"green d6": {}},
            "labels.green d6: no die 'green d6' in this teach folder (its dice: white d6, blue d20)",
        ),
        (
            {"white d6": {"groups": {"4": 3}}},
            "labels.white d6.groups.4: 4 is not a group of white d6 (it has 4)",
        ),
        ({"white d6": {"groups": {"0": 9}}}, "labels.white d6.groups.0: 9 is not a face of white d6"),
        ({"white d6": {"groups": {"-1": 3}}}, 'labels.white d6.groups: key "-1" is not an index'),
        ({"white d6": {"crops": {"crops/x.png": 3}}}, 'labels.white d6.crops: "crops/x.png" is not a crop'),
        ({"white d6": {"faces": {}}}, "labels.white d6: unknown field(s) ['faces']"),
        ({"white d6": []}, "labels.white d6: must be an object"),
    ],
)
def test_bad_labels_name_the_field(teach_folder: TeachFolder, labels: Any, message: str) -> None:
    with pytest.raises(TeachError) as exc:
        apply_labels(teach_folder.path, labels)
    assert str(exc.value) == message or str(exc.value).startswith(message)
    assert load_teach(teach_folder.path).die("white d6").names == (None,) * 4  # nothing saved


def test_read_labels_is_bounded_and_checks_json(tmp_path: Path) -> None:
    path = tmp_path / "labels.json"
    path.write_text(json.dumps(LABELS))
    assert read_labels(path) == LABELS
    path.write_text("[1, 2]")
    with pytest.raises(TeachError, match="must be an object"):
        read_labels(path)
    path.write_text("{")
    with pytest.raises(TeachError, match="not JSON"):
        read_labels(path)


def test_a_manifest_that_disagrees_with_teach_json_is_left_alone(teach_folder: TeachFolder) -> None:
    folder = teach_folder.path
    lines = (folder / "manifest.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["dice"][1]["crop"] = "crops/blue-d20/00099.png"
    lines[0] = json.dumps(first)
    (folder / "manifest.jsonl").write_text("\n".join(lines) + "\n")
    before = (folder / "manifest.jsonl").read_bytes()
    with pytest.raises(TeachError, match=r"blue d20: crops\[0\]: manifest.jsonl line 1 has no d20 at 1"):
        write_labelled(folder, apply_labels(folder, LABELS))
    assert (folder / "manifest.jsonl").read_bytes() == before
    assert not (folder / "manifest.unnamed.jsonl").exists()

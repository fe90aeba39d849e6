"""The taught reader: its head, grouping, the teaching set, fitting a model and reading with it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest
from dicetower.vision.eval.evaluate import FolderReport, evaluate_folder
from dicetower.vision.faces.pips import crop_die
from dicetower.vision.kinds import KINDS
from dicetower.vision.manifest import LabelledDie, write_manifest_line
from dicetower.vision.reader import open_reader
from dicetower.vision.synth.numerals import TrayDie, random_look, render_crop, render_tray
from dicetower.vision.synth.solids import face_values
from dicetower.vision.taught.card import seal_card
from dicetower.vision.taught.fallback import GeneralAnswer
from dicetower.vision.taught.features import (
    NETWORKS,
    Backbone,
    Network,
    TaughtModelError,
    backbone_for,
    networks_for,
)
from dicetower.vision.taught.fit import FitError, FitOptions, fit_model
from dicetower.vision.taught.group import average_linkage, contact_sheet, group_crops
from dicetower.vision.taught.head import fit_head
from dicetower.vision.taught.model import TaughtModel
from dicetower.vision.taught.reader import open_taught_reader
from dicetower.vision.taught.teaching import Example, hold_back_split, read_teaching_set
from dicetower.vision.taught.tray import median_tray
from teach_helpers import TOWER, sim_folder


def test_a_head_learns_what_its_prior_does_not_know() -> None:
    rng = np.random.default_rng(1)
    centres = rng.normal(size=(3, 16)) * 3
    labels = np.repeat([1, 2, 3], 40)
    x = centres[labels - 1] + rng.normal(size=(120, 16))
    prior = (np.zeros((3, 16), np.float32), np.zeros(3, np.float32))
    head = fit_head(x, labels, (1, 2, 3), prior, strength=1e-3)
    test = centres[[0, 1, 2]] + rng.normal(size=(3, 16)) * 0.5
    assert list(head.probabilities(test).argmax(axis=1)) == [0, 1, 2]


def test_a_strong_pull_keeps_a_head_near_its_prior() -> None:
    rng = np.random.default_rng(2)
    x = rng.normal(size=(60, 8))
    labels = np.where(x[:, 0] > 0, 1, 2)
    prior_w = np.zeros((2, 8), np.float32)
    prior_w[0, 1], prior_w[1, 1] = 5.0, -5.0  # the prior reads feature 1, the labels feature 0
    free = fit_head(x, labels, (1, 2), (prior_w, np.zeros(2, np.float32)), strength=1e-4)
    held = fit_head(x, labels, (1, 2), (prior_w, np.zeros(2, np.float32)), strength=100.0)
    assert abs(free.weights[0, 0]) > abs(held.weights[0, 0])
    assert np.allclose(held.weights, prior_w, atol=0.5)


def test_average_linkage_joins_the_nearest_first() -> None:
    points = np.array([0.0, 0.1, 0.2, 5.0, 5.1, 9.0])
    distance = np.abs(points[:, None] - points[None, :])
    groups = sorted(average_linkage(distance, 3))
    assert groups == [[0, 1, 2], [3, 4], [5]]
    assert average_linkage(np.zeros((0, 0)), 3) == []


@pytest.fixture(scope="module")
def numerals() -> Backbone:
    return Backbone(NETWORKS[Network.NUMERALS])


def test_crops_of_one_face_at_any_turn_fall_in_one_group(numerals: Backbone, tmp_path: Path) -> None:
    look = random_look(np.random.default_rng(4), "blue", "solid")
    values = tuple(int(v) for v in face_values("d20", np.random.default_rng(5)))
    crops, faces = [], []
    for i in range(24):
        face = (3, 11, 17)[i % 3]
        die = TrayDie("d20", face, "blue", "solid", False, look, values, 78.0)
        frame, _ref, labels = render_tray(100 + i, [die], (640, 480), style=TOWER)
        crops.append(crop_die(frame, labels[0].box, size=128))  # type: ignore[arg-type]
        faces.append(face)
    groups = group_crops(numerals, crops, 3, kind="d20")
    assert sorted(len(g) for g in groups) == [8, 8, 8]
    assert all(len({faces[i] for i in g}) == 1 for g in groups)
    sheet = contact_sheet(crops, groups, tmp_path / "sheet.png", "blue d20")
    assert cv2.imread(str(sheet)).shape[0] > 3 * 64


def test_the_held_back_share_is_the_latest_whole_photos() -> None:
    examples = [Example(line, Path(f"{line}.png"), None, 1) for line in (1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)]
    fitted, held = hold_back_split(examples, 0.3)
    assert {e.line for e in held} == {8, 9, 10} and {e.line for e in fitted} == set(range(1, 8))
    with pytest.raises(ValueError, match="between 0 and 1"):
        hold_back_split(examples, 1.0)


def test_each_kind_is_fitted_on_the_networks_that_read_it() -> None:
    assert backbone_for("d6").network is Network.PIPS and networks_for("d6") == (Network.PIPS,)
    assert backbone_for("d20").network is Network.NUMERALS
    assert networks_for("d20") == (Network.NUMERALS, Network.GLYPHS)
    assert networks_for("d12") == (Network.NUMERALS, Network.GLYPHS)  # numerals still


def test_the_median_of_thrown_dice_is_the_empty_tray() -> None:
    tray = np.full((60, 80, 3), 100, np.uint8)
    photos = []
    for i in range(7):
        p = tray.copy()
        p[5 + 6 * i : 12 + 6 * i, 10 + 8 * i : 18 + 8 * i] = 250  # a die somewhere else each time
        photos.append(p)
    assert np.array_equal(median_tray(photos), tray)
    assert median_tray(photos[:2]) is None


@pytest.fixture(scope="module")
def taught(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict]:
    pytest.importorskip("onnx", reason="writing a taught model needs onnx (the teach extra)")
    root = tmp_path_factory.mktemp("taught")
    dice = [("d6", "white"), ("d20", "blue")]
    teach = sim_folder(root / "teach", 150, 1, dice)
    read = sim_folder(root / "read", 20, 2, dice)
    result = fit_model(teach, root / "model", FitOptions(min_per_face=2, max_wrong=1.0))
    return read, root / "model", result.card


def test_a_fit_writes_a_card_with_held_back_figures(taught: tuple[Path, Path, dict]) -> None:
    _read, model_dir, card = taught
    assert {d["id"] for d in card["dice"]} == {"white d6", "blue d20"}
    for die in card["dice"]:
        f = die["figures"]
        assert f["right"] + f["wrong"] + f["unreadable"] == f["dice"] > 0
        assert 0.0 <= f["right_interval"][0] <= f["right_interval"][1] <= 1.0
        assert set(f["per_face"]) <= {str(v) for v in KINDS[die["kind"]].faces}
    assert (model_dir / "pips.onnx").is_file() and (model_dir / "numerals.onnx").is_file()
    on_disk = json.loads((model_dir / "taught.json").read_text())
    assert on_disk["held_back"] == card["held_back"]


def test_a_taught_model_reads_later_rolls_of_its_dice(taught: tuple[Path, Path, dict]) -> None:
    read, model_dir, _card = taught
    reader = open_taught_reader(model_dir)
    report = FolderReport("read")
    for result in evaluate_folder(read, reader):
        report.add(result)
    data = report.to_json()
    assert data["dice"] == 40
    # measured 32 of 40 right, none wrong: the rest unreadable (a d20 taught on 150 rolls is
    # sure of fewer of its faces than one taught on 300, bench/teach.py)
    assert data["correct"] >= 30, data
    assert data["wrong"] == 0, data


def test_a_taught_die_answers_only_with_its_own_faces(taught: tuple[Path, Path, dict]) -> None:
    read, model_dir, _card = taught
    model = TaughtModel(model_dir)
    d6 = model.die("white d6")
    frame = cv2.imread(str(next((read / "images").iterdir())))
    (r,) = model.read(d6, frame, [(0.0, 0.0, 40.0, 40.0)])  # a patch of bare tray
    assert r.face is None or r.face in range(1, 7)
    assert model.kinds() == {"d6", "d20"}


def _with_fallback(model: Path, out: Path, on: object) -> Path:
    """A copy of ``model`` whose numeral dice fall back on the general answer (or not) as ``on`` says."""
    shutil.copytree(model, out)
    card = json.loads((out / "taught.json").read_text(encoding="utf-8"))
    for die in card["dice"]:
        if die["kind"] != "d6":
            die["fallback"] = on
    (out / "taught.json").write_text(json.dumps(seal_card(card, out)), encoding="utf-8")
    return out


def test_a_card_whose_fallback_is_not_a_boolean_is_refused(
    taught: tuple[Path, Path, dict], tmp_path: Path
) -> None:
    _read, model_dir, _card = taught
    with pytest.raises(TaughtModelError, match="fallback must be true or false"):
        TaughtModel(_with_fallback(model_dir, tmp_path / "odd", "yes"))


def test_a_numeral_die_falls_back_on_the_general_answer_only_as_its_held_back_rolls_say(
    taught: tuple[Path, Path, dict],
) -> None:
    _read, _model_dir, card = taught
    for die in card["dice"]:  # the d6's general answer is the pip reader's own reading of it
        f = die["figures"]
        asked = f["fallback"]
        # asked about every die its head read below its threshold, end to end
        assert asked["asked"] == f["read_by_die"] - f["sure"]
        assert asked["right"] + asked["wrong"] <= asked["asked"]
        assert die["fallback"] is (asked["right"] > 0 and asked["wrong"] == 0)
    assert card["held_back_read"] == card["held_back"]


def _eval_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    from dicetower.firmware.cli import main

    assert main(["eval", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_eval_of_the_held_back_photos_prints_the_cards_counts(
    taught: tuple[Path, Path, dict], capsys: pytest.CaptureFixture[str]
) -> None:
    _read, model_dir, card = taught
    held = model_dir / card["held_back_photos"]["folder"]
    lines = (held / "manifest.jsonl").read_text().splitlines()
    assert len(lines) == card["held_back_photos"]["photos"] == 45  # the latest 30 % of 150 rolls
    report = _eval_json(capsys, str(held), "--taught", str(model_dir))
    h = card["held_back"]
    assert (report["dice"], report["correct"], report["wrong"]) == (h["dice"], h["right"], h["wrong"])
    assert (report["rejected"], report["missed"]) == (h["rejected"], h["missed"])
    assert report["rejected"] + report["missed"] == h["unreadable"]
    assert report["false_positives"] == h["false_finds"]
    for die in card["dice"]:  # each die alone: its kind's labels, read by the same model
        one = _eval_json(capsys, str(held), "--taught", str(model_dir), "--kinds", die["kind"])
        f = die["figures"]
        assert (one["dice"], one["correct"], one["wrong"]) == (f["dice"], f["right"], f["wrong"])
        assert one["rejected"] + one["missed"] == f["unreadable"]
        assert die["threshold"] >= 0.95


def test_the_general_answer_reads_only_dice_the_head_doubts(
    taught: tuple[Path, Path, dict], tmp_path: Path
) -> None:
    read, model_dir, _card = taught
    on = _with_fallback(model_dir, tmp_path / "on", True)
    off = _with_fallback(model_dir, tmp_path / "off", False)
    readers = {name: open_taught_reader(m) for name, m in (("on", on), ("off", off))}
    assert readers["on"].fallback is not None and readers["off"].fallback is None
    changed = 0
    for image in sorted((read / "images").iterdir()):
        frame = cv2.imread(str(image))
        a, b = readers["on"].read(frame), readers["off"].read(frame)
        for x, y in zip(a.dice, b.dice, strict=True):
            if (x.face, x.reason) != (y.face, y.reason):
                changed += 1
                assert y.face is None and x.face in range(1, 21)  # only a die the head left unread
        # drift sees the head's own confidences either way
        assert readers["on"].last_taught == readers["off"].last_taught


def test_the_general_answer_keeps_to_the_dice_faces_and_the_imaging_budget() -> None:
    general = open_reader(None, numerals=True)
    assert general.numerals is not None and general.glyphs is not None
    answer = GeneralAnswer(general.numerals, general.glyphs)
    answered = 0
    for seed in range(1, 13):
        face = 1 + (seed * 7) % 20
        frame, box = render_crop(seed, "d20", face)  # a d20 about 62 px across: under its 80 px budget
        assert answer.read(frame, [box], "d20", range(1, 21))[0].face is None
        big = cv2.resize(frame, None, fx=2.0, fy=2.0, interpolation=cv2.INTER_CUBIC)
        big_box = tuple(2.0 * v for v in box)
        (read,) = answer.read(big, [big_box], "d20", range(1, 21))
        answered += read.face is not None  # right or not: the fit's held-back rolls judge that
        (odd,) = answer.read(big, [big_box], "d20", (1, 3, 5))
        assert odd.face in (None, 1, 3, 5)
        assert answer.read(big, [big_box], "d10", range(10))[0].face is None  # the network names a d20
    assert answered >= 6  # the checks above are not empty: the general reader reads a d20 this size


def test_a_face_seen_too_rarely_is_refused_by_name(tmp_path: Path) -> None:
    folder = sim_folder(tmp_path / "few", 12, 3, [("d6", "red")])
    with pytest.raises(FitError, match=r"teach more rolls of the red d6: faces? .* seen fewer than 8 times"):
        fit_model(folder, tmp_path / "model", FitOptions())


def test_a_held_back_wrong_rate_that_could_be_high_is_refused(tmp_path: Path) -> None:
    pytest.importorskip("onnx")
    folder = sim_folder(tmp_path / "small", 30, 4, [("d6", "red")])
    with pytest.raises(FitError, match=r"held-back wrong rate could be .* teach more rolls"):
        fit_model(folder, tmp_path / "model", FitOptions(min_per_face=1))


def test_kinds_a_taught_reader_cannot_read_are_skipped_with_a_note(tmp_path: Path) -> None:
    folder = tmp_path / "mixed"
    (folder / "images").mkdir(parents=True)
    cv2.imwrite(str(folder / "images" / "a.png"), np.full((40, 40, 3), 90, np.uint8))
    with open(folder / "manifest.jsonl", "w") as fh:
        write_manifest_line(fh, "images/a.png", [LabelledDie("d4", 3), LabelledDie("d6", 2)])
    teaching = read_teaching_set(folder)
    assert [d.id for d in teaching.dice] == ["d6"]
    assert any("d4" in note and "corners" in note for note in teaching.notes)


def test_a_broken_taught_model_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(TaughtModelError, match=r"no taught\.json"):
        TaughtModel(tmp_path)
    (tmp_path / "taught.json").write_text('{"schema": "other"}')
    with pytest.raises(TaughtModelError, match=r"not a dicetower\.taught/1 card"):
        TaughtModel(tmp_path)
    card = {"schema": "dicetower.taught/1", "dice": [{"id": "x", "kind": "d6", "faces": [1, 9]}]}
    (tmp_path / "taught.json").write_text(json.dumps(card))
    with pytest.raises(TaughtModelError, match=r"dice\[0\]\.network: None is not one of"):
        TaughtModel(tmp_path)
    card["dice"][0]["network"] = "pips"
    (tmp_path / "taught.json").write_text(json.dumps(card))
    with pytest.raises(TaughtModelError, match=r"dice\[0\]\.faces: \[1, 9\] are not two or more of a d6's"):
        TaughtModel(tmp_path)


def test_grouping_refuses_too_many_crops(numerals: Backbone) -> None:
    frame, _box = render_crop(1, "d20", 5)
    with pytest.raises(ValueError, match="group at most"):
        group_crops(numerals, [frame] * 1501, 20)

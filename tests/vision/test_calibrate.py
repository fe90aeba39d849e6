"""A tower's own calibration (``dicetower calibrate``): the reader's thresholds chosen on its photos."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from dicetower.firmware.cli import main
from dicetower.vision.detector import MODEL_PATH
from dicetower.vision.eval.calibrate import (
    MIN_RIGHT_PER_FACE,
    Answers,
    ThresholdCalibrationError,
    calibrate,
    read_answers,
)
from dicetower.vision.faces.pips import D6Reader
from dicetower.vision.faces.thresholds import MARGIN, choose_reject_rate, in_gap, outcome_counts
from dicetower.vision.reader import open_reader
from dicetower.vision.synth.dataset import write_dataset
from dicetower.vision.view import View


def _answers(
    rows: list[tuple[int, int, float, int]], folders: tuple[str, ...] = ("a",), view: str = "oblique"
) -> Answers:
    """Answers from (label, read, confidence, folder) rows, all from frames seen ``view``."""
    a = Answers(folders)
    for label, pred, conf, group in rows:
        a.labels.append(label)
        a.pred.append(pred)
        a.conf.append(conf)
        a.groups.append(group)
        a.views.append(view)
    return a


def _right(per_face: int, low: float = 0.6, group: int = 0) -> list[tuple[int, int, float, int]]:
    return [(f, f, float(c), group) for f in range(1, 7) for c in np.linspace(low, 1.0, per_face)]


def test_a_face_read_right_too_rarely_gets_no_threshold() -> None:
    rows = [r for r in _right(20) if not (r[0] == 5 and r[2] < 0.9)]  # face 5 keeps 5 dice
    with pytest.raises(ThresholdCalibrationError, match=r"each face needs 10; 5: 5"):
        calibrate(_answers(rows))
    calibrate(_answers(_right(MIN_RIGHT_PER_FACE)))  # exactly enough is enough


def test_confident_wrong_faces_are_priced_out_and_counted_per_folder() -> None:
    # Folder a reads every face right (20 a face, p 0.6 .. 1.0); folder b reads the same and
    # three 1s as 2s at p 0.61, above the least sure right 2s (0.6).
    wrong = [(1, 2, 0.61, 1)] * 3
    answers = _answers([*_right(20), *_right(20, group=1), *wrong], ("a", "b"))
    cal = calibrate(answers)
    assert cal.thresholds[2] > 0.61  # the wrong 2s are rejected ...
    assert cal.outcomes["b"][1] == 0
    # ... and every face gives up the same share of its right answers to do it
    rejected_right = {
        f: sum(1 for c in np.linspace(0.6, 1.0, 20) if c < cal.thresholds[f]) for f in range(1, 7)
    }
    assert len(set(rejected_right.values())) == 1 and rejected_right[1] >= 1
    assert cal.outcomes["a"] == (120 - 6 * rejected_right[1], 0, 6 * rejected_right[1])
    assert cal.stats["groups"] == {"0": "a", "1": "b"}
    # Priced at nothing, a wrong face costs less than any re-roll: nothing is rejected.
    free = calibrate(answers, wrong_cost=0.0)
    assert free.stats["reject_rate_target"] == 0.0 and free.outcomes["b"] == (120, 3, 0)
    with pytest.raises(ThresholdCalibrationError, match="max_reject"):
        calibrate(answers, max_reject=1.5)
    with pytest.raises(ThresholdCalibrationError, match="wrong_cost"):
        calibrate(answers, wrong_cost=float("nan"))


def test_chosen_thresholds_stay_off_the_answers_so_another_machines_arithmetic_reads_them_alike() -> None:
    # Another machine computes each probability a little differently (~1e-4 for cv2.dnn). At
    # reject rate 0 the plain quantile sits *on* the least sure right answer of each face, so a
    # drift down rejects it; in_gap keeps every answer at least min(MARGIN, gap / 2) away.
    rng = np.random.default_rng(3)
    labels = rng.integers(1, 7, 400)
    pred = np.where(rng.random(400) < 0.08, rng.integers(1, 7, 400), labels)
    conf = np.where(pred == labels, rng.uniform(0.55, 1.0, 400), rng.uniform(0.3, 0.7, 400))
    groups = rng.integers(0, 2, 400)
    thr, stats = choose_reject_rate(conf, pred, labels, groups, wrong_cost=0.0)  # rate 0: on the answers
    assert stats["reject_rate_target"] == 0.0
    on_the_cut = {f: float(conf[(pred == f) & (labels == f)].min()) for f in range(1, 7)}
    assert all(thr[f] == pytest.approx(on_the_cut[f] - MARGIN) for f in range(1, 7))
    here = outcome_counts(conf, pred, labels, thr)
    for drift in (-MARGIN / 2, MARGIN / 2):
        assert outcome_counts(conf + drift, pred, labels, thr) == here
    # The plain cut is not so: the least sure right die of each face drops out at the first drift.
    assert outcome_counts(conf - 1e-6, pred, labels, on_the_cut)[0] == here[0] - 6
    # A gap narrower than twice the margin gets its middle, and nothing changes sides.
    narrow = in_gap({1: 0.8}, np.array([0.8, 0.7995, 0.9]), np.array([1, 1, 1]))
    assert narrow[1] == pytest.approx(0.79975)
    assert in_gap({2: 0.5}, np.array([0.4]), np.array([2])) == {2: 0.5}  # nothing taken: left alone


def test_a_views_thresholds_are_chosen_on_its_frames_and_the_others_keep_the_cards() -> None:
    # Top-down frames (folder a) read every face right; oblique ones (folder b) read three 1s as
    # 2s at p 0.95, which only the card's strict thresholds reject.
    top = _answers(_right(20), ("a", "b"), view="top_down")
    oblique = _answers([*_right(20, group=1), *[(1, 2, 0.95, 1)] * 3], ("a", "b"))
    both = Answers(("a", "b"))
    for part in (top, oblique):
        for name in ("conf", "pred", "labels", "groups", "views"):
            getattr(both, name).extend(getattr(part, name))
    card = dict.fromkeys(range(1, 7), 0.97)
    current = {"oblique": card, "top_down": dict.fromkeys(range(1, 7), 0.8)}
    cal = calibrate(both, view=View.TOP_DOWN, current=current)
    assert cal.view is View.TOP_DOWN
    # nothing wrong there: just under the least sure right die (MARGIN keeps it off the cut)
    assert cal.thresholds == pytest.approx(dict.fromkeys(range(1, 7), 0.6 - MARGIN), abs=1e-5)
    assert cal.outcomes["a"] == (120, 0, 0)
    kept = sum(1 for c in np.linspace(0.6, 1.0, 20) if c >= 0.97)  # b is read with the card's
    assert cal.outcomes["b"] == (6 * kept, 0, 120 - 6 * kept + 3)
    assert (
        cal.stats["view"] == "top_down"
        and cal.stats["dice"] == 120
        and cal.stats["kept_card_threshold"] == []
    )
    # A face read right too rarely in the view's frames keeps the view's current threshold
    # (no error) ...
    few = _answers([r for r in _right(20) if not (r[0] == 5 and r[2] < 0.9)], view="top_down")
    assert calibrate(few, view=View.TOP_DOWN, current=current).thresholds[5] == 0.8
    # ... but a view no frame was seen in, or a card without every view's thresholds, is refused.
    with pytest.raises(ThresholdCalibrationError, match="no frame of these photos is top_down"):
        calibrate(oblique, view=View.TOP_DOWN, current=current)
    with pytest.raises(ThresholdCalibrationError, match="for every view"):
        calibrate(top, view=View.TOP_DOWN, current={"top_down": card})


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of rendered, labelled tray photos in the manifest format (what the tower records)."""
    folder = tmp_path_factory.mktemp("recorded")
    write_dataset(folder, 24, 5, max_dice=12)
    return folder


def test_reading_answers_leaves_the_readers_thresholds_as_they_were(recorded: Path) -> None:
    reader = open_reader(None)
    before = dict(reader.faces.thresholds)
    answers = read_answers(reader, [recorded])
    assert reader.faces.thresholds == before
    assert answers.photos == 24 and len(answers.labels) > 100
    assert set(answers.pred) - {0} <= set(range(1, 7))  # every die gave its best class, thresholds at 0


def test_a_calibrated_card_reads_its_photos_as_calibrate_said(recorded: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "my-reader"
    assert main(["calibrate", str(recorded), "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    card = json.loads((out / "d6_reader.json").read_text())
    assert card["thresholds"] == summary["thresholds"]
    assert (
        card["calibrated_for"]["folders"] == [recorded.name] and card["calibrated_for"]["base"] == "shipped"
    )
    assert sorted(summary["written"]) == sorted(p.name for p in out.iterdir())
    assert D6Reader(out).thresholds == {int(f): v for f, v in summary["thresholds"].items()}
    # The card's thresholds differ from the shipped ones: they were chosen on these photos.
    assert D6Reader().thresholds != D6Reader(out).thresholds
    # Read end to end by eval with the card, the same photos give the same right and wrong counts.
    assert main(["eval", str(recorded), "--models", str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    in_sample = summary["in_sample"][recorded.name]
    assert (report["correct"], report["wrong"]) == (in_sample["right"], in_sample["wrong"])


def test_calibrate_view_top_down_adds_thresholds_for_those_frames_only(
    recorded: Path, tmp_path: Path, capsys
) -> None:
    out = tmp_path / "top-down"
    assert main(["calibrate", str(recorded), "--view", "top_down", "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    card = json.loads((out / "d6_reader.json").read_text())
    shipped = json.loads((MODEL_PATH.parent / "d6_reader.json").read_text())
    assert summary["view"] == "top_down"
    assert card["thresholds"] == shipped["thresholds"]  # every other frame: the card's, unchanged
    assert card["view"]["thresholds"]["top_down"] == summary["thresholds"]
    assert card["view"]["calibrated_for"]["folders"] == [recorded.name]
    assert card["view"]["calibrated_for"]["view_dice"] == card["view"]["calibration"]["dice"] > 100
    reader = D6Reader(out)
    assert reader.thresholds_for(View.TOP_DOWN) == {int(f): v for f, v in summary["thresholds"].items()}
    # Drawn trays are seen from above: eval with the card counts what calibrate counted.
    assert main(["eval", str(recorded), "--models", str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    in_sample = summary["in_sample"][recorded.name]
    assert (report["correct"], report["wrong"]) == (in_sample["right"], in_sample["wrong"])
    # Calibrated again without --view, the thresholds are for every frame: no view block is left.
    again = tmp_path / "every-frame"
    assert main(["calibrate", str(recorded), "--models", str(out), "--out", str(again)]) == 0
    assert "view" not in json.loads((again / "d6_reader.json").read_text())
    assert D6Reader(again).view_thresholds == {}


def test_calibrate_refuses_to_overwrite_models_or_a_folder_of_other_files(
    recorded: Path, tmp_path: Path, capsys
) -> None:
    shipped = MODEL_PATH.parent  # where the shipped reader and detector live
    assert main(["calibrate", str(recorded), "--out", str(shipped)]) == 1
    assert "would overwrite the models it calibrates" in capsys.readouterr().err
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    assert main(["calibrate", str(recorded), "--out", str(busy)]) == 1
    assert "holds other files (notes.txt)" in capsys.readouterr().err
    assert (busy / "notes.txt").read_text() == "mine" and not (busy / "d6_reader.json").exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--errata", "/nonexistent-errata"], "no such folder"),
        (["--models", "/nonexistent-models"], "holds neither d6_reader.onnx nor detector.onnx"),
        (["--max-reject", "1"], "max_reject is a share"),
        (["--wrong-cost", "inf"], "wrong_cost is a number"),
    ],
)
def test_calibrate_says_what_is_wrong_with_its_inputs(
    recorded: Path, tmp_path: Path, capsys, extra: list[str], message: str
) -> None:
    assert main(["calibrate", str(recorded), "--out", str(tmp_path / "o"), *extra]) == 1
    assert message in capsys.readouterr().err
    assert main(["calibrate", str(tmp_path), "--out", str(tmp_path / "o")]) == 1
    assert "no manifest.jsonl" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()  # nothing written on a refusal


def test_read_takes_a_calibrated_card(recorded: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "strict"
    # A card that rejects almost everything (thresholds at 1) tells a card that is used from one that is not.
    assert main(["calibrate", str(recorded), "--out", str(out)]) == 0
    card = json.loads((out / "d6_reader.json").read_text())
    for thresholds in (card["thresholds"], *card.get("view", {}).get("thresholds", {}).values()):
        thresholds.update(dict.fromkeys(thresholds, 1.0))  # every view's too
    (out / "d6_reader.json").write_text(json.dumps(card))
    photo = recorded / "images" / "scene_0000.png"
    capsys.readouterr()
    assert main(["read", str(photo), "--json"]) == 0
    shipped = json.loads(capsys.readouterr().out)
    assert main(["read", str(photo), "--json", "--models", str(out)]) == 0
    strict = json.loads(capsys.readouterr().out)
    assert any(d["status"] == "read" for d in shipped["dice"])
    assert all(d["status"] == "unreadable" for d in strict["dice"])
    assert len(strict["dice"]) == len(shipped["dice"])  # the same dice found, none taken
    assert main(["read", str(photo), "--models", str(tmp_path / "nothing")]) == 1
    assert "holds neither" in capsys.readouterr().err

"""``dicetower read`` and ``dicetower eval`` through ``main([...])``.

The reader is a stand-in defined here (installed as a module for ``--reader``) so that the
counts are known exactly; one test runs the classic baseline reader end to end on rendered
scenes, and the real reader is exercised by tests/vision/test_datasets.py.
"""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import cv2
import numpy as np
import pytest
from dicetower.firmware.cli import main
from dicetower.vision.manifest import LabelledDie, write_manifest_line
from dicetower.vision.reading import DieReading, Reading, ReadStatus, UnreadableReason
from dicetower.vision.synth import write_dataset

STANDIN = "standin_reader:StandIn"


def _die(x: float, y: float, face: int | None) -> DieReading:
    if face is None:
        return DieReading((x, y, 40, 40), "d6", None, ReadStatus.UNREADABLE, UnreadableReason.COCKED)
    return DieReading((x, y, 40, 40), "d6", face, ReadStatus.READ, confidence=0.8, colour="white")


#: What the stand-in "reads", keyed by photo width (each test photo has its own width).
ANSWERS: dict[int, tuple[DieReading, ...]] = {
    200: (_die(10, 10, 5), _die(100, 10, 2)),  # labels 5, 3: correct + wrong
    201: (_die(10, 10, None),),  # labels 6, 6: rejected + missed
    202: (_die(10, 10, 4), _die(100, 100, 1)),  # label 4: correct, + a false positive
}


class StandIn:
    """A reader whose answers are :data:`ANSWERS`."""

    def read(self, frame: np.ndarray, reference: np.ndarray | None = None, tray: object = None) -> Reading:
        h, w = frame.shape[:2]
        return Reading(ANSWERS.get(w, ()), w, h, timings_ms={"total": 1.0})


@pytest.fixture(autouse=True)
def standin(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("standin_reader")
    module.StandIn = StandIn  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "standin_reader", module)


def _dataset(folder: Path) -> Path:
    (folder / "images").mkdir(parents=True)
    labels = {
        200: [LabelledDie("d6", 5, (10, 10, 40, 40)), LabelledDie("d6", 3, (100, 10, 40, 40))],
        201: [LabelledDie("d6", 6, (10, 10, 40, 40)), LabelledDie("d6", 6, (100, 10, 40, 40))],
        202: [LabelledDie("d6", 4, (10, 10, 40, 40))],
    }
    with (folder / "manifest.jsonl").open("w") as fh:
        for w, dice in labels.items():
            img = np.full((150, w, 3), 100, np.uint8)
            cv2.imwrite(str(folder / f"images/p{w}.png"), img)
            write_manifest_line(fh, f"images/p{w}.png", dice)
    return folder


def test_eval_json_counts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _dataset(tmp_path / "hand-d6")
    assert main(["eval", str(folder), "--json", "--reader", STANDIN]) == 0
    (line,) = capsys.readouterr().out.strip().splitlines()
    d = json.loads(line)
    for key in (
        "dataset",
        "dice",
        "correct",
        "wrong",
        "rejected",
        "missed",
        "false_positives",
        "accuracy",
        "per_face",
        "median_ms",
        "confusion",
        "reject_ratio",
        "reject_bias_p",
        "groups",
        "accuracy_interval",
        "wrong_rate_upper",
    ):
        assert key in d
    assert d["dataset"] == "hand-d6"
    counts = [d[k] for k in ("dice", "correct", "wrong", "rejected", "missed", "false_positives")]
    assert counts == [5, 2, 1, 1, 1, 1]
    assert d["accuracy"] == pytest.approx(0.4)
    assert d["per_face"]["d6"]["6"]["reject_rate"] == pytest.approx(0.5)
    assert d["confusion"]["d6"]["3"] == {"2": 1}
    assert d["median_ms"] >= 0


def test_eval_text_and_several_folders(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = _dataset(tmp_path / "a"), _dataset(tmp_path / "b")
    assert main(["eval", str(a), "--json", "--reader", STANDIN]) == 0
    d = json.loads(capsys.readouterr().out)
    (lo, hi), upper = d["accuracy_interval"], d["wrong_rate_upper"]
    assert 0 <= lo < 0.4 < hi <= 1 and 0.2 < upper <= 1  # 5 dice say little
    assert main(["eval", str(a), str(b), "--reader", STANDIN]) == 0
    out = capsys.readouterr().out
    groups = f"{d['groups']} photo group{'s' if d['groups'] != 1 else ''}"
    correct = f"correct 2 (40.00%, 95% interval {100 * lo:.2f}% to {100 * hi:.2f}%, {groups})"
    assert out.count(f"5 dice | {correct} | wrong 1 (20.00%, at most {100 * upper:.2f}%)") == 2
    assert "d6 per face" in out


def test_eval_limit_and_kinds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _dataset(tmp_path / "x")
    assert main(["eval", str(folder), "--json", "--limit", "1", "--reader", STANDIN]) == 0
    assert json.loads(capsys.readouterr().out)["photos"] == 1
    assert main(["eval", str(folder), "--json", "--kinds", "d20", "--reader", STANDIN]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""  # no 0 % table for a folder with nothing to score
    assert "no photos to score" in captured.err


def test_eval_save_failures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _dataset(tmp_path / "x")
    out = tmp_path / "fails"
    assert main(["eval", str(folder), "--save-failures", str(out), "--reader", STANDIN]) == 0
    names = sorted(p.name for p in (out / "x").iterdir())
    # every photo had a failure: three annotated photos, a crop per failed die, one false positive
    assert names == sorted(
        [
            "images_p200.png",
            "images_p200_1_wrong_L3_R2.png",
            "images_p201.png",
            "images_p201_0_rejected_L6_Rrejected.png",
            "images_p201_1_missed_L6_Rmissed.png",
            "images_p202.png",
            "images_p202_fp0.png",
        ]
    )
    annotated = cv2.imread(str(out / "x" / "images_p200.png"))
    assert annotated.shape == (150, 200, 3) and annotated.std() > 0  # drawn on


def test_eval_split(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _dataset(tmp_path / "x")
    total = 0
    for split in ("train", "val", "test"):
        code = main(["eval", str(folder), "--json", "--split", split, "--reader", STANDIN])
        captured = capsys.readouterr()
        if code == 1:  # three photos over three splits: one may hold none, which is an error
            assert "no photos to score" in captured.err
            continue
        assert code == 0
        total += json.loads(captured.out)["photos"]
    assert total == 3


def test_eval_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", str(tmp_path), "--reader", STANDIN]) == 1
    assert "no manifest.jsonl" in capsys.readouterr().err
    folder = _dataset(tmp_path / "x")
    assert main(["eval", str(folder), "--reader", "nope"]) == 1
    assert "module:name" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["eval", str(folder), "--limit", "0"])
    with pytest.raises(SystemExit):
        main(["eval", str(folder), "--kinds", "dice"])
    (folder / "manifest.jsonl").write_text('{"image": 5}\n')
    assert main(["eval", str(folder), "--reader", STANDIN]) == 1
    assert "manifest.jsonl:1" in capsys.readouterr().err


def test_eval_baseline_reader_on_synthetic_scenes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_dataset(tmp_path / "synth", 3, seed=5, size=(320, 320), max_dice=3).parent
    classic = "dicetower.vision.eval.baseline:ClassicReader"
    assert main(["eval", str(folder), "--json", "--reader", classic]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["photos"] == 3 and d["dice"] + d["cocked"]["dice"] >= 3
    assert d["correct"] + d["wrong"] + d["rejected"] + d["missed"] == d["dice"]


def test_eval_models_reads_with_candidate_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--models DIR`` swaps in DIR's reader: one whose thresholds nothing reaches reads no die."""
    import shutil
    from importlib import resources

    folder = write_dataset(tmp_path / "synth", 4, seed=11, size=(320, 320), max_dice=3).parent
    assert main(["eval", str(folder), "--json"]) == 0
    shipped = json.loads(capsys.readouterr().out)
    assert shipped["correct"] > 0

    models = tmp_path / "candidate"
    models.mkdir()
    src = Path(str(resources.files("dicetower.vision") / "models"))
    shutil.copy(src / "d6_reader.onnx", models)
    card = json.loads((src / "d6_reader.json").read_text())
    card["thresholds"] = {str(f): 1.01 for f in range(1, 7)}
    card.pop("view", None)  # its top-down thresholds would read these drawn trays
    (models / "d6_reader.json").write_text(json.dumps(card))
    assert main(["eval", str(folder), "--json", "--models", str(models)]) == 0
    strict = json.loads(capsys.readouterr().out)
    assert strict["correct"] == 0 and strict["wrong"] == 0
    assert strict["rejected"] > 0


def test_eval_models_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _dataset(tmp_path / "x")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["eval", str(folder), "--models", str(empty)]) == 1
    assert "neither d6_reader.onnx nor detector.onnx" in capsys.readouterr().err
    assert main(["eval", str(folder), "--models", str(empty), "--reader", STANDIN]) == 1
    assert "cannot be combined" in capsys.readouterr().err
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "detector.onnx").write_bytes(b"not an onnx file")
    assert main(["eval", str(folder), "--models", str(broken)]) == 1
    assert "cannot load detector model" in capsys.readouterr().err


# --- read ------------------------------------------------------------------------------------


def test_read_text_json_and_annotate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    photo = tmp_path / "roll.png"
    cv2.imwrite(str(photo), np.full((150, 201, 3), 100, np.uint8))
    assert main(["read", str(photo), "--reader", STANDIN]) == 0
    out = capsys.readouterr().out
    assert out.startswith("1 dice: - (1 unreadable)") and "unreadable (cocked)" in out
    photo2 = tmp_path / "roll2.png"
    cv2.imwrite(str(photo2), np.full((150, 200, 3), 100, np.uint8))
    ann = tmp_path / "ann.png"
    assert main(["read", str(photo2), "--json", "--annotate", str(ann), "--reader", STANDIN]) == 0
    d = json.loads(capsys.readouterr().out)
    assert [x["face"] for x in d["dice"]] == [5, 2] and d["image"] == str(photo2) and d["load_scale"] == 1.0
    drawn = cv2.imread(str(ann))
    assert drawn.shape == (150, 200, 3) and not np.array_equal(drawn, np.full_like(drawn, 100))


def test_read_empty_tray(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    photo = tmp_path / "empty.png"
    cv2.imwrite(str(photo), np.full((100, 300, 3), 100, np.uint8))
    assert main(["read", str(photo), "--reader", STANDIN]) == 0
    assert "no dice found" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("content", "message"),
    [(b"", "empty file"), (b"hello", "not an image"), (b"\xff\xd8\xff\xe0\x00\x10JFIF", "truncated JPEG")],
)
def test_read_bad_image_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, message: str
) -> None:
    photo = tmp_path / "bad.jpg"
    photo.write_bytes(content)
    assert main(["read", str(photo), "--reader", STANDIN]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("dicetower: error:")
    assert message in err[0] and "bad.jpg" in err[0]


def test_read_missing_file_and_bad_annotate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["read", str(tmp_path / "nope.jpg"), "--reader", STANDIN]) == 1
    assert "nope.jpg" in capsys.readouterr().err
    photo = tmp_path / "ok.png"
    cv2.imwrite(str(photo), np.full((100, 100, 3), 100, np.uint8))
    assert main(["read", str(photo), "--annotate", str(tmp_path / "out.txt"), "--reader", STANDIN]) == 1
    assert "--annotate needs" in capsys.readouterr().err


def test_eval_errata_scores_against_corrections_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _dataset(tmp_path / "x")
    errata = tmp_path / "errata"
    errata.mkdir()
    # The stand-in reads p200's second die as 2 (labelled 3): a person finds the label wrong.
    fix = {"image": "images/p200.png", "die": 1, "label": 3, "face": 2, "why": "two pips, plainly"}
    (errata / "x.jsonl").write_text(json.dumps(fix) + "\n")
    assert main(["eval", str(folder), "--json", "--reader", STANDIN]) == 0
    before = json.loads(capsys.readouterr().out)
    assert "labels_corrected" not in before
    assert main(["eval", str(folder), "--json", "--reader", STANDIN, "--errata", str(errata)]) == 0
    after = json.loads(capsys.readouterr().out)
    assert (before["correct"], before["wrong"]) == (2, 1)
    assert (after["correct"], after["wrong"], after["labels_corrected"]) == (3, 0, 1)
    assert main(["eval", str(folder), "--reader", STANDIN, "--errata", str(errata)]) == 0
    assert "labels corrected by errata: 1" in capsys.readouterr().out
    (errata / "x.jsonl").write_text(json.dumps({**fix, "label": 4}) + "\n")
    assert main(["eval", str(folder), "--reader", STANDIN, "--errata", str(errata)]) == 1
    assert "the manifest changed" in capsys.readouterr().err
    assert main(["eval", str(folder), "--reader", STANDIN, "--errata", str(tmp_path / "typo")]) == 1
    assert "no such folder" in capsys.readouterr().err


def test_eval_reads_numeral_dice_when_the_labels_hold_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A folder of d20 photos is read with kinds on without --numerals, and says so."""
    from dicetower.vision.synth.numerals import render_crop

    folder = tmp_path / "d20s"
    (folder / "images").mkdir(parents=True)
    frame, box = render_crop(3_000_020, "d20", 20)
    cv2.imwrite(str(folder / "images/a.png"), frame)
    with (folder / "manifest.jsonl").open("w") as fh:
        write_manifest_line(fh, "images/a.png", [LabelledDie("d20", 20, tuple(float(v) for v in box))])
    assert main(["eval", str(folder), "--json"]) == 0
    captured = capsys.readouterr()
    assert "the labels hold d20: reading with --numerals" in captured.err
    report = json.loads(captured.out)
    assert report["missed"] == 0 and report["wrong"] == 0  # the die is found whole, never read as a pip d6
    assert main(["eval", str(_dataset(tmp_path / "d6s")), "--json", "--reader", STANDIN]) == 0
    assert "--numerals" not in capsys.readouterr().err

"""The fitted face reader: trained per taught die, chosen on the held-back photos, read by cv2.dnn."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest
from dicetower.firmware.cli import main
from dicetower.vision.dnn import load_onnx
from dicetower.vision.taught import fitted_training
from dicetower.vision.taught.card import seal_card
from dicetower.vision.taught.features import TaughtModelError
from dicetower.vision.taught.fit import FitOptions, fit_model
from dicetower.vision.taught.fitted import FITTED_INPUT, fitted_blob, fitted_file, is_fitted_file
from dicetower.vision.taught.model import TaughtModel
from teach_helpers import sim_folder

DICE = [("d6", "white"), ("d10", "red")]


def test_a_fitted_readers_file_is_named_by_the_dies_index() -> None:
    assert fitted_file(3) == "fitted-3.onnx"
    assert is_fitted_file("fitted-3.onnx", 64) and not is_fitted_file("fitted-64.onnx", 64)
    for name in ("fitted-03.onnx", "fitted-.onnx", "fitted-x.onnx", "fitted-1.onnx.tmp", "pips.onnx"):
        assert not is_fitted_file(name, 64), name


def test_each_crop_is_standardised_on_its_own() -> None:
    dark = np.full((FITTED_INPUT, FITTED_INPUT, 3), 40, np.uint8)
    dark[10:30, 10:30] = 80
    bright = (dark.astype(np.int32) * 3).astype(np.uint8)  # the same die in three times the light
    blob = fitted_blob([dark, bright])
    assert blob.shape == (2, 3, FITTED_INPUT, FITTED_INPUT) and blob.dtype == np.float32
    assert np.allclose(blob[0], blob[1], atol=0.15)
    assert np.isfinite(fitted_blob([np.zeros((FITTED_INPUT, FITTED_INPUT, 3), np.uint8)])).all()


def test_the_augmented_crops_are_the_reading_crop_turned() -> None:
    """At no turn, scale or shift, the middle of the padded crop is the crop reading takes."""
    frame = np.zeros((200, 200, 3), np.uint8)
    cv2.rectangle(frame, (80, 70), (120, 130), (255, 255, 255), -1)
    box = (70.0, 60.0, 60.0, 80.0)
    padded = fitted_training.padded_crop(frame, box)
    assert padded.shape == (fitted_training.STORED, fitted_training.STORED, 3)
    lo = (fitted_training.STORED - FITTED_INPUT) // 2
    from dicetower.vision.taught.fitted import fitted_crops

    (reading,) = fitted_crops(frame, box, (0.0,))
    middle = padded[lo : lo + FITTED_INPUT, lo : lo + FITTED_INPUT]
    assert np.abs(middle.astype(int) - reading.astype(int)).mean() < 8
    drawn = fitted_training.augment(np.stack([padded] * 4), np.random.default_rng(0))
    assert drawn.shape == (4, FITTED_INPUT, FITTED_INPUT, 3) and drawn.dtype == np.uint8
    assert len({d.tobytes() for d in drawn}) == 4  # each drawn anew


def test_not_a_die_patches_keep_clear_of_every_die() -> None:
    dice = [(100.0, 100.0, 40.0, 40.0), (300.0, 200.0, 50.0, 40.0)]
    rng = np.random.default_rng(3)
    patches = fitted_training.background_boxes((480, 640, 3), dice, 45.0, rng, count=30)
    assert len(patches) == 30
    for x, y, w, h in patches:
        assert 0 <= x <= 640 - w and 0 <= y <= 480 - h and w == h == 45.0
        for dx, dy, dw, dh in dice:
            apart = np.hypot(x + w / 2 - dx - dw / 2, y + h / 2 - dy - dh / 2)
            assert apart > 0.9 * (45.0 + max(dw, dh))
    assert fitted_training.background_boxes((40, 40, 3), dice, 45.0, rng) == []  # no room


def _small_training(monkeypatch: pytest.MonkeyPatch, steps: int) -> None:
    monkeypatch.setattr(fitted_training, "MIN_STEPS", steps)
    monkeypatch.setattr(fitted_training, "MAX_STEPS", steps)


def test_the_same_crops_train_the_same_reader_and_cv2_reads_it(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("onnxscript")
    _small_training(monkeypatch, 12)
    rng = np.random.default_rng(0)
    size = fitted_training.STORED
    crops = rng.integers(0, 255, (30, size, size, 3), dtype=np.uint8)
    labels = rng.integers(0, 3, 30)
    a = fitted_training.train_reader(crops, labels, 3)
    b = fitted_training.train_reader(crops, labels, 3)
    assert a.onnx == b.onnx and a.steps == 12 and not a.capped
    assert len(a.onnx) < 400_000  # a small network
    net = load_onnx(a.onnx)
    net.setInput(fitted_blob(crops[:5, 12:60, 12:60]))
    assert np.asarray(net.forward()).shape == (5, 3)


def test_training_stops_at_its_time_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("onnxscript")
    _small_training(monkeypatch, 50)
    size = fitted_training.STORED
    crops = np.random.default_rng(1).integers(0, 255, (20, size, size, 3), dtype=np.uint8)
    trained = fitted_training.train_reader(crops, np.arange(20) % 2, 2, time_cap=0.0)
    assert trained.capped and trained.steps == 1 and trained.to_json()["stopped_by_time_cap"]


def test_bad_training_input_is_refused() -> None:
    size = fitted_training.STORED
    with pytest.raises(ValueError, match="crops and labels"):
        fitted_training.train_reader(np.zeros((0, size, size, 3), np.uint8), np.zeros(0), 2)


@pytest.fixture(scope="module")
def fitted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """``teach fit`` of a white d6 and a red d10, with torch: each die trains a fitted reader."""
    pytest.importorskip("onnx", reason="writing a taught model needs onnx (the teach extra)")
    pytest.importorskip("torch")
    pytest.importorskip("onnxscript")
    root = tmp_path_factory.mktemp("fitted")
    teach = sim_folder(root / "teach", 90, 4, DICE)
    with pytest.MonkeyPatch.context() as mp:
        _small_training(mp, 150)
        options = FitOptions(min_per_face=2, max_wrong=1.0, fitted_readers=True)
        result = fit_model(teach, root / "model", options)
    return root / "model", result.card


def test_the_fit_trains_writes_and_chooses_a_fitted_reader_per_die(fitted: tuple[Path, dict]) -> None:
    model_dir, card = fitted
    assert set(card["fitted_readers"]["trained"]) == {"white d6", "red d10"}
    assert card["fitted_readers"]["why_none"] is None
    for i, die in enumerate(card["dice"]):
        assert die["fitted"] == f"fitted-{i}.onnx" and die["fitted"] in card["files"]
        readers = die["figures"]["readers"]
        assert die["reader"] == readers["chosen"] in ("head", "fitted")
        head, mine = readers["head"], readers["fitted"]
        assert head["dice"] == mine["dice"] == die["figures"]["dice"]
        # the chosen one reads the most held-back dice right, fewest wrong first
        best = max((head, mine), key=lambda s: (-s["wrong"], s["right"]))
        assert (readers[readers["chosen"]]["right"], readers[readers["chosen"]]["wrong"]) == (
            best["right"],
            best["wrong"],
        )
        assert str(head["right"]) in readers["why"] and str(mine["right"]) in readers["why"]
        assert die["threshold"] == readers[die["reader"]]["threshold"]
    model = TaughtModel(model_dir)
    assert all(model.has_fitted(d) for d in model.dice)


def test_eval_of_the_held_back_photos_prints_the_cards_counts_whatever_reader_won(
    fitted: tuple[Path, dict], capsys: pytest.CaptureFixture[str]
) -> None:
    model_dir, card = fitted
    held = model_dir / card["held_back_photos"]["folder"]
    assert main(["eval", str(held), "--taught", str(model_dir), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    h = card["held_back"]
    assert (report["dice"], report["correct"], report["wrong"]) == (h["dice"], h["right"], h["wrong"])
    assert report["rejected"] + report["missed"] == h["unreadable"]
    for die in card["dice"]:
        assert main(["eval", str(held), "--taught", str(model_dir), "--kinds", die["kind"], "--json"]) == 0
        one = json.loads(capsys.readouterr().out)
        f = die["figures"]
        assert (one["dice"], one["correct"], one["wrong"]) == (f["dice"], f["right"], f["wrong"])


def test_the_fitted_reader_reads_a_die_through_cv2_dnn(fitted: tuple[Path, dict]) -> None:
    model_dir, _card = fitted
    model = TaughtModel(model_dir)
    held = model_dir / "held-back"
    line = json.loads((held / "manifest.jsonl").read_text().splitlines()[0])
    frame = cv2.imread(str(held / line["image"]))
    boxes = []
    for label in line["dice"]:
        die = next(d for d in model.dice if d.kind == label["die"])
        box = tuple(label["box"])
        boxes.append(box)
        (got,) = model.read(die, frame, [box], reader="fitted")
        assert 0.0 < got.confidence <= 1.0
        assert got.face is None or got.face in die.faces
    bare = fitted_training.background_boxes(frame.shape, boxes, 40.0, np.random.default_rng(0), count=5)
    for die in model.dice:  # bare tray: "not a die", so no face is sure
        assert all(r.face is None for r in model.read(die, frame, bare, reader="fitted"))


def _resealed(model_dir: Path, out: Path, edit) -> Path:  # type: ignore[no-untyped-def]
    shutil.copytree(model_dir, out)
    card = json.loads((out / "taught.json").read_text(encoding="utf-8"))
    edit(card, out)
    (out / "taught.json").write_text(json.dumps(seal_card(card, out)), encoding="utf-8")
    return out


def test_a_tampered_fitted_reader_is_refused(fitted: tuple[Path, dict], tmp_path: Path) -> None:
    model_dir, _card = fitted
    changed = tmp_path / "changed"
    shutil.copytree(model_dir, changed)
    data = bytearray((changed / "fitted-0.onnx").read_bytes())
    data[-1] ^= 1
    (changed / "fitted-0.onnx").write_bytes(bytes(data))
    with pytest.raises(TaughtModelError, match=r"fitted-0\.onnx: does not match files\.fitted-0\.onnx"):
        TaughtModel(changed)
    gone = tmp_path / "gone"
    shutil.copytree(model_dir, gone)
    (gone / "fitted-1.onnx").unlink()
    with pytest.raises(TaughtModelError, match=r"fitted-1\.onnx is missing"):
        TaughtModel(gone)
    stray = tmp_path / "stray"
    shutil.copytree(model_dir, stray)
    shutil.copyfile(model_dir / "fitted-0.onnx", stray / "fitted-5.onnx")
    with pytest.raises(TaughtModelError, match=r"fitted-5\.onnx is in the folder but not on the card"):
        TaughtModel(stray)


def test_a_card_naming_a_fitted_reader_it_cannot_use_is_refused(
    fitted: tuple[Path, dict], tmp_path: Path
) -> None:
    model_dir, _card = fitted

    def swap(card: dict, _out: Path) -> None:  # the d6's file read as the d10's: 6 faces for 10
        first, second = card["dice"][0], card["dice"][1]
        first["fitted"], second["fitted"] = second["fitted"], first["fitted"]

    with pytest.raises(TaughtModelError, match=r"dice\[\d\]\.fitted: fitted-\d\.onnx answers \d+ faces"):
        TaughtModel(_resealed(model_dir, tmp_path / "swapped", swap))

    def no_file(card: dict, out: Path) -> None:
        card["dice"][0]["fitted"] = None
        card["dice"][0]["reader"] = "fitted"
        (out / "fitted-0.onnx").unlink()

    with pytest.raises(TaughtModelError, match=r"dice\[0\]\.reader: 'fitted', but the die has no fitted"):
        TaughtModel(_resealed(model_dir, tmp_path / "none", no_file))

    def odd(card: dict, _out: Path) -> None:
        card["dice"][0]["reader"] = "guess"

    with pytest.raises(TaughtModelError, match=r"dice\[0\]\.reader: 'guess' is not one of"):
        TaughtModel(_resealed(model_dir, tmp_path / "odd", odd))


def test_without_torch_the_fit_keeps_the_heads_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("onnx", reason="writing a taught model needs onnx (the teach extra)")
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch raises ImportError
    teach = sim_folder(tmp_path / "teach", 40, 5, [("d6", "white")])
    notes: list[str] = []
    options = FitOptions(min_per_face=2, max_wrong=1.0, fitted_readers=True)
    result = fit_model(teach, tmp_path / "model", options, log=notes.append)
    why = result.card["fitted_readers"]["why_none"]
    assert why is not None and "torch is not installed" in why and "teach-net" in why
    assert any("no fitted readers: torch is not installed" in n for n in notes)
    (die,) = result.card["dice"]
    assert die["reader"] == "head" and die["fitted"] is None and "readers" not in die["figures"]
    assert not list((tmp_path / "model").glob("fitted-*.onnx"))
    TaughtModel(tmp_path / "model")


def test_the_fitted_reader_is_trained_only_when_asked(tmp_path: Path) -> None:
    pytest.importorskip("onnx", reason="writing a taught model needs onnx (the teach extra)")
    teach = sim_folder(tmp_path / "teach", 40, 5, [("d6", "white")])
    result = fit_model(teach, tmp_path / "model", FitOptions(min_per_face=2, max_wrong=1.0))
    assert result.card["fitted_readers"]["why_none"] == "not asked for (teach fit --fitted-reader)"
    assert [die["reader"] for die in result.card["dice"]] == ["head"]
    assert not list((tmp_path / "model").glob("fitted-*.onnx"))

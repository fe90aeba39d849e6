"""Photos without boxes are located before they teach; a folder is taken as crops only when it is one."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from dicetower.firmware.cli import main
from dicetower.vision.manifest import LabelledDie, write_manifest_line
from dicetower.vision.reader import open_reader
from dicetower.vision.taught.located import CROP_MAX_SIDE, locate_examples
from dicetower.vision.taught.teaching import read_teaching_set
from teach_helpers import sim_folder


def _photos(folder: Path) -> dict[Path, tuple[np.ndarray, float]]:
    return {p: (cv2.imread(str(p)), 1.0) for p in (folder / "images").iterdir()}


def _append(folder: Path, name: str, frame: np.ndarray, dice: list[LabelledDie]) -> None:
    cv2.imwrite(str(folder / "images" / name), frame)
    with open(folder / "manifest.jsonl", "a", encoding="utf-8") as fh:
        write_manifest_line(fh, f"images/{name}", dice)


def test_a_photo_without_a_box_is_located_at_its_one_die(tmp_path: Path) -> None:
    folder = sim_folder(tmp_path / "unboxed", 6, 3, [("d6", "white")], boxes=False)
    boxed = sim_folder(tmp_path / "boxed", 6, 3, [("d6", "white")])
    empty = np.full((360, 480, 3), 118, np.uint8)
    _append(folder, "empty.png", empty, [LabelledDie("d6", 3, colour="white")])
    two = cv2.imread(str(folder / "images" / "roll-00000.png"))
    _append(
        folder, "two.png", two, [LabelledDie("d6", 3, colour="white"), LabelledDie("d6", 4, colour="white")]
    )
    teaching = read_teaching_set(folder)
    form = locate_examples(teaching, _photos(folder), crops=False, locate=lambda: open_reader(None).read)
    assert form.form == "photos"
    assert form.refused == {"no die found": 1, "labels more than one die without a box": 1}
    assert form.located == 6 and "refused 2" in str(form.note())
    truth = {e.image.name: e.box for e in read_teaching_set(boxed).dice[0].examples}
    for e in teaching.dice[0].examples:
        assert e.box is not None
        tx, ty, tw, th = truth[e.image.name]  # type: ignore[misc]
        x, y, w, h = e.box
        assert abs((x + w / 2) - (tx + tw / 2)) < tw / 4 and abs((y + h / 2) - (ty + th / 2)) < th / 4


def test_a_folder_of_crops_is_taken_as_crops_when_crop_sized_or_told(tmp_path: Path) -> None:
    folder = tmp_path / "crops"
    (folder / "images").mkdir(parents=True)
    for n in range(3):
        _append(
            folder, f"c{n}.png", np.full((90, CROP_MAX_SIDE, 3), 200, np.uint8), [LabelledDie("d6", n + 1)]
        )

    def never() -> None:
        raise AssertionError("crops are not located")

    form = locate_examples(read_teaching_set(folder), _photos(folder), crops=False, locate=never)  # type: ignore[arg-type]
    assert (form.form, form.located) == ("crops", 0) and f"{CROP_MAX_SIDE} px" in form.why
    _append(folder, "big.png", np.full((90, CROP_MAX_SIDE + 1, 3), 200, np.uint8), [LabelledDie("d6", 4)])
    told = locate_examples(read_teaching_set(folder), _photos(folder), crops=True, locate=never)  # type: ignore[arg-type]
    assert told.form == "crops" and "--crops" in told.why
    teaching = read_teaching_set(folder)
    assert all(e.box is None for e in teaching.dice[0].examples)  # a crop is its whole image


@pytest.fixture(scope="module")
def unboxed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, str]:
    """``teach fit`` on photos of one white d6 with no boxes; the last photo, held back, shows bare tray."""
    pytest.importorskip("onnx", reason="writing a taught model needs onnx (the teach extra)")
    root = tmp_path_factory.mktemp("unboxed")
    folder = sim_folder(root / "teach", 80, 5, [("d6", "white")], boxes=False)
    _append(folder, "bare.png", np.full((360, 480, 3), 118, np.uint8), [LabelledDie("d6", 2, colour="white")])
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(io.StringIO()):
        limits = ["--min-per-face", "2", "--max-wrong", "1"]
        assert main(["teach", "fit", str(folder), "--out", str(root / "model"), *limits]) == 0
    card = json.loads((root / "model" / "taught.json").read_text(encoding="utf-8"))
    return root / "model", card, printed.getvalue()


def test_a_fit_on_photos_without_boxes_says_so_and_counts_the_die_not_found(
    unboxed: tuple[Path, dict, str], capsys: pytest.CaptureFixture[str]
) -> None:
    model, card, printed = unboxed
    assert f"dicetower eval {model / 'held-back'} --taught {model}" in printed
    assert f"{card['held_back']['missed']} not found" in printed
    assert card["input"]["form"] == "photos" and card["input"]["located"] >= 70
    held = card["held_back"]
    assert held["missed"] >= 1  # the bare-tray photo: its die is not found, so not right
    assert held["right"] + held["wrong"] + held["rejected"] + held["missed"] == held["dice"] == 25
    assert main(["eval", str(model / "held-back"), "--taught", str(model), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["correct"], report["wrong"], report["rejected"], report["missed"]) == (
        held["right"],
        held["wrong"],
        held["rejected"],
        held["missed"],
    )
    die = card["dice"][0]["figures"]
    assert die["missed"] == held["missed"] and die["right_interval"][1] < 1.0


def test_the_photo_store_keeps_a_few_decoded_and_skips_the_unreadable(tmp_path: Path) -> None:
    from dicetower.vision.taught.photo_store import PhotoStore

    paths = []
    for n in range(5):
        path = tmp_path / f"p{n}.png"
        cv2.imwrite(str(path), np.full((20, 30, 3), 40 * n, np.uint8))
        paths.append(path)
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"not a photo")
    store = PhotoStore([*paths, broken], keep=2)
    assert store.bad == 1 and list(store) == paths and broken not in store and store.get(broken) is None
    assert len(store._kept) == 2  # only the last two decoded are held
    frame, scale = store[paths[0]]  # decoded again on use, the same pixels
    assert scale == 1.0 and int(frame[0, 0, 0]) == 0 and len(store._kept) == 2
    assert int(store[paths[4]][0][0, 0, 0]) == 160
    with pytest.raises(ValueError, match="keep"):
        PhotoStore(paths, keep=0)

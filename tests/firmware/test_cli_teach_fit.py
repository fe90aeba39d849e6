"""``dicetower teach fit`` checks, before its minutes of work, what the fit would refuse at its end."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import cv2
import numpy as np
import pytest
from dicetower.firmware.cli import main
from dicetower.vision.eval.intervals import binomial_upper
from dicetower.vision.manifest import LabelledDie, write_manifest_line
from dicetower.vision.taught.enough import held_back_photos
from dicetower.vision.taught.ready import fit_readiness


def labelled(folder: Path, faces: list[list[tuple[str, str, int]]]) -> Path:
    """A labelled folder: one line a roll, each die ``(kind, colour, face)``; one small photo for all."""
    (folder / "images").mkdir(parents=True)
    cv2.imwrite(str(folder / "images" / "tray.png"), np.full((48, 64, 3), 90, np.uint8))
    with open(folder / "manifest.jsonl", "w", encoding="utf-8") as fh:
        for roll in faces:
            dice = [LabelledDie(k, f, (4.0, 4.0, 20.0, 20.0), colour=c) for k, c, f in roll]
            write_manifest_line(fh, "images/tray.png", dice)
    return folder


def test_a_folder_short_of_rolls_is_refused_at_once_with_the_rolls_each_die_needs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rolls = [[("d6", "red", 1 + n % 6), ("d20", "blue", 1 + n % 20)] for n in range(60)]
    folder = labelled(tmp_path / "few", rolls)
    t0 = time.perf_counter()
    rc = main(["teach", "fit", str(folder), "--out", str(tmp_path / "model")])
    seconds = time.perf_counter() - t0
    err = capsys.readouterr().err
    assert rc == 1 and seconds < 30, err  # a fit reads every photo for minutes
    # 60 rolls hold back 18 photos, 36 dice; 1 % takes 299 with none wrong: 150 photos, 497 rolls
    assert held_back_photos(60, 0.3) == 18 and binomial_upper(0, 299) <= 0.01 < binomial_upper(0, 298)
    assert "dicetower: red d6: too few held-back dice for the wrong-rate bound: roll about 437 more" in err
    assert (
        "dicetower: blue d20: faces 1 (3), 2 (3)" in err
        and "named fewer than 8 times; too few held-back" in err
    )
    assert err.rstrip().splitlines()[-1] == (
        "dicetower: error: teach more rolls before fitting: the blue d20 about 437, the red d6 about 437 "
        f"more; the fit holds back 36 dice and showing at most 1.0% wrong takes 299 (dicetower teach collect "
        f"--tower config --rolls N --out {folder} carries on, its new crops joining the named groups)"
    )
    assert "fitting the" not in err and not (tmp_path / "model").exists()  # no work done, nothing written


def test_the_rolls_a_die_short_of_faces_needs_come_before_the_bound(tmp_path: Path) -> None:
    rolls = [[("d20", "blue", 1 + n % 10)] for n in range(40)]  # faces 11-20 never named
    folder = labelled(tmp_path / "half", rolls)
    ready = fit_readiness(folder, hold_back=0.3, min_per_face=4, max_wrong=1.0)
    (die,) = ready.dice
    assert die.short == dict.fromkeys(range(11, 21), 0) and die.rolls_for_bound == 0
    assert 80 <= die.rolls_for_faces <= 400 and not ready.ready  # 40 named of each missing face
    assert ready.summary().startswith(
        f"teach more rolls before fitting: the blue d20 about {die.rolls_for_faces} more ("
    )
    seen = fit_readiness(
        tmp_path / "half", hold_back=0.3, min_per_face=4, max_wrong=1.0, seen_faces_only=True
    )
    assert seen.ready and seen.summary() == f"{tmp_path / 'half'}: ready to fit"


def test_without_the_teach_extra_fit_says_what_to_install_before_anything_else(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = labelled(tmp_path / "f", [[("d6", "red", 1 + n % 6)] for n in range(12)])
    monkeypatch.setitem(sys.modules, "onnx", None)  # as on a Pi installed without [teach]
    assert main(["teach", "fit", str(folder), "--out", str(tmp_path / "model")]) == 1
    assert capsys.readouterr().err == (
        "dicetower: error: teach fit needs the teach extra: pip install 'dicetower[teach]' "
        "(missing: onnx (writes the taught networks))\n"
    )
    assert not (tmp_path / "model").exists()

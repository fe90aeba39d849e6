"""The ratio-noise study simulates the eval's own reject ratio for an unbiased (or biased) reader."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from dicetower.vision.eval.evaluate import reject_ratio, reject_ratios
from dicetower.vision.training.d6.ratio_noise import face_counts, main, pass_rate


def _manifest(folder: Path, faces: list[int]) -> Path:
    folder.mkdir(parents=True)
    lines = [{"image": f"images/{i}.jpg", "dice": [{"die": "d6", "face": f}]} for i, f in enumerate(faces)]
    lines.append({"image": "images/d20.jpg", "dice": [{"die": "d20", "face": 20}]})
    lines.append({"image": "images/lean.jpg", "dice": [{"die": "d6", "face": 4, "cocked": True}]})
    (folder / "manifest.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return folder


def test_face_counts_come_from_the_labels_of_the_kinds_asked_cocked_dice_apart(tmp_path: Path) -> None:
    folder = _manifest(tmp_path / "set", [1, 1, 2, 6, 6, 6])
    assert face_counts(folder, None, ["d6"]) == {"1": 2, "2": 1, "6": 3}
    assert face_counts(folder, None, ["d20"]) == {"20": 1}


def test_pass_rate_matches_the_evals_ratio_and_falls_as_rejects_rise() -> None:
    counts = [30] * 6
    rng = np.random.default_rng(1)
    # Almost no rejects: every face sits at the 1 % floor, so the ratio is 1 and passes.
    assert pass_rate(counts, 1e-6, 1.5, 2000, rng) == 1.0
    # One reject among 30 dice is a 3.3 % rate, 3.3x the floor: at 5 % overall, nearly always over 1.5.
    assert pass_rate(counts, 0.05, 1.5, 2000, rng) < 0.05
    # A loose line passes what a tight one fails.
    assert pass_rate(counts, 0.05, 50.0, 2000, rng) == 1.0
    # The simulated ratio is the eval's: one reject in 30 dice of one face, none elsewhere.
    per_face = {str(f): {"dice": 30, "reject_rate": (1 / 30 if f == 6 else 0.0)} for f in range(1, 7)}
    assert reject_ratio(per_face) == pytest.approx((1 / 30) / 0.01)
    # The simulation's batch form is the eval's rule, row by row.
    rates = np.random.default_rng(3).choice([0.0, 0.005, 0.02, 0.1], size=(50, 6))
    one_by_one = [
        reject_ratio({str(f): {"dice": 30, "reject_rate": r} for f, r in enumerate(row)}) for row in rates
    ]
    assert np.allclose(reject_ratios(rates), one_by_one)


def test_a_strong_bias_fails_more_often_than_no_bias_on_large_counts() -> None:
    counts = [3000] * 6
    fair = pass_rate(counts, 0.05, 1.5, 500, np.random.default_rng(2))
    biased = pass_rate(counts, 0.05, 1.5, 500, np.random.default_rng(2), bias=3.0)
    assert fair > 0.95 and biased == 0.0


def test_cli_prints_a_row_per_rate_and_refuses_bad_input(tmp_path: Path, capsys) -> None:
    folder = _manifest(tmp_path / "set", [1, 2, 3, 4, 5, 6] * 5)
    assert main([str(folder), "--rates", "0.01,0.1", "--trials", "200", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["dice_per_face"] == {str(f): 5 for f in range(1, 7)}
    assert [r["reject_rate"] for r in out["rows"]] == [0.01, 0.1]
    assert main([str(tmp_path / "missing")]) == 2
    assert "manifest" in capsys.readouterr().err
    for bad in (["--rates", "x"], ["--rates", "1.5"], ["--trials", "0"], ["--bias", "0.5"]):
        with pytest.raises(SystemExit) as exit_:
            main([str(folder), *bad])
        assert exit_.value.code == 2

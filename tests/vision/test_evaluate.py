"""Matching and metrics on hand-built readings: every count is worked out by hand."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import cv2
import numpy as np
import pytest
from dicetower.vision.eval.evaluate import (
    REJECT_RATE_FLOOR,
    EvalError,
    FolderReport,
    Outcome,
    PhotoResult,
    evaluate_folder,
    match_dice,
    reject_bias_p,
    reject_ratio,
    score_photo,
    select_entries,
)
from dicetower.vision.eval.intervals import binomial_bounds, binomial_upper
from dicetower.vision.manifest import LabelledDie, ManifestEntry, write_manifest_line
from dicetower.vision.reader import ReaderSpecError, import_reader
from dicetower.vision.reading import DieReading, Reading, ReadStatus, UnreadableReason


def _read(x: float, y: float, face: int | None, size: float = 40.0, kind: str = "d6") -> DieReading:
    if face is None:
        why = UnreadableReason.LOW_CONFIDENCE
        return DieReading((x, y, size, size), kind, None, ReadStatus.UNREADABLE, why)
    return DieReading((x, y, size, size), kind, face, ReadStatus.READ, confidence=0.9)


def _entry(*dice: LabelledDie) -> ManifestEntry:
    return ManifestEntry(Path("/nowhere/x.jpg"), tuple(dice), 1, "x.jpg")


def _reading(*dice: DieReading, w: int = 640, h: int = 480) -> Reading:
    return Reading(tuple(dice), w, h)


# --- matching --------------------------------------------------------------------------------


def _at(*boxes: tuple[float, float, float, float]) -> list[tuple[tuple[float, float], ...]]:
    """Each read box as the one centre a die without a located face has."""
    return [((x + w / 2, y + h / 2),) for x, y, w, h in boxes]


def test_match_within_half_size_only() -> None:
    label = [(100.0, 100.0, 40.0, 40.0)]  # centre (120, 120), radius 20
    assert match_dice(label, _at((119.0, 100.0, 40.0, 40.0))) == ([0], [])  # centre 19 px away
    assert match_dice(label, _at((121.0, 100.0, 40.0, 40.0))) == ([None], [0])  # 21 px away
    # radius uses the longer side: a 40x10 label reaches 20 px sideways
    assert match_dice([(0.0, 0.0, 40.0, 10.0)], _at((15.0, -2.0, 10.0, 10.0))) == ([0], [])


def test_match_is_one_to_one_nearest_first() -> None:
    labels = [(0.0, 0.0, 40.0, 40.0), (30.0, 0.0, 40.0, 40.0)]  # centres (20,20), (50,20)
    reads = _at((28.0, 0.0, 40.0, 40.0))  # centre (48,20): 28 from label 0 (too far), 2 from label 1
    assert match_dice(labels, reads) == ([None, 0], [])
    reads = _at((2.0, 0.0, 40.0, 40.0), (10.0, 0.0, 40.0, 40.0))  # centres (22,20), (30,20)
    # label 0 takes the nearer (22), label 1 gets the other (20 px away, on its radius)
    assert match_dice(labels, reads) == ([0, 1], [])


def test_match_empty_sides() -> None:
    assert match_dice([], _at((0.0, 0.0, 5.0, 5.0))) == ([], [0])
    assert match_dice([(0.0, 0.0, 5.0, 5.0)], []) == ([None], [])


def test_match_counts_the_nearer_of_box_and_face_centre() -> None:
    """A 1 boxed by its pip (matteop65-d6-wood) matches the die whose read face lies there."""
    pip_label = [(130.0, 100.0, 12.0, 12.0)]  # centre (136, 106), radius 6
    seen_at_angle = DieReading((100.0, 90.0, 60.0, 60.0), face=1, face_centre=(135.0, 107.0))
    assert seen_at_angle.centres == ((130.0, 120.0), (135.0, 107.0))
    assert match_dice(pip_label, [seen_at_angle.centres]) == ([0], [])
    # the box centre alone is 15 px away: without a located face the same die is not matched
    no_face = DieReading((100.0, 90.0, 60.0, 60.0), face=1)
    assert no_face.centres == ((130.0, 120.0),)
    assert match_dice(pip_label, [no_face.centres]) == ([None], [0])
    # a whole-die label still matches by the box centre when the face centre is off it
    whole_label = [(100.0, 90.0, 60.0, 60.0)]  # centre (130, 120), radius 30
    assert match_dice(whole_label, [seen_at_angle.centres]) == ([0], [])
    # two dice near a label: the one with the nearer of its centres wins
    other = DieReading((112.0, 88.0, 40.0, 40.0), face=1)  # box centre (132, 108): 4.5 px
    assert match_dice(pip_label, [seen_at_angle.centres, other.centres]) == ([0], [1])


# --- outcomes --------------------------------------------------------------------------------


def test_outcomes_of_one_photo() -> None:
    entry = _entry(
        LabelledDie("d6", 5, (0, 0, 40, 40)),  # read 5: correct
        LabelledDie("d6", 2, (100, 0, 40, 40)),  # read 3: wrong
        LabelledDie("d6", 6, (200, 0, 40, 40)),  # unreadable: rejected
        LabelledDie("d6", 1, (300, 0, 40, 40)),  # nothing there: missed
        LabelledDie("d20", 5, (400, 0, 40, 40)),  # read as a d6 5: wrong kind is wrong
    )
    reading = _reading(
        _read(2, 1, 5), _read(98, 0, 3), _read(200, 3, None), _read(400, 0, 5), _read(500, 300, 4)
    )
    result = score_photo(entry, reading)
    assert [s.outcome for s in result.scored] == [
        Outcome.CORRECT,
        Outcome.WRONG,
        Outcome.REJECTED,
        Outcome.MISSED,
        Outcome.WRONG,
    ]
    assert [s.read_text for s in result.scored] == ["5", "3", "rejected", "missed", "d6:5"]
    assert [d.box for d in result.false_positives] == [(500, 300, 40, 40)]
    assert result.failed


def test_whole_photo_label_and_scale() -> None:
    entry = _entry(LabelledDie("d6", 4))
    # a 128x128 crop; the reader finds the die off-centre and a speck in the corner
    result = score_photo(entry, _reading(_read(40, 30, 4, 50), _read(0, 0, 1, 6), w=128, h=128))
    assert result.scored[0].outcome is Outcome.CORRECT
    assert result.scored[0].box == (0, 0, 128, 128)
    assert len(result.false_positives) == 1
    # boxes are scaled into frame pixels when the photo was downscaled for reading
    boxed = _entry(LabelledDie("d6", 4, (200, 200, 80, 80)))
    assert score_photo(boxed, _reading(_read(100, 100, 4)), scale=0.5).scored[0].outcome is Outcome.CORRECT
    assert score_photo(boxed, _reading(_read(100, 100, 4)), scale=1.0).scored[0].outcome is Outcome.MISSED


def test_cocked_labels_are_scored_apart() -> None:
    entry = _entry(
        LabelledDie("d6", 3, (0, 0, 40, 40), cocked=True),
        LabelledDie("d6", 3, (100, 0, 40, 40), cocked=True),
        LabelledDie("d6", 6, (200, 0, 40, 40)),
    )
    result = score_photo(entry, _reading(_read(0, 0, None), _read(100, 0, 3), _read(200, 0, 6)))
    assert result.failed  # the second cocked die was read as a face
    report = FolderReport("t")
    report.add(result)
    d = report.to_json()
    assert (d["dice"], d["correct"]) == (1, 1)
    assert d["cocked"] == {"dice": 2, "rejected": 1, "read": 1, "missed": 0}


def test_all_right_photo_is_not_a_failure() -> None:
    entry = _entry(LabelledDie("d6", 3, (0, 0, 40, 40), cocked=True), LabelledDie("d6", 1, (100, 0, 40, 40)))
    assert not score_photo(entry, _reading(_read(0, 0, None), _read(100, 0, 1))).failed


# --- folder report ---------------------------------------------------------------------------


def test_folder_report_counts_and_rates() -> None:
    report = FolderReport("hand")
    # photo 1: 1 correct, 1 wrong (2 read as 3)
    report.add(
        score_photo(
            _entry(LabelledDie("d6", 1, (0, 0, 40, 40)), LabelledDie("d6", 2, (100, 0, 40, 40))),
            _reading(_read(0, 0, 1), _read(100, 0, 3)),
            ms=10.0,
        )
    )
    # photo 2: 1 correct (2), 1 rejected (1), 1 false positive
    report.add(
        score_photo(
            _entry(LabelledDie("d6", 2, (0, 0, 40, 40)), LabelledDie("d6", 1, (100, 0, 40, 40))),
            _reading(_read(0, 0, 2), _read(100, 0, None), _read(300, 300, 6)),
            ms=30.0,
        )
    )
    # photo 3: failed to load, its die is missed
    report.add(score_photo(_entry(LabelledDie("d6", 1, (0, 0, 40, 40))), None, error="x.jpg: truncated"))
    d = report.to_json()
    assert json.loads(json.dumps(d)) == d  # plain JSON
    assert {k: d[k] for k in ("dataset", "photos", "dice", "correct", "wrong", "rejected", "missed")} == {
        "dataset": "hand",
        "photos": 3,
        "dice": 5,
        "correct": 2,
        "wrong": 1,
        "rejected": 1,
        "missed": 1,
    }
    assert d["false_positives"] == 1 and d["errors"] == 1 and d["error_examples"] == ["x.jpg: truncated"]
    assert d["false_positives_read"] == 1  # photo 2's extra die was reported as a 6
    assert d["accuracy"] == pytest.approx(2 / 5)
    assert d["wrong_rate"] == pytest.approx(1 / 5)
    assert d["median_ms"] == pytest.approx(20.0)
    face1, face2 = d["per_face"]["d6"]["1"], d["per_face"]["d6"]["2"]
    assert (face1["dice"], face1["correct"], face1["rejected"], face1["missed"]) == (3, 1, 1, 1)
    assert (face2["dice"], face2["correct"], face2["wrong"]) == (2, 1, 1)
    assert face1["reject_rate"] == pytest.approx(1 / 3, abs=1e-4) and face2["reject_rate"] == 0
    assert d["confusion"]["d6"] == {"1": {"1": 1, "missed": 1, "rejected": 1}, "2": {"2": 1, "3": 1}}
    # reject ratio: (1/3) / floor
    assert d["reject_ratio"] == pytest.approx((1 / 3) / REJECT_RATE_FLOOR, rel=1e-3)
    assert d["reject_bias_p"] == d["per_kind"]["d6"]["reject_bias_p"] == 1.0  # 1 reject: no evidence
    assert d["per_kind"]["d6"]["dice"] == 5


def test_reject_ratio_floor() -> None:
    def faces(*pairs: tuple[int, int]) -> dict[str, dict[str, float]]:
        return {str(i): {"dice": n, "reject_rate": r / n} for i, (r, n) in enumerate(pairs, 1)}

    assert reject_ratio(faces((0, 100), (0, 100))) == 1.0
    assert reject_ratio(faces((0, 100), (1, 200))) == 1.0  # 0% vs 0.5%: both under the floor
    assert reject_ratio(faces((2, 100), (4, 100))) == pytest.approx(2.0)
    assert reject_ratio(faces((3, 100), (0, 100))) == pytest.approx(3.0)
    assert reject_ratio(faces((3, 100))) == 1.0
    assert reject_ratio({"1": {"dice": 0, "reject_rate": 0.0}, "2": {"dice": 10, "reject_rate": 0.5}}) == 1.0


def test_reject_bias_p_is_small_only_when_rejects_follow_the_face() -> None:
    def faces(*pairs: tuple[int, int]) -> dict[str, dict[str, int]]:
        return {str(i): {"dice": n, "rejected": r} for i, (r, n) in enumerate(pairs, 1)}

    # Every rejected die on one face of six: 12 of 12 rejects there is no accident.
    assert reject_bias_p(faces((12, 40), (0, 40), (0, 40), (0, 40), (0, 40), (0, 40))) < 0.01
    # One reject: its face says nothing, although the ratio reads it as 2.5x.
    single = faces((1, 40), (0, 40), (0, 40), (0, 40), (0, 40), (0, 40))
    assert reject_bias_p(single) > 0.5
    assert (
        reject_ratio({k: {**v, "reject_rate": v["rejected"] / v["dice"]} for k, v in single.items()}) == 2.5
    )
    # Even spread: the most even table there is, so every shuffle is at least as uneven.
    assert reject_bias_p(faces((4, 40), (4, 40), (4, 40))) == 1.0
    # No rejects, all rejected, or one face: nothing to test.
    assert reject_bias_p(faces((0, 40), (0, 40))) == 1.0
    assert reject_bias_p(faces((40, 40), (40, 40))) == 1.0
    assert reject_bias_p(faces((3, 40))) == 1.0
    # Seeded: the same counts give the same p-value.
    table = faces((5, 30), (1, 30), (2, 30))
    assert reject_bias_p(table) == reject_bias_p(table)


def test_empty_report() -> None:
    d = FolderReport("empty").to_json()
    assert d["dice"] == 0 and d["accuracy"] == 0.0 and d["median_ms"] is None and d["per_face"] == {}
    assert d["groups"] == 0 and d["accuracy_interval"] == [0.0, 1.0] and d["wrong_rate_upper"] == 1.0


def _photo(name: str, *reads: int | None) -> PhotoResult:
    """A photo of dice labelled 1, 2, ... read as ``reads`` (None: rejected)."""
    labels = tuple(LabelledDie("d6", i + 1, (100.0 * i, 0, 40, 40)) for i in range(len(reads)))
    entry = ManifestEntry(Path(f"/nowhere/{name}"), labels, 1, name)
    return score_photo(entry, _reading(*(_read(100.0 * i, 0, f) for i, f in enumerate(reads))))


def test_intervals_resample_photo_groups_not_dice() -> None:
    # Ten photos of four dice: eight read right, two read all wrong. The dice of a photo fail
    # together, so the interval is wider than 40 independent dice would give.
    report = FolderReport("recordings")
    for p in range(10):
        report.add(_photo(f"p{p}.jpg", *([1, 2, 3, 4] if p < 8 else [6, 6, 6, 6])))
    d = report.to_json()
    assert d["groups"] == 10 and d["accuracy"] == pytest.approx(0.8)
    lo, hi = d["accuracy_interval"]
    cp_lo, cp_hi = binomial_bounds(32, 40)
    assert lo < cp_lo - 0.05 and hi >= cp_hi - 1e-5
    assert d["wrong_rate_upper"] > binomial_upper(8, 40)


def test_near_duplicate_photos_are_one_group() -> None:
    # epanemu-dice3's augmented copies share the name before "_jpg.rf.": one throw, one group.
    report = FolderReport("epanemu-dice3")
    for copy in ("a1", "b2", "c3"):
        report.add(_photo(f"images/dice_7_jpg.rf.{copy}.jpg", 1, 2))
    report.add(_photo("images/dice_8_jpg.rf.d4.jpg", 1))
    d = report.to_json()
    assert d["photos"] == 4 and d["groups"] == 2
    # Nothing wrong: the bound is the binomial one on 7 dice, not the bootstrap's 0.
    assert d["wrong_rate_upper"] == pytest.approx(binomial_upper(0, 7), abs=1e-5)


# --- running over a folder -------------------------------------------------------------------


def _folder(tmp_path: Path, n: int, face_of: list[int]) -> Path:
    (tmp_path / "images").mkdir()
    with (tmp_path / "manifest.jsonl").open("w") as fh:
        for i in range(n):
            img = np.full((64, 80 + i, 3), 120, np.uint8)
            cv2.imwrite(str(tmp_path / f"images/p{i}.png"), img)
            dice = [LabelledDie("d6", face_of[i % len(face_of)], (10, 10, 30, 30))]
            if i % 2:
                dice.append(LabelledDie("d20", 7, (40, 10, 30, 30)))
            write_manifest_line(fh, f"images/p{i}.png", dice)
    return tmp_path


def test_select_entries_limit_spreads_over_manifest(tmp_path: Path) -> None:
    folder = _folder(tmp_path, 10, [1])
    picked = select_entries(folder, limit=3)
    assert [e.relpath for e in picked] == ["images/p0.png", "images/p3.png", "images/p6.png"]
    assert len(select_entries(folder, limit=50)) == 10


def test_select_entries_kinds_drops_labels_and_empty_photos(tmp_path: Path) -> None:
    folder = _folder(tmp_path, 4, [1])
    d20 = select_entries(folder, kinds=["d20"])
    assert [e.relpath for e in d20] == ["images/p1.png", "images/p3.png"]
    assert all(d.die == "d20" for e in d20 for d in e.dice)
    assert sum(len(e.dice) for e in select_entries(folder, kinds=["d6"])) == 4


def test_select_entries_split_partitions(tmp_path: Path) -> None:
    folder = _folder(tmp_path, 30, [1])
    parts = [select_entries(folder, split=s) for s in ("train", "val", "test")]
    assert sum(len(p) for p in parts) == 30
    assert len({e.relpath for p in parts for e in p}) == 30


def test_evaluate_folder_times_reader_and_survives_bad_photos(tmp_path: Path) -> None:
    folder = _folder(tmp_path, 3, [4, 5, 6])
    (folder / "images/p1.png").write_bytes(b"\x89PNG\r\n\x1a\n broken")
    seen: list[tuple[int, int]] = []

    def reader(frame: np.ndarray, reference: np.ndarray | None) -> Reading:
        seen.append(frame.shape[:2])
        if frame.shape[1] == 82:
            raise RuntimeError("boom")
        return Reading((_read(10, 10, 4, 30),), 0, 0)

    results = list(evaluate_folder(folder, SimpleNamespace(read=reader)))
    assert seen == [(64, 80), (64, 82)]  # p1 never reached the reader
    assert [r.error is None for r in results] == [True, False, False]
    assert "truncated PNG" in (results[1].error or "")
    assert "reader failed: RuntimeError: boom" in (results[2].error or "")
    assert results[0].scored[0].outcome is Outcome.CORRECT and results[0].ms is not None
    assert results[0].reading is not None and results[0].reading.width == 80  # filled in from the frame
    report = FolderReport("t")
    for r in results:
        report.add(r)
    d = report.to_json()
    # p0: 1 die (correct); p1: 2 dice (bad file: missed); p2: 1 die (reader raised: missed)
    assert (d["dice"], d["correct"], d["missed"], d["errors"]) == (4, 1, 3, 2)


def test_reference_is_passed_to_the_reader(tmp_path: Path) -> None:
    (tmp_path / "images").mkdir()
    cv2.imwrite(str(tmp_path / "images/a.png"), np.full((20, 20, 3), 10, np.uint8))
    cv2.imwrite(str(tmp_path / "images/e.png"), np.full((20, 20, 3), 99, np.uint8))
    with (tmp_path / "manifest.jsonl").open("w") as fh:
        write_manifest_line(fh, "images/a.png", [LabelledDie("d6", 1)], reference="images/e.png")
    refs: list[int] = []

    def reader(frame: np.ndarray, reference: np.ndarray | None) -> Reading:
        assert reference is not None
        refs.append(int(reference[0, 0, 0]))
        return Reading((), 20, 20)

    (result,) = evaluate_folder(tmp_path, SimpleNamespace(read=reader))
    assert refs == [99] and result.scored[0].outcome is Outcome.MISSED


def test_import_reader_builds_a_named_reader_or_says_why_not() -> None:
    with pytest.raises(ReaderSpecError, match="module:name"):
        import_reader("nocolon")
    with pytest.raises(ReaderSpecError, match="cannot import"):
        import_reader("dicetower.no_such_module:ClassicReader")
    with pytest.raises(ReaderSpecError, match="not a reader"):
        import_reader("dicetower.vision.eval.evaluate:NOPE")
    with pytest.raises(ReaderSpecError, match="not a reader"):
        import_reader("dicetower.vision.eval.baseline:read_frame")  # a function, not a reader
    reader = import_reader("dicetower.vision.eval.baseline:ClassicReader")
    assert isinstance(reader.read(np.zeros((32, 32, 3), np.uint8), None), Reading)


def test_a_reader_that_always_fails_stops_the_eval(tmp_path: Path) -> None:
    folder = _folder(tmp_path, 8, [1])

    def broken(frame: np.ndarray, reference: np.ndarray | None) -> Reading:
        raise FileNotFoundError("model.onnx")

    results = []
    with pytest.raises(EvalError, match=r"first 5 photos; last: .*FileNotFoundError: model\.onnx"):
        results.extend(evaluate_folder(folder, SimpleNamespace(read=broken)))
    assert len(results) == 4
    assert len(list(evaluate_folder(folder, SimpleNamespace(read=broken), give_up_after=None))) == 8


def test_false_positives_read_as_a_face_are_counted_apart() -> None:
    # photos of one d20 each (no box: the whole photo is the die); the reader boxes two patches
    # of it. The one at the photo's centre pairs with the d20, the other is a false positive.
    report = FolderReport("d20s")
    centre, corner = (300, 220), (100, 100)
    report.add(score_photo(_entry(LabelledDie("d20", 15)), _reading(_read(*centre, None), _read(*corner, 1))))
    d = report.to_json()
    assert (d["dice"], d["rejected"], d["false_positives"], d["false_positives_read"]) == (1, 1, 1, 1)
    report.add(score_photo(_entry(LabelledDie("d20", 3)), _reading(_read(*centre, 1), _read(*corner, None))))
    d = report.to_json()
    assert (d["wrong"], d["false_positives"], d["false_positives_read"]) == (1, 2, 1)

"""d6.compare: the shipped pair and candidate folders scored end to end, with the sums a rule needs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from dicetower.vision.eval.evaluate import FolderReport, score_photo
from dicetower.vision.manifest import LabelledDie, ManifestEntry
from dicetower.vision.reading import DieReading, Reading, ReadStatus, UnreadableReason
from dicetower.vision.synth import write_dataset
from dicetower.vision.training.d6.compare import compare, main, paired_change, score

MODELS = Path(__file__).resolve().parents[2] / "vision" / "models"


@pytest.fixture(scope="module")
def datasets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("datasets")
    write_dataset(root / "byler-d6", 3, seed=7, size=(320, 320), max_dice=4)
    write_dataset(root / "matteop65-d6-wood", 2, seed=8, size=(320, 320), max_dice=3)
    return root


def test_a_copy_of_the_shipped_models_scores_as_the_shipped_ones_and_the_sums_add_up(
    datasets: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in ("detector.onnx", "detector.json", "d6_reader.onnx", "d6_reader.json"):
        shutil.copy(MODELS / name, copy / name)
    shipped, candidate = compare(["shipped", str(copy)], datasets, None)
    assert set(shipped["datasets"]) == {"byler-d6", "matteop65-d6-wood"}  # only the folders present
    untimed = [
        {d: {k: v for k, v in r.items() if not k.endswith("_ms")} for d, r in row["datasets"].items()}
        for row in (shipped, candidate)
    ]
    assert untimed[0] == untimed[1] and shipped["d6_sum"] == candidate["d6_sum"]
    byler, matteo = shipped["datasets"]["byler-d6"], shipped["datasets"]["matteop65-d6-wood"]
    assert shipped["d6_sum"]["correct"] == byler["correct"] + matteo["correct"] > 0
    assert shipped["d6_sum"]["dice"] == byler["dice"] + matteo["dice"]
    assert shipped["d20_d6_faces"] is None  # no d20 photos here
    # Against the first row: no change, and none in any resample of the photo groups.
    assert shipped["vs_first"] is None
    same = {"change": 0, "interval": [0.0, 0.0]}
    # Groups as the split keeps them: 3 byler photos, and matteop65's 2 frames in one run of 10.
    assert candidate["vs_first"] == {"correct": same, "wrong": same, "groups": 4}
    # The same scoring as `dicetower eval --kinds d6`.
    from dicetower.vision.reader import open_reader

    assert score(datasets / "byler-d6", open_reader(), None, ("d6",))["correct"] == byler["correct"]


def test_the_cli_prints_a_table_or_json_and_refuses_what_it_cannot_score(datasets: Path, capsys) -> None:
    assert main(["shipped", "--datasets", str(datasets), "--split", "train", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["models"] == "shipped" and "byler-d6" in row["datasets"]
    assert main(["shipped", "--datasets", str(datasets), "--split", "train"]) == 0
    assert "| shipped |" in capsys.readouterr().out
    for args, says in (
        (["/nonexistent/models", "--datasets", str(datasets)], "no such folder of models"),
        (["shipped", "--datasets", "/nonexistent"], "none of"),
        (["shipped", "--datasets", str(datasets), "--errata", "/nonexistent"], "no such folder"),
    ):
        with pytest.raises(SystemExit) as exit_:
            main(args)
        assert exit_.value.code == 2 and says in capsys.readouterr().err


def test_a_folder_without_models_is_a_usage_error(datasets: Path, tmp_path: Path, capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        main([str(tmp_path), "--datasets", str(datasets)])
    assert exit_.value.code == 2 and "neither d6_reader.onnx nor detector.onnx" in capsys.readouterr().err


def test_a_broken_manifest_is_a_usage_error_naming_its_line(tmp_path: Path, capsys) -> None:
    (tmp_path / "byler-d6").mkdir()
    (tmp_path / "byler-d6" / "manifest.jsonl").write_text('{"image": 5}\n')
    with pytest.raises(SystemExit) as exit_:
        main(["shipped", "--datasets", str(tmp_path)])
    assert exit_.value.code == 2 and "manifest.jsonl:1" in capsys.readouterr().err


def test_zero_thresholds_take_every_located_die_at_its_best_face(datasets: Path) -> None:
    (usual,) = compare(["shipped"], datasets, None)
    (ceiling,) = compare(["shipped"], datasets, None, zero_thresholds=True)
    for name, r in ceiling["datasets"].items():
        # Nothing the reader calls a face is rejected; only "not a die" answers still are.
        assert r["correct"] >= usual["datasets"][name]["correct"]
        assert (
            r["correct"] + r["wrong"] >= usual["datasets"][name]["correct"] + usual["datasets"][name]["wrong"]
        )
        assert r["missed"] == usual["datasets"][name]["missed"]  # the detector is not changed


def _report(dataset: str, faces_read: list[list[int | None]]) -> FolderReport:
    """One photo per entry of ``faces_read``, each holding dice labelled 1, 2, ... read as given."""
    report = FolderReport(dataset)
    for p, faces in enumerate(faces_read):
        labels = tuple(LabelledDie("d6", i + 1, (100.0 * i, 0.0, 40.0, 40.0)) for i in range(len(faces)))
        boxes = [(100.0 * i, 0.0, 40.0, 40.0) for i in range(len(faces))]
        reads = tuple(
            DieReading(box, "d6", None, ReadStatus.UNREADABLE, UnreadableReason.BLURRED)
            if f is None
            else DieReading(box, "d6", f, ReadStatus.READ, confidence=0.9)
            for box, f in zip(boxes, faces, strict=True)
        )
        entry = ManifestEntry(Path(f"/nowhere/p{p}.jpg"), labels, p + 1, f"p{p}.jpg")
        report.add(score_photo(entry, Reading(reads, 640, 480)))
    return report


def test_paired_change_counts_group_by_group_and_resamples_groups() -> None:
    # Before: photo 0 reads 1, 2 right; photo 1 rejects one die, reads one wrong; photo 2 right.
    before = {"x": _report("x", [[1, 2], [None, 5], [1]])}
    # After: photo 1 now right on both; photo 2 now wrong.
    after = {"x": _report("x", [[1, 2], [1, 2], [4]])}
    change = paired_change(before, after)
    assert change["groups"] == 3
    assert change["correct"]["change"] == 2 - 1  # +2 on photo 1, -1 on photo 2
    assert change["wrong"]["change"] == 0  # -1 on photo 1, +1 on photo 2
    lo, hi = change["correct"]["interval"]
    assert lo < 1 < hi and lo >= -3 and hi <= 6  # sums of three groups' changes (0, +2, -1)
    with pytest.raises(ValueError, match="different photos"):
        paired_change(before, {"x": _report("x", [[1, 2]])})
    with pytest.raises(ValueError, match="different datasets"):
        paired_change(before, {"y": after["x"]})

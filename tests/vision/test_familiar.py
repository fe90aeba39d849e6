"""The unfamiliar-die check (``vision/faces/familiar.py``): its statistics file, its arithmetic,
and what it does to real dice (a set the shipped network never trained on, and familiar ones)."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest
from dicetower.firmware.cli import main
from dicetower.vision.faces.familiar import (
    FAMILIAR_FILE,
    FAMILIAR_SCHEMA,
    Familiarity,
    FamiliarityError,
    energies,
    load_familiarity,
    turned_disagrees,
    unit_rows,
)
from dicetower.vision.faces.pips import D6Reader
from dicetower.vision.reader import open_reader
from dicetower.vision.reading import UnreadableReason
from dicetower.vision.taught.reader import REREAD

DATASETS = Path(__file__).parents[2] / ".." / "shared" / "datasets"
MODELS = Path(__file__).parents[2] / "vision" / "models"


def _stats(**fields: object) -> bytes:
    """A statistics file's bytes: valid, with ``fields`` replaced (None drops a field)."""
    arrays: dict[str, object] = {
        "schema": np.array(FAMILIAR_SCHEMA),
        "output": np.array("features"),
        "k": np.array(2),
        "knn_threshold": np.array(0.5),
        "energy_threshold": np.array(-1.0),
        "bank": np.eye(4, dtype=np.float16),
    }
    for key, value in fields.items():
        if value is None:
            arrays.pop(key)
        else:
            arrays[key] = value
    buf = io.BytesIO()
    np.savez(buf, **arrays)  # type: ignore[arg-type]
    return buf.getvalue()


def test_a_folder_without_statistics_has_no_check(tmp_path: Path) -> None:
    assert load_familiarity(tmp_path) is None


def test_a_valid_file_loads_and_round_trips(tmp_path: Path) -> None:
    (tmp_path / FAMILIAR_FILE).write_bytes(_stats(knn_threshold=np.array(0.25)))
    fam = load_familiarity(tmp_path)
    assert fam is not None and fam.knn_threshold == 0.25 and fam.dim == 4 and fam.k == 2
    (tmp_path / FAMILIAR_FILE).write_bytes(fam.to_bytes())
    again = load_familiarity(tmp_path)
    assert again is not None and (again.knn_threshold, again.energy_threshold) == (0.25, -1.0)
    assert np.array_equal(again.bank, fam.bank)


@pytest.mark.parametrize(
    "raw, named",
    [
        (b"not a zip at all", "not a statistics file"),
        (_stats(schema=np.array("dicetower.d6_familiar/9")), "schema"),
        (_stats(bank=None), "'bank'"),
        (_stats(output=None), "'output'"),
        (_stats(knn_threshold=np.array(float("nan"))), "'knn_threshold'"),
        (_stats(knn_threshold=np.array(0.0)), "'knn_threshold'"),
        (_stats(knn_threshold=np.array([0.1, 0.2])), "'knn_threshold'"),
        (_stats(energy_threshold=np.array(float("inf"))), "'energy_threshold'"),
        (_stats(k=np.array(0)), "'k'"),
        (_stats(k=np.array(5)), "'k'"),
        (_stats(k=np.array(2.5)), "'k'"),
        (_stats(bank=np.zeros((0, 4), np.float16)), "'bank'"),
        (_stats(bank=np.full((3, 4), np.inf, np.float16)), "'bank'"),
        (_stats(bank=np.array([["a"] * 4] * 3)), "'bank'"),
    ],
    ids=[
        "garbage",
        "schema",
        "no-bank",
        "no-output",
        "nan-threshold",
        "zero-threshold",
        "two-thresholds",
        "infinite-energy",
        "k-zero",
        "k-past-the-bank",
        "k-fraction",
        "empty-bank",
        "infinite-bank",
        "text-bank",
    ],
)
def test_a_bad_file_is_one_line_naming_the_field(tmp_path: Path, raw: bytes, named: str) -> None:
    (tmp_path / FAMILIAR_FILE).write_bytes(raw)
    with pytest.raises(FamiliarityError) as caught:
        load_familiarity(tmp_path)
    message = str(caught.value)
    assert named in message and FAMILIAR_FILE in message and "\n" not in message


def test_scores_are_the_kth_nearest_cosine_distance_and_the_energy() -> None:
    rng = np.random.default_rng(3)
    bank = unit_rows(rng.normal(0, 1, (40, 6)))
    fam = Familiarity("features", bank, 3, 0.2, -2.0)
    probe = rng.normal(0, 1, (25, 6)) * rng.uniform(0.1, 9.0, (25, 1))  # any length: cosine
    sims = unit_rows(probe) @ bank.T
    want = 1.0 - np.sort(sims, axis=1)[:, -3]
    assert np.allclose(fam.knn_distances(probe), want, atol=1e-5)
    logits = rng.normal(0, 3, (25, 7))
    assert np.allclose(energies(logits), -np.log(np.exp(logits).sum(axis=1)))
    # A training die itself, answered strongly, is familiar; a direction no training die has is not.
    strong = np.full((1, 7), -10.0)
    strong[0, 2] = 10.0
    nearest = Familiarity("features", bank, 1, 0.2, -2.0)
    near = bank[:1] + 0.01 * bank[1:2]
    assert not nearest.unfamiliar(near, strong).any()
    odd = -bank.sum(axis=0, keepdims=True)
    assert nearest.knn_distances(odd)[0] > 0.2 and nearest.unfamiliar(odd, strong).all()
    weak = np.zeros((1, 7))  # every class alike: energy -log 7 > -2
    assert nearest.unfamiliar(near, weak).all()


def test_a_quarter_turn_that_reads_another_face_disagrees() -> None:
    # A stand-in network that answers by the blob's orientation: face 2 for a crop whose top
    # half is bright, face 3 otherwise; a quarter turn moves the bright half to the left.
    def forward(blob: np.ndarray) -> np.ndarray:
        top = blob[:, 0, :24].mean(axis=(1, 2)) > blob[:, 0, 24:].mean(axis=(1, 2))
        logits = np.zeros((len(blob), 7), np.float32)
        logits[np.arange(len(blob)), np.where(top, 2, 3)] = 5.0
        return logits

    blob = np.zeros((2, 4, 48, 48), np.float32)
    blob[0, :, :24] = 1.0  # bright top: face 2, turned: face 3
    blob[1] = 1.0  # even: face 3 either way
    assert turned_disagrees(forward, blob, [2, 3]).tolist() == [True, False]
    assert turned_disagrees(forward, blob[:0], []).tolist() == []


def test_rendered_trays_stay_familiar(reader: D6Reader) -> None:
    # The simulated tower's dice (rendered, seen from above) are the network's training dice:
    # the check must not make the sim tower throw again for them.
    from dicetower.vision.synth import render_scene
    from dicetower.vision.view import View

    crops, faces = [], []
    for seed in range(30):
        frame, _reference, labels = render_scene(seed, 5)
        for label in labels:
            if label.box is not None and not label.cocked:
                crops.append(reader.crops(frame, [label.box])[0])
                faces.append(label.face)
    reads = reader.read_crops(crops, view=View.TOP_DOWN)
    unfamiliar = sum(r.reason is UnreadableReason.UNFAMILIAR for r in reads)
    assert len(reads) >= 120 and unfamiliar <= 0.01 * len(reads)
    assert all(r.face in (None, f) for r, f in zip(reads, faces, strict=True))


def test_the_bank_is_a_seeded_sample_of_unit_rows() -> None:
    from dicetower.vision.training.d6.familiar import choose_bank

    x = np.random.default_rng(1).normal(0, 5, (300, 8))
    a, b = choose_bank(x, 50, seed=4), choose_bank(x, 50, seed=4)
    assert a.shape == (50, 8) and np.array_equal(a, b)
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    assert choose_bank(x[:10], 50).shape == (10, 8)


def test_statistics_for_an_output_the_network_lacks_are_refused(tmp_path: Path) -> None:
    for name in ("d6_reader.onnx", "d6_reader.json"):
        shutil.copy(MODELS / name, tmp_path / name)
    (tmp_path / FAMILIAR_FILE).write_bytes(_stats(output=np.array("penultimate")))
    with pytest.raises(FamiliarityError, match="no output 'penultimate'"):
        D6Reader(tmp_path)


def test_a_bad_statistics_file_stops_eval_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    models = tmp_path / "models"
    models.mkdir()
    for name in ("d6_reader.onnx", "d6_reader.json"):
        shutil.copy(MODELS / name, models / name)
    (models / FAMILIAR_FILE).write_bytes(_stats(knn_threshold=np.array(3.0)))
    photos = tmp_path / "photos"
    (photos / "images").mkdir(parents=True)
    cv2.imwrite(str(photos / "images" / "a.png"), np.full((64, 64, 3), 128, np.uint8))
    (photos / "manifest.jsonl").write_text('{"image": "images/a.png", "dice": [{"die": "d6", "face": 2}]}\n')
    assert main(["eval", str(photos), "--models", str(models)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("dicetower: error: ") and "'knn_threshold'" in err[0]


def test_the_shipped_reader_carries_the_check() -> None:
    fam = load_familiarity(MODELS)
    assert fam is not None and (MODELS / FAMILIAR_FILE).stat().st_size < 256_000
    reader = D6Reader()
    assert reader.familiar is not None and reader.check_familiar
    assert not open_reader(familiar=False).faces.check_familiar


def test_a_taught_die_reads_a_die_the_general_reader_finds_unfamiliar() -> None:
    # Teaching is the remedy the reason names: a taught die's own reader is not subject to it.
    assert UnreadableReason.UNFAMILIAR in REREAD
    assert UnreadableReason.UNFAMILIAR.text == "unfamiliar die: teach it"


SKOVY = DATASETS / "skovy-d6-crops"
needs_skovy = pytest.mark.skipif(not (SKOVY / "manifest.jsonl").is_file(), reason="../shared/datasets absent")
needs_byler = pytest.mark.skipif(
    not (DATASETS / "byler-d6" / "manifest.jsonl").is_file(), reason="../shared/datasets absent"
)


@needs_skovy
def test_a_die_of_a_set_never_trained_on_that_the_network_misreads_is_unfamiliar() -> None:
    # A skovy die (a set the shipped network never saw) whose likeliest face is wrong: a 5 the
    # network takes for a 4. With every face taken at any probability the check alone stands
    # between that guess and the roll (at the card's thresholds it is unsure anyway).
    frame = cv2.imread(str(SKOVY / "images" / "WIN_20221211_13_08_28_Pro-die-0.jpg"))
    box = (13.0, 37.0, 30.0, 36.0)  # where the shipped detector finds it
    reader = D6Reader()
    crops = reader.crops(frame, [box])
    with reader.thresholds_at_zero():
        assert not reader.check_familiar  # calibration takes every die's likeliest face
        (guess,) = reader.read_crops(crops)
        reader.check_familiar = True
        (checked,) = reader.read_crops(crops)
    assert reader.check_familiar
    assert guess.face == 4  # the label says 5
    assert checked.face is None and checked.reason is UnreadableReason.UNFAMILIAR


def _one_photo_folder(tmp_path: Path, image: Path, face: int) -> Path:
    folder = tmp_path / "photos"
    (folder / "images").mkdir(parents=True)
    shutil.copy(image, folder / "images" / image.name)
    line = {"image": f"images/{image.name}", "dice": [{"die": "d6", "face": face}]}
    (folder / "manifest.jsonl").write_text(json.dumps(line) + "\n")
    return folder


@needs_skovy
def test_the_reason_reaches_eval_json_and_no_familiar_turns_it_off(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    # A skovy 6 the network reads right but weakly in every class (energy over the threshold).
    folder = _one_photo_folder(tmp_path, SKOVY / "images" / "WIN_20221211_13_11_15_Pro-die-1.jpg", 6)
    assert main(["eval", str(folder), "--json"]) == 0
    checked = json.loads(capsys.readouterr().out)
    assert (checked["correct"], checked["rejected"]) == (0, 1)
    assert checked["rejected_by_reason"] == {"unfamiliar": 1}
    assert main(["eval", str(folder), "--json", "--no-familiar"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert (plain["correct"], plain["rejected_by_reason"]) == (1, {})
    assert main(["eval", str(folder)]) == 0
    assert "rejected by reason  unfamiliar 1" in capsys.readouterr().out


@needs_byler
def test_familiar_dice_are_kept(capsys: pytest.CaptureFixture) -> None:
    # 20 val photos of a set the network trained on (about 150 dice): the check costs at most
    # two of the dice the reader reads right without it.
    folder = DATASETS / "byler-d6"
    argv = ["eval", str(folder), "--split", "val", "--limit", "20", "--json"]
    assert main(argv) == 0
    checked = json.loads(capsys.readouterr().out)
    assert main([*argv, "--no-familiar"]) == 0
    plain = json.loads(capsys.readouterr().out)
    lost = plain["correct"] - checked["correct"]
    assert checked["dice"] >= 100 and 0 <= lost <= 2
    assert checked["rejected_by_reason"].get("unfamiliar", 0) <= 2
    assert checked["wrong"] <= plain["wrong"]


def test_read_shows_the_remedy() -> None:
    from dicetower.firmware.cli.read import format_reading
    from dicetower.vision.reading import DieReading, Reading, ReadStatus

    die = DieReading(
        (10.0, 10.0, 40.0, 40.0), status=ReadStatus.UNREADABLE, reason=UnreadableReason.UNFAMILIAR
    )
    text = format_reading(Reading(dice=(die,), width=100, height=100))
    assert "d6 unreadable (unfamiliar die: teach it)" in text
    assert die.to_json()["reason"] == "unfamiliar"  # the API and the log keep the value

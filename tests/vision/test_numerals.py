"""The numeral reader: its decisions, held-out renders, the opt-in FrameReader wiring, the d20 photos."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from dicetower.vision.faces.numerals import (
    KIND_OF_CLASS,
    NumeralModelError,
    NumeralReader,
    class_names,
    with_kind,
)
from dicetower.vision.kinds import DRAWN_KINDS, KINDS
from dicetower.vision.locate import DieCandidate
from dicetower.vision.reader import FrameReader
from dicetower.vision.reading import DieReading, KindRead, ReadStatus, UnreadableReason
from dicetower.vision.synth.numerals import NumeralStyle, TrayDie, render_crop, render_tray
from dicetower.vision.training.numerals.data import TEST_SEED


@pytest.fixture(scope="module")
def numerals() -> NumeralReader:
    try:
        return NumeralReader()
    except NumeralModelError as exc:
        pytest.skip(f"numeral reader not built: {exc}")


def _probs(**mass: float) -> np.ndarray:
    p = np.full(len(KIND_OF_CLASS), 1e-6, np.float32)
    names = class_names()
    for key, v in mass.items():
        p[names.index(key.replace("_", ":"))] = v
    return p / p.sum()


def test_classes_are_none_then_every_face_of_every_kind() -> None:
    names = class_names()
    assert names[0] == "none" and len(names) == 1 + sum(len(KINDS[k].faces) for k in DRAWN_KINDS)
    assert "d10t:90" in names and "d20:20" in names and "d10:0" in names


def test_sure_kind_and_face_is_read(numerals: NumeralReader) -> None:
    r = numerals.decide(_probs(d20_17=0.999))
    assert (r.kind, r.face, r.reason) == ("d20", 17, None)


def test_kind_split_between_two_numeral_kinds_is_kind_unsure(numerals: NumeralReader) -> None:
    """Surely numerals, unsure which kind: the pip reader must not have it (``kind_unsure``)."""
    r = numerals.decide(_probs(d20_6=0.45, d10_6=0.55))
    assert r.kind is None and r.face is None and r.reason is UnreadableReason.KIND_UNSURE
    assert r.guess == "d10" and r.kind_confidence > 0.99


def test_kind_split_with_the_pip_d6_is_left_to_the_pip_reader(numerals: NumeralReader) -> None:
    r = numerals.decide(_probs(d6_4=0.5, d10_6=0.5))
    assert r.kind is None and r.reason is UnreadableReason.LOW_CONFIDENCE and r.guess is None
    die = DieReading(box=(0, 0, 10, 10), kind="d6", face=4, confidence=0.99)
    assert with_kind(die, r) == die


def test_sure_kind_unsure_face_keeps_the_kind(numerals: NumeralReader) -> None:
    r = numerals.decide(_probs(d10t_60=0.5, d10t_90=0.5))
    assert r.kind == "d10t" and r.face is None and r.reason is UnreadableReason.LOW_CONFIDENCE


def test_with_kind_leaves_pip_d6_to_the_pip_reader() -> None:
    die = DieReading(box=(0, 0, 10, 10), kind="d6", face=4, confidence=0.99)
    assert with_kind(die, KindRead("d6", 3, 0.99, 0.99)) == die
    d20 = with_kind(die, KindRead("d20", 13, 0.99, 0.98))
    assert (d20.kind, d20.face, d20.status) == ("d20", 13, ReadStatus.READ)
    numeral_d6 = with_kind(die, KindRead("d6n", 6, 0.99, 0.97))
    assert (numeral_d6.kind, numeral_d6.face) == ("d6", 6)
    unsure = with_kind(die, KindRead("d10", None, 0.99, 0.4, UnreadableReason.LOW_CONFIDENCE))
    assert unsure.kind == "d10" and unsure.face is None and unsure.status is ReadStatus.UNREADABLE
    kindless = with_kind(die, KindRead(None, None, 0.98, 0.0, UnreadableReason.KIND_UNSURE, "d10t"))
    assert (kindless.kind, kindless.face, kindless.status) == ("d10t", None, ReadStatus.UNREADABLE)
    assert kindless.reason is UnreadableReason.KIND_UNSURE


@pytest.mark.parametrize("kind", ["d6n", "d10", "d10t", "d20"])
def test_held_out_renders_are_told_by_kind_and_never_read_wrong(numerals: NumeralReader, kind: str) -> None:
    faces = KINDS[kind].faces
    crops = []
    for i, face in enumerate(faces):
        frame, box = render_crop(TEST_SEED + 50_000 + i, kind, face)
        crops.append(numerals.crops(frame, [box])[0])
    reads = numerals.read_crops(crops)
    kinds_right = sum(r.kind == kind for r in reads)
    kinds_wrong = sum(r.kind is not None and r.kind != kind for r in reads)
    wrong = sum(
        r.face is not None and (r.kind, r.face) != (kind, f) for r, f in zip(reads, faces, strict=True)
    )
    # The shipped model tells the kind of held-out renders and leaves an unsure face unreadable;
    # its face accuracy is below the 99.5 % target (BENCHMARKS.md ## Numerals).
    assert kinds_right >= 0.9 * len(faces) and kinds_wrong == 0 and wrong <= 1


def test_frame_reader_reads_kinds_only_when_asked(numerals: NumeralReader) -> None:
    dice = [
        TrayDie("d20", 20, "blue", "solid"),
        TrayDie("d10t", 30, "white", "solid"),
        TrayDie("d6", 5, "red"),
    ]
    frame, ref, labels = render_tray(TEST_SEED + 7, dice, style=NumeralStyle(blur=0.0, noise=1.0))

    def labelled(_f: np.ndarray, _r: object, _t: object) -> list[DieCandidate]:
        return [DieCandidate(box=d.box) for d in labels if d.box is not None]

    plain = FrameReader(locate=labelled).read(frame, ref)
    assert all(d.kind == "d6" for d in plain.dice)
    mixed = FrameReader(locate=labelled, numerals=numerals).read(frame, ref)
    assert [d.kind for d in mixed.dice] == ["d20", "d10t", "d6"]
    got = {(d.kind, d.face) for d in mixed.dice if d.status is ReadStatus.READ}
    assert ("d6", 5) in got and got <= {("d20", 20), ("d10t", 30), ("d6", 5)}


def test_open_reader_adds_the_numeral_reader_only_when_asked(tmp_path, numerals: NumeralReader) -> None:
    import shutil

    import dicetower.vision.models
    from dicetower.vision.reader import open_reader

    assert open_reader().numerals is None
    assert open_reader(numerals=True).numerals is not None
    models = Path(dicetower.vision.models.__file__).parent
    for name in ("numeral_reader.onnx", "numeral_reader.json"):
        shutil.copy(models / name, tmp_path / name)
    reader = open_reader(tmp_path, numerals=True)
    assert reader.numerals is not None and reader.numerals.input == numerals.input
    with pytest.raises(FileNotFoundError):
        open_reader(tmp_path / "empty", numerals=True)


def test_the_trainer_refuses_an_unknown_kind(capsys: pytest.CaptureFixture[str]) -> None:
    from dicetower.vision.training.numerals.train import main

    with pytest.raises(SystemExit):
        main(["--kinds", "d20,d8", "--data", "/nonexistent"])
    assert "--kinds: d8 not among" in capsys.readouterr().err


def test_the_renders_eval_reports_rejects_per_face(numerals: NumeralReader) -> None:
    """Every kind's figure carries its per-face reject rates and their ratio, as the d6 eval does."""
    from dicetower.vision.training.numerals.evaluate import eval_renders

    out = eval_renders(4, None)["per_kind"]
    for kind in DRAWN_KINDS:
        rates = out[kind]["per_face_reject_rate"]
        assert list(rates) == [str(f) for f in KINDS[kind].faces[:4]]
        assert out[kind]["reject_ratio"] >= 1.0 and 0.0 <= out[kind]["reject_bias_p"] <= 1.0
        unread = round(sum(rates.values()) / len(rates), 5)
        assert out[kind]["unreadable"] == pytest.approx(unread)

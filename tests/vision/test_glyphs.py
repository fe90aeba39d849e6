"""The upright-numeral reader: numerals per kind, the turn search, and how its face joins the kind's."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest
from dicetower.vision.faces.glyphs import (
    GLYPH_INPUT,
    TEXTS,
    GlyphModelError,
    GlyphRead,
    GlyphReader,
    central_crops,
    text_face,
    with_glyph,
)
from dicetower.vision.kinds import KINDS
from dicetower.vision.reading import KindRead, UnreadableReason


def test_each_kind_takes_only_its_own_numerals() -> None:
    assert text_face("d20", "20") == 20 and text_face("d20", "0") is None and text_face("d20", "00") is None
    assert text_face("d10", "0") == 0 and text_face("d10", "10") is None
    assert text_face("d10t", "00") == 0 and text_face("d10t", "70") == 70 and text_face("d10t", "7") is None
    assert text_face("d6n", "6") == 6 and text_face("d6n", "7") is None
    assert len(set(TEXTS)) == len(TEXTS)


def test_turning_the_crop_undoes_a_turned_frame() -> None:
    frame = np.full((200, 200), 200, np.uint8)
    cv2.putText(frame, "7", (80, 130), cv2.FONT_HERSHEY_SIMPLEX, 2.2, 0, 6)
    box = (50.0, 50.0, 100.0, 100.0)
    upright = central_crops(frame, box, np.array([0.0]))[0]
    turned = cv2.rotate(frame, cv2.ROTATE_90_CLOCKWISE)  # the same die, a quarter turn
    back = central_crops(turned, box, np.array([90.0, 0.0]))
    assert back.shape == (2, GLYPH_INPUT, GLYPH_INPUT)
    diff = [np.abs(b.astype(int) - upright.astype(int)).mean() for b in back]
    assert diff[0] < 8 < 30 < diff[1]


def _kind(face: int | None) -> KindRead:
    return KindRead("d20", face, 0.99, 0.99 if face is not None else 0.3)


def test_a_sure_upright_face_is_the_face_and_agreement_keeps_the_network_s() -> None:
    assert with_glyph(_kind(None), GlyphRead(17, 17, 0.97, 30.0)).face == 17
    assert with_glyph(_kind(3), GlyphRead(17, 17, 0.97, 30.0)).face == 17
    assert with_glyph(_kind(17), GlyphRead(None, 17, 0.6, 30.0)).face == 17
    unsure = with_glyph(_kind(3), GlyphRead(None, 17, 0.6, 30.0))
    assert unsure.face is None and unsure.reason is UnreadableReason.LOW_CONFIDENCE and unsure.kind == "d20"


def test_a_card_that_does_not_match_is_refused(tmp_path: Path) -> None:
    import dicetower.vision.models

    models = Path(dicetower.vision.models.__file__).parent
    if not (models / "glyph_reader.onnx").is_file():
        pytest.skip("no shipped glyph reader")
    for name in ("glyph_reader.onnx", "glyph_reader.json"):
        shutil.copy(models / name, tmp_path / name)
    GlyphReader(tmp_path)
    card = json.loads((tmp_path / "glyph_reader.json").read_text())
    card["classes"] = card["classes"][:-1]
    (tmp_path / "glyph_reader.json").write_text(json.dumps(card))
    with pytest.raises(GlyphModelError, match="do not match"):
        GlyphReader(tmp_path)
    with pytest.raises(GlyphModelError, match="missing"):
        GlyphReader(tmp_path / "nowhere")
    card["classes"] = ["none", *TEXTS]
    for key, value, says in (("share", 0.0, "share must be"), ("threshold", 1.5, "threshold must be")):
        (tmp_path / "glyph_reader.json").write_text(json.dumps({**card, key: value}))
        with pytest.raises(GlyphModelError, match=says):
            GlyphReader(tmp_path)
    (tmp_path / "glyph_reader.json").write_text(json.dumps({**card, "offset": 0.9}))
    with pytest.raises(GlyphModelError, match="offset must be"):
        GlyphReader(tmp_path)
    (tmp_path / "glyph_reader.json").write_text(json.dumps({**card, "ink": ["d12"]}))
    with pytest.raises(GlyphModelError, match="ink names kinds"):
        GlyphReader(tmp_path)
    (tmp_path / "glyph_reader.json").write_text(json.dumps({**card, "share": "wide"}))
    with pytest.raises(GlyphModelError, match=r"glyph_reader\.json"):
        GlyphReader(tmp_path)
    (tmp_path / "glyph_reader.json").write_text(json.dumps(card))
    (tmp_path / "glyph_reader.onnx").write_bytes(b"not a network")
    with pytest.raises(GlyphModelError, match="cannot load"):
        GlyphReader(tmp_path)


@pytest.mark.parametrize("kind", ["d20", "d10", "d10t", "d6n"])
def test_held_out_renders_are_read_upright_and_never_surely_wrong(kind: str) -> None:
    from dicetower.vision.synth.numerals import render_crop
    from dicetower.vision.training.numerals.data import TEST_SEED

    reader = GlyphReader()
    top1 = wrong = 0
    for i in range(12):
        face = KINDS[kind].faces[(3 * i) % len(KINDS[kind].faces)]
        frame, box = render_crop(TEST_SEED + 60_000 + i, kind, face)
        read = reader.read(frame, [box], [kind])[0]
        top1 += read.best == face
        wrong += read.face is not None and read.face != face
    # the card's threshold keeps sure reads right; the likeliest face is right on most renders
    assert wrong == 0 and top1 >= 9


def test_rendered_training_crops_are_upright_numerals_and_half_turned_none() -> None:
    from dicetower.vision.training.glyphs.data import HALF_TURN_ALIKE
    from dicetower.vision.training.glyphs.renders import SEED, face_text, render_upright

    assert face_text("d10t", 0) == "00" and face_text("d10t", 70) == "70" and face_text("d10", 0) == "0"
    x, y = render_upright(SEED, 8, turns=2, workers=1)
    assert x.shape == (len(y), GLYPH_INPUT, GLYPH_INPUT) and x.dtype == np.uint8
    texts = [TEXTS[c - 1] for c in y if c > 0]
    assert len(texts) == 16  # two turns of each die's numeral
    alike = sum(t in HALF_TURN_ALIKE for t in texts[::2])
    assert int((y == 0).sum()) == 8 - alike  # one half turn each, unless it reads the same
    again, _ = render_upright(SEED, 8, turns=2, workers=1)
    assert np.array_equal(x, again)


def test_the_trainer_wants_one_weight_per_extra_at_most(capsys: pytest.CaptureFixture[str]) -> None:
    from dicetower.vision.training.glyphs.train import main

    with pytest.raises(SystemExit):
        main(["--extra", "a.npz", "--extra-weight", "2", "--extra-weight", "3"])
    assert "--extra-weight" in capsys.readouterr().err


def test_the_numeral_s_own_centre_reads_d10_kites_the_box_centre_misses() -> None:
    from dicetower.vision.synth.numerals import render_crop
    from dicetower.vision.training.numerals.data import TEST_SEED

    with_ink = GlyphReader()
    assert "d10" in with_ink.ink and "d20" not in with_ink.ink
    without = GlyphReader()
    without.ink = ()
    sure = {"with": 0, "without": 0}
    for i in range(10):
        face = KINDS["d10"].faces[i]
        frame, box = render_crop(TEST_SEED + 80_000 + i, "d10", face)
        sure["with"] += with_ink.read(frame, [box], ["d10"])[0].face == face
        sure["without"] += without.read(frame, [box], ["d10"])[0].face == face
    assert sure["with"] >= sure["without"] + 2


def test_the_coarse_turn_search_reads_what_every_turn_reads() -> None:
    from dicetower.vision.synth.numerals import render_crop
    from dicetower.vision.training.numerals.data import TEST_SEED

    coarse, every = GlyphReader(), GlyphReader()
    coarse.coarse, every.coarse = True, False
    same = 0
    for i, kind in enumerate(["d20", "d10", "d10t", "d6n"] * 3):
        frame, box = render_crop(TEST_SEED + 90_000 + i, kind, KINDS[kind].faces[i % len(KINDS[kind].faces)])
        a, b = coarse.read(frame, [box], [kind])[0], every.read(frame, [box], [kind])[0]
        assert a.confidence <= b.confidence + 1e-9  # a subset of the turns
        same += a.best == b.best
    assert same >= 11

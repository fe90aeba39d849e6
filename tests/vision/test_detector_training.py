"""The detector's training code: starting from the shipped ONNX file (torch parts skip without torch)."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from dicetower.vision.detector import MODEL_PATH


def _frames(seed: int, n: int, size: int) -> np.ndarray:
    """Photo-like inputs: a tray colour, a few bright squares with dark dots, noise; 0..1 floats."""
    rng = np.random.default_rng(seed)
    out = np.empty((n, 3, size, size), np.float32)
    for i in range(n):
        img = np.full((size, size, 3), rng.integers(40, 200, 3), np.uint8)
        for _ in range(int(rng.integers(1, 6))):
            side = int(rng.integers(12, 40))
            x, y = (int(v) for v in rng.integers(0, size - side, 2))
            cv2.rectangle(
                img, (x, y), (x + side, y + side), tuple(int(v) for v in rng.integers(150, 256, 3)), -1
            )
            cv2.circle(img, (x + side // 2, y + side // 2), max(2, side // 8), (20, 20, 20), -1)
        noisy = img.astype(np.float32) + rng.normal(0, 6, img.shape)
        out[i] = np.clip(noisy, 0, 255).transpose(2, 0, 1) / 255.0
    return out


def test_the_shipped_file_unfolds_into_a_model_that_computes_the_same() -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnx")
    from dicetower.vision.training.detector.model import build_model, state_from_onnx

    model = build_model()
    model.load_state_dict(state_from_onnx(MODEL_PATH, _frames(0, 16, 160)))
    x = _frames(1, 2, 320)
    net = cv2.dnn.readNetFromONNX(str(MODEL_PATH))
    want = []
    for i in range(len(x)):
        net.setInput(x[i : i + 1])
        want.append(np.asarray(net.forward()))
    model.eval()
    with torch.no_grad():
        got = model(torch.from_numpy(x)).numpy()
    # Eval mode is the file exactly, whatever statistics the norms were given.
    np.testing.assert_allclose(got, np.concatenate(want), atol=1e-3)
    # Train mode (each norm divides by its batch's own statistics) starts near the file on
    # inputs like those it was unfolded on, rather than from norms that rescale everything.
    model.train()
    with torch.no_grad():
        batch = _frames(0, 16, 160)
        fresh = model(torch.from_numpy(batch)).numpy()
        model.eval()
        exact = model(torch.from_numpy(batch)).numpy()
    centre_gap = np.abs(fresh[:, 0] - exact[:, 0])
    assert float(np.median(centre_gap)) < 0.1 * float(np.abs(exact[:, 0]).mean())


def test_a_file_that_is_not_the_detector_is_refused(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("onnx")
    from dicetower.vision.models import __file__ as models_init
    from dicetower.vision.training.detector.model import state_from_onnx

    junk = tmp_path / "detector.onnx"
    junk.write_bytes(b"not a protobuf at all")
    with pytest.raises(ValueError, match="not a readable ONNX file"):
        state_from_onnx(junk, _frames(0, 2, 64))
    reader = Path(models_init).with_name("d6_reader.onnx")
    with pytest.raises(ValueError, match=r"no tensor stem\.0\.weight"):
        state_from_onnx(reader, _frames(0, 2, 64))


@pytest.mark.parametrize("size", ["300", "0", "-64"])
def test_a_run_size_the_net_cannot_take_is_refused_before_any_work(size: str, capsys) -> None:
    """cv2.dnn clamps the misaligned maps of such a square with only a warning: refuse it up front."""
    pytest.importorskip("torch")
    from dicetower.vision.training.detector.train import main

    with pytest.raises(SystemExit) as exit_:
        main(["--run-at", size, "--out", "/nonexistent/detector.onnx"])
    assert exit_.value.code == 2
    assert "multiple of 32" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--resume", "/nonexistent/detector.onnx"], "no such file"),
        (["--export-only"], "give --resume CHECKPOINT.pt"),
        (["--export-only", "--resume", str(MODEL_PATH)], "give --resume CHECKPOINT.pt"),
    ],
)
def test_a_resume_that_cannot_work_is_refused_before_any_work(args: list[str], says: str, capsys) -> None:
    pytest.importorskip("torch")
    from dicetower.vision.training.detector.train import main

    with pytest.raises(SystemExit) as exit_:
        main([*args, "--out", "/nonexistent/detector.onnx"])
    assert exit_.value.code == 2
    assert says in capsys.readouterr().err


def test_a_resumed_run_keeps_the_card_it_started_from(tmp_path: Path) -> None:
    """The shipped card's history is the only record of how the file came to be: never drop it."""
    import json

    from dicetower.vision.training.detector.train import new_card, previous_card

    shipped = json.loads(MODEL_PATH.with_suffix(".json").read_text(encoding="utf-8"))
    previous = previous_card(MODEL_PATH)
    assert previous == shipped
    run = {"command": "python -m dicetower.vision.training.detector.train --resume X", "steps": 10}
    card = new_card(run, 320, 128613, previous)
    assert card["input_size"] == 320 and card["this_run"] == run
    assert card["previous_card"] == shipped
    # Trained on again: the chain grows, nothing is lost.
    onnx = tmp_path / "detector.onnx"
    onnx.write_bytes(b"")
    onnx.with_suffix(".json").write_text(json.dumps(card), encoding="utf-8")
    again = new_card({"steps": 5}, 320, 128613, previous_card(onnx))
    assert again["previous_card"]["previous_card"] == shipped


def test_a_start_without_a_readable_card_has_no_previous_card(tmp_path: Path) -> None:
    from dicetower.vision.training.detector.train import new_card, previous_card

    assert previous_card(None) is None
    assert previous_card(tmp_path / "state.pt") is None  # a checkpoint carries no card
    onnx = tmp_path / "detector.onnx"
    assert previous_card(onnx) is None  # no .json beside it
    onnx.with_suffix(".json").write_text("{not json", encoding="utf-8")
    assert previous_card(onnx) is None
    assert "previous_card" not in new_card({}, 320, 1, None)

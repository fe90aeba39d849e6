"""Load an ONNX model into ``cv2.dnn`` with the engine that runs our small nets fastest.

Why one place: both models (detector, face reader) are small CNNs run a photo at a time on
one core of a Pi, and OpenCV 5's classic engine runs the face reader about twice as fast as
its new default engine (25 crops: 9.7 against 17.9 ms, interleaved runs on one core);
the detector runs the same on both, so it takes the same path. OpenCV 4 has no engine
choice, so the plain loader is the fallback.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from .files import read_bounded

__all__ = ["MAX_CARD_BYTES", "load_card", "load_onnx"]

#: A network's card (its JSON beside the ONNX file) is at most this long; the shipped ones are under 8 KB.
MAX_CARD_BYTES = 4_000_000


def load_onnx(path: str | Path | bytes) -> Any:
    """A ``cv2.dnn.Net`` for ``path`` (or the file's bytes, already read and checked);
    raises the last ``cv2.error`` when no engine loads it."""
    engines = [getattr(cv2.dnn, "ENGINE_CLASSIC", None), None]
    source = np.frombuffer(path, np.uint8) if isinstance(path, bytes) else str(path)
    last: cv2.error | None = None
    for engine in engines:
        try:
            if engine is None:
                return cv2.dnn.readNetFromONNX(source)
            return cv2.dnn.readNetFromONNX(source, engine)
        except cv2.error as exc:
            last = exc
    assert last is not None
    raise last


def load_card(
    folder: Path, model: str, card: str, error: type[Exception]
) -> tuple[Any, dict[str, Any], Path]:
    """``(cv2.dnn.Net, card dict, card path)`` of a network and its JSON card in ``folder``.

    Why one place: every shipped network is an ONNX file beside a card; a missing file, a card
    that is not JSON and a file OpenCV cannot load each end in one clear ``error``, not a
    ``cv2.error`` traceback.
    """
    model_path, card_path = folder / model, folder / card
    if not model_path.is_file() or not card_path.is_file():
        raise error(f"{folder}: missing {model} or {card} (docs/numerals.md trains them)")
    try:
        meta = json.loads(read_bounded(card_path, MAX_CARD_BYTES).decode("utf-8"))
    except OSError as exc:
        raise error(f"{card_path}: cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise error(f"{card_path}: bad metadata: {exc}") from None
    if not isinstance(meta, dict):
        raise error(f"{card_path}: bad metadata: not a JSON object")
    try:
        net = load_onnx(model_path)
    except cv2.error as exc:
        raise error(f"{model_path}: cv2.dnn cannot load it: {exc}") from None
    return net, meta, card_path

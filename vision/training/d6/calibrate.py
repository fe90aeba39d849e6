"""Calibrate a trained face reader on the val split and write it as the runtime loads it.

Temperature scaling on val crops cut as the runtime cuts them (the exact labelled crops and the
same dice framed as an imprecise detector frames them, :func:`~.augment.jitter_crop`), read
as the runtime reads them (a mirrored second look at unsure crops,
:func:`~dicetower.vision.faces.pips.looked_twice`); then per-face thresholds chosen so every face is
rejected at the same rate and confidently wrong answers stay under the target
(:func:`~dicetower.vision.faces.thresholds.choose_thresholds`). The network is exported with
``torch.onnx.export(dynamo=True)`` (opset 18) beside its model card, ``d6_reader.json``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ...faces.pips import CHANNELS, CROP_MARGIN, INPUT, blur_score
from ...faces.thresholds import choose_thresholds
from .augment import jitter_crop, turn_limits
from .data import D6_DATASETS, OTHER_GROUP
from .nets import export, torch_logits

__all__ = ["Calibration", "calibrate", "calibration_crops", "fit_temperature", "write_reader"]

#: Names of the calibration groups by id (the d6 datasets, then :mod:`.data`'s own groups).
GROUP_NAMES = (*D6_DATASETS, "synth", "other dice (class 0)", "synth oblique")


@dataclass(frozen=True)
class Calibration:
    """What calibration chose: the card's temperature, thresholds and blur limit, and its figures."""

    temperature: float
    thresholds: dict[int, float]
    blur_min: float
    stats: dict[str, Any]


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(1, keepdims=True)


def fit_temperature(logits: np.ndarray, labels: np.ndarray) -> float:
    """The temperature minimising validation NLL (grid search: robust, no optimiser state)."""
    best = (float("inf"), 1.0)
    for t in np.exp(np.linspace(math.log(0.3), math.log(5.0), 120)):
        p = _softmax(logits / t)
        nll = -np.mean(np.log(p[np.arange(len(labels)), labels] + 1e-12))
        best = min(best, (nll, float(t)))
    return best[1]


def calibration_crops(
    data: dict[str, np.ndarray], oblique: dict[str, float] | None, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The val split's crops, faces and groups: each die exactly as labelled, then jittered.

    The jittered crops are turned no more than training turned the die's dataset
    (:func:`~.augment.turn_limits`); ``seed`` makes them the same on every run.
    """
    val = np.flatnonzero(data["split"] == 1)
    rng = np.random.default_rng(seed + 7)
    limits = turn_limits(data["ds"][val], oblique)
    jittered = np.stack(
        [jitter_crop(data["ctx"][i], rng, max_turn=lim) for i, lim in zip(val, limits, strict=True)]
    )
    crops = np.concatenate([data["crop"][val], jittered])
    faces = np.concatenate([data["face"][val], data["face"][val]])
    groups = np.concatenate([data["ds"][val], data["ds"][val]])
    return crops, faces, groups


def calibrate(
    model: Any,
    data: dict[str, np.ndarray],
    *,
    second_look_below: float,
    oblique: dict[str, float] | None = None,
    other_dice: bool = False,
    seed: int = 0,
) -> Calibration:
    """Temperature, per-face thresholds and blur limit of ``model`` on the val split of ``data``.

    ``other_dice``: a crop of another kind of die read as a face is priced like a wrong face.
    """
    crops, faces, groups = calibration_crops(data, oblique, seed)
    logits = torch_logits(model, crops, second_look_below)
    t = fit_temperature(logits, faces)
    probs = _softmax(logits / t)
    negative_groups = (OTHER_GROUP,) if other_dice else ()
    thr, stats = choose_thresholds(probs, faces, groups, negative_groups=negative_groups)
    stats["groups"] = {str(i): name for i, name in enumerate(GROUP_NAMES)}
    # "blurred" names the reason of a rejection when the crop is blurrier than 99 % of the
    # validation dice that were read right; it never rejects a die on its own.
    ok = (probs.argmax(1) == faces) & (faces > 0)
    blur_min = float(np.quantile([blur_score(c) for c in crops[ok]], 0.01)) if ok.any() else 0.0
    return Calibration(t, thr, blur_min, stats)


def write_reader(
    model: Any, out: Path, calibration: Calibration, second_look_below: float, recipe: dict[str, Any]
) -> Path:
    """Export ``model`` to ``out/d6_reader.onnx`` with its card; returns the ONNX file's path.

    The card says what the runtime needs (input, second look, temperature, thresholds, blur
    limit) and, from ``recipe``, how the model was made (datasets, seed, options).
    """
    out.mkdir(parents=True, exist_ok=True)
    onnx_path = out / "d6_reader.onnx"
    export(model, onnx_path)
    card = {
        "schema": "dicetower.d6_reader/1",
        "input": INPUT,
        "channels": CHANNELS,
        "views": 2,
        "second_look_below": second_look_below,
        "second_view": "mirror",
        "crop_margin": CROP_MARGIN,
        "classes": ["not_a_die", 1, 2, 3, 4, 5, 6],
        "temperature": round(calibration.temperature, 4),
        "thresholds": {str(k): round(v, 5) for k, v in calibration.thresholds.items()},
        "blur_min": round(calibration.blur_min, 5),
        "calibration": calibration.stats,
        **recipe,
    }
    (out / "d6_reader.json").write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
    return onnx_path

"""A face reader fitted on one taught die's own crops: a small CNN, read with ``cv2.dnn``.

Why beside the head (:mod:`.head`): a head on a general network's frozen features can only
re-weigh what that network already sees. On real pip d6 sets the general network misses what
makes one owner's dice differ (a wood grain, engraved pips, a camera's light), and the head on its
features reads no better than the general reader. A small network fitted on the die's own crops
learns those. The fit trains one per taught die (:mod:`.fitted_training`, which needs torch),
reads the held-back photos with both, and keeps, per die, the reader that reads more of them right
with none wrong (:mod:`.fitted_choice`).

This module is the reading side, with no torch: the crop a fitted reader sees
(:func:`fitted_crops`), the input it takes (:func:`fitted_blob`), its file name on the card
(:func:`fitted_file`) and its face probabilities (:func:`fitted_probabilities`). A crop is the
die's square (:func:`~dicetower.vision.faces.pips.crop_die`) at :data:`FITTED_INPUT` pixels, each
crop standardised on its own, so the light's level and spread matter little. The network is trained
at every turn of the die; reading averages its answers at :data:`READ_QUARTERS` (four quarter
turns), which steadies a face read near the edge of two.

Its last row is *not a die*: trained on patches of the fitted photos where no labelled die lies.
Without it the network names a face for anything the locator boxes (on matteop65-d6-wood's
held-back photos, eight boxes of bare wood read as a 1 at 0.99 and more), and a die's threshold
(just above its surest answer that was not right) then shuts out every die.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..faces.pips import crop_die
from .head import softmax

__all__ = [
    "FITTED_INPUT",
    "FITTED_PREFIX",
    "READ_QUARTERS",
    "fitted_blob",
    "fitted_crops",
    "fitted_file",
    "fitted_probabilities",
    "is_fitted_file",
]

#: The side, in pixels, of the crop a fitted reader reads.
FITTED_INPUT = 48
#: The turns (degrees) each die is read at; the answers' probabilities are averaged.
READ_QUARTERS = (0.0, 90.0, 180.0, 270.0)
#: A fitted reader's file is ``FITTED_PREFIX`` + the die's index on the card + ``.onnx``.
FITTED_PREFIX = "fitted-"


def fitted_file(index: int) -> str:
    """The file name of the fitted reader of the card's ``index``-th die."""
    return f"{FITTED_PREFIX}{index}.onnx"


def is_fitted_file(name: str, most: int) -> bool:
    """Is ``name`` a fitted reader's file of one of a card's first ``most`` dice?"""
    stem = name.removeprefix(FITTED_PREFIX).removesuffix(".onnx")
    return (
        name.startswith(FITTED_PREFIX)
        and name.endswith(".onnx")
        and stem.isdigit()
        and str(int(stem)) == stem
        and int(stem) < most
    )


def fitted_crops(
    frame: np.ndarray, box: tuple[float, float, float, float], angles: tuple[float, ...] = READ_QUARTERS
) -> list[np.ndarray]:
    """The die at ``box`` as a fitted reader reads it, once per turn in ``angles`` (BGR)."""
    return [crop_die(frame, box, size=FITTED_INPUT, angle=a) for a in angles]


def fitted_blob(crops: list[np.ndarray] | np.ndarray) -> np.ndarray:
    """``(N, 3, FITTED_INPUT, FITTED_INPUT)`` float32: each BGR crop standardised on its own.

    One mean and spread over all three planes of a crop, so colour relations survive (red pips on
    a black die) while the light's level and contrast do not matter. Grey crops repeat their level.
    """
    x = np.asarray(crops, np.float32)
    if x.ndim == 3:
        x = np.repeat(x[..., None], 3, axis=3)
    n = len(x)
    flat = x.reshape(n, -1)
    mean = flat.mean(axis=1).reshape(n, 1, 1, 1)
    spread = flat.std(axis=1).reshape(n, 1, 1, 1) + 1.0  # a flat crop stays near zero
    return np.ascontiguousarray(((x - mean) / spread).transpose(0, 3, 1, 2))


def fitted_probabilities(
    net: Any, frame: np.ndarray, boxes: list[tuple[float, float, float, float]]
) -> np.ndarray:
    """``(len(boxes), faces)``: the fitted reader ``net`` (a ``cv2.dnn`` net) at each box, averaged
    over :data:`READ_QUARTERS`; each face's probability beside *not a die* (the last row, left out),
    so a box that is no die is sure of no face."""
    if not boxes:
        return np.zeros((0, 0), np.float32)
    crops = [c for b in boxes for c in fitted_crops(frame, b)]
    net.setInput(fitted_blob(crops))
    logits = np.asarray(net.forward(), np.float32).reshape(len(crops), -1)
    p = softmax(logits).reshape(len(boxes), len(READ_QUARTERS), -1)
    return p.mean(axis=1)[:, :-1]

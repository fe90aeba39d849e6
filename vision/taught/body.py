"""A taught die's body: its colour and its size in the tower's photos, to tell it from the others.

Why: a tray holds several taught dice, and each must be read by its own reader. The general
reader names a die's kind and a colour *name*; two taught dice may share a name (a red and an
orange d6 under a warm lamp are both "orange"), and on a die it never saw the kind can be
wrong. A taught die's body, learnt from its own crops, is measured in CIE Lab (where distance
is colour difference) with its size in photo pixels, so a located die is the taught die whose
body it is nearest (:func:`body_distance`), within :data:`MAX_DELTA_E` of colour.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from ..colour import body_hsv_batch

__all__ = [
    "KIND_PENALTY",
    "MAX_DELTA_E",
    "SIZE_WEIGHT",
    "Body",
    "body_distance",
    "colour_distance",
    "hsv_to_lab",
    "learn_body",
]

#: A located die farther than this (CIE76 delta E) from every taught body is no taught die.
MAX_DELTA_E = 30.0
#: Delta E added per doubling of size away from the taught die's usual size.
SIZE_WEIGHT = 12.0
#: Delta E added when the general reader names another kind than the taught die's.
KIND_PENALTY = 20.0


def hsv_to_lab(hsv: Sequence[int]) -> np.ndarray:
    """An OpenCV HSV triple (H 0-179) as CIE Lab (L 0-100)."""
    h, s, v = (int(np.clip(c, 0, 255)) for c in hsv)
    pix = np.array([[[min(h, 179), s, v]]], np.uint8)
    bgr = cv2.cvtColor(pix, cv2.COLOR_HSV2BGR).astype(np.float32) / 255.0
    return cv2.cvtColor(bgr, cv2.COLOR_BGR2Lab).reshape(3)


@dataclass(frozen=True)
class Body:
    """A die's body as the tower sees it: median colour (Lab), its spread, and its size (px)."""

    lab: tuple[float, float, float]
    spread: float  #: median delta E of the crops from ``lab``
    side: float  #: median box side in photo pixels (0: unknown)

    def to_json(self) -> dict[str, Any]:
        return {
            "lab": [round(v, 2) for v in self.lab],
            "spread": round(self.spread, 2),
            "side": round(self.side, 1),
        }


def learn_body(crops: Sequence[np.ndarray], sides: Sequence[float]) -> Body:
    """The body of a die from its crops (BGR) and its box sides in photo pixels."""
    labs = np.array([hsv_to_lab(hsv) for hsv, _spread in body_hsv_batch(list(crops))], np.float64)
    if len(labs) == 0:
        return Body((50.0, 0.0, 0.0), 0.0, 0.0)
    median = np.median(labs, axis=0)
    spread = float(np.median(np.sqrt(((labs - median) ** 2).sum(axis=1))))
    side = float(np.median(sides)) if len(sides) else 0.0
    return Body((float(median[0]), float(median[1]), float(median[2])), spread, side)


def colour_distance(body: Body, hsv: Sequence[int]) -> float:
    """CIE76 delta E between ``body``'s colour and a located die's (OpenCV HSV)."""
    return float(np.sqrt(((hsv_to_lab(hsv) - np.array(body.lab)) ** 2).sum()))


def body_distance(body: Body, hsv: Sequence[int], side: float, same_kind: bool) -> float:
    """How unlike ``body`` a located die is: colour difference, plus size and kind mismatch."""
    delta_e = colour_distance(body, hsv)
    size = SIZE_WEIGHT * abs(np.log2(side / body.side)) if body.side > 0 and side > 0 else 0.0
    return delta_e + size + (0.0 if same_kind else KIND_PENALTY)

"""Which taught die a located die is: a head over the taught dice, fitted on all their crops.

Why a head of its own: the general reader names a die's kind and a colour name, and the taught
bodies (:mod:`.body`) give colour and size, but a white d6 and a white d10 of one set differ in
neither colour nor much in size, and the general reader takes an unseen d10 for a d6 now and
then. Every taught die's crops are at hand, so a head over the numeral network's features (it
sees the whole die: its outline, its numerals or pips) learns to tell this set's dice apart.
Reading pairs the located dice with the taught ones at least total cost (:mod:`.reader`), this
head's answer one part of it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..eval.intervals import binomial_bounds
from .features import Network
from .head import Head, fit_head
from .samples import SampleCache
from .teaching import TaughtDie

__all__ = ["IDENTITY_NETWORK", "STRENGTH", "Telling", "fit_telling"]

#: The network the dice are told apart on.
IDENTITY_NETWORK = Network.NUMERALS
#: The telling head's pull toward nothing (it has no general answer to start from).
STRENGTH = 1e-2


@dataclass
class Telling:
    """The telling head: its rows in the identity network's taught output, the dice in row order."""

    head: Head
    ids: list[str]
    counts: dict[str, int]  #: how many dice of each id a throw holds at most
    figures: dict[str, Any]
    rows: tuple[int, int] = (0, 0)

    def to_json(self) -> dict[str, Any]:
        return {
            "network": IDENTITY_NETWORK.value,
            "rows": list(self.rows),
            "dice": self.ids,
            "counts": self.counts,
            "figures": self.figures,
        }


def _most_per_photo(die: TaughtDie) -> int:
    return max(Counter(e.line for e in die.examples).values(), default=1)


def fit_telling(dice: list[TaughtDie], faces: dict[str, tuple[int, ...]], samples: SampleCache) -> Telling:
    """The head that tells ``dice`` apart, and how many held-back dice it told right."""
    xs, ys, hx, hy = [], [], [], []
    for i, die in enumerate(dice):
        fit = samples.telling(die, faces[die.id], IDENTITY_NETWORK)
        held = samples.get(die, faces[die.id], IDENTITY_NETWORK, fitted=False)
        xs.append(fit.features)
        ys.append(np.full(len(fit.features), i))
        hx.append(held.features)
        hy.append(np.full(len(held.features), i))
    classes = tuple(range(len(dice)))
    zero = (np.zeros((len(dice), xs[0].shape[1]), np.float32), np.zeros(len(dice), np.float32))
    head = fit_head(np.concatenate(xs), np.concatenate(ys), classes, zero, strength=STRENGTH)  # float16
    held_x, held_y = np.vstack(hx), np.concatenate(hy)
    pred = head.probabilities(held_x).argmax(axis=1)
    right = int((pred == held_y).sum())
    lo, hi = binomial_bounds(right, len(held_y)) if len(held_y) else (0.0, 1.0)
    figures = {"dice": len(held_y), "right": right, "right_interval": [round(lo, 4), round(hi, 4)]}
    return Telling(head, [d.id for d in dice], {d.id: _most_per_photo(d) for d in dice}, figures)

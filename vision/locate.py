"""Find dice in a frame (stage 1 of locate -> read -> report).

CONTRACT (implementation owned by the detector work): ``locate_dice`` returns one
:class:`DieCandidate` per die-like object, box in frame pixels, without reading faces.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["DieCandidate", "locate_dice"]


@dataclass(frozen=True)
class DieCandidate:
    box: tuple[float, float, float, float]  #: [x, y, w, h] of the whole die body in frame pixels
    score: float = 1.0  #: detector confidence that this is a die
    contour: tuple[tuple[int, int], ...] = ()
    touching: bool = False  #: merged with a neighbour and could not be split cleanly
    cut_off: bool = False  #: touches the frame border


def locate_dice(
    frame: np.ndarray, reference: np.ndarray | None = None, tray: np.ndarray | None = None
) -> list[DieCandidate]:
    """Return candidate dice in a BGR ``frame``; ``reference`` is a photo of the empty tray."""
    raise NotImplementedError

"""A throw for teaching: when its reading counts, and what each located die is.

Why apart from the roll cycle's check (:func:`~.matching.reading_problem`): a roll needs every
face read, and a throw for teaching does not. The general reader reads dice it was not trained
on poorly, so demanding faces would tap and re-shake forever on exactly the dice that need
teaching. What teaching needs is a photo of the loaded dice, each lying flat, each known by its
loaded kind and colour:

- the count is the cycle's (:func:`~.matching.count_problem`): no dice fails, a missing or extra
  die is thrown again;
- a die that lies on another, leans, is blurred or cut by the frame edge
  (:data:`~dicetower.vision.reading.NOT_FLAT`) shows no one face up, so its crop would teach
  nothing: it is tapped and thrown again as in the cycle;
- each die is paired with one loaded die (:func:`~dicetower.vision.identity.identify_loaded`):
  kind where the reader is sure of it, colour always. Dice of one kind and colour are one die to
  teaching, so which of them is which never matters. A reading whose dice cannot all be paired
  (a sure d10 where only a d20 is left) is thrown again.

A face is never looked at.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..vision.identity import identify_loaded
from ..vision.reading import NOT_FLAT, Reading
from .config import TrayDie
from .matching import count_problem
from .records import FailureReason, TeachDie

__all__ = ["teach_dice", "teaching_check"]


def teaching_check(
    reading: Reading, tray: Sequence[TrayDie]
) -> tuple[tuple[FailureReason, str] | None, list[int]]:
    """``(problem, loaded)``: what keeps ``reading`` from counting for teaching, or None; and,
    when it counts, the index into ``tray`` of each read die's loaded die."""
    problem = count_problem(reading, tray)
    if problem is not None:
        return problem, []
    leaning = [d for d in reading.dice if d.reason in NOT_FLAT]
    if leaning:
        why = ", ".join(sorted({d.reason.value for d in leaning if d.reason is not None}))
        return (FailureReason.UNREADABLE, f"{len(leaning)} not lying flat ({why})"), []
    loaded = identify_loaded(reading.dice, [(d.kind, d.colour) for d in tray])
    if None in loaded:
        left = [str(tray[i]) for i in range(len(tray)) if i not in loaded]
        kinds = sorted({reading.dice[r].kind for r, i in enumerate(loaded) if i is None})
        return (
            FailureReason.DIE_MISSING,
            f"die missing: the {', '.join(left)} not seen ({', '.join(kinds)} in its place)",
        ), []
    return None, [i for i in loaded if i is not None]


def teach_dice(frame: np.ndarray, reading: Reading | None, loaded: Sequence[TrayDie]) -> list[TeachDie]:
    """Each die of ``reading`` as its loaded die (``loaded[i]`` is ``reading.dice[i]``'s) and crop."""
    from ..vision.taught.folder import crop_png  # the teach folder's crop, loaded when teaching

    if reading is None:
        return []
    return [
        TeachDie(die.kind, die.colour, crop_png(frame, read.box))
        for read, die in zip(reading.dice, loaded, strict=True)
    ]

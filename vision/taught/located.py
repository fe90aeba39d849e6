"""Labelled photos without boxes: a photo is located (one die of the label's kind), a crop is the die.

Why: a label that gives a die's kind and face but no box says only that the photo holds that
die. Taken as the die's crop, a head is fitted on the whole photo (tray, plate, hand around the
die), while reading later cuts the die where the locator finds it: the head then reads framings
it never saw. So a photo without boxes is located as reading locates it (the general reader),
and it teaches only when the locator finds exactly one die that can be of the label's kind;
otherwise it is refused with its reason, counted on the card.

A folder is taken as **crops** (each image one die, cut around it) only when it says so
(``teach fit --crops``, :attr:`~.fit.FitOptions.crops`) or when every image without a box is
crop-sized: at most :data:`CROP_MAX_SIDE` pixels a side, the size of the crops a tower keeps.
The card's ``input`` says which, and why.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..kinds import label_of
from ..reading import Reading, UnreadableReason
from .teaching import Example, TeachingSet

__all__ = ["CROP_MAX_SIDE", "InputForm", "locate_examples", "photo_box"]

#: An image without a box whose longer side is at most this many pixels is a crop of one die.
CROP_MAX_SIDE = 200

#: Reads a frame (and its empty tray, or None) as the general reader does.
Locate = Callable[[np.ndarray, np.ndarray | None], Reading]


@dataclass
class InputForm:
    """What the folder's images are, as the card records it (``input``)."""

    form: str  #: ``boxed`` (every die has a box), ``photos`` (located) or ``crops``
    why: str
    located: int = 0  #: photos without boxes whose die was located
    refused: dict[str, int] = field(default_factory=dict)  #: reason -> photos

    def to_json(self) -> dict[str, Any]:
        return {"form": self.form, "why": self.why, "located": self.located, "refused": dict(self.refused)}

    def note(self) -> str | None:
        """A line for the fit's notes, when photos were located or refused."""
        if self.form != "photos":
            return None
        refused = "; ".join(f"{n} {why}" for why, n in sorted(self.refused.items(), key=lambda kv: -kv[1]))
        tail = f"; refused {sum(self.refused.values())} ({refused})" if self.refused else ""
        return f"photos without boxes: located the die in {self.located}{tail}"


def photo_box(
    reading: Reading, kind: str, scale: float
) -> tuple[tuple[float, float, float, float] | None, str]:
    """The one located die that can be a ``kind`` (in photo pixels), or None and the reason.

    A die can be the label's when the general reader names its kind or is unsure of it; one of
    another kind named surely is not it.
    """
    fits = [
        d
        for d in reading.dice
        if label_of(d.kind) == kind or d.reason is UnreadableReason.KIND_UNSURE or d.face is None
    ]
    if not reading.dice:
        return None, "no die found"
    if not fits:
        return None, f"the die found is not a {kind}"
    if len(fits) > 1:
        return None, "more than one die found"
    x, y, w, h = fits[0].box
    s = max(scale, 1e-6)
    return (x / s, y / s, w / s, h / s), ""


def _crop_sized(photos: Mapping[Path, Any], paths: set[Path]) -> bool:
    sides = [max(photos[p][0].shape[:2]) / max(photos[p][1], 1e-6) for p in paths if p in photos]
    return bool(sides) and all(side <= CROP_MAX_SIDE for side in sides)


def locate_examples(
    teaching: TeachingSet, photos: Mapping[Path, Any], *, crops: bool, locate: Callable[[], Locate]
) -> InputForm:
    """Give each example without a box the box its die is located at, or drop it; say what was done.

    ``photos`` maps a photo to ``(frame, scale)``; ``locate`` opens the general reader (called
    only when some photo is to be located). Examples are changed in place in ``teaching``.
    """
    unboxed = {e.image for die in teaching.dice for e in die.examples if e.box is None}
    if not unboxed:
        return InputForm("boxed", "every die has a box")
    if crops:
        return InputForm("crops", "the fit was told so (--crops): each image is one die")
    if _crop_sized(photos, unboxed):
        return InputForm("crops", f"each image without a box is at most {CROP_MAX_SIDE} px a side")
    per_photo = Counter(e.image for die in teaching.dice for e in die.examples if e.box is None)
    reader = locate()
    refused: Counter[str] = Counter()
    boxes: dict[tuple[Path, str], tuple[float, float, float, float] | None] = {}
    crowded: set[Path] = set()
    located = 0
    for die in teaching.dice:
        kept: list[Example] = []
        for e in die.examples:
            if e.box is not None:
                kept.append(e)
                continue
            if e.image not in photos:
                continue  # unreadable photos are skipped (and noted) by the fit
            if per_photo[e.image] > 1:
                if e.image not in crowded:
                    crowded.add(e.image)
                    refused["labels more than one die without a box"] += 1
                continue
            key = (e.image, die.kind)
            if key not in boxes:
                frame, scale = photos[e.image]
                box, why = photo_box(reader(frame, None), die.kind, scale)
                boxes[key] = box
                if box is None:
                    refused[why] += 1
            box = boxes[key]
            if box is not None:
                located += 1
                kept.append(replace(e, box=box))
        die.examples = kept
    return InputForm("photos", "images without boxes are photos: each die is located", located, dict(refused))

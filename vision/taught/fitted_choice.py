"""The fit's fitted readers: one trained per taught die, and the choice between it and the head.

Steps, within :func:`~.fit.fit_model`:

1. :func:`train_fitted` trains a fitted reader (:mod:`.fitted`, :mod:`.fitted_training`) per
   taught die on its *fitted* crops (never the held-back ones), or says why none was trained
   (torch missing, too few crops);
2. :func:`attach_fitted` writes each beside the networks and names it on the die's card;
3. :func:`choose_readers` reads the held-back photos' dice (the same located dice the heads read)
   with each die's fitted reader, calibrates both readers as the heads are calibrated
   (:func:`~.heldback.calibrate`: a threshold just above the surest answer that was not right, the
   general answer where it reads some and none wrong), and keeps for each die the reader that
   reads the most held-back dice right with none wrong (the rule that chooses a head's network and
   strength); a tie keeps the head. The card records each reader's held-back figures and why the
   die's reader was chosen.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..imageio import ImageError, load_image_info
from .fallback import GeneralAnswer
from .fitted import fitted_file
from .fitted_training import STORED, background_boxes, missing, padded_crop, train_reader
from .heldback import Calibration, HeldBackRead, calibrate
from .model import TaughtDieCard, TaughtModel
from .reader import TaughtFrameReader
from .samples import example_box
from .teaching import Example, TaughtDie, split_at

__all__ = ["MIN_FITTED_CROPS", "FittedSet", "attach_fitted", "choose_readers", "train_fitted"]

#: Fewest fitted crops a die's fitted reader is trained on.
MIN_FITTED_CROPS = 12


@dataclass
class FittedSet:
    """The fitted readers a fit trained, by die id, and why any die has none."""

    trained: dict[str, Any] = field(default_factory=dict)  #: die id -> :class:`~.fitted_training.Trained`
    skipped: dict[str, str] = field(default_factory=dict)  #: die id -> why none was trained
    why_none: str | None = None  #: why the fit trained none at all (torch missing)
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "trained": {k: t.to_json() for k, t in self.trained.items()},
            "skipped": dict(self.skipped),
            "why_none": self.why_none,
            "seconds": round(self.seconds, 1),
        }


def _crops(
    die: TaughtDie,
    faces: tuple[int, ...],
    photos: Mapping[Path, Any],
    cut: int,
    boxes: Mapping[Path, list[Example]],
    seed: int,
) -> tuple[np.ndarray, np.ndarray]:
    """The die's fitted examples as padded crops (:func:`~.fitted_training.padded_crop`) and class
    indices, and one patch of each of their photos where no labelled die lies, as *not a die*
    (the last class). ``boxes`` holds every labelled die of each photo, of every taught die."""
    index = {f: i for i, f in enumerate(faces)}
    fitted, _held = split_at(die.examples, cut)
    rng = np.random.default_rng(seed)
    crops: list[np.ndarray] = []
    labels: list[int] = []
    for e in fitted:
        loaded = photos.get(e.image) if e.face in index else None
        if loaded is None:
            continue
        frame, scale = loaded
        box = example_box(e, frame, scale)
        crops.append(padded_crop(frame, box))
        labels.append(index[e.face])
        if e.box is None:  # a crop of its own: no tray around the die
            continue
        dice = [example_box(o, frame, scale) for o in boxes.get(e.image, [])]
        for patch in background_boxes(frame.shape, dice, max(box[2], box[3]), rng):
            crops.append(padded_crop(frame, patch))
            labels.append(len(faces))
    if not crops:
        return np.zeros((0, STORED, STORED, 3), np.uint8), np.zeros(0, np.int64)
    return np.stack(crops), np.array(labels, np.int64)


def train_fitted(
    dice: Sequence[TaughtDie],
    die_faces: Mapping[str, tuple[int, ...]],
    photos: Mapping[Path, Any],
    cut: int,
    log: Callable[[str], None],
    *,
    skip: bool = False,
) -> FittedSet:
    """A fitted reader per die, trained on its examples before manifest line ``cut`` (none when ``skip``)."""
    t0 = time.perf_counter()
    out = FittedSet()
    out.why_none = "not asked for (teach fit --fitted-reader)" if skip else missing()
    if out.why_none is not None:
        log(f"no fitted readers: {out.why_none}; each die keeps its head")
        return out
    boxes: dict[Path, list[Example]] = {}
    for die in dice:
        for e in die.examples:
            boxes.setdefault(e.image, []).append(e)
    for n, die in enumerate(dice):
        faces = die_faces[die.id]
        crops, labels = _crops(die, faces, photos, cut, boxes, seed=n)
        named = int((labels < len(faces)).sum())
        if named < MIN_FITTED_CROPS:
            out.skipped[die.id] = f"{named} fitted crops, fewer than {MIN_FITTED_CROPS}"
            continue
        log(f"training the {die.id}'s fitted reader on {named} crops and {len(crops) - named} of bare tray")
        out.trained[die.id] = train_reader(crops, labels, len(faces) + 1, seed=n, log=log)
        del crops
    out.seconds = time.perf_counter() - t0
    return out


def attach_fitted(fitted: FittedSet, cards: list[TaughtDieCard], out: Path) -> list[TaughtDieCard]:
    """Write each trained reader into ``out`` (``fitted-N.onnx``, N the die's index on the card)
    and name it on its die's card; the reader stays the head until :func:`choose_readers`."""
    named = []
    for i, card in enumerate(cards):
        trained = fitted.trained.get(card.id)
        if trained is None:
            named.append(card)
            continue
        name = fitted_file(i)
        tmp = out / f".{name}.tmp"
        tmp.write_bytes(trained.onnx)
        os.replace(tmp, out / name)
        named.append(replace(card, fitted=name))
    return named


def _fitted_reads(reads: list[HeldBackRead], model: TaughtModel) -> list[HeldBackRead]:
    """``reads`` with each die a fitted reader can read read by it instead of its head."""
    dice = {d.id: d for d in model.dice}
    out = []
    for read in reads:
        reading = read.result.reading
        todo = [i for i, (who, _h) in read.heads.items() if model.has_fitted(dice[who])]
        if reading is None or not todo:
            out.append(read)
            continue
        try:
            frame = load_image_info(read.result.entry.image).frame
        except ImageError:
            out.append(read)
            continue
        heads = dict(read.heads)
        for i in todo:
            who = heads[i][0]
            (answer,) = model.read(dice[who], frame, [reading.dice[i].box], reader="fitted")
            heads[i] = (who, answer)
        out.append(replace(read, heads=heads))
    return out


def _score(cal: Calibration, identity: str) -> dict[str, Any]:
    f = cal.per_die[identity]
    return {
        "dice": f["dice"],
        "right": f["right"],
        "wrong": f["wrong"],
        "threshold": round(cal.thresholds[identity], 4),
        "fallback": bool(cal.fallback.get(identity, {}).get("used", False)),
    }


def _better(fitted: dict[str, Any], head: dict[str, Any]) -> bool:
    """Does the fitted reader win: most right with none wrong (fewest wrong first); a tie keeps the head."""
    return (-fitted["wrong"], fitted["right"]) > (-head["wrong"], head["right"])


def _why(chosen: str, head: dict[str, Any], fitted: dict[str, Any]) -> str:
    def said(s: dict[str, Any]) -> str:
        return f"{s['right']} right, {s['wrong']} wrong of {s['dice']}"

    other = "head" if chosen == "fitted" else "fitted reader"
    mine = fitted if chosen == "fitted" else head
    theirs = head if chosen == "fitted" else fitted
    verb = "ties with" if (mine["right"], mine["wrong"]) == (theirs["right"], theirs["wrong"]) else "beats"
    name = "fitted reader" if chosen == "fitted" else "head"
    return f"held back: the {name} ({said(mine)}) {verb} the {other} ({said(theirs)})"


def choose_readers(
    reader: TaughtFrameReader,
    reads: list[HeldBackRead],
    cards: Sequence[TaughtDieCard],
    answer: GeneralAnswer | None,
    model: TaughtModel,
) -> tuple[Calibration, list[TaughtDieCard]]:
    """The calibration of the chosen readers, and the cards with each die's reader chosen.

    ``reads`` are the held-back photos read with every head answering; ``model`` is the model
    being fitted, loaded with open heads and its fitted readers.
    """
    head_cal = calibrate(reader, reads, cards, answer)
    if not any(model.has_fitted(d) for d in model.dice):
        return head_cal, list(cards)
    fitted_reads = _fitted_reads(reads, model)
    fitted_cal = calibrate(reader, fitted_reads, cards, answer)
    chosen: dict[str, dict[str, Any]] = {}
    for card in cards:
        head = _score(head_cal, card.id)
        if card.fitted is None:
            continue
        fitted = _score(fitted_cal, card.id)
        use = "fitted" if _better(fitted, head) else "head"
        chosen[card.id] = {"head": head, "fitted": fitted, "chosen": use, "why": _why(use, head, fitted)}
    merged = [
        replace(
            read,
            heads={
                i: (who, fr.heads[i][1] if chosen.get(who, {}).get("chosen") == "fitted" else h)
                for i, (who, h) in read.heads.items()
            },
        )
        for read, fr in zip(reads, fitted_reads, strict=True)
    ]
    final = [replace(c, reader=chosen[c.id]["chosen"]) if c.id in chosen else c for c in cards]
    cal = calibrate(reader, merged, final, answer)
    for identity, readers in chosen.items():
        cal.per_die[identity]["readers"] = readers
    return cal, final

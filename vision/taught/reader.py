"""Read a frame with a taught model: the general reader finds the dice, each taught die reads itself.

The general reader (:class:`~dicetower.vision.reader.FrameReader`) locates the dice and names
each one's kind and colour. Each located die is then matched to the taught die whose body it
is nearest (:func:`~.body.body_distance`: colour, size and kind), and read by that die's own
head (:class:`~.model.TaughtModel`), which answers only with that die's faces or says
``low_confidence``. A die no taught body is near keeps the general reader's reading, so a
tray may mix taught and untaught dice. A die the general reader could not read for a reason of
its own (cut off by the frame, too small, blurred, touching, cocked) stays unreadable: those
are facts about the photo, not about which face is up. One exception: a numeral die the general
reader refuses only for being under its imaging budget is read by its taught die (:func:`rereads`).
A taught die its head is unsure of takes the general numeral reader's sure answer when the fit
chose so for that die (:mod:`.fallback`: it read some held-back dice the head abstained on, and
none wrong), and never for a die under the budget.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..faces.pips import is_too_small
from ..identity import assign
from ..kinds import label_of
from ..reader import FrameReader, open_reader
from ..reading import DieReading, Reading, ReadStatus, UnreadableReason
from .body import MAX_DELTA_E, body_distance, colour_distance
from .fallback import READING_KINDS, Box, GeneralAnswer, reading_answer
from .model import TaughtDieCard, TaughtModel, TaughtRead

__all__ = [
    "FORBIDDEN",
    "REREAD",
    "TELL_WEIGHT",
    "TaughtFrameReader",
    "open_taught_reader",
    "rereads",
    "taught_die_reading",
]

#: Delta E of cost per nat of the telling head's doubt that a die is a taught die.
TELL_WEIGHT = 10.0
#: The cost of a pairing the colours forbid (above any allowed one).
FORBIDDEN = 1e9
#: General readings a taught die reads again: read, unsure of the face or kind, or unlike the
#: general reader's training dice (teaching is the remedy that reason names).
REREAD = frozenset(
    {None, UnreadableReason.LOW_CONFIDENCE, UnreadableReason.KIND_UNSURE, UnreadableReason.UNFAMILIAR}
)


def rereads(die: DieReading) -> bool:
    """Does a taught die read ``die`` again? Read, unsure, or refused only by the general budget.

    The general reader refuses a numeral die below its kind's imaging budget
    (:func:`~dicetower.vision.reader.below_budget`): that budget is the general reader's, measured
    on dice it never saw. A taught die has its own held-back figures, on photos from this camera,
    so it reads such a die again; a die under the pixel floor (:func:`~.faces.pips.is_too_small`)
    is too small for any reader.
    """
    if die.reason in REREAD:
        return True
    return die.reason is UnreadableReason.TOO_SMALL and not is_too_small(die.box)


def taught_die_reading(die: DieReading, taught: TaughtDieCard, read: TaughtRead) -> DieReading:
    """``die`` as its taught die read it: the taught kind, and the face or the reason it has none.

    One function for the reader and for the fit's held-back figures (:mod:`.heldback`), so the card
    counts what reading reports.
    """
    return replace(
        die,
        kind=taught.kind,
        face=read.face,
        status=ReadStatus.READ if read.face is not None else ReadStatus.UNREADABLE,
        reason=read.reason,
        confidence=read.confidence,
        face_centre=None,
    )


class TaughtFrameReader:
    """A :class:`~dicetower.vision.reading.DiceReader` over a taught model. Build with
    :func:`open_taught_reader`; call :meth:`read` per frame.

    ``last_taught`` holds the confidences of the taught dice of the last frame, for a running
    figure of how sure the taught reader is (the tower's drift check); ``last_heads`` maps each
    of those dice's index in the reading to its taught die and its head's own answer, before the
    general answer stood in (the fit chooses thresholds on it, :mod:`.heldback`).
    """

    def __init__(
        self, model: TaughtModel, general: FrameReader, fallback: GeneralAnswer | None = None
    ) -> None:
        self.model = model
        self.general = general
        #: the general answer for the dice whose card falls back on it (None: no die does)
        self.fallback = fallback
        self.last_taught: list[tuple[str, float]] = []
        self.last_heads: dict[int, tuple[str, TaughtRead]] = {}
        #: the general reader's own reading of each of those dice, before its taught die read it
        self.last_general: dict[int, DieReading] = {}

    def match(self, frame: np.ndarray, dice: list[DieReading]) -> list[TaughtDieCard | None]:
        """The taught die each of ``dice`` is, or None: the pairing at least total cost.

        A pairing's cost is the body's unlikeness (:func:`~.body.body_distance`: colour, size, the
        general reader's kind) plus :data:`TELL_WEIGHT` per nat of the telling head's doubt
        (:mod:`.telling`); a die farther than :data:`~.body.MAX_DELTA_E` in colour from a taught
        body cannot be it. Each taught die takes at most as many dice as a throw held of it.
        """
        if not dice:
            return []
        told = self.model.identities(frame, [d.box for d in dice])
        slots = [
            j for j, t in enumerate(self.model.dice) for _ in range(min(self.model.counts[t.id], len(dice)))
        ]
        cost = np.full((len(dice), len(slots)), FORBIDDEN)
        for r, d in enumerate(dice):
            side = max(d.box[2], d.box[3])
            # a kind the general reader is unsure of is no evidence against a taught die
            for c, j in enumerate(slots):
                taught = self.model.dice[j]
                if colour_distance(taught.body, d.hsv) > MAX_DELTA_E:
                    continue
                same = label_of(d.kind) == taught.kind or d.reason is UnreadableReason.KIND_UNSURE
                doubt = -np.log(max(float(told[r, j]), 1e-6))
                cost[r, c] = body_distance(taught.body, d.hsv, side, same) + TELL_WEIGHT * doubt
        # a cost that is no number (a network's NaN) forbids the pairing: the pairing needs finite costs
        cost[~np.isfinite(cost)] = FORBIDDEN
        out: list[TaughtDieCard | None] = [None] * len(dice)
        for r, c in assign(cost):
            if cost[r, c] < FORBIDDEN:
                out[r] = self.model.dice[slots[c]]
        return out

    def read(
        self, frame: np.ndarray, reference: np.ndarray | None = None, tray: np.ndarray | None = None
    ) -> Reading:
        """Locate and read every die in ``frame``; taught dice by their own heads."""
        if reference is None and self.model.tray is not None and self.model.tray.shape == frame.shape:
            reference = self.model.tray
        reading = self.general.read(frame, reference, tray)
        t0 = time.perf_counter()
        dice = list(reading.dice)
        wanted: dict[str, list[int]] = {}
        cards: dict[str, TaughtDieCard] = {}
        open_dice = [i for i, d in enumerate(dice) if rereads(d)]
        for i, taught in zip(open_dice, self.match(frame, [dice[i] for i in open_dice]), strict=True):
            if taught is not None:
                wanted.setdefault(taught.id, []).append(i)
                cards[taught.id] = taught
        self.last_taught = []
        self.last_heads = {}
        self.last_general = {}
        for identity, indices in wanted.items():
            taught = cards[identity]
            general = [dice[i] for i in indices]
            head = self.model.read(taught, frame, [d.box for d in general])
            reads = self.fall_back(taught, frame, [d.box for d in general], head, general)
            for i, r, h, g in zip(indices, reads, head, general, strict=True):
                dice[i] = taught_die_reading(g, taught, r)
                self.last_heads[i] = (identity, h)
                self.last_general[i] = g
                # drift follows the head's own sureness, as the card's held-back figures do
                self.last_taught.append((identity, h.confidence))
        timings = {**reading.timings_ms, "taught": (time.perf_counter() - t0) * 1000.0}
        return replace(reading, dice=tuple(dice), timings_ms=timings)

    def fall_back(
        self,
        taught: TaughtDieCard,
        frame: np.ndarray,
        boxes: list[Box],
        head: list[TaughtRead],
        general_dice: list[DieReading] | None = None,
    ) -> list[TaughtRead]:
        """``head``, with the general answer where the head is unsure and the card falls back.

        A pip d6's general answer is the general reader's own reading of it (``general_dice``, one a
        box); a numeral die's is asked of the general numeral reader.
        """
        unsure = [k for k, r in enumerate(head) if r.face is None]
        if not (taught.fallback and unsure):
            return head
        reads = list(head)
        if taught.kind in READING_KINDS:
            if general_dice is None:
                return head
            general = [reading_answer(general_dice[k], taught.kind, taught.faces) for k in unsure]
        elif self.fallback is not None:
            general = self.fallback.read(frame, [boxes[k] for k in unsure], taught.kind, taught.faces)
        else:
            return head
        for k, g in zip(unsure, general, strict=True):
            if g.face is not None:
                reads[k] = g
        return reads


def open_taught_reader(
    model: str | Path | TaughtModel, *, models: str | Path | None = None, numerals: bool | None = None
) -> TaughtFrameReader:
    """A taught reader over the model in folder ``model`` and the general reader of ``models``.

    ``numerals`` turns the general reader's kinds on (default: when a taught die is not a pip
    d6, since its body is found and its kind named by the numeral network). The general
    upright-numeral reader, slow and unneeded for a taught die's face, is left out of reading every
    die when kinds are on only for taught dice (it answers only for the dice a taught head doubts
    whose card falls back); pass ``numerals=True`` to read untaught numeral dice too.
    """
    taught = model if isinstance(model, TaughtModel) else TaughtModel(model)
    need = any(d.kind != "d6" for d in taught.dice)
    general = open_reader(models, numerals=bool(numerals) or need)
    fallback = None
    if any(d.fallback for d in taught.dice) and general.numerals is not None and general.glyphs is not None:
        fallback = GeneralAnswer(general.numerals, general.glyphs)  # asked only for dice their heads doubt
    if not numerals:
        general.glyphs = None
    return TaughtFrameReader(taught, general, fallback)

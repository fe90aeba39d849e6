"""The general reader's answer for a taught die its own head is unsure of, where the fit allows it.

Why: a taught head sits on a general network's features at one turn of the die (:mod:`.features`),
so it abstains on dice the general numeral reader still reads surely, by searching more turns and
centres (:class:`~dicetower.vision.faces.glyphs.GlyphReader`). Taking that answer is right for some
dice and wrong for others: on the simulated tower's red d10t and blue d20 it reads most of the dice
the head left unreadable and none wrong; on the white d10 it reads them wrong (a 6 and a 9, a 1 and
a 7). So it is a fact measured per die on the held-back photos read end to end (:mod:`.heldback`):
the fit turns it on for a die only when it read some of the held-back dice the head abstained on and
none of them wrong, and the card records those counts.

For a pip d6 the answer is the general reader's own reading of the die (:func:`reading_answer`),
already made when the dice were located. For a numeral die it is asked of the general numeral
reader: the numeral network must name the die's kind, and its face
stands as :func:`~dicetower.vision.faces.glyphs.with_glyph` decides, kept to the die's faces; a
die under its kind's imaging budget (:func:`~dicetower.vision.kinds.min_px_of`) gets none, as the
general reader gives none.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..faces.glyphs import GlyphReader, with_glyph
from ..faces.numerals import NumeralReader
from ..kinds import KINDS, NUMERAL_KINDS, label_of, min_px_of
from ..reading import DieReading, ReadStatus, UnreadableReason
from .model import TaughtRead

__all__ = ["READING_KINDS", "Box", "GeneralAnswer", "can_fall_back", "needs_answer", "reading_answer"]

#: A die's box in frame pixels: x, y, width, height.
Box = tuple[float, float, float, float]

#: Label kinds the general numeral reader reads (a pip d6 has its own reader; d8 and d12 none).
FALLBACK_KINDS: frozenset[str] = frozenset(KINDS[k].label for k in NUMERAL_KINDS if KINDS[k].label != "d6")


#: Label kinds whose general answer is the general reader's own reading of the die (the pip reader
#: reads every d6 the locator finds, so its answer is already in the reading).
READING_KINDS: frozenset[str] = frozenset({"d6"})


def can_fall_back(kind: str) -> bool:
    """Whether a taught die of label ``kind`` has a general answer to fall back on."""
    return kind in FALLBACK_KINDS or kind in READING_KINDS


def needs_answer(kind: str) -> bool:
    """Whether that answer is asked of the general numeral reader (:class:`GeneralAnswer`)."""
    return kind in FALLBACK_KINDS


def reading_answer(die: DieReading, kind: str, faces: Sequence[int]) -> TaughtRead:
    """The general reading of ``die`` as an answer for a taught die of ``kind``: its face when it
    read the die surely as that kind and the face is one of ``faces``, else unreadable."""
    if die.status is ReadStatus.READ and die.face in faces and label_of(die.kind) == kind:
        return TaughtRead(die.face, float(die.confidence), None)
    return TaughtRead(None, 0.0, UnreadableReason.LOW_CONFIDENCE)


class GeneralAnswer:
    """The general numeral reader (network and upright reader) asked about boxes of one taught die."""

    def __init__(self, numerals: NumeralReader, glyphs: GlyphReader) -> None:
        self.numerals = numerals
        self.glyphs = glyphs

    def read(
        self, frame: np.ndarray, boxes: Sequence[Box], kind: str, faces: Sequence[int]
    ) -> list[TaughtRead]:
        """The general answer at each box, a face of ``faces`` or unreadable (``low_confidence``)."""
        out = [TaughtRead(None, 0.0, UnreadableReason.LOW_CONFIDENCE) for _ in boxes]
        if not boxes:
            return out
        kind_reads = self.numerals.read_crops(self.numerals.crops(frame, list(boxes)))
        budget = min_px_of(kind)  # under it the general reader's numeral answers turn wrong
        same = [
            i
            for i, r in enumerate(kind_reads)
            if r.kind is not None and label_of(r.kind) == kind and max(boxes[i][2], boxes[i][3]) >= budget
        ]
        if not same:
            return out
        glyph_reads = self.glyphs.read(
            frame,
            [boxes[i] for i in same],
            [str(kind_reads[i].kind) for i in same],
            [kind_reads[i].kind_confidence for i in same],
        )
        allowed = set(faces)
        for i, glyph in zip(same, glyph_reads, strict=True):
            read = with_glyph(kind_reads[i], glyph)
            if read.face is not None and read.face in allowed:
                out[i] = TaughtRead(read.face, float(read.confidence), None)
        return out

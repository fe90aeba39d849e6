"""Read the numeral in the middle of a die by turning the crop until it stands upright.

Why: the face on top of a d20 or d10 can lie at any angle. A small network taught upright
numerals only (``vision/training/glyphs/data.py``) reads numeral shapes, not dice; the crop is
turned every :data:`STEP` degrees and the surest reading among the kind's own numerals wins.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import cv2
import numpy as np

from ..dnn import load_card
from ..errors import VisionError
from ..kinds import KINDS, NUMERAL_KINDS
from ..models import shipped_dir
from ..reading import KindRead, UnreadableReason
from .ink import ink_grey
from .numeral_centre import numeral_centre

__all__ = [
    "GLYPH_INPUT",
    "INK_KINDS",
    "STEP",
    "TEXTS",
    "GlyphModelError",
    "GlyphRead",
    "GlyphReader",
    "central_crops",
    "glyph_blob",
    "ink_grey",
    "text_face",
    "with_glyph",
]

#: The network's input side (grey px).
GLYPH_INPUT = 48
#: Degrees between the turns tried (the network is taught +-12 degrees off upright).
STEP = 15
#: The network's classes: every numeral a numeral die of the table of kinds prints (d6 and d10
#: 0-9, d20 10-20, the tens die's 00-90; a d8's or d12's numerals are among them too).
TEXTS: tuple[str, ...] = (
    *(str(i) for i in range(21)),
    "00",
    *(f"{t}0" for t in range(3, 10)),
)
#: The middle of the die box read, as a share of the box's longer side.
CENTRAL = 0.6
#: The kinds whose numeral may be looked for away from the box's centre (:mod:`.numeral_centre`):
#: the kinds read by their numerals.
INK_KINDS = NUMERAL_KINDS
#: A reading off the box's centre counts at this share of its probability.
OFF_CENTRE_WEIGHT = 0.9


def text_face(kind: str, text: str) -> int | None:
    """The face a numeral means on ``kind`` (``None`` when that kind prints no such numeral)."""
    return KINDS[kind].face_of_text(text) if kind in KINDS else None


def central_crops(
    frame: np.ndarray, box: tuple[float, float, float, float], angles: np.ndarray, share: float = CENTRAL
) -> np.ndarray:
    """The box's middle (``share`` of its longer side) turned by each of ``angles`` (degrees, ccw).

    A colour ``frame`` is made grey by :func:`ink_grey` over that middle. Returns
    ``(len(angles), GLYPH_INPUT, GLYPH_INPUT)`` uint8; the frame's edge is repeated.
    """
    x, y, w, h = box
    cx, cy = x + w / 2, y + h / 2
    side = share * max(w, h)
    fh, fw = frame.shape[:2]
    reach = int(np.ceil(side * 0.75)) + 2  # half the diagonal of the turned square, and a little
    x0, y0 = max(0, int(cx) - reach), max(0, int(cy) - reach)
    x1, y1 = min(fw, int(cx) + reach + 1), min(fh, int(cy) + reach + 1)
    if x1 <= x0 or y1 <= y0:
        return np.zeros((len(angles), GLYPH_INPUT, GLYPH_INPUT), np.uint8)
    region = frame[y0:y1, x0:x1]
    if region.ndim == 3:
        half = side / 2
        sx0, sy0 = max(0, int(cx - half) - x0), max(0, int(cy - half) - y0)
        sample = region[sy0 : max(sy0 + 1, int(cy + half) - y0), sx0 : max(sx0 + 1, int(cx + half) - x0)]
        region = ink_grey(region, sample)
    cx, cy = cx - x0, cy - y0
    k = GLYPH_INPUT / max(side, 1.0)
    out = np.empty((len(angles), GLYPH_INPUT, GLYPH_INPUT), np.uint8)
    for i, a in enumerate(angles):
        m = cv2.getRotationMatrix2D((cx, cy), float(a), k)
        m[:, 2] += np.array([GLYPH_INPUT / 2 - cx, GLYPH_INPUT / 2 - cy])
        out[i] = cv2.warpAffine(
            region, m, (GLYPH_INPUT, GLYPH_INPUT), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE
        )
    return out


def glyph_blob(crops: np.ndarray) -> np.ndarray:
    """Grey crops ``(n, S, S)`` as the network's input: each standardised, ``(n, 1, S, S)`` float32."""
    x = crops.astype(np.float32)
    mean = x.mean(axis=(1, 2), keepdims=True)
    std = x.std(axis=(1, 2), keepdims=True)
    return ((x - mean) / (std + 8.0))[:, None]


_MODEL, _META = "glyph_reader.onnx", "glyph_reader.json"


class GlyphModelError(VisionError, RuntimeError):
    """The glyph model or its card is missing or does not match this code."""


@dataclass(frozen=True)
class GlyphRead:
    """One die's numeral: ``face`` when sure (else ``None``), ``best`` the likeliest face either way."""

    face: int | None
    best: int | None
    confidence: float  #: the best face's probability at its best turn
    angle: float  #: the turn (degrees, ccw) at which the numeral stood upright


class GlyphReader:
    """The upright-numeral network and the turn search around it (module docstring)."""

    def __init__(self, model_dir: str | Path | None = None) -> None:
        folder = Path(model_dir) if model_dir is not None else shipped_dir()
        self._net, self.meta, meta = load_card(folder, _MODEL, _META, GlyphModelError)
        if self.meta.get("classes") != ["none", *TEXTS] or self.meta.get("input") != GLYPH_INPUT:
            raise GlyphModelError(f"{meta}: classes or input size do not match this code")
        try:
            self.share = float(self.meta.get("share", CENTRAL))
            #: a face is read when its probability at its best turn reaches this
            self.threshold = float(self.meta.get("threshold", 0.9))
            if not 0.0 < self.threshold <= 1.0:
                raise GlyphModelError(f"threshold must be in (0, 1], got {self.threshold}")
            #: degrees between the turns tried, and the centres tried (shares of the box's side)
            self.step = float(self.meta.get("step", STEP))
            self.offset = float(self.meta.get("offset", 0.0))
            #: whether the turns are searched coarse first (:meth:`_at`)
            self.coarse = bool(self.meta.get("coarse", False))
            self.ink = tuple(str(k) for k in self.meta.get("ink", ()))
            self.ink_kind_confidence = float(self.meta.get("ink_kind_confidence", 0.0))
        except (GlyphModelError, TypeError, ValueError) as exc:
            raise GlyphModelError(f"{meta}: {exc}") from None

    @property
    def share(self) -> float:
        """The middle of the box read, as a share of its longer side."""
        return self._share

    @share.setter
    def share(self, value: float) -> None:
        if not 0.2 <= value <= 1.5:
            raise GlyphModelError(f"share must be 0.2-1.5 of the box's side, got {value}")
        self._share = float(value)

    @property
    def step(self) -> float:
        return self._step

    @step.setter
    def step(self, degrees: float) -> None:
        if not 1.0 <= degrees <= 90.0:
            raise GlyphModelError(f"step must be 1-90 degrees, got {degrees}")
        self._step = float(degrees)
        self._angles = np.arange(0.0, 360.0, self._step)

    @property
    def offset(self) -> float:
        return self._offset

    @offset.setter
    def offset(self, share: float) -> None:
        if not 0.0 <= share <= 0.3:
            raise GlyphModelError(f"offset must be 0-0.3 of the box's side, got {share}")
        self._offset = float(share)
        o = self._offset
        #: the centres tried, as shares of the box's side off its centre (the centre first)
        self.centres = [(0.0, 0.0)] + ([(0.0, -o), (0.0, o), (-o, 0.0), (o, 0.0)] if o > 0 else [])

    @property
    def ink(self) -> tuple[str, ...]:
        """The kinds whose numeral's own centre is tried when the box's is unsure."""
        return self._ink

    @ink.setter
    def ink(self, kinds: tuple[str, ...]) -> None:
        if not set(kinds) <= INK_KINDS:
            raise GlyphModelError(f"ink names kinds outside {sorted(INK_KINDS)}: {list(kinds)}")
        self._ink = tuple(kinds)

    @property
    def ink_kind_confidence(self) -> float:
        """The numeral network's least kind confidence for which the numeral's own centre is tried."""
        return self._ink_kind_confidence

    @ink_kind_confidence.setter
    def ink_kind_confidence(self, value: float) -> None:
        if not 0.0 <= value <= 1.0:
            raise GlyphModelError(f"ink_kind_confidence must be in [0, 1], got {value}")
        self._ink_kind_confidence = float(value)

    def probabilities(self, crops: np.ndarray) -> np.ndarray:
        """``(N, 1 + len(TEXTS))`` softmax probabilities of grey crops ``(N, S, S)``."""
        self._net.setInput(glyph_blob(crops))
        z = np.asarray(self._net.forward(), np.float64).reshape(len(crops), -1)
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)

    def read(
        self,
        frame: np.ndarray,
        boxes: list[tuple[float, float, float, float]],
        kinds: list[str],
        kind_confidences: list[float] | None = None,
    ) -> list[GlyphRead]:
        """Each box's numeral as a face of its kind (``d6n``, ``d10``, ``d10t``, ``d20``).

        The middle is read around up to three sets of centres, stopping at the first sure
        reading: the box's centre; then, for the card's ``ink`` kinds, the numeral's own centre
        (:func:`~.numeral_centre.numeral_centre`: a d10's kite puts its numeral off the box's
        centre; a d20's top numeral sits at its centre seen from above, and seen from the side
        the numeral nearest the middle is a side face's, so the shipped card leaves d20 out),
        only for a kind named with at least the card's ``ink_kind_confidence``
        (``kind_confidences``, one per box; none given: every kind is taken as sure), since a
        d20 taken for a d10 has a numeral too and read surely there it is a wrong d10 face;
        then, when the card sets an ``offset``, a share of the box's side above, below, left and
        right of the box's centre (in an oblique view the face on top sits off it). A reading
        at a blind offset counts at :data:`OFF_CENTRE_WEIGHT` of its probability, so a
        centre wins a tie. Each centre costs ``360 / step`` crops.
        """
        out = []
        n_turns = len(self._angles)
        sure_kind = (
            [True] * len(boxes)
            if kind_confidences is None
            else [c >= self.ink_kind_confidence for c in kind_confidences]
        )
        for box, kind, kind_sure in zip(boxes, kinds, sure_kind, strict=True):
            cols = [j + 1 for j, t in enumerate(TEXTS) if text_face(kind, t) is not None]
            if not cols:
                out.append(GlyphRead(None, None, 0.0, 0.0))
                continue
            sub = self._at(frame, [box], cols)
            if kind in self.ink and kind_sure and float(sub.max()) < self.threshold:
                at = numeral_centre(frame, box)
                if at is not None:
                    moved = (at[0] - box[2] / 2, at[1] - box[3] / 2, box[2], box[3])
                    sub = np.concatenate([sub, self._at(frame, [moved], cols)])
            if self._offset > 0 and float(sub.max()) < self.threshold:
                side = max(box[2], box[3])
                shifted = [
                    (box[0] + dx * side, box[1] + dy * side, box[2], box[3]) for dx, dy in self.centres[1:]
                ]
                sub = np.concatenate([sub, OFF_CENTRE_WEIGHT * self._at(frame, shifted, cols)])
            row, col = np.unravel_index(int(np.argmax(sub)), sub.shape)
            conf = float(sub[row, col])
            best = text_face(kind, TEXTS[cols[col] - 1])
            angle = float(self._angles[row % n_turns])
            out.append(GlyphRead(best if conf >= self.threshold else None, best, conf, angle))
        return out

    def _at(
        self, frame: np.ndarray, boxes: list[tuple[float, float, float, float]], cols: list[int]
    ) -> np.ndarray:
        """Probabilities of ``cols`` for every turn of the middle of each of ``boxes``, turns fastest.

        With the card's ``coarse`` on, every second turn is read first and only the turns beside
        the two likeliest of those are read after (a numeral still reads, less surely, half a
        step further off upright than the network was taught): 16 crops instead of 24 at 15°
        steps. Turns left unread count as probability 0.
        """
        n = len(self._angles)
        if not self.coarse or n < 8 or n % 2:
            crops = np.concatenate([central_crops(frame, b, self._angles, self.share) for b in boxes])
            return self.probabilities(crops)[:, cols]
        out = np.zeros((len(boxes) * n, len(cols)))
        even = np.arange(0, n, 2)
        for k, b in enumerate(boxes):
            first = self.probabilities(central_crops(frame, b, self._angles[even], self.share))[:, cols]
            likeliest = even[np.argsort(-first.max(axis=1))[:2]]
            beside = np.array(sorted({int((i + d) % n) for i in likeliest for d in (-1, 1)}))
            then = self.probabilities(central_crops(frame, b, self._angles[beside], self.share))[:, cols]
            out[k * n + even] = first
            out[k * n + beside] = then
        return out


def with_glyph(read: KindRead, glyph: GlyphRead) -> KindRead:
    """The numeral network's answer with the upright reading's face.

    A sure upright reading gives the face. Otherwise the network's own sure face stands only
    when the upright reading ranks it first too: the two look at the die differently (the
    whole die at any angle; the middle, turned upright), so agreement is the evidence kept.
    """
    if glyph.face is not None:
        return replace(read, face=glyph.face, confidence=glyph.confidence, reason=None)
    if read.face is not None and read.face == glyph.best:
        return read
    return replace(read, face=None, confidence=glyph.confidence, reason=UnreadableReason.LOW_CONFIDENCE)

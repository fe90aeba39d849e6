"""Read a die's kind and face from its crop: pip d6, numeral d6, d10, percentile d10 or d20.

Why one network for every kind: a tray holds mixed dice and the kind is read from the same
pixels as the face (a d20's triangle, a d10's kite, a square face with a numeral or with pips).
The network answers one probability per *(kind, face)* class plus ``none`` (not a die it knows:
a d8, a piece of a die, the tray); the kind's confidence is the sum of its classes, the face's
the probability of its class. A die is read only when both clear the card's thresholds;
otherwise it is unreadable with a reason (``low_confidence``), never a guess.

The crop is the die's box squared and widened by :data:`~.pips.CROP_MARGIN`, cut at
:data:`INPUT` px, projected to one plane by :func:`~.pips.contrast_grey` (coloured ink on a
coloured body keeps its contrast) and standardised per crop. Any rotation: the network was
trained on dice turned every way, 6 and 9 told apart by their underline or dot.

Model: ``models/numeral_reader.onnx`` + ``.json`` (classes, temperature, thresholds), run with
``cv2.dnn``; trained by ``vision/training/numerals/train.py`` (docs/numerals.md).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np

from ..dnn import load_card
from ..errors import VisionError
from ..kinds import KINDS, NUMERAL_KINDS, NUMERAL_NETWORK_KINDS, label_of
from ..models import shipped_dir
from ..reading import DieReading, KindRead, ReadStatus, UnreadableReason
from .pips import contrast_grey, crop_die

__all__ = [
    "INPUT",
    "KIND_OF_CLASS",
    "NumeralModelError",
    "NumeralReader",
    "class_names",
    "numeral_blob",
    "numeral_crops",
    "with_kind",
]

#: Crop side the training code builds a network for; a model card's ``input`` says what a given
#: model reads, so a model of another side still loads and reads its own crops.
INPUT = 96
#: Crops read in one forward pass at most (bounds memory).
MAX_BATCH = 64
_MODEL = "numeral_reader.onnx"
_META = "numeral_reader.json"


def class_names() -> list[str]:
    """The network's classes in output order: ``none``, then ``kind:face`` for each kind in turn."""
    return ["none"] + [f"{k}:{f}" for k in NUMERAL_NETWORK_KINDS for f in KINDS[k].faces]


#: Class index -> kind (``none`` for class 0).
KIND_OF_CLASS: tuple[str, ...] = tuple(c.split(":")[0] for c in class_names())


_KIND_INDEX: dict[str, np.ndarray] = {
    k: np.array([i for i, kk in enumerate(KIND_OF_CLASS) if kk == k]) for k in NUMERAL_NETWORK_KINDS
}
_CLASSES = class_names()


class NumeralModelError(VisionError, RuntimeError):
    """The numeral reader's model files are missing or do not fit this code."""


def numeral_crops(
    frame: np.ndarray, boxes: list[tuple[float, float, float, float]], size: int = INPUT
) -> list[np.ndarray]:
    """The ``size``-px crops of ``boxes`` as the network was trained to read them."""
    return [crop_die(frame, b, size=size) for b in boxes]


def numeral_blob(crops: list[np.ndarray] | np.ndarray, size: int = INPUT) -> np.ndarray:
    """``(N, 1, size, size)`` float32: each crop contrast-projected to one plane, standardised."""
    n = len(crops)
    out = np.empty((n, 1, size, size), np.float32)
    colour = [i for i in range(n) if crops[i].ndim == 3]
    for i in range(n):
        if crops[i].ndim != 3:
            g = crops[i]
            if g.shape[:2] != (size, size):
                g = cv2.resize(g, (size, size), interpolation=cv2.INTER_AREA)
            out[i, 0] = g
    if colour:
        stack = np.stack(
            [
                c
                if c.shape[:2] == (size, size)
                else cv2.resize(c, (size, size), interpolation=cv2.INTER_AREA)
                for c in (crops[i][..., :3] for i in colour)
            ]
        )
        out[colour, 0] = contrast_grey(stack)
    flat = out.reshape(n, -1)
    mean = flat.mean(axis=1, keepdims=True)
    sd = flat.std(axis=1, keepdims=True) + 1e-3
    return ((flat - mean) / np.maximum(sd, 4.0)).reshape(n, 1, size, size).astype(np.float32)


class NumeralReader:
    """The kind-and-face reader, an ONNX classifier run through ``cv2.dnn``; load once, reuse.

    ``model_dir`` holds ``numeral_reader.onnx`` and ``numeral_reader.json``; by default the
    shipped ones. Example::

        reader = NumeralReader()
        reads = reader.read_crops(reader.crops(frame, boxes))
        print([(r.kind, r.face) for r in reads])
    """

    def __init__(self, model_dir: str | Path | None = None) -> None:
        folder = Path(model_dir) if model_dir is not None else shipped_dir()
        self._net, self.meta, meta = load_card(folder, _MODEL, _META, NumeralModelError)
        #: The crop side this model reads (its card's ``input``).
        self.input = int(self.meta.get("input", 0)) if str(self.meta.get("input", "")).isdigit() else 0
        if self.meta.get("classes") != class_names() or not 32 <= self.input <= 256 or self.input % 16:
            raise NumeralModelError(f"{meta}: classes or input size do not match this code")
        self.temperature = float(self.meta.get("temperature", 1.0))
        self.kind_threshold = float(self.meta.get("kind_threshold", 0.9))
        thr = self.meta.get("face_thresholds", {})
        self.face_thresholds = {k: float(thr.get(k, 0.9)) for k in NUMERAL_NETWORK_KINDS}

    def probabilities(self, crops: list[np.ndarray]) -> np.ndarray:
        """``(N, classes)`` softmax probabilities (temperature applied)."""
        if not crops:
            return np.zeros((0, len(KIND_OF_CLASS)), np.float32)
        out = []
        for start in range(0, len(crops), MAX_BATCH):
            self._net.setInput(numeral_blob(crops[start : start + MAX_BATCH], self.input))
            logits = np.asarray(self._net.forward(), np.float64).reshape(-1, len(KIND_OF_CLASS))
            z = logits / self.temperature
            z -= z.max(axis=1, keepdims=True)
            e = np.exp(z)
            out.append(e / e.sum(axis=1, keepdims=True))
        return np.vstack(out).astype(np.float32)

    def decide(self, probs: np.ndarray) -> KindRead:
        """One crop's :class:`KindRead` from its class probabilities."""
        kinds = {
            k: float(sum(p for p, kk in zip(probs, KIND_OF_CLASS, strict=True) if kk == k))
            for k in NUMERAL_NETWORK_KINDS
        }
        kinds["none"] = float(probs[0])
        kind = max(kinds, key=kinds.__getitem__)
        kind_p = kinds[kind]
        if kind == "none" or kind_p < self.kind_threshold:
            numeral = [k for k in NUMERAL_NETWORK_KINDS if k in NUMERAL_KINDS]
            numeral_p = sum(kinds[k] for k in numeral)
            if numeral_p >= self.kind_threshold:
                guess = max(numeral, key=kinds.__getitem__)
                return KindRead(None, None, numeral_p, 0.0, UnreadableReason.KIND_UNSURE, guess)
            return KindRead(None, None, kind_p, 0.0, UnreadableReason.LOW_CONFIDENCE)
        idx = _KIND_INDEX[kind]
        best = int(idx[int(np.argmax(probs[idx]))])
        p = float(probs[best])
        face = int(_CLASSES[best].split(":")[1])
        if p < self.face_thresholds[kind]:
            return KindRead(kind, None, kind_p, p, UnreadableReason.LOW_CONFIDENCE)
        return KindRead(kind, face, kind_p, p)

    def crops(self, frame: np.ndarray, boxes: list[tuple[float, float, float, float]]) -> list[np.ndarray]:
        """:func:`numeral_crops` at this model's crop side."""
        return numeral_crops(frame, boxes, self.input)

    def read_crops(self, crops: list[np.ndarray]) -> list[KindRead]:
        """:meth:`decide` for each crop of :func:`numeral_crops`."""
        return [self.decide(p) for p in self.probabilities(crops)]


def with_kind(die: DieReading, read: KindRead) -> DieReading:
    """``die`` (read as a pip d6) with the numeral reader's kind and face, when it names another kind.

    A numeral kind read surely with an unsure face is unreadable (``low_confidence``) under its
    kind. A die the network is sure has numerals but not which kind (a d10t it half takes for a
    d10) is unreadable (``kind_unsure``) under its likeliest kind: the pip reader, left to it,
    reads a numeral die as a pip d6 with a face, surely and wrongly. Anything else leaves ``die``
    as the pip reader read it.
    """
    if read.kind is None and read.reason is UnreadableReason.KIND_UNSURE and read.guess is not None:
        return replace(
            die,
            kind=label_of(read.guess),
            face=None,
            status=ReadStatus.UNREADABLE,
            reason=UnreadableReason.KIND_UNSURE,
            confidence=read.kind_confidence,
            face_centre=None,
        )
    if read.kind not in NUMERAL_KINDS:
        return die
    kind = read.manifest_kind or die.kind
    if read.face is None:
        return replace(
            die,
            kind=kind,
            face=None,
            status=ReadStatus.UNREADABLE,
            reason=UnreadableReason.LOW_CONFIDENCE,
            confidence=read.confidence,
            face_centre=None,
        )
    return replace(
        die,
        kind=kind,
        face=read.face,
        status=ReadStatus.READ,
        reason=None,
        confidence=read.confidence,
        face_centre=None,
    )

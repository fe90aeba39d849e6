"""What a general network sees in a die's crop: its features, and its own answer as a starting point.

Why a general network's features: a reader taught on a few hundred crops of one die cannot
learn to see numerals or pips from nothing; the shipped networks already can. Their last
hidden layer separates one face of a die from another even on dice they never saw (measured on
the rsandrini-d20 dice: the numeral network's features and a linear head read 99 % of later
frames of a die taught on its earlier ones). A taught reader is a new last layer over those
features (:mod:`.head`), started from, and held near, the general network's own last layer, so
a die with few examples stays close to what the general reader would say.

Which network depends on how the table of kinds says a kind is read: pip dice through the pip
reader's network (:mod:`~dicetower.vision.faces.pips`), numeral dice through the numeral
network (:mod:`~dicetower.vision.faces.numerals`). Both run through ``cv2.dnn``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from ..dnn import load_onnx
from ..errors import VisionError
from ..faces.numerals import INPUT as NUMERAL_INPUT
from ..faces.numerals import class_names, numeral_blob
from ..faces.pips import crop_die, to_blob
from ..kinds import KINDS, Reader
from ..models import shipped_dir

__all__ = [
    "BACKBONES",
    "MAX_BATCH",
    "Backbone",
    "BackboneSpec",
    "TaughtModelError",
    "backbone_for",
    "blob_for",
    "turned_crops",
]

#: Crops passed through a network at once at most (bounds memory).
MAX_BATCH = 64


class TaughtModelError(VisionError, RuntimeError):
    """A taught model, or the general network it builds on, is missing or does not fit this code."""


@dataclass(frozen=True)
class BackboneSpec:
    """Where a reader kind's general network is and what it reads.

    ``features`` names the network's last hidden tensor (its flattened features), ``head`` the
    layer whose weights are the general answer; ``classes`` lists the general network's classes
    (``"kind:face"``), whose rows start a taught head.
    """

    reader: Reader
    model: str  #: the ONNX file, in the shipped models' folder
    side: int  #: the crop side the network reads
    features: str
    head: str


#: The general network each reader kind builds on.
BACKBONES: dict[Reader, BackboneSpec] = {
    Reader.PIPS: BackboneSpec(Reader.PIPS, "d6_reader.onnx", 48, "view", "node_linear"),
    Reader.NUMERALS: BackboneSpec(
        Reader.NUMERALS, "numeral_reader.onnx", NUMERAL_INPUT, "view_1", "node_linear"
    ),
}


def backbone_for(kind: str) -> BackboneSpec:
    """The general network a taught die of ``kind`` builds on.

    A kind no general reader reads (d8, d12) builds on the numeral network: its numerals are
    numerals still, and its head starts from nothing.
    """
    reader = KINDS[kind].reader if kind in KINDS else Reader.NONE
    return BACKBONES[Reader.PIPS if reader is Reader.PIPS else Reader.NUMERALS]


def turned_crops(
    frame: np.ndarray, box: tuple[float, float, float, float], angles: np.ndarray, side: int
) -> list[np.ndarray]:
    """The die's crop (:func:`~dicetower.vision.faces.pips.crop_die`) turned by each of ``angles``.

    Why turned: a die lands at any angle; a head fitted on each crop at many angles reads any of them.
    """
    return [crop_die(frame, box, size=side, angle=float(a)) for a in angles]


def blob_for(reader: Reader, crops: list[np.ndarray]) -> np.ndarray:
    """The input of ``reader``'s general network for ``crops`` (each its side, BGR or grey)."""
    if reader is Reader.NUMERALS:
        return numeral_blob(crops, BACKBONES[reader].side)
    return to_blob(crops)


class Backbone:
    """A general network cut at its last hidden layer; load once, reuse.

    ``folder`` holds the network (the shipped models' folder by default). Example::

        net = Backbone(BACKBONES[Reader.NUMERALS])
        feats = net.features(crops)         # (N, D) float32
        w, b = net.prior("d20", range(1, 21))  # the general answer's rows for a d20
    """

    def __init__(self, spec: BackboneSpec, folder: str | Path | None = None) -> None:
        self.spec = spec
        path = Path(folder or shipped_dir()) / spec.model
        if not path.is_file():
            raise TaughtModelError(f"{path}: the general network a taught reader builds on is missing")
        try:
            self._net = load_onnx(path)
            weights = np.asarray(self._net.getParam(spec.head, 0), np.float32)
            bias = np.asarray(self._net.getParam(spec.head, 1), np.float32).reshape(-1)
        except cv2.error as exc:
            raise TaughtModelError(f"{path}: cannot read its layers ({exc})") from None
        self.path = path
        #: the general network's last layer: ``(classes, D)`` and ``(classes,)``
        self.weights, self.bias = weights, bias
        self.classes = self._class_names(len(bias))

    def _class_names(self, n: int) -> list[str]:
        if self.spec.reader is Reader.NUMERALS:
            names = class_names()
        else:
            names = ["none", *(f"d6:{f}" for f in KINDS["d6"].faces)]
        if len(names) != n:
            raise TaughtModelError(f"{self.path}: {n} classes, this code expects {len(names)}")
        return names

    @property
    def dim(self) -> int:
        """The length of one crop's feature vector."""
        return int(self.weights.shape[1])

    def blob(self, crops: list[np.ndarray]) -> np.ndarray:
        """The network's input for ``crops`` (each ``side`` x ``side``, BGR or grey)."""
        return blob_for(self.spec.reader, crops)

    def features(self, crops: list[np.ndarray]) -> np.ndarray:
        """``(N, D)`` float32 features of ``crops``, in batches of :data:`MAX_BATCH`."""
        if not crops:
            return np.zeros((0, self.dim), np.float32)
        out = []
        for start in range(0, len(crops), MAX_BATCH):
            self._net.setInput(self.blob(crops[start : start + MAX_BATCH]))
            f = np.asarray(self._net.forward(self.spec.features), np.float32)
            out.append(f.reshape(len(f), -1))
        return np.vstack(out)

    def prior(self, kind: str, faces: tuple[int, ...] | list[int]) -> tuple[np.ndarray, np.ndarray]:
        """The general network's last-layer rows for ``kind``'s ``faces``: a taught head's start.

        A kind or face the network has no class for starts at zero (the head learns it alone).
        """
        name = "d6" if self.spec.reader is Reader.PIPS else kind
        w = np.zeros((len(faces), self.dim), np.float32)
        b = np.zeros(len(faces), np.float32)
        for i, face in enumerate(faces):
            label = f"{name}:{face}"
            if label in self.classes:
                j = self.classes.index(label)
                w[i], b[i] = self.weights[j], self.bias[j]
        return w, b

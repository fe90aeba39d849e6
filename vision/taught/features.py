"""What a general network sees in a die's crop: its features, and its own answer as a starting point.

Why a general network's features: a reader taught on a few hundred crops of one die cannot
learn to see numerals or pips from nothing; the shipped networks already can. Their last
hidden layer separates one face of a die from another even on dice they never saw. A taught
reader is a new last layer over those features (:mod:`.head`), started from, and held near,
the general network's own last layer, so a die with few examples stays close to what the
general reader would say.

Three networks, chosen by how the table of kinds says a kind is read:

- ``pips``: the pip reader's network (:mod:`~dicetower.vision.faces.pips`), for pip d6;
- ``numerals``: the numeral network (:mod:`~dicetower.vision.faces.numerals`), reading the
  whole die at any turn; its features are fitted at every :data:`TURN_STEP` degrees;
- ``glyphs``: the upright-numeral network (:mod:`~dicetower.vision.faces.glyphs`), reading the
  middle of the die turned until its numeral stands upright (:func:`upright_turns`). On the
  simulated tower's d20 the general upright network, its answer kept to the die's own faces,
  ranked the right face first on 98 % of later rolls, where the numeral network's features
  did on 80 %.

A numeral die is fitted on both numeral networks and keeps the one that reads its held-back
rolls better (:mod:`.fit`): a d10's numeral sits off the middle of its kite, a d20's on it.
All run through ``cv2.dnn``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import cv2
import numpy as np

from ..dnn import load_onnx
from ..errors import VisionError
from ..faces.glyphs import CENTRAL, GLYPH_INPUT, TEXTS, central_crops, glyph_blob
from ..faces.numerals import INPUT as NUMERAL_INPUT
from ..faces.numerals import class_names, numeral_blob
from ..faces.pips import crop_die, to_blob
from ..kinds import KINDS, Reader
from ..models import shipped_dir

__all__ = [
    "MAX_BATCH",
    "NETWORKS",
    "READ_TURNS",
    "TURN_STEP",
    "Backbone",
    "Network",
    "NetworkSpec",
    "TaughtModelError",
    "backbone_for",
    "blob_for",
    "network_crops",
    "networks_for",
    "upright_turns",
]

#: Crops passed through a network at once at most (bounds memory).
MAX_BATCH = 64
#: Degrees between the turns a fitted crop is read at (numerals and pips), or searched at (glyphs).
TURN_STEP = 15
#: Turns a glyph die is read at: the head is fitted up to half a step off upright either way.
READ_TURNS = 12


class TaughtModelError(VisionError, RuntimeError):
    """A taught model, or the general network it builds on, is missing or does not fit this code."""


class Network(StrEnum):
    """The general network a taught die's head sits on."""

    PIPS = "pips"
    NUMERALS = "numerals"
    GLYPHS = "glyphs"


@dataclass(frozen=True)
class NetworkSpec:
    """Where a general network is and what it reads.

    ``features`` names the network's last hidden tensor (its flattened features), ``head`` the
    layer whose weights are the general answer.
    """

    network: Network
    model: str  #: the ONNX file, in the shipped models' folder
    side: int  #: the crop side the network reads
    features: str
    head: str


NETWORKS: dict[Network, NetworkSpec] = {
    Network.PIPS: NetworkSpec(Network.PIPS, "d6_reader.onnx", 48, "view", "node_linear"),
    Network.NUMERALS: NetworkSpec(
        Network.NUMERALS, "numeral_reader.onnx", NUMERAL_INPUT, "view_1", "node_linear"
    ),
    Network.GLYPHS: NetworkSpec(Network.GLYPHS, "glyph_reader.onnx", GLYPH_INPUT, "view", "node_linear"),
}


def networks_for(kind: str) -> tuple[Network, ...]:
    """The networks a taught die of ``kind`` is fitted on: pips for a pip d6, else both numeral ones.

    A kind no general reader reads (d8, d12) is numerals still; its head starts from nothing on
    the numeral network and from its numerals' upright shapes on the glyph network.
    """
    reader = KINDS[kind].reader if kind in KINDS else Reader.NONE
    return (Network.PIPS,) if reader is Reader.PIPS else (Network.NUMERALS, Network.GLYPHS)


def backbone_for(kind: str) -> NetworkSpec:
    """The network a die of ``kind`` is grouped on: the pip network for a pip d6, else the numeral one.

    Grouping compares whole dice at every turn (:mod:`.group`), which the whole-die networks do.
    """
    reader = KINDS[kind].reader if kind in KINDS else Reader.NONE
    return NETWORKS[Network.PIPS if reader is Reader.PIPS else Network.NUMERALS]


def blob_for(network: Network, crops: list[np.ndarray] | np.ndarray) -> np.ndarray:
    """The input of ``network`` for ``crops`` (each its side; BGR or grey; grey for glyphs)."""
    if network is Network.NUMERALS:
        return numeral_blob(list(crops), NETWORKS[network].side)
    if network is Network.GLYPHS:
        return glyph_blob(np.asarray(crops))
    return to_blob(list(crops))


def network_crops(
    network: Network,
    frame: np.ndarray,
    box: tuple[float, float, float, float],
    angles: np.ndarray | list[float],
) -> list[np.ndarray]:
    """The crops of the die at ``box`` that ``network`` reads, one per angle (degrees, ccw).

    Pips and numerals: the whole die (:func:`~dicetower.vision.faces.pips.crop_die`). Glyphs: the
    middle of the die, grey along its ink's colour axis (``central_crops``).
    """
    spec = NETWORKS[network]
    if network is Network.GLYPHS:
        return list(central_crops(frame, box, np.asarray(angles, np.float64), CENTRAL))
    return [crop_die(frame, box, size=spec.side, angle=float(a)) for a in angles]


def upright_turns(general: np.ndarray, columns: list[int]) -> int:
    """The turn at which the glyph network is surest of one of ``columns`` (the kind's numerals).

    ``general`` is ``(turns, classes)`` probabilities; the ``none`` class competes, so a numeral
    turned on its side or upside down (a 6 as a 9) is not taken as upright.
    """
    return int(np.argmax(general[:, columns].max(axis=1)))


class Backbone:
    """A general network cut at its last hidden layer; load once, reuse.

    ``folder`` holds the network (the shipped models' folder by default). Example::

        net = Backbone(NETWORKS[Network.NUMERALS])
        feats = net.features(crops)              # (N, D) float32
        w, b = net.prior("d20", range(1, 21))    # the general answer's rows for a d20
    """

    def __init__(self, spec: NetworkSpec, folder: str | Path | None = None) -> None:
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
        if self.spec.network is Network.NUMERALS:
            names = class_names()
        elif self.spec.network is Network.GLYPHS:
            names = ["none", *TEXTS]
        else:
            names = ["none", *(f"d6:{f}" for f in KINDS["d6"].faces)]
        if len(names) != n:
            raise TaughtModelError(f"{self.path}: {n} classes, this code expects {len(names)}")
        return names

    @property
    def dim(self) -> int:
        """The length of one crop's feature vector."""
        return int(self.weights.shape[1])

    def features(self, crops: list[np.ndarray] | np.ndarray) -> np.ndarray:
        """``(N, D)`` float32 features of ``crops``, in batches of :data:`MAX_BATCH`."""
        if len(crops) == 0:
            return np.zeros((0, self.dim), np.float32)
        out = []
        for start in range(0, len(crops), MAX_BATCH):
            self._net.setInput(blob_for(self.spec.network, crops[start : start + MAX_BATCH]))
            f = np.asarray(self._net.forward(self.spec.features), np.float32)
            out.append(f.reshape(len(f), -1))
        return np.vstack(out)

    def general(self, features: np.ndarray) -> np.ndarray:
        """The general network's own class probabilities from its features ``(N, D)``."""
        z = features @ self.weights.T + self.bias
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)

    def columns(self, kind: str, faces: tuple[int, ...] | list[int]) -> list[int | None]:
        """The general class of each of ``kind``'s ``faces`` (None where the network has none)."""
        out: list[int | None] = []
        for face in faces:
            if self.spec.network is Network.GLYPHS:
                label = KINDS[kind].text(face) if kind in KINDS else str(face)
                out.append(1 + TEXTS.index(label) if label in TEXTS else None)
            else:
                name = "d6" if self.spec.network is Network.PIPS else kind
                label = f"{name}:{face}"
                out.append(self.classes.index(label) if label in self.classes else None)
        return out

    def prior(self, kind: str, faces: tuple[int, ...] | list[int]) -> tuple[np.ndarray, np.ndarray]:
        """The general network's last-layer rows for ``kind``'s ``faces``: a taught head's start.

        A face the network has no class for starts at zero (the head learns it alone).
        """
        w = np.zeros((len(faces), self.dim), np.float32)
        b = np.zeros(len(faces), np.float32)
        for i, j in enumerate(self.columns(kind, faces)):
            if j is not None:
                w[i], b[i] = self.weights[j], self.bias[j]
        return w, b

"""A taught model on disk and in memory: its card, its networks, and reading a taught die's crops.

A taught model is a folder written by ``dicetower teach fit``:

- ``taught.json``, the card: each taught die (id, kind, colour, faces, the rows of the network's
  output that are its head, its abstention threshold, its body) and the figures measured on the
  held-back rolls;
- ``pips.onnx`` and/or ``numerals.onnx``: the general network of each reader kind with the
  taught dice's heads as its last layer (:mod:`.onnxfile`), read with ``cv2.dnn``;
- ``tray.png``: the empty tray, when the folder gave one or it was derived from the photos.

A taught die answers only with its own faces; below its threshold it is unreadable
(``low_confidence``), never a guess.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from ..dnn import load_onnx
from ..faces.glyphs import TEXTS
from ..files import read_bounded
from ..imageio import ImageError, load_image
from ..kinds import KINDS, label_of
from ..reading import UnreadableReason
from .body import Body
from .features import Network, TaughtModelError, blob_for, network_crops, upright_turns
from .head import softmax
from .samples import read_turns

__all__ = [
    "CARD",
    "MAX_CARD_BYTES",
    "SCHEMA",
    "TaughtDieCard",
    "TaughtModel",
    "TaughtRead",
    "judged",
    "network_file",
]

CARD = "taught.json"
SCHEMA = "dicetower.taught/1"
#: A card larger than this is refused before it is parsed.
MAX_CARD_BYTES = 4_000_000
#: Most taught dice one model holds.
MAX_DICE = 64


def network_file(network: Network) -> str:
    """The file name of a taught network: the general network with the taught heads below its rows."""
    return f"{network.value}.onnx"


@dataclass(frozen=True)
class TaughtDieCard:
    """One taught die as the card records it."""

    id: str
    kind: str  #: the label kind (``d6``, ``d10``, ``d10t``, ``d20``, ``d8``, ``d12``)
    colour: str
    network: Network  #: which taught network reads it
    faces: tuple[int, ...]  #: the faces its head answers, in row order
    rows: tuple[int, int]  #: its rows of that network's output, ``[start, end)`` (after the general rows)
    threshold: float
    body: Body
    figures: dict[str, Any]
    #: below its threshold, take the general reader's sure answer (:mod:`.fallback`), as the fit chose
    fallback: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "colour": self.colour,
            "network": self.network.value,
            "faces": list(self.faces),
            "rows": list(self.rows),
            "threshold": round(self.threshold, 4),
            "body": self.body.to_json(),
            "figures": self.figures,
            "fallback": self.fallback,
        }

    @classmethod
    def from_json(cls, obj: Any, where: str) -> TaughtDieCard:
        try:
            kind = str(obj["kind"])
            faces = tuple(int(f) for f in obj["faces"])
            rows = (int(obj["rows"][0]), int(obj["rows"][1]))
            threshold = float(obj["threshold"])
            fallback = obj.get("fallback", False)
            if not isinstance(fallback, bool):
                raise ValueError(f"fallback must be true or false, not {fallback!r}")
            card = cls(
                str(obj["id"]),
                kind,
                str(obj.get("colour", "")),
                Network(obj["network"]),
                faces,
                rows,
                threshold,
                Body.from_json(obj["body"]),
                dict(obj.get("figures", {})),
                fallback,
            )
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise TaughtModelError(f"{where}: a taught die is malformed ({exc})") from None
        label_faces = next((k.faces for k in KINDS.values() if k.label == kind), None)
        if label_faces is None or not set(faces) <= set(label_faces) or not faces:
            raise TaughtModelError(f"{where}: {card.id}: faces {list(faces)} are not a {kind}'s")
        if rows[1] - rows[0] != len(faces) or rows[0] < 0:
            raise TaughtModelError(f"{where}: {card.id}: rows {list(rows)} do not hold {len(faces)} faces")
        if not 0.0 <= threshold <= 1.0:
            raise TaughtModelError(f"{where}: {card.id}: threshold {threshold} is not a probability")
        return card


def _telling(obj: Any, dice: tuple[TaughtDieCard, ...], where: str) -> tuple[int, int, list[int]] | None:
    """The telling head's rows and, for each taught die in card order, its column; None for none."""
    if obj is None:
        return None
    try:
        start, end = int(obj["rows"][0]), int(obj["rows"][1])
        ids = [str(i) for i in obj["dice"]]
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise TaughtModelError(f"{where}: the telling head is malformed ({exc})") from None
    if end - start != len(ids) or sorted(ids) != sorted(d.id for d in dice):
        raise TaughtModelError(f"{where}: the telling head does not list the taught dice")
    return start, end, [ids.index(d.id) for d in dice]


@dataclass(frozen=True)
class TaughtRead:
    """A taught die's answer for one crop: its face, or unreadable with a reason."""

    face: int | None
    confidence: float
    reason: UnreadableReason | None


def judged(face: int, confidence: float, threshold: float) -> TaughtRead:
    """A head's answer at ``threshold``: the face when at least that sure, else ``low_confidence``."""
    if confidence >= threshold:
        return TaughtRead(face, confidence, None)
    return TaughtRead(None, confidence, UnreadableReason.LOW_CONFIDENCE)


class TaughtModel:
    """A taught model loaded from its folder; load once, reuse.

    Example::

        model = TaughtModel("my-dice")
        die = model.dice[0]
        reads = model.read(die, frame, [box])
    """

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        path = self.folder / CARD
        if not path.exists():
            raise TaughtModelError(
                f"{self.folder}: no {CARD}; a taught model is written by 'dicetower teach fit'"
            )
        try:
            raw = read_bounded(path, MAX_CARD_BYTES)
        except OSError as exc:
            raise TaughtModelError(f"{path}: cannot read: {exc.strerror or exc}") from None
        try:
            card = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise TaughtModelError(f"{path}: not a taught model's card ({exc})") from None
        if not isinstance(card, dict) or card.get("schema") != SCHEMA:
            raise TaughtModelError(f"{path}: not a {SCHEMA} card")
        raw = card.get("dice")
        if not isinstance(raw, list) or not 1 <= len(raw) <= MAX_DICE:
            raise TaughtModelError(f"{path}: 'dice' must list 1 to {MAX_DICE} taught dice")
        self.card: dict[str, Any] = card
        self.dice: tuple[TaughtDieCard, ...] = tuple(TaughtDieCard.from_json(d, str(path)) for d in raw)
        self.telling = _telling(card.get("telling"), self.dice, str(path))
        counts = (card.get("telling") or {}).get("counts", {})
        #: how many dice of each taught id one throw may hold (no bound for a model of one die)
        self.counts: dict[str, int] = {
            d.id: int(counts.get(d.id, 1)) if self.telling else MAX_DICE for d in self.dice
        }
        self._nets: dict[Network, Any] = {}
        networks = {d.network for d in self.dice} | ({Network.NUMERALS} if self.telling else set())
        for network in networks:
            net_path = self.folder / network_file(network)
            if not net_path.is_file():
                raise TaughtModelError(f"{self.folder}: {network_file(network)} is missing")
            try:
                self._nets[network] = load_onnx(net_path)
            except cv2.error as exc:
                raise TaughtModelError(f"{net_path}: cannot be read ({exc})") from None
        tray = self.folder / "tray.png"
        self.tray: np.ndarray | None = None
        if tray.exists():  # read as every photo is: its header checked before a pixel is decoded
            try:
                self.tray = load_image(tray)
            except ImageError as exc:
                raise TaughtModelError(str(exc)) from None

    def die(self, identity: str) -> TaughtDieCard:
        """The taught die called ``identity``."""
        for d in self.dice:
            if d.id == identity:
                return d
        raise KeyError(f"no taught die {identity!r}; taught: {', '.join(d.id for d in self.dice)}")

    def kinds(self) -> set[str]:
        """The label kinds taught (``d6``, ``d20`` ...)."""
        return {label_of(d.kind) for d in self.dice}

    def _logits(self, network: Network, crops: list[np.ndarray]) -> np.ndarray:
        """Every row of ``network``'s taught output (general rows, then the heads) for ``crops``."""
        net = self._nets[network]
        out = []
        for start in range(0, len(crops), 64):
            part = crops[start : start + 64]
            net.setInput(blob_for(network, part))
            out.append(np.asarray(net.forward(), np.float32).reshape(len(part), -1))
        return np.vstack(out)

    def probabilities(
        self, die: TaughtDieCard, frame: np.ndarray, box: tuple[float, float, float, float]
    ) -> np.ndarray:
        """The die's face probabilities at ``box`` in ``frame``, read as it was taught (:mod:`.samples`).

        A glyph die's middle is read at :func:`~.samples.read_turns`; the turn at which the
        general rows are surest of one of the kind's numerals is the one its head answers at.
        """
        if die.network is not Network.GLYPHS:
            logits = self._logits(die.network, network_crops(die.network, frame, box, [0.0]))
            return softmax(logits[:, die.rows[0] : die.rows[1]])[0]
        logits = self._logits(die.network, network_crops(die.network, frame, box, read_turns()))
        general = softmax(logits[:, : self._general_rows(die.network)])
        columns = self._glyph_columns(die)
        k = upright_turns(general, columns) if columns else 0
        return softmax(logits[k : k + 1, die.rows[0] : die.rows[1]])[0]

    def identities(self, frame: np.ndarray, boxes: list[tuple[float, float, float, float]]) -> np.ndarray:
        """``(N, dice)`` probabilities that the die at each box is each taught die (``self.dice``'s order).

        A model of one die has no telling head: every box is that die as far as this says.
        """
        if self.telling is None or not boxes:
            return np.ones((len(boxes), len(self.dice)), np.float32)
        crops = [c for b in boxes for c in network_crops(Network.NUMERALS, frame, b, [0.0])]
        start, end, order = self.telling
        p = softmax(self._logits(Network.NUMERALS, crops)[:, start:end])
        return p[:, order]

    def _general_rows(self, network: Network) -> int:
        return len(TEXTS) + 1 if network is Network.GLYPHS else 0

    def _glyph_columns(self, die: TaughtDieCard) -> list[int]:
        texts = [KINDS[die.kind].text(f) if die.kind in KINDS else str(f) for f in die.faces]
        return [1 + TEXTS.index(t) for t in texts if t in TEXTS]

    def read(
        self, die: TaughtDieCard, frame: np.ndarray, boxes: list[tuple[float, float, float, float]]
    ) -> list[TaughtRead]:
        """Read ``die`` at each of ``boxes`` in ``frame`` (BGR)."""
        reads = []
        for box in boxes:
            p = self.probabilities(die, frame, box)
            k = int(np.argmax(p))
            reads.append(judged(die.faces[k], float(p[k]), die.threshold))
        return reads

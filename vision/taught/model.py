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
from ..faces.pips import crop_die
from ..kinds import KINDS, Reader, label_of
from ..reading import UnreadableReason
from .body import Body
from .features import BACKBONES, TaughtModelError, blob_for
from .head import softmax

__all__ = ["CARD", "MAX_CARD_BYTES", "SCHEMA", "TaughtDieCard", "TaughtModel", "TaughtRead", "network_file"]

CARD = "taught.json"
SCHEMA = "dicetower.taught/1"
#: A card larger than this is refused before it is parsed.
MAX_CARD_BYTES = 4_000_000
#: Most taught dice one model holds.
MAX_DICE = 64


def network_file(reader: Reader) -> str:
    """The file name of a reader kind's taught network."""
    return f"{reader.value}.onnx"


@dataclass(frozen=True)
class TaughtDieCard:
    """One taught die as the card records it."""

    id: str
    kind: str  #: the label kind (``d6``, ``d10``, ``d10t``, ``d20``, ``d8``, ``d12``)
    colour: str
    reader: Reader  #: which taught network reads it
    faces: tuple[int, ...]  #: the faces its head answers, in row order
    rows: tuple[int, int]  #: its rows of that network's output, ``[start, end)``
    threshold: float
    body: Body
    figures: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "colour": self.colour,
            "reader": self.reader.value,
            "faces": list(self.faces),
            "rows": list(self.rows),
            "threshold": round(self.threshold, 4),
            "body": self.body.to_json(),
            "figures": self.figures,
        }

    @classmethod
    def from_json(cls, obj: Any, where: str) -> TaughtDieCard:
        try:
            kind = str(obj["kind"])
            faces = tuple(int(f) for f in obj["faces"])
            rows = (int(obj["rows"][0]), int(obj["rows"][1]))
            threshold = float(obj["threshold"])
            card = cls(
                str(obj["id"]),
                kind,
                str(obj.get("colour", "")),
                Reader(obj["reader"]),
                faces,
                rows,
                threshold,
                Body.from_json(obj["body"]),
                dict(obj.get("figures", {})),
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


@dataclass(frozen=True)
class TaughtRead:
    """A taught die's answer for one crop: its face, or unreadable with a reason."""

    face: int | None
    confidence: float
    reason: UnreadableReason | None


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
        if not path.is_file():
            raise TaughtModelError(
                f"{self.folder}: no {CARD}; a taught model is written by 'dicetower teach fit'"
            )
        if path.stat().st_size > MAX_CARD_BYTES:
            raise TaughtModelError(f"{path}: larger than {MAX_CARD_BYTES} bytes")
        try:
            card = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise TaughtModelError(f"{path}: not a taught model's card ({exc})") from None
        if not isinstance(card, dict) or card.get("schema") != SCHEMA:
            raise TaughtModelError(f"{path}: not a {SCHEMA} card")
        raw = card.get("dice")
        if not isinstance(raw, list) or not 1 <= len(raw) <= MAX_DICE:
            raise TaughtModelError(f"{path}: 'dice' must list 1 to {MAX_DICE} taught dice")
        self.card: dict[str, Any] = card
        self.dice: tuple[TaughtDieCard, ...] = tuple(TaughtDieCard.from_json(d, str(path)) for d in raw)
        self._nets: dict[Reader, Any] = {}
        for reader in {d.reader for d in self.dice}:
            net_path = self.folder / network_file(reader)
            if not net_path.is_file():
                raise TaughtModelError(f"{self.folder}: {network_file(reader)} is missing")
            try:
                self._nets[reader] = load_onnx(net_path)
            except cv2.error as exc:
                raise TaughtModelError(f"{net_path}: cannot be read ({exc})") from None
        tray = self.folder / "tray.png"
        self.tray: np.ndarray | None = cv2.imread(str(tray), cv2.IMREAD_COLOR) if tray.is_file() else None

    def die(self, identity: str) -> TaughtDieCard:
        """The taught die called ``identity``."""
        for d in self.dice:
            if d.id == identity:
                return d
        raise KeyError(f"no taught die {identity!r}; taught: {', '.join(d.id for d in self.dice)}")

    def kinds(self) -> set[str]:
        """The label kinds taught (``d6``, ``d20`` ...)."""
        return {label_of(d.kind) for d in self.dice}

    def probabilities(self, die: TaughtDieCard, crops: list[np.ndarray]) -> np.ndarray:
        """``(N, len(die.faces))`` probabilities of ``crops`` (each the network's side, BGR)."""
        if not crops:
            return np.zeros((0, len(die.faces)), np.float32)
        net = self._nets[die.reader]
        out = []
        for start in range(0, len(crops), 64):
            part = crops[start : start + 64]
            net.setInput(blob_for(die.reader, part))
            logits = np.asarray(net.forward(), np.float32).reshape(len(part), -1)
            out.append(softmax(logits[:, die.rows[0] : die.rows[1]]))
        return np.vstack(out)

    def read(
        self, die: TaughtDieCard, frame: np.ndarray, boxes: list[tuple[float, float, float, float]]
    ) -> list[TaughtRead]:
        """Read ``die`` at each of ``boxes`` in ``frame`` (BGR)."""
        side = BACKBONES[die.reader].side
        probs = self.probabilities(die, [crop_die(frame, b, size=side) for b in boxes])
        reads = []
        for p in probs:
            k = int(np.argmax(p))
            conf = float(p[k])
            if conf >= die.threshold:
                reads.append(TaughtRead(die.faces[k], conf, None))
            else:
                reads.append(TaughtRead(None, conf, UnreadableReason.LOW_CONFIDENCE))
        return reads

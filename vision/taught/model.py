"""A taught model on disk and in memory: its card, its networks, and reading a taught die's crops.

A taught model is a folder written by ``dicetower teach fit``:

- ``taught.json``, the card: each taught die (id, kind, colour, faces, the rows of the network's
  output that are its head, its abstention threshold, its body) and the figures measured on the
  held-back rolls;
- ``pips.onnx`` and/or ``numerals.onnx``: the general network of each reader kind with the
  taught dice's heads as its last layer (:mod:`.onnxfile`), read with ``cv2.dnn``;
- ``tray.png``: the empty tray, when the folder gave one or it was derived from the photos.

Loading checks the whole model before a die is read (:mod:`.card`): every value the reader uses,
the card against its own hash, and every file against the hash the card gives it; each file is
read once and loaded from the bytes that were hashed.

A taught die answers only with its own faces; below its threshold it is unreadable
(``low_confidence``), never a guess.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from ..dnn import load_onnx
from ..faces.glyphs import TEXTS
from ..files import read_bounded
from ..imageio import MAX_FILE_BYTES, ImageError, decode_image
from ..kinds import KINDS, label_of
from ..reading import UnreadableReason
from .card import (
    CARD,
    FILES,
    MAX_DICE,
    MODEL_FILES,
    SCHEMA,
    TaughtDieCard,
    check_card,
    check_card_digest,
    model_files_in,
    network_file,
)
from .features import Network, TaughtModelError, blob_for, network_crops, upright_turns
from .fitted import FITTED_INPUT, fitted_probabilities
from .head import softmax
from .samples import read_turns

__all__ = [
    "CARD",
    "MAX_CARD_BYTES",
    "MAX_MODEL_FILE_BYTES",
    "SCHEMA",
    "TaughtDieCard",
    "TaughtModel",
    "TaughtRead",
    "judged",
    "network_file",
]

#: A card larger than this is refused before it is parsed.
MAX_CARD_BYTES = 4_000_000
#: A model file (a network, the tray) larger than this is refused unread.
MAX_MODEL_FILE_BYTES = MAX_FILE_BYTES


def _model_files(folder: Path, listed: dict[str, str], card: str) -> dict[str, bytes]:
    """Each model file's bytes, read once and checked against the card's SHA-256 before use.

    A file the card lists is missing; a model file the card does not list (a tray dropped in from
    another folder); a file whose hash differs (another fit's network, damage): each is refused.
    """
    out: dict[str, bytes] = {}
    present = model_files_in(folder) if folder.is_dir() else []
    for name in sorted({*MODEL_FILES, *listed, *present}):
        path = folder / name
        if name not in listed:
            if path.exists():
                raise TaughtModelError(f"{card}: {FILES}: {name} is in the folder but not on the card")
            continue
        if not path.exists():
            raise TaughtModelError(f"{folder}: {name} is missing")
        try:
            data = read_bounded(path, MAX_MODEL_FILE_BYTES)
        except OSError as exc:
            raise TaughtModelError(f"{path}: cannot read: {exc.strerror or exc}") from None
        if hashlib.sha256(data).hexdigest() != listed[name]:
            raise TaughtModelError(
                f"{path}: does not match {FILES}.{name} on the card (a file from another fit or folder,"
                " or damaged); fit the model again"
            )
        out[name] = data
    return out


def _output_rows(net: Any, network: Network) -> int:
    """How many rows ``net`` answers: one blank crop read through it."""
    frame = np.zeros((128, 128, 3), np.uint8)
    crops = network_crops(network, frame, (32.0, 32.0, 64.0, 64.0), [0.0])[:1]
    net.setInput(blob_for(network, crops))
    return int(np.asarray(net.forward()).reshape(1, -1).shape[1])


def _check_rows(network: Network, outputs: int, heads: list[tuple[str, tuple[int, int]]], card: str) -> None:
    """The heads on ``network`` fill its last rows, each once, after the general rows reading needs."""
    general = outputs - sum(end - start for _name, (start, end) in heads)
    need = len(TEXTS) + 1 if network is Network.GLYPHS else None
    name = network_file(network)
    if general < 1 or (need is not None and general != need):
        raise TaughtModelError(
            f"{card}: {heads[0][0]}.rows: the heads on {name} take {outputs - general} of its {outputs} rows,"
            f" leaving {general} general rows" + (f" where reading needs {need}" if need else "")
        )
    at = general
    for field, (start, end) in sorted(heads, key=lambda h: h[1]):
        if start != at:
            raise TaughtModelError(
                f"{card}: {field}.rows: {[start, end]} are not the next rows of {name}"
                f" (its heads fill rows {general} to {outputs}, each once)"
            )
        at = end


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

    def __init__(self, folder: str | Path, *, open_heads: bool = False) -> None:
        """``open_heads``: the fit's own read of its held-back photos, before it has chosen the
        thresholds: every head answers (threshold 0 allowed). A reader never loads a model so."""
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
        where = str(path)
        self.dice, telling = check_card(card, where, open_heads=open_heads)
        check_card_digest(card, where)
        files = _model_files(self.folder, card[FILES], where)
        self.card: dict[str, Any] = card
        #: the telling head's rows and, for each taught die in card order, its column; None for none
        self.telling = None if telling is None else (telling.rows[0], telling.rows[1], telling.columns)
        #: how many dice of each taught id one throw may hold (no bound for a model of one die)
        self.counts: dict[str, int] = {
            d.id: telling.counts[d.id] if telling is not None else MAX_DICE for d in self.dice
        }
        self._nets: dict[Network, Any] = {}
        #: each die's fitted reader (:mod:`.fitted`), by die id, for the dice the fit trained one
        self._fitted: dict[str, Any] = {}
        for i, d in enumerate(self.dice):
            if d.fitted is not None:
                self._fitted[d.id] = self._load_fitted(d, files, f"{where}: dice[{i}].fitted")
        heads: dict[Network, list[tuple[str, tuple[int, int]]]] = {}
        for i, d in enumerate(self.dice):
            heads.setdefault(d.network, []).append((f"dice[{i}]", d.rows))
        if telling is not None:
            heads.setdefault(Network.NUMERALS, []).append(("telling", telling.rows))
        for network, network_heads in heads.items():
            name = network_file(network)
            if name not in files:
                raise TaughtModelError(f"{self.folder}: {name} is missing")
            try:
                self._nets[network] = load_onnx(files[name])
                outputs = _output_rows(self._nets[network], network)
            except cv2.error as exc:
                raise TaughtModelError(f"{self.folder / name}: cannot be read ({exc})") from None
            _check_rows(network, outputs, network_heads, where)
        self.tray: np.ndarray | None = None
        if "tray.png" in files:  # read as every photo is: its header checked before a pixel is decoded
            try:
                self.tray = decode_image(files["tray.png"], str(self.folder / "tray.png")).frame
            except ImageError as exc:
                raise TaughtModelError(str(exc)) from None

    def _load_fitted(self, die: TaughtDieCard, files: dict[str, bytes], field: str) -> Any:
        """The die's fitted reader, checked to answer one row per face."""
        name = str(die.fitted)
        if name not in files:
            raise TaughtModelError(f"{field}: {name} is not on the card's {FILES}")
        try:
            net = load_onnx(files[name])
            net.setInput(np.zeros((1, 3, FITTED_INPUT, FITTED_INPUT), np.float32))
            rows = int(np.asarray(net.forward()).reshape(1, -1).shape[1])
        except cv2.error as exc:
            raise TaughtModelError(f"{self.folder / name}: cannot be read ({exc})") from None
        if rows != len(die.faces) + 1:  # its faces, then "not a die"
            raise TaughtModelError(f"{field}: {name} answers {rows - 1} faces, the die has {len(die.faces)}")
        return net

    def has_fitted(self, die: TaughtDieCard) -> bool:
        """Does ``die`` have a fitted reader (whichever reader the card chose)?"""
        return die.id in self._fitted

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
        self,
        die: TaughtDieCard,
        frame: np.ndarray,
        boxes: list[tuple[float, float, float, float]],
        *,
        reader: str | None = None,
    ) -> list[TaughtRead]:
        """Read ``die`` at each of ``boxes`` in ``frame`` (BGR), by the reader its card chose.

        ``reader`` (``head`` or ``fitted``) reads by that one instead: the fit compares the two.
        """
        if (reader or die.reader) == "fitted":
            if die.id not in self._fitted:
                raise TaughtModelError(f"the {die.id} has no fitted reader")
            rows = fitted_probabilities(self._fitted[die.id], frame, boxes)
        else:
            rows = np.array([self.probabilities(die, frame, box) for box in boxes]).reshape(len(boxes), -1)
        reads = []
        for p in rows:
            k = int(np.argmax(p))
            reads.append(judged(die.faces[k], float(p[k]), die.threshold))
        return reads

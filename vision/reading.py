"""The plain result tree a frame reading produces: locate -> read -> report.

A :class:`Reading` is what the overlay, the roll log and eval render. "Unreadable" is a
result with a reason, never an exception and never a guess.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol

from .kinds import label_of

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "NOT_FLAT",
    "DiceReader",
    "DieReading",
    "FrameStatus",
    "KindRead",
    "ReadStatus",
    "Reading",
    "UnreadableReason",
]


class ReadStatus(StrEnum):
    READ = "read"
    UNREADABLE = "unreadable"


class UnreadableReason(StrEnum):
    COCKED = "cocked"  #: leaning on a wall or another die: no face is up
    TOUCHING = "touching"  #: merged with another die and could not be split
    BLURRED = "blurred"  #: motion blur / out of focus
    CUT_OFF = "cut_off"  #: partly outside the frame
    LOW_CONFIDENCE = "low_confidence"  #: the reader is not sure enough
    TOO_SMALL = "too_small"  #: too few pixels to see the face
    KIND_UNSURE = "kind_unsure"  #: a numeral die, but which kind (d6n, d10, d10t, d20) is unsure
    UNFAMILIAR = "unfamiliar"  #: unlike every die the reader learnt from (``vision/faces/familiar.py``)

    @property
    def text(self) -> str:
        """What a person is shown: the value, or for an unfamiliar die the remedy too."""
        return _REASON_TEXT.get(self, self.value)


#: Reasons whose words for a person say more than their value.
_REASON_TEXT = {UnreadableReason.UNFAMILIAR: "unfamiliar die: teach it"}


#: Why a die shows no one face squarely up, or not cleanly: its crop pictures no face to learn.
NOT_FLAT: frozenset[UnreadableReason] = frozenset(
    {
        UnreadableReason.COCKED,
        UnreadableReason.TOUCHING,
        UnreadableReason.BLURRED,
        UnreadableReason.CUT_OFF,
    }
)


class FrameStatus(StrEnum):
    DICE_FOUND = "dice_found"
    TRAY_EMPTY = "tray_empty"


def _rounded(point: tuple[float, float] | None) -> list[float] | None:
    return None if point is None else [round(float(v), 1) for v in point]


@dataclass(frozen=True)
class DieReading:
    """One die found in a frame.

    ``box`` is ``[x, y, width, height]`` in frame pixels (the manifest's convention);
    ``contour`` the outline as ``[[x, y], ...]``; ``face`` the printed face, ``None``
    when ``status`` is unreadable; ``hsv`` the body colour (OpenCV ranges: H 0-179).
    """

    box: tuple[float, float, float, float]
    kind: str = "d6"
    face: int | None = None
    status: ReadStatus = ReadStatus.READ
    reason: UnreadableReason | None = None
    confidence: float = 0.0
    colour: str = ""
    hsv: tuple[int, int, int] = (0, 0, 0)
    contour: tuple[tuple[int, int], ...] = ()
    #: The centre of the face that was read, from its pips (``vision.faces.topface``); ``None`` when
    #: the pips were not located or the die is unreadable.
    face_centre: tuple[float, float] | None = None

    @property
    def centre(self) -> tuple[float, float]:
        """The centre of the die's box (its outline as the camera sees it)."""
        x, y, w, h = self.box
        return (x + w / 2, y + h / 2)

    @property
    def centres(self) -> tuple[tuple[float, float], ...]:
        """Where the die may be said to be: its box's centre, then its read face's if known.

        Why two: seen at an angle, a die's top face lies off its outline's centre. A person
        marking the die may box the whole die (``byler-d6``) or only the face's pips
        (``matteop65-d6-wood``), and either is the die; eval accepts the nearer.
        """
        if self.face_centre is None:
            return (self.centre,)
        return (self.centre, self.face_centre)

    def to_json(self) -> dict[str, Any]:
        return {
            "box": [round(float(v), 1) for v in self.box],
            "kind": self.kind,
            "face": self.face,
            "status": self.status.value,
            "reason": self.reason.value if self.reason else None,
            "confidence": round(float(self.confidence), 4),
            "colour": self.colour,
            "hsv": list(self.hsv),
            "face_centre": _rounded(self.face_centre),
        }


@dataclass(frozen=True)
class Reading:
    """Everything read from one frame."""

    dice: tuple[DieReading, ...] = ()
    width: int = 0
    height: int = 0
    scale: float = 1.0  #: < 1 when an oversized frame was downscaled before reading
    timings_ms: dict[str, float] = field(default_factory=dict)
    #: How the camera saw the frame (``top_down`` / ``oblique``, :mod:`dicetower.vision.view`),
    #: which chose the thresholds; None when the frame was not read by the located-dice path.
    view: str | None = None
    tilt: float | None = None  #: what ``view`` was judged from (None: no readable die's box)

    @property
    def status(self) -> FrameStatus:
        return FrameStatus.DICE_FOUND if self.dice else FrameStatus.TRAY_EMPTY

    @property
    def faces(self) -> list[int]:
        """Faces of the dice that were read (unreadable ones left out)."""
        return [d.face for d in self.dice if d.status is ReadStatus.READ and d.face is not None]

    @property
    def unreadable(self) -> list[DieReading]:
        return [d for d in self.dice if d.status is ReadStatus.UNREADABLE]

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": "dicetower.reading/1",
            "status": self.status.value,
            "width": self.width,
            "height": self.height,
            "scale": self.scale,
            "view": self.view,
            "tilt": None if self.tilt is None else round(self.tilt, 4),
            "dice": [d.to_json() for d in self.dice],
            "timings_ms": {k: round(v, 2) for k, v in self.timings_ms.items()},
        }


@dataclass(frozen=True)
class KindRead:
    """One crop's answer: the kind (``None`` when unsure) and face (``None`` when unsure)."""

    kind: str | None
    face: int | None
    kind_confidence: float
    confidence: float  #: the face class's probability
    reason: UnreadableReason | None = None
    #: with ``kind`` unsure: the likeliest numeral kind when the numeral kinds together are sure
    #: (``reason`` ``kind_unsure``: surely no pip d6, so the pip reader must not read it)
    guess: str | None = None

    @property
    def manifest_kind(self) -> str | None:
        """The kind as manifests and readings name it: a numeral d6 is a ``d6``."""
        return None if self.kind is None else label_of(self.kind)


class DiceReader(Protocol):
    """What reads a frame: :class:`dicetower.vision.reader.FrameReader` (``open_reader()``), the
    classic baseline (:class:`dicetower.vision.eval.baseline.ClassicReader`), or a test's stand-in.

    ``frame`` is BGR; ``reference`` a photo of the empty tray in the same light and ``tray`` a
    mask of the tray, both optional. Eval, calibrate, the benchmarks and the CLI take any of them.
    """

    def read(
        self, frame: np.ndarray, reference: np.ndarray | None = None, tray: np.ndarray | None = None
    ) -> Reading: ...

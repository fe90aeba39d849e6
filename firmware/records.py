"""What every throw leaves behind: its photo, every reading, die crops, timings, retries and answers.

A :class:`ThrowRecord` is made for every physical throw, failed ones included (their photo
is the last frame the camera gave), so the roll log can show exactly what the tower saw.
It keeps the reading of every attempt (a tap or a re-shake reads the tray again), so the
dice that caused a retry can be named, and the crop of each die of the reading that counted,
cut from the raw frame when it was read, so nothing downstream decodes the photo again.
:meth:`ThrowRecord.save` writes ``STEM.jpg`` and ``STEM.json`` through temporary files
renamed into place, so a crash never leaves half a record.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..vision.files import write_atomic

if TYPE_CHECKING:
    from ..rules.source import DieSlot
    from ..vision.manifest import LabelledDie
    from ..vision.reading import Reading

__all__ = ["FailureReason", "Retry", "SlotAnswer", "TeachDie", "ThrowRecord", "TowerAnswer", "write_atomic"]


class FailureReason(StrEnum):
    """Why a throw could not be read; each is shown to the caller with the last photo."""

    TRAY_EMPTY = "tray_empty"  #: no die in the photo
    JAM = "jam"  #: the dice did not move on a shake
    DIE_MISSING = "die_missing"  #: fewer dice than the tray is loaded with
    EXTRA_DIE = "extra_die"  #: more dice than loaded (or something else in the tray)
    ROLE_DIE_MISSING = "role_die_missing"  #: the wild (tens, units) die was not seen by its colour
    UNREADABLE = "unreadable"  #: dice still unreadable after the taps and re-shakes
    SETTLE_TIMEOUT = "settle_timeout"  #: the picture never kept still
    CAMERA_LOST = "camera_lost"  #: the camera stopped answering and did not come back
    CAMERA_FROZEN = "camera_frozen"  #: the camera kept sending the same image
    CAMERA_BLACK = "camera_black"  #: the camera kept sending black frames
    CAMERA_GARBAGE = "camera_garbage"  #: the camera sent things that are not images
    SHAKER = "shaker"  #: the solenoid refused to shake (its duty budget was spent)


@dataclass(frozen=True)
class Retry:
    """One bounded retry: ``action`` (tap, reshake, recapture, reconnect) and why.

    ``attempt`` indexes :attr:`ThrowRecord.attempts`: the reading that led to a tap or a
    re-shake. A camera's recapture or reconnect happens before any reading, so has None.
    """

    action: str
    reason: str
    attempt: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"action": self.action, "reason": self.reason, "attempt": self.attempt}


@dataclass(frozen=True)
class SlotAnswer:
    """Which die in the photo answered which slot of the request."""

    slot: int
    die: str  #: the slot's kind
    role: str
    purpose: str
    label: str
    index: int  #: the die's index in the reading (``reading.dice[index]``)
    colour: str
    box: tuple[float, float, float, float]
    face: int

    @classmethod
    def of(cls, slot: DieSlot, index: int, reading: Reading, colour: str | None = None) -> SlotAnswer:
        """The answer of ``reading.dice[index]``; ``colour``: the loaded die's, over the reader's name."""
        d = reading.dice[index]
        assert d.face is not None
        return cls(
            slot.slot,
            slot.die,
            slot.role.value,
            slot.purpose.value,
            slot.label,
            index,
            colour or d.colour,
            d.box,
            d.face,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "slot": self.slot,
            "die": self.die,
            "role": self.role,
            "purpose": self.purpose,
            "label": self.label,
            "index": self.index,
            "colour": self.colour,
            "box": [round(float(v), 1) for v in self.box],
            "face": self.face,
        }

    def describe(self) -> str:
        """``slot 2 (d6, wild): the red die at (312, 140) -> 6``."""
        role = "" if self.role == "plain" else f", {self.role}"
        x, y = self.box[0] + self.box[2] / 2, self.box[1] + self.box[3] / 2
        what = self.label or f"slot {self.slot}"
        return f"{what} ({self.die}{role}): {self.colour or 'the'} die at ({x:.0f}, {y:.0f}) -> {self.face}"


@dataclass(frozen=True)
class TeachDie:
    """One die of a throw for teaching: which loaded die it is, and its picture.

    ``kind`` and ``colour`` are the loaded die's (the config's), not the reader's names for it, so
    every crop of one die is filed under one name whatever the light did to its colour that throw.
    ``crop`` is a lossless PNG cut from the raw frame at the reader's crop margin: the teach folder's
    crops are grouped and fitted on, and a JPEG's blocks would be learnt as part of the face.
    """

    kind: str
    colour: str
    crop: bytes


@dataclass
class ThrowRecord:
    """One physical throw of the tray and what came of it."""

    reason: str = ""  #: why the throw happens ("initial throw", "wild die exploded", "tower shake")
    slots: list[dict[str, Any]] = field(default_factory=list)  #: the slots this throw answers
    round: int = 1  #: 1-based round of a request thrown in several (30d6 with 10 d6 loaded: 3)
    rounds: int = 1
    started: float = field(default_factory=time.time)  #: wall-clock time (Unix seconds)
    photo: bytes = b""  #: JPEG of the frame that was read (or the last frame seen, on failure)
    reading: Reading | None = None  #: the last reading: the one that counted, when the throw is ok
    attempts: list[Reading] = field(default_factory=list)  #: every reading of this throw, in order
    #: JPEG of each die of the reading that counted (``crops[i]`` is ``reading.dice[i]``), or None
    #: where a die's box leaves no picture; empty when no reading counted
    crops: list[bytes | None] = field(default_factory=list)
    answers: list[SlotAnswer] = field(default_factory=list)
    #: a throw for teaching (:meth:`~.tower.Tower.throw_for_teaching`): ``teach[i]`` is
    #: ``reading.dice[i]``'s loaded die and crop; empty for every other throw
    teach: list[TeachDie] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)  #: software time per stage
    clock_s: dict[str, float] = field(default_factory=dict)  #: time per stage on the tower's clock
    retries: list[Retry] = field(default_factory=list)
    pulses: list[dict[str, Any]] = field(default_factory=list)
    failure: FailureReason | None = None
    message: str = ""
    truth: tuple[LabelledDie, ...] | None = None  #: what the camera knows was in the photo (sim, replay)
    #: what the camera knew each attempt's photo showed (``truths[i]`` is ``attempts[i]``'s), None
    #: where it knows nothing: the faces of the dice a reading rejected, which no reading gives
    truths: list[tuple[LabelledDie, ...] | None] = field(default_factory=list)
    saved: Path | None = None  #: the JSON file once :meth:`save` wrote it
    #: dice put to the table (``[roll] unreadable = "ask"``): ``{"attempt", "index", "face", "by"}``
    #: for an answer (``index`` into ``attempts[attempt]``), ``{..., "face": None, "why"}`` for none
    table: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.failure is None

    @property
    def faces(self) -> list[int]:
        return [a.face for a in self.answers]

    def add_time(self, stage: str, ms: float) -> None:
        self.timings_ms[stage] = self.timings_ms.get(stage, 0.0) + ms

    def add_reading(self, reading: Reading, truth: tuple[LabelledDie, ...] | None = None) -> int:
        """Keep one attempt's reading (and the camera's truth of its photo) as the record's latest.

        Returns its index in :attr:`attempts`.
        """
        self.attempts.append(reading)
        self.truths.append(truth)
        self.reading = reading
        return len(self.attempts) - 1

    def crop_of(self, answer: SlotAnswer) -> bytes | None:
        """The JPEG crop of the die that gave ``answer``, if the throw kept one."""
        return self.crops[answer.index] if 0 <= answer.index < len(self.crops) else None

    def to_json(self, photo_name: str | None = None) -> dict[str, Any]:
        return {
            "schema": "dicetower.throw/1",
            "reason": self.reason,
            "round": self.round,
            "rounds": self.rounds,
            "started": round(self.started, 3),
            "photo": photo_name,
            "slots": self.slots,
            "answers": [a.to_json() for a in self.answers],
            "reading": self.reading.to_json() if self.reading is not None else None,
            "attempts": [r.to_json() for r in self.attempts],
            "timings_ms": {k: round(v, 2) for k, v in self.timings_ms.items()},
            "clock_s": {k: round(v, 3) for k, v in self.clock_s.items()},
            "retries": [r.to_json() for r in self.retries],
            "pulses": self.pulses,
            "failure": self.failure.value if self.failure else None,
            "message": self.message,
            "truth": None if self.truth is None else [d.to_json() for d in self.truth],
            "attempt_truths": [None if t is None else [d.to_json() for d in t] for t in self.truths],
        }

    def save(self, folder: str | Path, stem: str) -> Path:
        """Write ``STEM.jpg`` (when there is a photo) and ``STEM.json``; returns the JSON's path."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        photo_name = None
        if self.photo:
            photo_name = f"{stem}.jpg"
            write_atomic(folder / photo_name, self.photo)
        path = folder / f"{stem}.json"
        write_atomic(path, (json.dumps(self.to_json(photo_name), indent=2) + "\n").encode())
        self.saved = path
        return path


@dataclass
class TowerAnswer:
    """The faces for one request, in slot order, and the record of every throw that made them."""

    faces: list[int]
    records: list[ThrowRecord] = field(default_factory=list)
    answers: list[SlotAnswer] = field(default_factory=list)

"""The server's dice from the tower: each throw's photo, crops, reading, timings and retries go to the log.

:class:`TowerSupply` wraps an opened :class:`~dicetower.firmware.tower.Tower` (the sim, replay
or a real camera; ``open_tower`` picks the parts from the config) behind the server's
:class:`~dicetower.firmware.server.rolling.DiceSupply` seam. For each request it asks a
:class:`~dicetower.firmware.source.TowerSource` and turns every
:class:`~dicetower.firmware.records.ThrowRecord` into a :class:`ThrowInfo`: the record
carries the photo, the crop of each die cut when the throw was read, and the reading of
every attempt: all that the log keeps of a throw.

Which physical die answered a slot is told by body colour and kind (``"red d6"``): dice of one
colour and kind cannot be told apart in a photo, so fairness pools them. Re-throws are
charged to the die that caused them: each unreadable die of the reading that led to a *tap*
(:attr:`Retry.attempt <dicetower.firmware.records.Retry.attempt>`) is matched by position to
the nearest die of the throw's last reading (a tap barely moves the dice), which gives its
face; after a *re-shake* the dice have moved, so only the die (by colour) is known, not the
face.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ...rules.source import DiceRequest, DiceSource
from .rolling import DiceSupply, ThrowHooks, ThrowInfo

if TYPE_CHECKING:
    from ..config import Config
    from ..records import ThrowRecord
    from ..tower import Tower

__all__ = ["TowerSupply", "die_identity", "throw_info"]


def die_identity(colour: str, kind: str) -> str:
    """``"red d6"``: how the log and fairness name a physical die (or a set of look-alikes)."""
    return f"{colour or 'unknown'} {kind}"


def _centre(box: Any) -> tuple[float, float]:
    x, y, w, h = box
    return (x + w / 2, y + h / 2)


def _attribute(record: ThrowRecord) -> list[dict[str, Any]]:
    """The record's retries, each with the unreadable dice that caused it (die, and face after a tap)."""
    out = []
    final = record.reading
    for retry in record.retries:
        entry: dict[str, Any] = {"action": retry.action, "reason": retry.reason, "dice": []}
        if retry.attempt is not None and final is not None and 0 <= retry.attempt < len(record.attempts):
            for d in record.attempts[retry.attempt].dice:
                if d.face is not None and d.status.value == "read":
                    continue
                face = None
                if retry.action == "tap" and final.dice:
                    near = min(final.dice, key=lambda f: math.dist(_centre(f.box), _centre(d.box)))
                    face = near.face
                    colour = near.colour or d.colour
                else:
                    colour = d.colour
                entry["dice"].append({"die": die_identity(colour, d.kind), "face": face})
        out.append(entry)
    return out


def throw_info(record: ThrowRecord) -> ThrowInfo:
    """A tower throw as the log keeps it, its crops as the record cut them."""
    reading = record.reading
    dice: dict[int, dict[str, Any]] = {}
    crops: dict[int, bytes] = {}
    for a in record.answers:
        d = reading.dice[a.index] if reading is not None and a.index < len(reading.dice) else None
        dice[a.slot] = {
            "die": die_identity(a.colour, a.die),
            "colour": a.colour,
            "confidence": round(float(d.confidence), 4) if d is not None else None,
            "box": [round(float(v), 1) for v in a.box],
            "position": a.index,
        }
        crop = record.crop_of(a)
        if crop:
            crops[a.slot] = crop
    timings = {f"{k}_ms": float(v) for k, v in record.timings_ms.items()}
    timings.update({f"{k}_clock_s": float(v) for k, v in record.clock_s.items()})
    return ThrowInfo(
        index=0,
        reason=record.reason,
        slots=list(record.slots),
        faces=record.faces,
        dice=dice,
        photo_jpeg=record.photo or None,
        crops=crops,
        reading={
            **(reading.to_json() if reading is not None else {}),
            "round": record.round,
            "rounds": record.rounds,
            "failure": record.failure.value if record.failure else None,
            "message": record.message,
            "truth": None if record.truth is None else [t.to_json() for t in record.truth],
        },
        timings=timings,
        retries=_attribute(record),
    )


class _TowerThrows(DiceSource):
    def __init__(self, supply: TowerSupply, hooks: ThrowHooks) -> None:
        self.supply = supply
        self.hooks = hooks

    def faces(self, request: DiceRequest) -> list[int]:
        from ..source import TowerSource

        self.hooks.rolling(request)
        source = TowerSource(self.supply.tower)
        try:
            return source.faces(request)
        finally:
            for record in source.records:  # failed throws too: their last photo is evidence
                self.hooks.settled(throw_info(record))


class TowerSupply(DiceSupply):
    """Dice from a tower; ``close()`` closes the tower (solenoid off)."""

    def __init__(self, tower: Tower) -> None:
        self.tower = tower
        self.name = f"tower:{tower.camera.name}"

    @classmethod
    def open(cls, config: Config) -> TowerSupply:
        """The tower ``config`` describes; the reader for its dice is built here, not at the first roll."""
        from ..tower import open_tower, reader_for_tray

        reader = reader_for_tray(config.dice.dice, config.camera.tray_colour, config.reader.taught)
        return cls(open_tower(config, reader=reader))

    def source(self, hooks: ThrowHooks) -> DiceSource:
        return _TowerThrows(self, hooks)

    def status(self) -> dict[str, Any]:
        return {"source": self.name, **self.tower.status()}

    def close(self) -> None:
        self.tower.close()

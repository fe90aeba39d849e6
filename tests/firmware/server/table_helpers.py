"""Helpers for the table's tests: a tower whose reader cannot read one die, a phone's browser context."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from dicetower.firmware.config import DEFAULT_CONFIG
from dicetower.firmware.rolls.tower_supply import TowerSupply
from dicetower.firmware.tower import open_tower, reader_for_tray
from dicetower.vision.reading import ReadStatus, UnreadableReason

__all__ = ["PHONE", "FirstDieUnsure", "ReadsFivesAsSixes", "misreading_tower", "unsure_tower"]

#: a phone at the table: 390 x 844 CSS pixels, touch
PHONE: dict[str, Any] = {
    "viewport": {"width": 390, "height": 844},
    "has_touch": True,
    "is_mobile": True,
    "device_scale_factor": 2,
}


class FirstDieUnsure:
    """The tray's reader, except that the first die of the first reading is unreadable (low confidence)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.reads = 0

    def read(self, frame: Any, reference: Any = None, tray: Any = None) -> Any:
        reading = self.inner.read(frame, reference, tray)
        self.reads += 1
        if self.reads > 1 or not reading.dice:
            return reading
        first = replace(
            reading.dice[0], face=None, status=ReadStatus.UNREADABLE, reason=UnreadableReason.LOW_CONFIDENCE
        )
        return replace(reading, dice=(first, *reading.dice[1:]))


def unsure_tower(seed: int = 5) -> TowerSupply:
    """The simulated tower, its reader unsure of the first die it sees."""
    cfg = DEFAULT_CONFIG.with_changes(sim=replace(DEFAULT_CONFIG.sim, seed=seed))
    reader = reader_for_tray(cfg.dice.dice, cfg.camera.tray_colour, cfg.reader.taught)
    return TowerSupply(open_tower(cfg, reader=FirstDieUnsure(reader)))


class ReadsFivesAsSixes:
    """The tray's reader, except that it reads every 5 as a 6: a reader wrong on real dice."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def read(self, frame: Any, reference: Any = None, tray: Any = None) -> Any:
        reading = self.inner.read(frame, reference, tray)
        dice = tuple(replace(d, face=6) if d.face == 5 else d for d in reading.dice)
        return replace(reading, dice=dice)


def misreading_tower(seed: int = 7) -> TowerSupply:
    """The simulated tower with a reader that reads 5 as 6."""
    cfg = DEFAULT_CONFIG.with_changes(sim=replace(DEFAULT_CONFIG.sim, seed=seed))
    reader = reader_for_tray(cfg.dice.dice, cfg.camera.tray_colour, cfg.reader.taught)
    return TowerSupply(open_tower(cfg, reader=ReadsFivesAsSixes(reader)))

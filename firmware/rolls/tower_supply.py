"""The server's dice from the tower: each throw's photo, crops, reading, timings and retries go to the log.

:class:`TowerSupply` wraps an opened :class:`~dicetower.firmware.tower.Tower` (the sim, replay
or a real camera; ``open_tower`` picks the parts from the config) behind the server's
:class:`~dicetower.firmware.rolls.rolling.DiceSupply` seam. For each request it asks a
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

Each reading of a throw is also logged as what it saw of each die (:func:`attempt_looks`): its
identity, the face read or none, and, where the camera knows what it showed (sim, replay), the
true face, matched to the read die as eval matches labels. How the dice came to lie is
logged with it (``after``: a shake, a tap, or a jam, a shake that moved nothing), because only
a die that has just landed shows a face drawn afresh: the per-face reject rates count those
(``rejects.py``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ...rules.source import DiceRequest, DiceSource, DieSlot
from .rolling import DiceSupply, ThrowHooks, ThrowInfo

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ...vision.reading import DieReading
    from ..config import Config, TrayDie
    from ..records import ThrowRecord
    from ..tower import Tower

__all__ = ["TowerSupply", "attempt_looks", "die_identity", "loaded_identity", "throw_info"]


def die_identity(colour: str, kind: str) -> str:
    """``"red d6"``: how the log and fairness name a physical die (or a set of look-alikes)."""
    return f"{colour or 'unknown'} {kind}"


def loaded_identity(die: DieReading, tray: Sequence[TrayDie] | None, kind: str | None = None) -> str:
    """The identity of the loaded die a read (or rejected) die is, told by colour alone.

    A die's colour name is read from its pixels, and a leaning or blurred die is often named
    wrong (``translucent``): it takes the loaded colour of its kind that its body is nearest
    (:func:`~dicetower.vision.colour.name_distances`), so a rejected die is charged to a die
    that is in the tray. No tray, or no loaded die of its kind: its own colour name. ``kind``:
    the kind to name it by (a slot's), if not the reading's.
    """
    kind = kind or die.kind
    colours = sorted({t.colour for t in tray or () if t.kind == kind})
    if not colours or die.colour in colours:
        return die_identity(die.colour, kind)
    if len(colours) == 1:
        return die_identity(colours[0], kind)
    from ...vision.colour import name_distances

    near = name_distances(die.hsv)
    return die_identity(min(colours, key=lambda c: near.get(c, math.inf)), kind)


def _centre(box: Any) -> tuple[float, float]:
    x, y, w, h = box
    return (x + w / 2, y + h / 2)


def _attribute(record: ThrowRecord, tray: Sequence[TrayDie] | None) -> list[dict[str, Any]]:
    """The record's retries, each with the unreadable dice that caused it (die, and face after a tap)."""
    out = []
    final = record.reading
    for retry in record.retries:
        entry: dict[str, Any] = {"action": retry.action, "reason": retry.reason, "dice": []}
        if retry.attempt is not None and final is not None and 0 <= retry.attempt < len(record.attempts):
            for d in record.attempts[retry.attempt].dice:
                if d.face is not None and d.status.value == "read":
                    continue
                face, seen = None, d
                if retry.action == "tap" and final.dice:
                    near = min(final.dice, key=lambda f: math.dist(_centre(f.box), _centre(d.box)))
                    face = near.face
                    seen = near if near.colour else d
                entry["dice"].append({"die": loaded_identity(seen, tray, d.kind), "face": face})
        out.append(entry)
    return out


def _after(record: ThrowRecord) -> list[str]:
    """How the dice of each attempt came to lie: ``shake``, ``tap``, or ``jam`` (shaken, unmoved)."""
    from ..records import FailureReason

    after = ["shake"] * len(record.attempts)
    for retry in record.retries:  # in order: a jam marks the reading it is charged to after the shake
        i = retry.attempt
        if i is None or not 0 <= i < len(after):
            continue
        if retry.reason.split(":")[0] == FailureReason.JAM.value:
            after[i] = "jam"
        if i + 1 < len(after):
            after[i + 1] = "tap" if retry.action == "tap" else "shake"
    return after


def attempt_looks(record: ThrowRecord, tray: Sequence[TrayDie] | None = None) -> list[dict[str, Any]]:
    """What each reading of ``record`` saw of each die, as the log keeps it (``tray``: the loaded dice).

    ``{"after": "shake"|"tap"|"jam", "dice": [{"die", "face", "truth", "cocked"}]}``: ``face``
    is None for a die the reader rejected; ``truth`` (the face the camera knows it showed; None
    for a die no label matches or one leaning, which has ``"cocked": true``) is there only
    when the camera knows the photo's truth.
    """
    from ...vision.eval.evaluate import label_box, match_dice
    from ...vision.reading import ReadStatus

    out = []
    for i, (reading, after) in enumerate(zip(record.attempts, _after(record), strict=True)):
        truth = record.truths[i] if i < len(record.truths) else None
        by_read: dict[int, Any] | None = None
        if truth is not None:
            boxes = [label_box(t, reading.width, reading.height, reading.scale) for t in truth]
            matched, _ = match_dice(boxes, [d.centres for d in reading.dice])
            by_read = {j: t for t, j in zip(truth, matched, strict=True) if j is not None}
        dice = []
        for j, d in enumerate(reading.dice):
            read = d.status is ReadStatus.READ and d.face is not None
            look: dict[str, Any] = {"die": loaded_identity(d, tray), "face": d.face if read else None}
            if by_read is not None:
                label = by_read.get(j)
                look["truth"] = None if label is None or label.cocked else label.face
                if label is not None and label.cocked:
                    look["cocked"] = True
            dice.append(look)
        out.append({"after": after, "dice": dice})
    return out


def throw_info(record: ThrowRecord, tray: Sequence[TrayDie] | None = None) -> ThrowInfo:
    """A tower throw as the log keeps it, its crops as the record cut them (``tray``: the loaded dice)."""
    reading = record.reading
    dice: dict[int, dict[str, Any]] = {}
    crops: dict[int, bytes] = {}
    for a in record.answers:
        d = reading.dice[a.index] if reading is not None and a.index < len(reading.dice) else None
        dice[a.slot] = {
            "die": loaded_identity(d, tray, a.die) if d is not None else die_identity(a.colour, a.die),
            "colour": a.colour,
            "confidence": round(float(d.confidence), 4) if d is not None else None,
            "box": [round(float(v), 1) for v in a.box],
            "position": a.index,
        }
        last = len(record.attempts) - 1
        given = next(
            (
                t
                for t in record.table
                if (t["attempt"], t["index"]) == (last, a.index) and t["face"] is not None
            ),
            None,
        )
        if given is not None:  # the table read this die ([roll] unreadable = "ask")
            dice[a.slot]["by_table"] = {"face": given["face"], "by": given.get("by")}
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
            "table": list(record.table),
        },
        timings=timings,
        retries=_attribute(record, tray),
        attempts=attempt_looks(record, tray),
    )


class _TowerThrows(DiceSource):
    """One roll's dice from the tower; its follow-up throws stop at the supply's ``max_throws``."""

    def __init__(self, supply: TowerSupply, hooks: ThrowHooks) -> None:
        self.supply = supply
        self.hooks = hooks
        self.follow_up_throws = 0

    def faces(self, request: DiceRequest) -> list[int]:
        from ..errors import TrayKindError
        from ..source import TowerSource, TowerSourceError

        if request.is_follow_up:  # the initial throws were counted before the roll was queued
            try:
                rounds = self.supply.throws_for([request.slots])
            except TrayKindError as exc:
                raise TowerSourceError(f"the tower cannot roll this: {exc}", "tray_kind") from exc
            bound = self.supply.max_throws
            if self.follow_up_throws + rounds > bound:
                raise TowerSourceError(
                    f"the roll's follow-ups (explosions, rerolls) need more than {bound} throws "
                    "(the tower's [roll] max_throws)",
                    "throw_limit",
                )
            self.follow_up_throws += rounds
        self.hooks.rolling(request)
        source = TowerSource(self.supply.tower)
        try:
            return source.faces(request)
        finally:
            for record in source.records:  # failed throws too: their last photo is evidence
                self.hooks.settled(throw_info(record, self.supply.tower.dice))


class TowerSupply(DiceSupply):
    """Dice from a tower; ``close()`` closes the tower (solenoid off)."""

    def __init__(self, tower: Tower) -> None:
        self.tower = tower
        self.name = f"tower:{tower.camera.name}"
        self.max_throws = tower.config.roll.max_throws

    def throws_for(self, requests: Sequence[Sequence[DieSlot]]) -> int:
        """The throws of the tray these requests take (:func:`~dicetower.firmware.matching.plan_rounds`).

        Raises :class:`~dicetower.firmware.errors.TrayKindError` (a ``ValueError``) naming a kind
        or role the tray lacks. Stops counting once past :attr:`max_throws`: a count above it is
        refused whatever its size, and each throw planned costs a pass over the slots.
        """
        from ..matching import plan_rounds

        tray = self.tower.dice
        total = 0
        for slots in requests:
            if not slots:
                continue
            if total + math.ceil(len(slots) / len(tray)) > self.max_throws:
                plan_rounds(slots[: len(tray)], tray)  # a kind the tray lacks still says so
                return total + math.ceil(len(slots) / len(tray))
            total += len(plan_rounds(slots, tray))
            if total > self.max_throws:
                return total
        return total

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

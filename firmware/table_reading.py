"""A reading whose unreadable dice the table read: the tower's hook for ``[roll] unreadable = "ask"``.

Why: re-throwing a die the reader cannot read tilts the faces toward those it reads best; asking
the people at the table, who see the die, keeps the throw as it landed. :func:`fill_from_table`
puts each unreadable die of a reading to ``answer`` (the server's :class:`TableAsker` asks the
``/table`` page; ``bench/tower.py`` answers as the table would, from the camera's truth) and
returns the reading with the answers as faces, or None when any die stays unanswered: then the
tower taps or throws again, as without the table, and the throw's record says why
(``record.table``).

A die that shows no face squarely up (leaning, touching, blurred, cut off: ``NOT_FLAT``) is
never asked: there is nothing to read, so it is tapped or thrown again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ..vision.reading import NOT_FLAT, Reading, ReadStatus
from .photos import die_crops

if TYPE_CHECKING:
    from .records import ThrowRecord
    from .rolls.asking import AskDesk

__all__ = ["Answer", "TableAsker", "fill_from_table"]

#: ``answer(index, kind, identity, crop)``: the face the table gives die ``index`` of the reading,
#: with who gave it, or ``(None, why)`` when none came
Answer = Callable[[int, str, str, "bytes | None"], "tuple[int | None, str]"]


def fill_from_table(
    record: ThrowRecord, reading: Reading, frame: np.ndarray, answer: Answer
) -> Reading | None:
    """``reading`` with its unreadable dice read by the table, or None (and ``record.table`` says why)."""
    unread = [i for i, d in enumerate(reading.dice) if d.status is not ReadStatus.READ]
    if not unread or any(reading.dice[i].reason in NOT_FLAT for i in unread):
        return None
    crops = die_crops(frame, [reading.dice[i].box for i in unread])
    attempt = len(record.attempts) - 1  # the reading asked about: answers count for it alone
    dice = list(reading.dice)
    for i, crop in zip(unread, crops, strict=True):
        d = dice[i]
        face, who = answer(i, d.kind, d.colour, crop)
        if face is None:
            record.table.append({"attempt": attempt, "index": i, "face": None, "why": f"{who}: thrown again"})
            return None
        record.table.append({"attempt": attempt, "index": i, "face": face, "by": who})
        dice[i] = replace(d, face=face, status=ReadStatus.READ, reason=None)
    return replace(reading, dice=tuple(dice))


class TableAsker:
    """The server's hook: asks the ``/table`` page through ``desk`` for the roll ``current_roll()``
    names, waiting up to ``timeout_s`` for each die."""

    def __init__(self, desk: AskDesk, current_roll: Callable[[], int | None], timeout_s: float) -> None:
        self.desk = desk
        self.current_roll = current_roll
        self.timeout_s = timeout_s

    def __call__(self, record: ThrowRecord, reading: Reading, frame: np.ndarray) -> Reading | None:
        return fill_from_table(record, reading, frame, self._answer)

    def _answer(self, index: int, kind: str, colour: str, crop: bytes | None) -> tuple[int | None, str]:
        roll = self.current_roll()
        if roll is None:
            return None, "no roll in progress"
        if not self.desk.connected:
            return None, "no table page is open"
        q = self.desk.ask(
            roll, index, kind, die=f"{colour or 'unknown'} {kind}", crop=crop, timeout_s=self.timeout_s
        )
        if q is None or q.face is None:
            return None, f"the table did not answer within {self.timeout_s:g} s"
        return q.face, q.by or "table"

    def status(self) -> dict[str, Any]:
        return {"timeout_s": self.timeout_s, **self.desk.status()}

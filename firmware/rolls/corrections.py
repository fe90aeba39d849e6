"""Corrections: the table says a die of the last roll shows another face, and the log keeps both.

Why: every reader misreads some real dice, and the people at the table see them. A correction is
a ``correct`` note in the roll log's hash chain naming the roll, the die's slot, the face the
tower read, the face the table says, who said so and when; the roll's own row is never changed.
The rules core evaluates the roll again on the corrected faces (:mod:`.amending`), and every
output gets an ``amended`` event with the corrected roll.

What is refused, and how (the API maps each :class:`~..web.guards.ApiError`):

- a body that is not ``{"die": INDEX, "face": FACE}`` (and an optional ``by``): 422 naming the
  field; a die the roll does not have, a face its die does not have: 422;
- a roll that is not finished, that failed, that a later roll followed, or older than the window
  (``window_s`` after it finished): 409 with the reason;
- a die the table corrected already: 409 (of two answers at once, the first wins: the check and
  the write are one transaction of the log);
- a caller over its rate: 429, from the same limiter as rolls.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from typing import Any

from starlette.concurrency import run_in_threadpool

from ..rolllog import RollLog
from ..web.guards import ApiError
from ..web.security import RateLimiter
from .amending import AmendError, amend_roll
from .rolling import MAX_ROLLER_NAME
from .rollqueue import Publish
from .views import event_view, roll_view

__all__ = ["DEFAULT_WINDOW_S", "MAX_WINDOW_S", "Correction", "CorrectionDesk", "parse_correction"]

#: seconds after a roll finishes in which the table may correct it (``[roll] correct_window_s``)
DEFAULT_WINDOW_S = 300.0
#: the longest window a config may set (a day): corrections are for the roll on the table
MAX_WINDOW_S = 86_400.0

_FIELDS = {"die", "face", "by"}


@dataclass(frozen=True)
class Correction:
    """A validated request: the die's slot, the face the table says, and who says so."""

    die: int
    face: int
    by: str


def parse_correction(body: Any, *, default_by: str = "table") -> Correction:
    """Validate a decoded JSON body; :class:`ApiError` (422) names the bad field."""
    if not isinstance(body, dict):
        raise ApiError(422, "must be a JSON object with die and face", field_name="body")
    unknown = sorted(set(body) - _FIELDS)
    if unknown:
        raise ApiError(422, f"unknown field; known: {', '.join(sorted(_FIELDS))}", field_name=unknown[0])
    for name in ("die", "face"):
        value = body.get(name)
        if name not in body:
            raise ApiError(422, "is missing", field_name=name)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ApiError(422, f"must be a whole number, got {json.dumps(value)[:20]}", field_name=name)
    if body["die"] < 0 or body["die"] > 1_000_000:
        raise ApiError(422, "must be a die's slot number (0 or more)", field_name="die")
    by = body.get("by", default_by)
    if not isinstance(by, str) or not by.strip():
        raise ApiError(422, "must be a non-empty string", field_name="by")
    by = by.strip()
    if len(by) > MAX_ROLLER_NAME or not by.isprintable():
        raise ApiError(422, f"must be at most {MAX_ROLLER_NAME} printable characters", field_name="by")
    return Correction(int(body["die"]), int(body["face"]), by)


class CorrectionDesk:
    """Takes the table's corrections to the last roll and hands the amended roll to the outputs.

    ``publish`` is the outputs' (:meth:`~.outputs.Outputs.publish`, on the event loop);
    ``limiter`` the rolls' rate limiter; ``window_s`` how long after it finished a roll may be
    corrected (until the next roll finishes, at most).
    """

    def __init__(
        self, log: RollLog, publish: Publish, *, limiter: RateLimiter, window_s: float = DEFAULT_WINDOW_S
    ) -> None:
        if not 0 < window_s <= MAX_WINDOW_S:
            raise ValueError(f"correct_window_s must be above 0 and at most {MAX_WINDOW_S:g}")
        self.log = log
        self.publish = publish
        self.limiter = limiter
        self.window_s = window_s
        self.made = 0

    async def correct(self, roll_id: int, body: Any, client: str) -> dict[str, Any]:
        """Record the correction in ``body`` to roll ``roll_id``; the corrected roll's view."""
        correction = parse_correction(body)
        wait = self.limiter.allow(client)
        if wait:
            raise ApiError(
                429, f"too many requests from {client}; wait {wait:.1f} s", retry_after=max(1, round(wait))
            )
        view = await run_in_threadpool(self._record, roll_id, correction, client)
        self.made += 1
        latest = view["corrections"][-1]
        self.publish("amended", {"id": roll_id, "correction": latest, "roll": event_view(view)})
        return view

    def _record(self, roll_id: int, correction: Correction, client: str) -> dict[str, Any]:
        row = self.log.get(roll_id)
        if row is None:
            raise ApiError(404, f"no roll {roll_id}", field_name="roll_id")
        if row["status"] in ("queued", "rolling"):
            raise ApiError(409, f"roll {roll_id} is not finished: correct it once its dice are read")
        if row["status"] != "done":
            raise ApiError(409, f"roll {roll_id} failed: it has no dice to correct")
        age = time.time() - float(row["finished_at"])
        if age > self.window_s:
            raise ApiError(
                409, f"roll {roll_id} finished {age:.0f} s ago; corrections close after {self.window_s:g} s"
            )
        dice = {int(d["slot"]): d for d in row.get("dice") or []}
        die = dice.get(correction.die)
        if die is None:
            raise ApiError(
                422, f"roll {roll_id} has no die {correction.die} (dice 0-{len(dice) - 1})", field_name="die"
            )
        if any(int(c["slot"]) == correction.die for c in row["corrections"]):
            raise ApiError(409, f"die {correction.die} of roll {roll_id} was corrected already")
        if int(die["face"]) == correction.face:
            raise ApiError(
                422, f"die {correction.die} was read as {correction.face} already", field_name="face"
            )
        body = {
            "roll": roll_id,
            "slot": correction.die,
            "kind": die["kind"],
            "old": int(die["face"]),
            "new": correction.face,
            "by": correction.by,
            "client": client,
        }
        try:
            amended = amend_roll(row, [*row["corrections"], body])
        except AmendError as exc:
            raise ApiError(exc.status, str(exc), field_name=exc.field) from None
        body["total"] = amended["total"]
        body["outcome"] = amended["outcome"]

        def still_open(db: sqlite3.Connection) -> None:
            last = db.execute("SELECT MAX(id) FROM rolls").fetchone()[0]
            if last != roll_id:
                raise ApiError(409, f"roll {last} came after roll {roll_id}: corrections to it are closed")
            for (text,) in db.execute(
                "SELECT body FROM notes WHERE kind = 'correct' AND after_id = ?", (roll_id,)
            ):
                if json.loads(text).get("slot") == correction.die:
                    raise ApiError(409, f"die {correction.die} of roll {roll_id} was corrected already")

        self.log.record("correct", body, check=still_open)
        fresh = self.log.get(roll_id)
        assert fresh is not None
        return roll_view(fresh)

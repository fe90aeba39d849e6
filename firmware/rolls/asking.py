"""Asking the table: a die the tower cannot read is put to the players, whose first valid answer fills it.

Why: re-throwing an unreadable die tilts the results toward the faces the reader reads best
(``docs/tower.md``); the people at the table see the die anyway. With ``[roll] unreadable =
"ask"`` the tower's source calls :meth:`AskDesk.ask` from the worker thread with the die's kind
and crop; the question waits for an answer from a ``/table`` page for at most ``timeout_s``.
The first answer that is a face of the die wins; a second gets 409, a face not on the die 422.
With no table page seen in the last :data:`PRESENCE_S` seconds, or no answer in time, ``ask``
returns None and the caller re-throws, saying why.

A table page is "connected" while it polls (``GET /api/table`` calls :meth:`AskDesk.seen`).
Bounded: at most :data:`MAX_OPEN` questions are open at once (a roll asks one die at a time).
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...rules.faces import printed_faces
from ..web.guards import ApiError

__all__ = ["MAX_OPEN", "PRESENCE_S", "AskDesk", "Question"]

#: seconds since its last poll for which a table page counts as connected
PRESENCE_S = 5.0
#: questions open at once, at most
MAX_OPEN = 16
#: seconds between a waiting question's signs of progress
_TICK_S = 5.0


@dataclass
class Question:
    """One die put to the table: which roll and slot, its kind, its crop, and its answer."""

    id: int
    roll_id: int
    slot: int
    kind: str
    die: str
    crop: bytes | None
    asked_at: float
    timeout_s: float
    face: int | None = None
    by: str | None = None
    answered: threading.Event = field(default_factory=threading.Event)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "roll": self.roll_id,
            "die": self.slot,
            "kind": self.kind,
            "identity": self.die,
            "faces": list(printed_faces(self.kind)),
            "crop_url": f"/api/table/asks/{self.id}.jpg" if self.crop else None,
            "asked_at": self.asked_at,
            "expires_in_s": max(0.0, self.asked_at + self.timeout_s - time.time()),
        }


class AskDesk:
    """The open questions and whether a table page is there to answer them. Thread-safe."""

    def __init__(
        self,
        *,
        presence_s: float = PRESENCE_S,
        clock: Any = time.monotonic,
        progress: Callable[[], None] | None = None,
    ) -> None:
        self.presence_s = presence_s
        self._clock = clock
        #: called every few seconds while a question waits: waiting on the table is a roll's
        #: progress, so the service's watchdog does not take a long answer for a wedged tower
        self.progress = progress
        self._closed = False
        self._lock = threading.Lock()
        self._open: dict[int, Question] = {}
        self._ids = itertools.count(1)
        self._seen_at: float | None = None
        self.asked = 0
        self.answered = 0
        self.unanswered = 0

    # -- the table's pages ------------------------------------------------------------------

    def seen(self) -> None:
        """A table page polled: it is there to answer."""
        with self._lock:
            self._seen_at = self._clock()

    @property
    def connected(self) -> bool:
        with self._lock:
            return self._seen_at is not None and self._clock() - self._seen_at <= self.presence_s

    def open_questions(self) -> list[Question]:
        with self._lock:
            return list(self._open.values())

    def question(self, qid: int) -> Question | None:
        with self._lock:
            return self._open.get(qid)

    def answer(self, roll_id: int, slot: int, face: Any, by: str) -> Question:
        """The table's answer for die ``slot`` of roll ``roll_id``: the first valid one wins."""
        if isinstance(face, bool) or not isinstance(face, int):
            raise ApiError(422, "must be a whole number", field_name="face")
        with self._lock:
            q = next((q for q in self._open.values() if q.roll_id == roll_id and q.slot == slot), None)
            if q is None:
                raise ApiError(
                    409, f"die {slot} of roll {roll_id} is not waiting for an answer (answered, or too late)"
                )
            if face not in printed_faces(q.kind):
                raise ApiError(422, f"face {face} is not on a {q.kind}", field_name="face")
            q.face, q.by = face, by
            del self._open[q.id]
            self.answered += 1
        q.answered.set()
        return q

    # -- the tower's side (a worker thread) ---------------------------------------------------

    def ask(
        self,
        roll_id: int,
        slot: int,
        kind: str,
        *,
        die: str = "",
        crop: bytes | None = None,
        timeout_s: float,
    ) -> Question | None:
        """Put a die to the table and wait for the answer (blocking); None when no table page is
        connected, too many questions are open, or nobody answered within ``timeout_s``."""
        if not self.connected:
            return None
        with self._lock:
            if len(self._open) >= MAX_OPEN or self._closed:
                return None
            q = Question(next(self._ids), roll_id, slot, kind, die, crop, time.time(), timeout_s)
            self._open[q.id] = q
            self.asked += 1
        deadline = time.monotonic() + timeout_s
        while not q.answered.wait(max(0.0, min(_TICK_S, deadline - time.monotonic()))):
            if time.monotonic() >= deadline or self._closed:
                break
            if self.progress is not None:
                self.progress()
        if q.face is not None:
            return q
        with self._lock:
            if self._open.pop(q.id, None) is None and q.face is not None:
                return q  # answered just as the wait ended
            self.unanswered += 1
        return None

    def close(self) -> None:
        """The server stops: every waiting question ends unanswered (the roll then re-throws or fails)."""
        with self._lock:
            self._closed = True
            waiting = list(self._open.values())
        for q in waiting:
            q.answered.set()

    def status(self) -> dict[str, Any]:
        return {
            "connected": self.connected,
            "open": len(self._open),
            "asked": self.asked,
            "answered": self.answered,
            "unanswered": self.unanswered,
        }

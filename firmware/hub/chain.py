"""One tower's chain as a hub follows it: each roll event links to the last, or says why not.

The hub holds, per tower, the sequence number and hash of the last roll it took. A new event
whose ``prev_seq`` is that roll is checked (:func:`~dicetower.firmware.mqtt.wire.check_event`:
every hash recomputed, every link followed) and taken; a repeat (QoS 1 delivers at least once)
is dropped; an event whose content does not match its own hash is refused (reported, never
taken); an event from beyond a gap is dropped too and the rolls after the last one taken are
asked for again, so events are taken in the tower's order and none is lost. An event that does
not link, or a repeat whose hash differs from the one taken, is a *break*: it is recorded and
shown, and checking carries on from it, so one break is reported once. An event more than
:data:`SEQ_WINDOW` ahead of the last one taken is *parked*: reported, never taken, and it moves
nothing, so a roll far ahead (a forged seq of 10**15, say) can never make the tower's real
rolls after it look like repeats.

Pure: no broker, no files; the caller stores and publishes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from enum import Enum
from typing import Any

from ..mqtt.wire import MAX_SEQ, check_event
from ..rolllog.chain import GENESIS

__all__ = ["ASK_AGAIN_S", "SEQ_WINDOW", "Take", "TowerChain", "Verdict"]

#: a gap's resend request is repeated after this long without the missing roll
ASK_AGAIN_S = 5.0
#: how far ahead of the last roll taken an event may be; further is parked
SEQ_WINDOW = 10_000


class Take(Enum):
    """What the hub does with an event."""

    NEW = "new"  #: linked and checked: take it
    UNLINKED = "unlinked"  #: take it; its link could not be followed (the start, or elided notes)
    BROKEN = "broken"  #: take it and report the break: the tower's chain does not link here
    REFUSED = "refused"  #: its content does not match its hash (forged or changed): report, drop
    REPEAT = "repeat"  #: already taken: drop it
    GAP = "gap"  #: rolls before it are missing: drop it, ask for them (``ask_from``)
    PARKED = "parked"  #: further ahead than :data:`SEQ_WINDOW`: report it, take nothing


@dataclass(frozen=True)
class Verdict:
    take: Take
    problem: str = ""
    ask_from: int | None = None


class TowerChain:
    """The chain state of one tower; ``backfill``: how many earlier rolls a hub asks for when
    it first hears of a tower mid-stream."""

    def __init__(self, *, last_seq: int | None = None, last_hash: str | None = None, backfill: int = 100):
        self.last_seq = last_seq
        self.last_hash = last_hash
        self.backfill = backfill
        self.first_seq: int | None = last_seq
        self.breaks = 0
        self.problem = ""
        self.asked_from: int | None = None
        self._asked_at = 0.0
        self._start_from: int | None = None

    @property
    def in_gap(self) -> bool:
        return self.asked_from is not None

    def judge(self, event: dict[str, Any], held_hash: str | None = None) -> Verdict:
        """The verdict on ``event``; ``held_hash`` is the hash the hub holds for its seq, if any."""
        seq, prev = event.get("seq"), event.get("prev_seq")
        if (
            not isinstance(seq, int)
            or not isinstance(prev, int)
            or isinstance(seq, bool)
            or not 0 <= prev < seq <= MAX_SEQ
        ):
            return Verdict(
                Take.REFUSED, f"the event's seq and prev_seq are not rising whole numbers to {MAX_SEQ}"
            )
        content = check_event(event, None)
        if not content.ok:  # never taken, so the tower's real roll can still be
            self.breaks += 1
            self.problem = content.problem
            return Verdict(Take.REFUSED, content.problem)
        if held_hash is not None or (self.last_seq is not None and seq <= self.last_seq):
            if held_hash is not None and held_hash != event.get("hash"):
                return self._broke(f"roll {seq} arrived again with a different hash")
            return Verdict(Take.REPEAT)
        if self.last_seq is not None and seq - self.last_seq > SEQ_WINDOW:
            return Verdict(
                Take.PARKED,
                f"roll {seq} is {seq - self.last_seq} past the last roll taken ({self.last_seq}),"
                f" more than {SEQ_WINDOW}: parked, not taken",
            )
        if self.last_seq is None:
            return self._first(event, seq, prev)
        if prev > self.last_seq:
            return self._gap(self.last_seq + 1, f"rolls {self.last_seq + 1}..{prev} are missing")
        if prev < self.last_seq:
            problem = f"roll {seq} follows roll {prev}, but roll {self.last_seq} was already taken"
            return self._broke(problem, event)
        return self._linked(event, self.last_hash)

    def _first(self, event: dict[str, Any], seq: int, prev: int) -> Verdict:
        if prev == 0:
            return self._linked(event, GENESIS)
        start = self._start_from
        if start is None and self.backfill > 0:
            start = self._start_from = max(1, seq - self.backfill)
        if start is None or prev < start <= seq:  # the first roll at or after where it starts
            self._advance(event)
            return Verdict(Take.UNLINKED, f"checked from roll {seq}: the rolls before it are not held")
        return self._gap(start, f"catching up from roll {start}")

    def _linked(self, event: dict[str, Any], last_hash: str | None) -> Verdict:
        found = check_event(event, last_hash)
        if not found.ok:
            return self._broke(found.problem, event)
        self._advance(event)
        return Verdict(Take.NEW if found.linked else Take.UNLINKED, found.problem)

    def _broke(self, problem: str, event: dict[str, Any] | None = None) -> Verdict:
        self.breaks += 1
        self.problem = problem
        if event is not None:
            self._advance(event)
        return Verdict(Take.BROKEN, problem)

    def _gap(self, start: int, problem: str) -> Verdict:
        now = time.monotonic()
        if self.asked_from == start and now - self._asked_at < ASK_AGAIN_S:
            return Verdict(Take.GAP, problem)  # asked already: wait for it
        self.asked_from, self._asked_at = start, now
        return Verdict(Take.GAP, problem, ask_from=start)

    def _advance(self, event: dict[str, Any]) -> None:
        self.last_seq, self.last_hash = int(event["seq"]), str(event["hash"])
        if self.first_seq is None:
            self.first_seq = self.last_seq
        self.asked_from = None
        self._start_from = None

    def behind(self, reported: int) -> int | None:
        """The tower says its last roll is ``reported``: where to ask from, when rolls are missing
        and no request is already waiting (None otherwise)."""
        have = self.last_seq or 0
        if reported <= have:
            return None
        if self.last_seq is not None:
            start = have + 1
        else:
            start = self._start_from = self._start_from or max(1, reported - self.backfill + 1)
        verdict = self._gap(start, "")
        return verdict.ask_from

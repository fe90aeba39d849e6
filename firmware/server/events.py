"""The event stream behind ``/ws``: numbered events, a replay ring, one bounded queue per client.

Every event gets the next sequence number of this server run (``seq``) and the run's
``epoch`` (random per start). A client that reconnects with ``?since=SEQ&epoch=E`` gets
every event after ``SEQ`` from the ring, so a dropped connection loses nothing; one whose
epoch is stale (the server restarted) or whose gap is older than the ring gets a
``snapshot`` of the log instead, and it keys rolls by id, so nothing shows twice.

A client that cannot keep up is not allowed to grow memory: its queue is bounded, and when
it fills the client is dropped (it reconnects with ``since`` and catches up from the ring).
Everything here runs on the event loop's thread.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

__all__ = ["EVENT_TYPES", "Event", "EventBus", "Subscription"]

#: the event types ``/ws`` sends (``snapshot`` and ``hello`` only to one client, unnumbered)
EVENT_TYPES = ("queued", "rolling", "settled", "result", "error")


@dataclass(frozen=True)
class Event:
    """One numbered event; ``text`` is its JSON, encoded once for every client."""

    seq: int
    type: str
    data: dict[str, Any]
    time: float
    text: str


class Subscription:
    """One client's queue of events; ``overflowed`` once it fell too far behind."""

    def __init__(self, maxsize: int) -> None:
        self.queue: asyncio.Queue[Event | None] = asyncio.Queue(maxsize)
        self.overflowed = False
        self.done = False

    def offer(self, event: Event) -> None:
        if self.done:
            return
        try:
            self.queue.put_nowait(event)
        except asyncio.QueueFull:
            self.overflowed = True
            self.end()

    def end(self) -> None:
        """Wake the sender with the end marker (the client left, or fell behind)."""
        self.done = True
        while not self.queue.empty():
            self.queue.get_nowait()
        self.queue.put_nowait(None)


class EventBus:
    """Numbers events, keeps the last ``history`` of them, fans them out to subscribers."""

    def __init__(
        self, *, history: int = 2000, client_queue: int = 1024, types: tuple[str, ...] = EVENT_TYPES
    ) -> None:
        self.types = types  #: the event types this bus numbers (the hub's differ from a tower's)
        self.epoch = secrets.token_hex(8)
        self.seq = 0
        self.history = history
        self.client_queue = client_queue
        self._ring: deque[Event] = deque(maxlen=history)
        self._subs: set[Subscription] = set()

    @property
    def clients(self) -> int:
        return len(self._subs)

    def publish(self, type_: str, data: dict[str, Any]) -> Event:
        if type_ not in self.types:
            raise ValueError(f"unknown event type {type_!r}")
        self.seq += 1
        now = time.time()
        body = {"seq": self.seq, "epoch": self.epoch, "type": type_, "time": now, **data}
        event = Event(self.seq, type_, data, now, json.dumps(body, separators=(",", ":")))
        self._ring.append(event)
        for sub in self._subs:
            sub.offer(event)
        return event

    def subscribe(self) -> Subscription:
        sub = Subscription(self.client_queue)
        self._subs.add(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        self._subs.discard(sub)

    def replay(self, since: int | None, epoch: str | None, last: int) -> list[Event] | None:
        """Events after ``since`` if the ring still holds them all (``None``: send a snapshot).

        With no ``since``, the last ``last`` events.
        """
        ring = self._ring
        if since is None:
            return list(ring)[-last:] if last > 0 else []
        if epoch != self.epoch or since > self.seq:
            return None
        if since == self.seq:
            return []
        first = ring[0].seq if ring else self.seq + 1
        if since + 1 < first:
            return None
        return [e for e in ring if e.seq > since]

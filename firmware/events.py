"""The event stream behind ``/ws``: numbered events, a replay ring, one bounded queue per client.

Every event gets the next sequence number of this server run (``seq``) and the run's
``epoch`` (random per start). A client that reconnects with ``?since=SEQ&epoch=E`` gets
every event after ``SEQ`` from the ring, so a dropped connection loses nothing; one whose
epoch is stale (the server restarted) or whose gap is older than the ring gets a
``snapshot`` of the log instead, and it keys rolls by id, so nothing shows twice.

A client that cannot keep up is not allowed to grow memory: its queue is bounded in events
and in bytes, and when it fills the client is dropped (it reconnects with ``since`` and catches
up from the ring). The ring is bounded the same two ways. An event's text is encoded once and
shared by every queue it sits in. Everything here runs on the event loop's thread.
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
EVENT_TYPES = ("queued", "rolling", "settled", "result", "error", "amended")


@dataclass(frozen=True)
class Event:
    """One numbered event; ``text`` is its JSON, encoded once for every client."""

    seq: int
    type: str
    time: float
    text: str


class Subscription:
    """One client's queue of events, at most ``maxsize`` events and ``max_bytes`` of their text.

    ``overflowed`` once it fell further behind than that. Take events with :meth:`next`, which
    keeps the byte count.
    """

    def __init__(self, maxsize: int, max_bytes: int = 4 * 2**20) -> None:
        self.queue: asyncio.Queue[Event | None] = asyncio.Queue(maxsize)
        self.max_bytes = max_bytes
        self.queued_bytes = 0
        self.overflowed = False
        self.done = False

    def offer(self, event: Event) -> None:
        if self.done:
            return
        if self.queued_bytes + len(event.text) > self.max_bytes:
            self.overflowed = True
            self.end()
            return
        try:
            self.queue.put_nowait(event)
        except asyncio.QueueFull:
            self.overflowed = True
            self.end()
            return
        self.queued_bytes += len(event.text)

    async def next(self) -> Event | None:
        """The next event, or None once the subscription ended (the client left, or fell behind)."""
        event = await self.queue.get()
        if event is not None:
            self.queued_bytes -= len(event.text)
        return event

    def end(self) -> None:
        """Wake the sender with the end marker (the client left, or fell behind)."""
        self.done = True
        while not self.queue.empty():
            self.queue.get_nowait()
        self.queued_bytes = 0
        self.queue.put_nowait(None)


class EventBus:
    """Numbers events, keeps the last ``history`` of them (``history_bytes`` of text at most), fans them out.

    ``client_queue`` and ``client_queue_bytes`` bound each subscriber's queue; ``dropped`` counts
    the clients closed for falling behind or stalling (the stream's sender counts them). ``types``
    are the event types this bus numbers (the hub's differ from a tower's).
    """

    def __init__(
        self,
        *,
        history: int = 2000,
        client_queue: int = 1024,
        history_bytes: int = 16 * 2**20,
        client_queue_bytes: int = 4 * 2**20,
        types: tuple[str, ...] = EVENT_TYPES,
    ) -> None:
        self.types = types
        self.epoch = secrets.token_hex(8)
        self.seq = 0
        self.history = history
        self.history_bytes = history_bytes
        self.client_queue = client_queue
        self.client_queue_bytes = client_queue_bytes
        self.dropped = 0
        self._ring: deque[Event] = deque(maxlen=history)
        self._ring_bytes = 0
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
        event = Event(self.seq, type_, now, json.dumps(body, separators=(",", ":")))
        ring = self._ring
        if len(ring) == ring.maxlen:
            self._ring_bytes -= len(ring[0].text)
        ring.append(event)
        self._ring_bytes += len(event.text)
        while self._ring_bytes > self.history_bytes and len(ring) > 1:
            self._ring_bytes -= len(ring.popleft().text)
        for sub in self._subs:
            sub.offer(event)
        return event

    def subscribe(self) -> Subscription:
        sub = Subscription(self.client_queue, self.client_queue_bytes)
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

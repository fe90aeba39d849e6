"""The event bus: numbering, the replay ring, and a slow client dropped instead of growing memory."""

from __future__ import annotations

import asyncio
import json

import pytest
from dicetower.firmware.events import EventBus


def test_numbering_and_replay() -> None:
    async def go() -> None:
        bus = EventBus(history=5)
        for i in range(8):
            bus.publish("queued", {"id": i})
        assert bus.seq == 8
        assert [e.seq for e in bus.replay(5, bus.epoch, 0) or []] == [6, 7, 8]
        assert bus.replay(8, bus.epoch, 0) == []
        assert bus.replay(2, bus.epoch, 0) is None  # older than the ring: a snapshot instead
        assert bus.replay(5, "another-run", 0) is None
        assert bus.replay(9, bus.epoch, 0) is None  # ahead of this run: another run's numbers
        assert [e.seq for e in bus.replay(None, None, 2) or []] == [7, 8]
        body = json.loads(bus.publish("result", {"id": 1}).text)
        assert body["seq"] == 9 and body["epoch"] == bus.epoch and body["type"] == "result"
        with pytest.raises(ValueError, match="unknown event type"):
            bus.publish("nonsense", {})

    asyncio.run(go())


def test_a_slow_client_is_dropped_not_buffered() -> None:
    async def go() -> None:
        bus = EventBus(client_queue=3)
        slow, fast = bus.subscribe(), bus.subscribe()
        for i in range(10):
            bus.publish("rolling", {"id": i})
            while not fast.queue.empty():
                fast.queue.get_nowait()
        assert slow.overflowed and slow.queue.qsize() == 1 and slow.queue.get_nowait() is None
        assert not fast.overflowed
        bus.unsubscribe(slow)
        assert bus.clients == 1

    asyncio.run(go())


def test_a_client_queue_is_bounded_in_bytes_too() -> None:
    async def go() -> None:
        bus = EventBus(client_queue=1000, client_queue_bytes=2000)
        slow = bus.subscribe()
        for i in range(20):
            bus.publish("result", {"id": i, "roll": {"text": "x" * 300}})
        assert slow.overflowed and slow.queue.qsize() == 1
        taker = bus.subscribe()
        bus.publish("queued", {"id": 1})
        event = await taker.next()
        assert event is not None and taker.queued_bytes == 0

    asyncio.run(go())


def test_the_ring_is_bounded_in_bytes() -> None:
    async def go() -> None:
        bus = EventBus(history=1000, history_bytes=10_000)
        for i in range(100):
            bus.publish("result", {"id": i, "roll": {"text": "x" * 500}})
        kept = bus.replay(None, None, 1000) or []
        assert 10 <= len(kept) <= 20 and kept[-1].seq == 100
        assert sum(len(e.text) for e in kept) <= 10_000
        assert bus.replay(50, bus.epoch, 0) is None  # gone from the ring: a snapshot instead

    asyncio.run(go())

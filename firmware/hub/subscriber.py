"""The hub's connection to the broker: every tower's rolls and status in, requests out.

Paho's network thread receives; each message is handed to the event loop through a bounded
queue (:data:`MAX_BACKLOG`), where :class:`~.core.Hub` takes them in order. Should the hub fall
that far behind, a message is dropped and counted: the chain check then sees a gap and asks the
tower for the roll again, so a drop delays a roll and never loses it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from ..mqtt import client as mqtt_client
from ..mqtt.settings import Topics
from ..mqtt.wire import encode

__all__ = ["MAX_BACKLOG", "HubLink"]

#: messages received and not yet taken by the hub
MAX_BACKLOG = 20_000

log = logging.getLogger(__name__)


class HubLink:
    """Subscribes to ``PREFIX/+/rolls``, ``PREFIX/+/status`` and ``replies`` as client ``hub_id``."""

    def __init__(self, conn: mqtt_client.Connection, topics: Topics, hub_id: str, replies: str) -> None:
        self.conn = conn
        self.topics = topics
        self.replies = replies
        self.connected = False
        #: why the hub is not connected ("" while it is): the broker's refusal or the socket's error
        self.error = ""
        self.dropped = 0
        self._loop = asyncio.get_running_loop()
        self.queue: asyncio.Queue[tuple[str, bytes]] = asyncio.Queue(MAX_BACKLOG)
        self.client = mqtt_client.new_client(conn, f"dicetower-hub-{hub_id}")
        self.client.on_connect = self._on_connect
        self.client.on_connect_fail = self._on_connect_fail
        self.client.on_disconnect = self._on_disconnect
        self.client.on_message = self._on_message

    def start(self) -> None:
        mqtt_client.start(self.client, self.conn)

    def _on_connect(self, client: Any, userdata: Any, flags: Any, reason: Any, props: Any) -> None:
        if getattr(reason, "is_failure", False):
            self._failed(mqtt_client.refusal(reason))
            return
        client.subscribe(
            [
                (self.topics.all("rolls"), 1),
                (self.topics.all("status"), 1),
                (self.topics.all("amended"), 1),
                (self.replies, 1),
            ]
        )
        self.error = ""
        self.connected = True

    def _on_connect_fail(self, client: Any, userdata: Any) -> None:
        self._failed(mqtt_client.connect_failure(self.conn))

    def _failed(self, why: str) -> None:
        """Keep why the hub is not connected; log it once, not on every retry."""
        if why != self.error:
            log.warning("the hub is not connected to the broker: %s", why)
        self.error = why

    def _on_disconnect(self, client: Any, userdata: Any, flags: Any, reason: Any, props: Any) -> None:
        was_connected, self.connected = self.connected, False
        if getattr(reason, "is_failure", False) and (was_connected or not self.error):
            self._failed(mqtt_client.dropped(reason, was_connected))

    def _on_message(self, client: Any, userdata: Any, message: Any) -> None:
        self._loop.call_soon_threadsafe(self._offer, message.topic, bytes(message.payload))

    def _offer(self, topic: str, payload: bytes) -> None:
        try:
            self.queue.put_nowait((topic, payload))
        except asyncio.QueueFull:
            self.dropped += 1

    async def run(self, take: Callable[[str, bytes], None]) -> None:
        """Hand each message to ``take`` in order (on the loop), until cancelled."""
        while True:
            topic, payload = await self.queue.get()
            try:
                take(topic, payload)
            except Exception:  # one bad message never stops the hub
                log.exception("a message on %s could not be taken", topic[:100])

    def publish(self, topic: str, message: dict[str, Any]) -> None:
        self.client.publish(topic, encode(message), qos=1)

    def close(self) -> None:
        mqtt_client.stop(self.client)

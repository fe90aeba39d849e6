"""The tower's side of the broker: rolls from the outbox in order, its status, its requests.

One thread publishes: it reads the rolls after the last one it handed to the client from the
log (:class:`~.outbox.Outbox`), publishes each with QoS 1 while the broker is connected, at
most :data:`WINDOW` unacknowledged at once, and moves the outbox's acknowledged mark as the
broker's PUBACKs come back in order. While the broker is away nothing is published and nothing
piles up in memory: the log is the queue, and the thread carries on from the mark when the
broker returns. Paho's own network thread reconnects and re-sends what was in flight.

A hub that finds a gap asks on ``PREFIX/TOWER/resend/WHO`` for the rolls after a sequence
number; the thread goes back there and publishes on in order, as far as the
:class:`~.resend.ResendGate` allows (rate-limited per requester, capped, never stacked).

Every event and status is signed with the tower's key (:mod:`.signing`), made at its first start
in its state folder, unless ``[mqtt] sign`` is off.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import client as mqtt_client
from .outbox import Outbox, Outgoing
from .resend import ResendGate
from .settings import MqttConfig, Topics
from .signing import TowerKey, load_or_create_key
from .wire import MAX_REQUEST_BYTES, MAX_SEQ, WireError, decode_json, encode, roll_event, status_message

__all__ = ["WINDOW", "TowerLink"]

#: rolls published and not yet acknowledged, at most
WINDOW = 50

log = logging.getLogger(__name__)


class TowerLink:
    """Publishes the log in ``data_dir`` as tower ``settings.tower_name``; takes its requests.

    ``on_request`` is called on paho's thread with each request's identity (the topic's last
    level) and payload (bytes); it must hand them on at once. ``crops`` reads a roll's die
    crops (slot to JPEG) when ``[mqtt] photos`` is ``inline``. Close it (or use ``with``) to
    stop both threads and publish nothing more.
    """

    def __init__(
        self,
        settings: MqttConfig,
        data_dir: str | Path,
        *,
        on_request: Callable[[str, bytes], None] | None = None,
        crops: Callable[[dict[str, Any]], dict[int, bytes]] | None = None,
    ) -> None:
        self.settings = settings
        self.tower = settings.tower_name
        self.topics = Topics(settings.prefix)
        self.conn = mqtt_client.Connection(
            settings.url, settings.user(), settings.password(), settings.ca_file, settings.keepalive_s
        )
        self.on_request = on_request
        self._crops = crops
        self.key: TowerKey | None = load_or_create_key(data_dir) if settings.sign else None
        self.resends = ResendGate()
        self.outbox = Outbox(data_dir, f"{self.conn.broker.describe()} {settings.prefix}")
        self.connected = False
        #: why the tower is not connected ("" while it is): the broker's refusal or the socket's error
        self.error = ""
        self.published = 0
        self.state = "online"
        self.detail = ""
        self._next = self.outbox.acked + 1
        self._window: deque[list[int]] = deque()  # [seq, mid, acked]
        self._acks: deque[int] = deque()
        self._rewind: int | None = None
        self._wake = threading.Event()
        self._stop = threading.Event()
        offline = encode(
            self._signed(status_message(self.tower, "offline", last_seq=-1, detail="connection lost"))
        )
        self.client = mqtt_client.new_client(
            self.conn, f"dicetower-{self.tower}", will=(self.topics.status(self.tower), offline)
        )
        self.client.on_connect = self._on_connect
        self.client.on_connect_fail = self._on_connect_fail
        self.client.on_disconnect = self._on_disconnect
        self.client.on_publish = self._on_publish
        self.client.on_message = self._on_message
        self._thread = threading.Thread(target=self._run, name="dicetower-mqtt-publisher", daemon=True)
        mqtt_client.start(self.client, self.conn)
        self._thread.start()

    # -- paho's thread ----------------------------------------------------------------------

    def _on_connect(self, client: Any, userdata: Any, flags: Any, reason: Any, props: Any) -> None:
        if getattr(reason, "is_failure", False):
            self._failed(mqtt_client.refusal(reason))
            return
        client.subscribe([(self.topics.requests(self.tower), 1), (self.topics.resend(self.tower), 1)])
        self.error = ""
        self.connected = True
        self._publish_status()
        self._wake.set()

    def _on_connect_fail(self, client: Any, userdata: Any) -> None:
        self._failed(mqtt_client.connect_failure(self.conn))

    def _failed(self, why: str) -> None:
        """Keep why the tower is not connected; log it once, not on every retry."""
        if why != self.error:
            log.warning("tower %s is not connected to the broker: %s", self.tower, why)
        self.error = why

    def _on_disconnect(self, client: Any, userdata: Any, flags: Any, reason: Any, props: Any) -> None:
        was_connected, self.connected = self.connected, False
        if getattr(reason, "is_failure", False) and (was_connected or not self.error):
            self._failed(mqtt_client.dropped(reason, was_connected))

    def _on_publish(self, client: Any, userdata: Any, mid: int, reason: Any, props: Any) -> None:
        self._acks.append(mid)
        self._wake.set()

    def _on_message(self, client: Any, userdata: Any, message: Any) -> None:
        asked = self.topics.asked(self.tower, message.topic)
        if asked is None:
            return
        leaf, identity = asked
        if leaf == "requests" and self.on_request is not None:
            self.on_request(identity, bytes(message.payload))
        elif leaf == "resend":
            try:
                start = decode_json(bytes(message.payload), MAX_REQUEST_BYTES).get("from")
            except WireError as exc:
                log.warning("a resend request was refused: %s", exc)
                return
            if not (isinstance(start, int) and not isinstance(start, bool) and 1 <= start <= MAX_SEQ):
                return
            if not self.resends.allow(identity):
                log.info(
                    "a resend from %r was refused: asked again within %g s", identity, self.resends.every_s
                )
                return
            self._rewind = start if self._rewind is None else min(self._rewind, start)
            self._wake.set()

    # -- the publishing thread ------------------------------------------------------------

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(1.0)
            self._wake.clear()
            try:
                self._settle_acks()
                self._apply_rewind()
                while self.connected and not self._stop.is_set() and len(self._window) < WINDOW:
                    batch = self.outbox.after(self._next - 1, WINDOW - len(self._window))
                    if not batch:
                        break
                    for item in batch:
                        if not self._publish_roll(item):
                            break
            except Exception:  # a log read failed: retried on the next wake, never fatal
                log.exception("publishing rolls to the broker failed; retrying")
                self._stop.wait(1.0)

    def _publish_roll(self, item: Outgoing) -> bool:
        s = self.settings
        crops = self._crops(item.row) if s.photos == "inline" and self._crops else None
        event = self._signed(
            roll_event(
                self.tower,
                item.row,
                item.prev_seq,
                item.notes,
                photo_url=s.photo_url if s.photos == "url" else "",
                crops=crops,
                inline_max_bytes=s.inline_max_bytes,
                note_count=item.note_count,
            )
        )
        info = self.client.publish(self.topics.rolls(self.tower), encode(event), qos=1)
        if info.rc != 0:  # not connected after all: the same roll goes again from the mark
            return False
        self._window.append([item.seq, info.mid, 0])
        self._next = item.seq + 1
        self.published += 1
        return True

    def _settle_acks(self) -> None:
        while self._acks:
            mid = self._acks.popleft()
            for entry in self._window:
                if entry[1] == mid and not entry[2]:
                    entry[2] = 1
                    break
        done = 0
        while self._window and self._window[0][2]:
            done = max(done, self._window.popleft()[0])
        if done:
            self.outbox.mark_acked(done)

    def _apply_rewind(self) -> None:
        start, self._rewind = self._rewind, None
        if start is None:
            return
        rewind = self.resends.rewind_to(start, self._next, self.outbox.last_seq())
        if rewind is not None:
            self._next = rewind
            log.info("a hub asked for the rolls from %d again", rewind)

    def _signed(self, message: dict[str, Any]) -> dict[str, Any]:
        return self.key.sign(message) if self.key is not None else message

    # -- callers --------------------------------------------------------------------------

    def wake(self) -> None:
        """A roll was committed: publish it (from any thread)."""
        self._wake.set()

    def set_state(self, state: str, detail: str = "") -> None:
        """Publish the tower's state (retained), with the last roll it holds."""
        self.state, self.detail = state, detail
        self._publish_status()

    def _publish_status(self) -> None:
        if not self.connected:
            return  # sent on the next connect
        message = self._signed(
            status_message(self.tower, self.state, last_seq=self.outbox.last_seq(), detail=self.detail)
        )
        self.client.publish(self.topics.status(self.tower), encode(message), qos=1, retain=True)

    def amend(self, message: dict[str, Any]) -> None:
        """Publish a roll the table corrected (QoS 1; while the broker is away the note still
        reaches a hub with the next roll's event, among the notes before it)."""
        if self.connected:  # signed like every event: the hub takes nothing its key did not sign
            self.client.publish(self.topics.amended(self.tower), encode(self._signed(message)), qos=1)

    def reply(self, topic: str, message: dict[str, Any]) -> None:
        """Publish a request's answer (QoS 1; dropped while the broker is away)."""
        if self.connected:
            self.client.publish(topic, encode(message), qos=1)

    def status(self) -> dict[str, Any]:
        return {
            "broker": self.conn.broker.describe(),
            "tower": self.tower,
            "connected": self.connected,
            "error": self.error,
            "published": self.published,
            "acknowledged": self.outbox.acked,
            "unacknowledged": len(self._window),
            "key": self.key.public if self.key is not None else "",
            "key_fingerprint": self.key.fingerprint if self.key is not None else "",
        }

    # -- resource -------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._stop.is_set()

    def close(self, grace_s: float = 2.0) -> None:
        """Stop publishing: wait up to ``grace_s`` for outstanding acknowledgements, then say
        "offline" and disconnect (a clean disconnect sends no last will)."""
        if self._stop.is_set():
            return
        deadline = time.monotonic() + grace_s
        while self.connected and self._window and time.monotonic() < deadline:
            self._wake.set()
            time.sleep(0.05)
        self._stop.set()
        self._wake.set()
        self._thread.join(5.0)
        with contextlib.suppress(Exception):
            self._settle_acks()
        if self.connected:
            self.state, self.detail = "offline", "stopped"
            offline = encode(
                self._signed(
                    status_message(self.tower, "offline", last_seq=self.outbox.last_seq(), detail="stopped")
                )
            )
            info = self.client.publish(self.topics.status(self.tower), offline, qos=1, retain=True)
            with contextlib.suppress(Exception):
                info.wait_for_publish(1.0)
        mqtt_client.stop(self.client)
        self.outbox.close()

    def __enter__(self) -> TowerLink:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

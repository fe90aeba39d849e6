"""Roll requests that arrive over MQTT: checked and queued as ``POST /api/rolls`` is, answered
on the reply topic the request names.

A request is one JSON object on ``PREFIX/TOWER/requests/WHO``::

    {"request_id": "r-17", "reply_to": "dicetower/_hub/h1/replies",
     "token": "...", "roll": {"notation": "4d6kh3", "roller": "Ann"}}

``roll`` is exactly the HTTP body; ``token`` is needed when the server needs one (beyond
loopback, or ``--require-token``). ``WHO``, the topic's last level, is who asked: the roll's
client (``mqtt:WHO``, as an address is for HTTP) and the rate limit's key. Why the topic and not
a field: a field is whatever the sender writes, while the broker's ACL
(``pattern write PREFIX/+/requests/%u``) lets a user publish only under its own name. The
answer comes twice on ``reply_to``: ``queued`` (with the roll's id and place) or ``refused``
(with the same error object the HTTP API returns), then ``done`` or ``failed`` with the roll.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..rolls.rolling import RequestFieldError
from ..rolls.rollqueue import QueueFullError
from ..web.guards import ApiError
from .settings import Topics
from .wire import MAX_REQUEST_BYTES, WireError, decode_json

if TYPE_CHECKING:
    from ..rolls.service import RollService

__all__ = ["MAX_OPEN_REQUESTS", "RequestDesk"]

#: requests received and not yet taken (more are dropped, with a warning)
MAX_WAITING = 100
#: requests whose roll is not finished yet, remembered for their final answer
MAX_OPEN_REQUESTS = 1000
_MAX_ID = 64

log = logging.getLogger(__name__)


def _short(value: Any, default: str) -> str:
    return value[:_MAX_ID] if isinstance(value, str) and value.strip() and value.isprintable() else default


class RequestDesk:
    """Takes request payloads (from paho's thread), queues their rolls, sends the answers.

    ``service`` is the roll service whose accept every request goes to (``via`` ``mqtt``), as
    ``POST /api/rolls`` does; ``reply`` publishes an answer on a topic; a request is at most
    ``max_body_bytes`` (the API's body limit).
    """

    def __init__(
        self,
        service: RollService,
        tower: str,
        topics: Topics,
        reply: Callable[[str, dict[str, Any]], None],
        *,
        max_body_bytes: int = MAX_REQUEST_BYTES,
    ) -> None:
        self.service = service
        self.max_body_bytes = max_body_bytes
        self.tower = tower
        self.topics = topics
        self.reply = reply
        self.received = 0
        self.dropped = 0
        self._loop = asyncio.get_running_loop()
        self._waiting: asyncio.Queue[tuple[str, bytes]] = asyncio.Queue(MAX_WAITING)
        self._open: OrderedDict[int, tuple[str, str]] = OrderedDict()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Take requests on the running loop until :meth:`stop`."""
        self._task = asyncio.create_task(self.run(), name="dicetower-mqtt-requests")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    def offer_threadsafe(self, identity: str, payload: bytes) -> None:
        """From paho's thread: hand the requester's identity and payload to the loop."""
        self._loop.call_soon_threadsafe(self._offer, identity, payload)

    def _offer(self, identity: str, payload: bytes) -> None:
        try:
            self._waiting.put_nowait((identity, payload))
        except asyncio.QueueFull:
            self.dropped += 1
            log.warning("more than %d MQTT requests waiting: one dropped", MAX_WAITING)

    async def run(self) -> None:
        while True:
            identity, payload = await self._waiting.get()
            try:
                await self.handle(identity, payload)
            except Exception:  # one bad request never stops the desk
                log.exception("an MQTT roll request failed")

    async def handle(self, identity: str, payload: bytes) -> None:
        self.received += 1
        limit = min(MAX_REQUEST_BYTES, int(self.max_body_bytes))
        try:
            message = decode_json(payload, limit)
        except WireError as exc:
            log.warning("an MQTT roll request was dropped (no reply topic can be read): %s", exc)
            return
        reply_to = message.get("reply_to")
        if not self.topics.reply_ok(reply_to):
            log.warning(
                "an MQTT roll request was dropped: reply_to %r is not a reply topic", str(reply_to)[:80]
            )
            return
        request_id = _short(message.get("request_id"), "")
        base = {"request_id": request_id, "tower": self.tower}
        try:
            self.service.check_token(message.get("token"))
            who = f"mqtt:{_short(identity, 'anonymous')}"
            accepted = await self.service.accept(message.get("roll"), who, via="mqtt")
        except (ApiError, RequestFieldError, QueueFullError) as exc:
            self.reply(reply_to, {**base, "status": "refused", "error": _error_body(exc)})
            return
        self._open[accepted.id] = (reply_to, request_id)
        while len(self._open) > MAX_OPEN_REQUESTS:
            self._open.popitem(last=False)
        self.reply(reply_to, {**base, **accepted.to_json()})

    def answer(self, roll_id: int, status: str, roll: dict[str, Any]) -> None:
        """The roll ``roll_id`` finished: answer its request, if one came over MQTT."""
        opened = self._open.pop(roll_id, None)
        if opened is not None:
            reply_to, request_id = opened
            self.reply(
                reply_to,
                {
                    "request_id": request_id,
                    "tower": self.tower,
                    "status": status,
                    "id": roll_id,
                    "roll": roll,
                },
            )


def _error_body(exc: Exception) -> dict[str, Any]:
    """The error object ``POST /api/rolls`` would have returned for ``exc``."""
    if isinstance(exc, ApiError):
        return {"status": exc.status, "field": exc.field, "message": exc.message, **exc.extra}
    if isinstance(exc, RequestFieldError):
        return {"status": exc.status, "field": exc.field, "message": exc.message, **exc.where()}
    return {"status": 503, "field": None, "message": str(exc), "retry_after": 1}

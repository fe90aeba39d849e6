"""Where finished rolls go: one small protocol for every output, each fed in order from its own queue.

Why this shape: the overlay's WebSocket stream, MQTT, and the next outputs (a VTT bridge, the
table's page) all want the same events (a roll queued, each throw, a roll finished or failed,
in order) and none of them may hold the roll cycle. So the roll service hands each event to
:meth:`Outputs.publish`, which never waits: it puts the event on every output's own bounded
queue, and one task per output sends from it. An output that is slow falls behind on its own:
its queue fills, later events are dropped for it alone, and it is told (:meth:`Output.fell_behind`)
before the next event it gets, so it can catch up from the roll log. An output whose send raises
or takes longer than its :attr:`Output.send_timeout_s` is counted as failing and goes on with the
next event. Each says how it is doing in ``GET /api/tower`` (``outputs``).

Writing one: subclass :class:`Output`, set :attr:`~Output.name`, override :meth:`~Output.send`
(and :meth:`~Output.wanted` when it is optional, :meth:`~Output.start`/:meth:`~Output.close`
when it holds something open), and add the class to ``OUTPUTS`` in
:mod:`dicetower.firmware.outputs`. ``docs/server.md`` walks through one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from ..events import EventBus
    from ..mqtt.settings import MqttConfig
    from .service import RollService

__all__ = ["Output", "OutputContext", "OutputEvent", "Outputs"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class OutputEvent:
    """One event as every output gets it: its type (``queued``, ``rolling``, ``settled``,
    ``result``, ``error``), its data (``result`` and ``error`` carry the bounded ``roll``) and
    when it happened. The same object goes to every output; outputs must not change it."""

    type: str
    data: dict[str, Any]
    time: float


@dataclass(frozen=True)
class OutputContext:
    """What an output may use: the roll service (its log, its accept), the event stream the
    overlay follows, where the log lives, and the settings an output reads."""

    service: RollService
    bus: EventBus
    data_dir: Path
    max_body_bytes: int = 16 * 1024
    mqtt: MqttConfig | None = None


class Output:
    """One place finished rolls go.

    Subclasses *must* set :attr:`name` and override :meth:`send`. They *may* override
    :meth:`wanted` (whether the context turns them on; always, by default), :meth:`start` and
    :meth:`close` (open and release what they hold), :meth:`fell_behind` (events were dropped
    for them) and :meth:`status` (more for ``/api/tower``). Everything is called on the event
    loop, one event at a time, in order.
    """

    name: ClassVar[str] = ""
    #: events that may wait for this output; one more and it is behind
    queue_size: ClassVar[int] = 1000
    #: seconds one send may take before it is counted as failed (the next event goes on)
    send_timeout_s: ClassVar[float] = 10.0

    def __init__(self, context: OutputContext) -> None:
        self.context = context

    @classmethod
    def wanted(cls, context: OutputContext) -> bool:
        """Whether this output is on for ``context`` (an optional one checks its settings)."""
        return True

    async def start(self) -> None:
        """Open what the output holds (a connection, a file); called once, before any event."""

    async def send(self, event: OutputEvent) -> None:
        """Deliver one event; raising counts as a failure of this output only."""
        raise NotImplementedError

    def fell_behind(self) -> None:
        """Events were dropped for this output (its queue was full): catch up from the log if it can."""

    def status(self) -> dict[str, Any]:
        """More of the output's state for ``GET /api/tower`` (its own counts, its connection)."""
        return {}

    async def close(self) -> None:
        """Release what :meth:`start` opened; called once, after the last event."""


class _Feed:
    """One output's queue, the task that sends from it, and the counts ``/api/tower`` shows."""

    def __init__(self, output: Output) -> None:
        self.output = output
        self.queue: asyncio.Queue[OutputEvent] = asyncio.Queue(max(1, output.queue_size))
        self.sent = 0
        self.dropped = 0
        self.failed = 0
        self.last_error = ""
        self.behind = False
        self.failing = False
        self.task: asyncio.Task[None] | None = None

    def offer(self, event: OutputEvent) -> None:
        try:
            self.queue.put_nowait(event)
        except asyncio.QueueFull:
            if not self.behind:
                log.warning("output %s fell behind: events dropped for it", self.output.name)
            self.dropped += 1
            self.behind = True

    async def run(self) -> None:
        output = self.output
        while True:
            event = await self.queue.get()
            if self.behind and self.queue.empty():  # drained: say so once, then carry on live
                self.behind = False
                self._call(output.fell_behind)
            try:
                async with asyncio.timeout(output.send_timeout_s):
                    await output.send(event)
            except Exception as exc:
                self.failed += 1
                reason = "too slow" if isinstance(exc, TimeoutError) else (str(exc) or type(exc).__name__)
                self.last_error = reason[:200]
                if not self.failing:
                    log.warning("output %s failed to send a %s event: %s", output.name, event.type, reason)
                self.failing = True
            else:
                self.sent += 1
                self.failing = False

    def _call(self, hook: Any) -> None:
        try:
            hook()
        except Exception:  # a hook that raises is the output's problem, not the roll cycle's
            log.exception("output %s: fell_behind raised", self.output.name)

    def status(self) -> dict[str, Any]:
        state = "failing" if self.failing else "behind" if self.behind else "ok"
        return {
            "name": self.output.name,
            "state": state,
            "waiting": self.queue.qsize(),
            "sent": self.sent,
            "dropped": self.dropped,
            "failed": self.failed,
            "last_error": self.last_error or None,
            **self.output.status(),
        }


class Outputs:
    """The outputs that are on, each fed in order from its own queue; :meth:`publish` never waits.

    Open it with ``async with`` (or :meth:`start` and :meth:`close`): each output starts in
    list order and closes in reverse, after its queue has drained (for up to ``drain_s``).
    """

    def __init__(self, outputs: list[Output], *, drain_s: float = 2.0) -> None:
        self._feeds = [_Feed(o) for o in outputs]
        self.drain_s = drain_s
        self._started: list[_Feed] = []

    def add(self, *outputs: Output) -> None:
        """Put more outputs on the list (before :meth:`start`: an output is fed from its start)."""
        if self._started:
            raise RuntimeError("outputs are added before they start")
        self._feeds.extend(_Feed(o) for o in outputs)

    def __getitem__(self, name: str) -> Output:
        for feed in self._feeds:
            if feed.output.name == name:
                return feed.output
        raise KeyError(name)

    def __contains__(self, name: object) -> bool:
        return any(feed.output.name == name for feed in self._feeds)

    @property
    def names(self) -> list[str]:
        return [feed.output.name for feed in self._feeds]

    def publish(self, type_: str, data: dict[str, Any]) -> None:
        """Hand one event to every output that is on (from the event loop's thread)."""
        event = OutputEvent(type_, data, time.time())
        for feed in self._started:
            feed.offer(event)

    def status(self) -> list[dict[str, Any]]:
        return [feed.status() for feed in self._feeds]

    async def start(self) -> None:
        try:
            for feed in self._feeds:
                await feed.output.start()
                feed.task = asyncio.create_task(feed.run(), name=f"dicetower-output-{feed.output.name}")
                self._started.append(feed)
        except BaseException:
            await self.close()
            raise

    async def close(self) -> None:
        """Let each output send what is waiting (up to ``drain_s`` in all), then stop and close it."""
        started, self._started = self._started, []
        deadline = time.monotonic() + self.drain_s
        for feed in started:
            while not feed.queue.empty() and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
        for feed in reversed(started):
            if feed.task is not None:
                feed.task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await feed.task
            try:
                await feed.output.close()
            except Exception:  # one output that fails to close does not keep the others open
                log.exception("output %s failed to close", feed.output.name)

    async def __aenter__(self) -> Outputs:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

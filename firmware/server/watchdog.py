"""Tell systemd how the tower's service is doing: ready once it serves, a watchdog while rolls progress.

Why here: systemd runs ``dicetower serve --tower config`` with ``Type=notify`` and
``WatchdogSec=`` (``systemd/dicetower.service``). ``READY=1`` goes once the lifespan has opened
the log, the tower, the outputs and the button; ``WATCHDOG=1`` goes every tick while the event
loop runs, the roll worker is alive, and the roll in progress (if any) moved within
``stall_s`` (a throw began or settled): a worker that died or a tower wedged mid-roll stops the
pings, and systemd restarts the service (its SIGTERM drives the solenoid pin low on the way
out). ``STATUS=`` says what the service is doing, as the panel's LEDs do.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..notify import Notifier
    from ..rolls.service import RollService

__all__ = ["STALL_S", "SystemdWatch"]

#: seconds a roll may go without a throw starting or settling before the watchdog stops
STALL_S = 120.0


class SystemdWatch:
    """Pings ``notifier`` for ``service`` while it is healthy; ``async with`` on the event loop."""

    def __init__(self, notifier: Notifier, service: RollService, *, stall_s: float = STALL_S) -> None:
        self.notifier = notifier
        self.service = service
        self.stall_s = stall_s
        interval = notifier.watchdog_interval
        self.tick = min(interval, 1.0) if interval else 1.0
        self._task: asyncio.Task[None] | None = None
        self._status = ""

    def healthy(self) -> bool:
        """Whether the worker is alive and the roll in progress (if any) moved lately."""
        queue = self.service.queue
        if not queue.alive:
            return False
        return queue.current is None or time.monotonic() - queue.last_progress < self.stall_s

    def describe(self) -> str:
        status = self.service.status()
        waiting = f", {status['queue_length']} waiting" if status["queue_length"] else ""
        if status["rolling"] is not None:
            return f"rolling: roll {status['rolling']}{waiting}"
        return f"idle: {status['rolled']} rolled, {status['failed']} failed{waiting}"

    async def _run(self) -> None:
        while True:
            if self.healthy():
                self.notifier.watchdog()
            text = self.describe()
            if text != self._status:
                self._status = text
                self.notifier.status(text)
            await asyncio.sleep(self.tick)

    async def __aenter__(self) -> SystemdWatch:
        self.notifier.ready()
        self._task = asyncio.create_task(self._run(), name="dicetower-systemd-watchdog")
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.notifier.stopping()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

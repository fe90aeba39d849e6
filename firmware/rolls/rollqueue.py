"""One tower, many callers: accepted rolls wait in order and are rolled one at a time.

:meth:`RollQueue.submit` records the request in the log (``queued``) and returns its id at
once; one worker task takes ids in order, runs the blocking roll in a thread
(``run_in_threadpool``), commits it, and publishes ``queued`` / ``rolling`` / ``settled`` /
``result`` / ``error`` events (rolls in their bounded form, ``views.event_view``) to the outputs
(:class:`~.outputs.Outputs`). Throw events are raised in the worker thread and handed to the loop
with ``call_soon_threadsafe``, so they reach the outputs before the ``result`` that follows them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any

from starlette.concurrency import run_in_threadpool

from ..rolllog import PhotoFile, RollLog
from .roll_words import roll_title
from .rolling import DiceSupply, RollRequest, ThrowHooks, ThrowInfo, perform_roll
from .views import EVENT_TEXT, event_faces, event_view, roll_view

__all__ = ["Publish", "QueueFullError", "RollQueue"]

#: hands an event (its type and data) to whatever shows it; called on the event loop, never blocks
Publish = Callable[[str, dict[str, Any]], object]

log = logging.getLogger(__name__)


class QueueFullError(RuntimeError):
    """More rolls waiting than the queue holds."""


class RollQueue:
    """The order rolls are thrown in, and the worker that throws them."""

    def __init__(self, log: RollLog, supply: DiceSupply, publish: Publish, *, max_waiting: int = 100) -> None:
        self.log = log
        self.supply = supply
        self.publish = publish
        self.max_waiting = max_waiting
        self._waiting: list[tuple[int, RollRequest]] = []
        self._accepted: dict[int, float] = {}
        self._wake = asyncio.Event()
        #: ids are handed out and queued in one step: rolls commit in id order, the chain's order
        self._accepting = asyncio.Lock()
        self.current: int | None = None
        #: ``time.monotonic()`` of the last sign of life of the roll in progress (a throw began or settled)
        self.last_progress = time.monotonic()
        self.rolled = 0
        self.failed = 0
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.create_task(self._work(), name="dicetower-roll-worker")

    async def stop(self, grace_s: float = 30.0) -> None:
        """Let the roll in progress finish (up to ``grace_s``), then stop; waiting rolls stay pending."""
        self._stopping = True
        self._wake.set()
        deadline = time.monotonic() + grace_s
        while self.current is not None and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    # -- callers --------------------------------------------------------------------------

    @property
    def alive(self) -> bool:
        """Whether the worker runs (started, not stopped, not died)."""
        return self._task is not None and not self._task.done()

    @property
    def waiting(self) -> list[int]:
        return [rid for rid, _ in self._waiting]

    def place(self, roll_id: int) -> int | None:
        """0 while rolling, 1 for next, ...; None once finished (or unknown)."""
        if roll_id == self.current:
            return 0
        for i, (rid, _) in enumerate(self._waiting, 1):
            if rid == roll_id:
                return i
        return None

    async def submit(self, request: RollRequest, client: str) -> tuple[int, int]:
        """Queue a validated request; returns its id and place."""
        if self._stopping:
            raise QueueFullError("the server is stopping; try again when it is back")
        async with self._accepting:  # the bound is checked inside: concurrent submits cannot pass it together
            if len(self._waiting) >= self.max_waiting:
                raise QueueFullError(f"{len(self._waiting)} rolls are waiting; try again shortly")
            roll_id = await run_in_threadpool(
                self.log.accept, request.to_json(), roller=request.roller, client=client
            )
            self._waiting.append((roll_id, request))
        self._accepted[roll_id] = time.time()
        place = self.place(roll_id) or len(self._waiting)
        self.publish(
            "queued",
            {
                "id": roll_id,
                "roller": request.roller,
                "label": request.label,
                "title": roll_title(request.to_json()),  # the overlay's heading while it rolls
                "via": request.via,
                "place": place,
                "queue_length": len(self._waiting),
            },
        )
        self._wake.set()
        return roll_id, place

    def status(self) -> dict[str, Any]:
        return {
            "rolling": self.current,
            "queue_length": len(self._waiting),
            "queue": [
                {"id": rid, "place": i, "roller": req.roller, "label": req.label, "via": req.via}
                for i, (rid, req) in enumerate(self._waiting, 1)
            ],
            "rolled": self.rolled,
            "failed": self.failed,
        }

    # -- the worker -----------------------------------------------------------------------

    async def _work(self) -> None:
        while not self._stopping:
            while not self._waiting:
                self._wake.clear()
                await self._wake.wait()
                if self._stopping:
                    return
            roll_id, request = self._waiting.pop(0)
            self.last_progress = time.monotonic()
            self.current = roll_id
            try:
                await self._roll_one(roll_id, request)
            except Exception:  # the log itself failed: this roll stays pending (failed at the next start)
                log.exception("roll %s could not be recorded", roll_id)
            finally:
                self.current = None
                self._accepted.pop(roll_id, None)

    def _emit(self, type_: str, data: dict[str, Any]) -> None:
        """From the worker thread: publish on the loop, in order."""
        assert self._loop is not None
        self.last_progress = time.monotonic()
        self._loop.call_soon_threadsafe(self.publish, type_, data)

    async def _roll_one(self, roll_id: int, request: RollRequest) -> None:
        def rolling(index: int, req: Any) -> None:
            self._emit("rolling", {"id": roll_id, "throw": index, "reason": req.reason, "dice": len(req)})

        def settled(info: ThrowInfo) -> None:
            self._emit(
                "settled",
                {"id": roll_id, "throw": info.index, **event_faces(info.faces), "retries": len(info.retries)},
            )

        hooks = ThrowHooks(rolling, settled)
        try:
            row = await run_in_threadpool(self._roll_blocking, roll_id, request, hooks)
        except Exception as exc:  # the tower failed, a die stayed unreadable: a failed roll, logged
            text = str(exc) or type(exc).__name__
            row = await run_in_threadpool(self._commit_failure, roll_id, hooks, text)
            self.failed += 1
            message = text if len(text) <= EVENT_TEXT else text[: EVENT_TEXT - 1] + "…"
            self.publish("error", {"id": roll_id, "message": message, "roll": event_view(roll_view(row))})
            return
        self.rolled += 1
        self.publish("result", {"id": roll_id, "roll": event_view(roll_view(row))})

    def _roll_blocking(self, roll_id: int, request: RollRequest, hooks: ThrowHooks) -> dict[str, Any]:
        self.log.mark_rolling(roll_id)
        started = time.time()
        outcome = perform_roll(request, self.supply, hooks)
        photos, throws = _photos_and_throws(outcome.throws, outcome.dice)
        outcome.timings["waited_s"] = max(0.0, started - self._accepted.pop(roll_id, started))
        return self.log.commit(
            roll_id,
            status="done",
            source=self.supply.name,
            result={**outcome.result, "text": outcome.text},
            outcome=outcome.outcome,
            total=outcome.total,
            odds=outcome.odds,
            dice=outcome.dice,
            throws=throws,
            timings=outcome.timings,
            photos=photos,
        )

    def _commit_failure(self, roll_id: int, hooks: ThrowHooks, message: str) -> dict[str, Any]:
        photos, throws = _photos_and_throws(hooks.throws, [])
        return self.log.commit(
            roll_id, status="failed", source=self.supply.name, throws=throws, error=message, photos=photos
        )


def _photos_and_throws(
    throws: list[ThrowInfo], dice: list[dict[str, Any]]
) -> tuple[list[PhotoFile], list[dict[str, Any]]]:
    """Photo files (each throw's JPEG and one crop per die) and the throws' log entries."""
    photos: list[PhotoFile] = []
    out = []
    for t in throws:
        entry: dict[str, Any] = {
            "index": t.index,
            "reason": t.reason,
            "slots": t.slots,
            "faces": t.faces,
            "timings": t.timings,
            "retries": t.retries,
            "reading": t.reading,
            "attempts": t.attempts,
        }
        if t.photo_jpeg:
            name = f"throw-{t.index}.jpg"
            photos.append(PhotoFile(name, t.photo_jpeg))
            entry["photo"] = name
        out.append(entry)
    for t in throws:  # the crops as the throw cut them from its raw frame, stored byte for byte
        for d in dice:
            crop = t.crops.get(d["slot"]) if d.get("throw") == t.index else None
            if crop:
                name = f"die-{d['slot']}.jpg"
                photos.append(PhotoFile(name, crop))
                d["crop"] = name
    return photos, out

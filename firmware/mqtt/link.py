"""The server's hook: with ``[mqtt] url`` set, its lifespan opens a :class:`~.publisher.TowerLink`.

Why a hook and not code in the app: publishing is optional (and needs the ``mqtt`` extra), so
the server's lifespan only enters :func:`mqtt_link`, which does nothing without a URL. Inside,
one task follows the server's own event bus, the same events ``/ws`` sends: a ``result`` or
``error`` wakes the publisher (the roll is in the log by then) and answers the MQTT request
that asked for it, ``rolling`` and the end of a roll move the tower's status.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool

from .publisher import TowerLink
from .requests import RequestDesk
from .settings import MqttConfig, Topics

__all__ = ["mqtt_link"]

log = logging.getLogger(__name__)


def _crop_reader(served_log: Any, limit: int) -> Any:
    """Reads a stored row's die crops (slot to JPEG bytes) through the log's hash check."""

    def crops(row: dict[str, Any]) -> dict[int, bytes]:
        out: dict[int, bytes] = {}
        used = 0
        for d in json.loads(row.get("dice") or "[]"):
            name = d.get("crop")
            path = served_log.photo_path(int(row["id"]), name) if name else None
            if path is None:
                continue
            size = path.stat().st_size
            if used + size > limit:
                break
            out[int(d["slot"])] = path.read_bytes()[:limit]
            used += size
        return out

    return crops


async def _follow(link: TowerLink, desk: RequestDesk, state: dict[str, Any]) -> None:
    """Move the status and answer requests as the server's events come."""
    bus = state["bus"]
    while True:
        sub = bus.subscribe()
        try:
            while True:
                event = await sub.next()
                if event is None:  # fell behind: catch up from the log
                    link.wake()
                    break
                data = json.loads(event.text)  # a few hundred bytes: a status or a roll's end
                if event.type == "rolling":
                    link.set_state("rolling", f"roll {data['id']}")
                elif event.type in ("result", "error"):
                    link.wake()
                    failed = event.type == "error"
                    link.set_state(
                        "needs-attention" if failed else "idle", data.get("message", "") if failed else ""
                    )
                    desk.answer(data["id"], "failed" if failed else "done", data["roll"])
        finally:
            bus.unsubscribe(sub)


@contextlib.asynccontextmanager
async def mqtt_link(settings: MqttConfig | None, state: dict[str, Any]) -> AsyncIterator[TowerLink | None]:
    """Publish the served log to ``settings.url`` while the server runs (nothing without a URL)."""
    if settings is None or not settings.url:
        yield None
        return
    desk = RequestDesk(state, settings.tower_name, Topics(settings.prefix), lambda t, m: link.reply(t, m))
    link = await run_in_threadpool(
        TowerLink,
        settings,
        Path(state["config"].data_dir),
        on_request=desk.offer_threadsafe,
        crops=_crop_reader(state["log"], settings.inline_max_bytes),
    )
    tasks = [
        asyncio.create_task(desk.run(), name="dicetower-mqtt-requests"),
        asyncio.create_task(_follow(link, desk, state), name="dicetower-mqtt-status"),
    ]
    try:
        yield link
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await run_in_threadpool(link.close)

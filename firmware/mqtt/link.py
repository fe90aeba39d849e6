"""The MQTT output: with ``[mqtt] url`` set, the tower publishes its log to a broker and takes requests.

Why an output (``firmware/outputs``): publishing is optional (and needs the ``mqtt`` extra), so
it is one entry in the outputs' list that is on only with a URL. It gets the roll service's
events in order, as every output does: a ``result`` or ``error`` wakes the publisher (the roll
is in the log by then) and answers the MQTT request that asked for it, ``rolling`` and the end
of a roll move the tower's status, and ``amended`` (the table corrected a die) publishes the
chained correction with the roll as it is now. Falling behind costs nothing: the publisher reads the log,
so it is woken to catch up. Requests from the broker go to the roll service's one accept
(``requests.py``), as ``POST /api/rolls`` does.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.concurrency import run_in_threadpool

from ..rolls.outputs import Output, OutputContext, OutputEvent
from .publisher import TowerLink
from .requests import RequestDesk
from .settings import Topics

__all__ = ["MqttOutput"]


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


class MqttOutput(Output):
    """Rolls, status and request answers to the broker of ``[mqtt] url``; requests from it."""

    name = "mqtt"

    @classmethod
    def wanted(cls, context: OutputContext) -> bool:
        return context.mqtt is not None and bool(context.mqtt.url)

    def __init__(self, context: OutputContext) -> None:
        super().__init__(context)
        self.link: TowerLink | None = None
        self.desk: RequestDesk | None = None

    async def start(self) -> None:
        settings = self.context.mqtt
        assert settings is not None
        self.desk = RequestDesk(
            self.context.service,
            settings.tower_name,
            Topics(settings.prefix),
            self._reply,
            max_body_bytes=self.context.max_body_bytes,
        )
        self.link = await run_in_threadpool(
            TowerLink,
            settings,
            self.context.data_dir,
            on_request=self.desk.offer_threadsafe,
            crops=_crop_reader(self.context.service.log, settings.inline_max_bytes),
        )
        self.desk.start()

    def _reply(self, topic: str, message: dict[str, Any]) -> None:
        if self.link is not None:
            self.link.reply(topic, message)

    async def send(self, event: OutputEvent) -> None:
        link, desk, data = self.link, self.desk, event.data
        assert link is not None and desk is not None
        if event.type == "rolling":
            link.set_state("rolling", f"roll {data['id']}")
        elif event.type in ("result", "error"):
            link.wake()
            failed = event.type == "error"
            link.set_state("needs-attention" if failed else "idle", data.get("message", "") if failed else "")
            desk.answer(data["id"], "failed" if failed else "done", data["roll"])
        elif event.type == "amended":
            note = await run_in_threadpool(self.context.service.log.note, int(data["correction"]["record"]))
            if note is not None:
                link.amend({"tower": link.tower, "seq": data["id"], "note": note, "roll": data["roll"]})

    def fell_behind(self) -> None:
        if self.link is not None:
            self.link.wake()  # the publisher reads the log: it catches up from there

    def status(self) -> dict[str, Any]:
        return {"link": self.link.status() if self.link is not None else None}

    async def close(self) -> None:
        if self.desk is not None:
            await self.desk.stop()
        if self.link is not None:
            await run_in_threadpool(self.link.close)

"""The overlay's output: events onto the numbered stream that ``/ws`` clients follow.

The stream (:class:`~dicetower.firmware.events.EventBus`) numbers each event, keeps the replay
ring and gives every WebSocket client its own bounded queue; this output only hands it events,
which never waits, so it is always on and never behind.
"""

from __future__ import annotations

from typing import Any

from ..rolls.outputs import Output, OutputEvent

__all__ = ["OverlayOutput"]


class OverlayOutput(Output):
    """Every event onto the event stream behind ``/ws`` (the overlay, the fairness page)."""

    name = "overlay"

    async def send(self, event: OutputEvent) -> None:
        self.context.bus.publish(event.type, event.data)

    def status(self) -> dict[str, Any]:
        bus = self.context.bus
        return {"clients": bus.clients, "clients_dropped": bus.dropped}

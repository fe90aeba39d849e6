"""The outputs that are on: where every roll goes, listed in one place.

Each entry is an :class:`~dicetower.firmware.rolls.outputs.Output` class; the server's lifespan
opens each one whose :meth:`~dicetower.firmware.rolls.outputs.Output.wanted` says so for its
settings, in this order, and feeds it every event in order (``rolls/outputs.py``). A new output
is one module and one line here (``docs/server.md`` shows one).
"""

from __future__ import annotations

from ..mqtt.link import MqttOutput
from ..rolls.outputs import Output
from .overlay import OverlayOutput

__all__ = ["OUTPUTS"]

#: every output the tower knows, in the order they start
OUTPUTS: tuple[type[Output], ...] = (
    OverlayOutput,  # /ws: the OBS overlay and any page that follows the stream
    MqttOutput,  # [mqtt] url: rolls and status to a broker, requests from it (docs/towers.md)
)

"""Server configs for the MQTT tests: a tower that publishes to the test's broker, dice from a seeded RNG;
a hub that trusts a tower's first signed key, served by a real uvicorn in this process (``hub_server``);
and a bounded wait for what the broker carries."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from dicetower.firmware.hub.app import HubConfig
from dicetower.firmware.mqtt.client import Connection
from dicetower.firmware.mqtt.settings import MqttConfig
from dicetower.firmware.rolls.rolling import RandomSupply
from dicetower.firmware.server.app import ServerConfig
from hub_server import live_hub

__all__ = ["live_hub", "tower_config", "trusted_hub_config", "until"]


def tower_config(data_dir: Path, url: str, name: str = "t1", **mqtt: object) -> ServerConfig:
    return ServerConfig(
        data_dir=data_dir,
        supply_factory=lambda: RandomSupply(7),
        mqtt=MqttConfig(url=url, tower=name, **mqtt),  # type: ignore[arg-type]
        allowed_hosts=("testserver",),  # TestClient's Host
    )


def trusted_hub_config(data_dir: Path, url: str) -> HubConfig:
    """A hub on the test's broker that pins each tower's first signed key (trust on first use)."""
    return HubConfig(data_dir=data_dir, connection=Connection(url), hub_id="h1", trust_first_use=True)


def until(check: Callable[[], object], timeout_s: float = 30.0) -> object:
    """``check()``'s first truthy answer, polled every 0.1 s for at most ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError("not within the time")

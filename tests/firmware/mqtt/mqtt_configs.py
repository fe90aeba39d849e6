"""Server configs for the MQTT tests: a tower that publishes to the test's broker, dice from a seeded RNG."""

from __future__ import annotations

from pathlib import Path

from dicetower.firmware.mqtt.settings import MqttConfig
from dicetower.firmware.server.app import ServerConfig
from dicetower.firmware.server.rolling import RandomSupply


def tower_config(data_dir: Path, url: str, name: str = "t1", **mqtt: object) -> ServerConfig:
    return ServerConfig(
        data_dir=data_dir,
        supply_factory=lambda: RandomSupply(7),
        mqtt=MqttConfig(url=url, tower=name, **mqtt),  # type: ignore[arg-type]
    )

"""Fixtures for the MQTT tests: a real Mosquitto on a free loopback port (``tests/mqtt_broker.py``),
skipped only where the binary is missing (CI installs it), and a server config that publishes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from mqtt_broker import Mosquitto, mosquitto_path

pytest.importorskip("paho.mqtt.client", reason="paho-mqtt is not installed (the mqtt extra)")


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Mosquitto]:
    if mosquitto_path() is None:
        pytest.skip("mosquitto is not installed (apt-get install mosquitto)")
    with Mosquitto(tmp_path / "broker", persistence=True) as m:
        yield m

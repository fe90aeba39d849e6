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


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """Debian's ``chromium`` under Playwright (no browser download); skips where either is missing."""
    import shutil

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("no chromium on PATH (Debian: apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=chromium, args=["--no-sandbox", "--disable-gpu", "--no-first-run"]
        )
        try:
            yield b
        finally:
            b.close()

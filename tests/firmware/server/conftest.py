"""Fixtures for the server tests: a config over a temporary data directory and a seeded RNG (the page
tests' Chromium is ``tests/conftest.py``'s ``browser``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from dicetower.firmware.rolls.rolling import RandomSupply
from dicetower.firmware.server.app import ServerConfig


@pytest.fixture
def config(tmp_path: Path) -> ServerConfig:
    # TestClient sends Host: testserver, which the Host check (hosts.py) allows only when named
    return ServerConfig(
        data_dir=tmp_path / "data", supply_factory=lambda: RandomSupply(42), allowed_hosts=("testserver",)
    )

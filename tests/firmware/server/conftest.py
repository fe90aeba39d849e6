"""Fixtures for the server tests: a config over a temporary data directory and a seeded RNG, and
Debian's headless Chromium driven by Playwright (no browser download) for the page tests."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from dicetower.firmware.server.app import ServerConfig
from dicetower.firmware.server.rolling import RandomSupply


@pytest.fixture
def config(tmp_path: Path) -> ServerConfig:
    return ServerConfig(data_dir=tmp_path / "data", supply_factory=lambda: RandomSupply(42))


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """Debian's ``chromium`` under Playwright, one a test module; skips where either is missing."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("no chromium on PATH (Debian: apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=chromium,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        try:
            yield b
        finally:
            b.close()

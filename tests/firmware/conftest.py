"""Fixtures shared by the tower tests: gpiozero's mock pins, a virtual clock, one reader, sim towers,
and Debian's headless Chromium under Playwright for the page tests."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from dicetower.firmware.clock import VirtualClock, VirtualClockFactory
from tower_helpers import sim_config


@pytest.fixture
def mock_factory() -> Iterator[Any]:
    """gpiozero's own MockFactory (real time), reset afterwards."""
    from gpiozero.pins.mock import MockFactory

    factory = MockFactory()
    try:
        yield factory
    finally:
        factory.reset()


@pytest.fixture
def virtual() -> tuple[VirtualClock, Any]:
    """A virtual clock and a MockFactory whose pins record states on it."""
    clock = VirtualClock()
    return clock, VirtualClockFactory(clock)


@pytest.fixture(scope="session")
def frame_reader() -> Any:
    """The shipped reader, loaded once for every tower test."""
    from dicetower.vision.reader import FrameReader

    return FrameReader()


@pytest.fixture
def sim_tower(frame_reader: Any) -> Iterator[Callable[..., Any]]:
    """``sim_tower(seed, **sections)`` opens a simulated tower; every one is closed afterwards."""
    from dicetower.firmware.tower import open_tower

    opened = []

    def make(seed: int = 1, **sections: Any) -> Any:
        tower = open_tower(sim_config(seed, **sections), reader=frame_reader)
        opened.append(tower)
        return tower

    try:
        yield make
    finally:
        for t in opened:
            t.close()


@pytest.fixture(scope="session")
def taught_model(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A taught model of two white d6, fitted once (about 20 s) on 60 simulated throws (taught_helpers)."""
    pytest.importorskip("onnx")  # fitting writes the model's networks with it
    from taught_helpers import fit_small_model

    return fit_small_model(tmp_path_factory.mktemp("taught"))


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """Debian's ``chromium`` under Playwright, one a test module (the server's and the hub's pages);
    skips where either is missing."""
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

"""Fixtures shared by the tower tests: gpiozero's mock pins, a virtual clock, one reader, sim towers
(Chromium for the page tests is in tests/conftest.py)."""

from __future__ import annotations

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

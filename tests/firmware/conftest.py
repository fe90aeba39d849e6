"""Fixtures shared by the tower tests: gpiozero's mock pins, a virtual clock, one reader, sim towers."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import pytest
from dicetower.firmware.clock import VirtualClock, VirtualClockFactory
from dicetower.firmware.config import DEFAULT_CONFIG, Config


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


def sim_config(seed: int = 1, **sections: Any) -> Config:
    """The built-in config, its simulated tray seeded; ``sim=``, ``cycle=`` ... dicts change sections."""
    cfg = DEFAULT_CONFIG
    changes: dict[str, Any] = {"sim": replace(cfg.sim, seed=seed, **sections.pop("sim", {}))}
    for name, values in sections.items():
        changes[name] = replace(getattr(cfg, name), **values) if isinstance(values, dict) else values
    return cfg.with_changes(**changes)


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

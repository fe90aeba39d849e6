"""The shake pattern: one definition of the solenoid's timings, read by the config, the shaker and the sim."""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any

import pytest
from dicetower.firmware.cameras import SolenoidWatch
from dicetower.firmware.cameras.sim import SimCamera
from dicetower.firmware.config import DEFAULT_CONFIG, ShakerConfig, parse_config
from dicetower.firmware.pattern import MAX_PATTERN_PULSES, ShakePattern, ShakerLimits, milliseconds
from dicetower.firmware.shaker import Shaker
from dicetower.firmware.tower import open_tower
from tower_helpers import sim_config


def test_the_config_defaults_are_the_pattern_defaults_in_milliseconds() -> None:
    built_in = ShakePattern()
    assert ShakePattern.from_config(DEFAULT_CONFIG.shaker) == built_in
    assert ShakerConfig() == DEFAULT_CONFIG.shaker
    assert (ShakerConfig().max_on_ms, ShakerConfig().tap_on_ms) == (
        150.0,
        25.0,
    )  # as written in docs/tower.md


def test_from_config_turns_milliseconds_into_seconds() -> None:
    section = {
        "max_on_ms": 120,
        "min_off_ms": 50,
        "duty_window_ms": 20_000,
        "max_duty": 0.2,
        "shake_count": 3,
        "shake_on_ms": 100,
        "shake_off_ms": 90,
        "tap_on_ms": 30,
    }
    pattern = ShakePattern.from_config(parse_config({"shaker": section}).shaker)
    assert pattern == ShakePattern(3, 0.1, 0.09, 0.03, ShakerLimits(0.12, 0.05, 20.0, 0.2))
    assert pattern.shake_s == pytest.approx(0.3)


def test_milliseconds_reads_as_written() -> None:
    assert [milliseconds(s) for s in (0.15, 0.04, 10.0, 0.025, 0.08, 0.12)] == [150, 40, 10_000, 25, 80, 120]


@pytest.mark.parametrize(
    "change",
    [
        {"shake_count": 0},
        {"shake_count": MAX_PATTERN_PULSES + 1},
        {"shake_count": 2.0},
        {"shake_count": True},
        {"shake_on_s": 0.0},
        {"tap_on_s": -0.01},
        {"shake_on_s": float("nan")},
        {"tap_on_s": float("inf")},
        {"shake_off_s": -0.001},
        {"shake_on_s": "80"},
    ],
)
def test_a_pattern_that_makes_no_sense_is_refused(change: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        replace(ShakePattern(), **change)


def test_a_pattern_is_frozen_and_may_ask_past_the_limits() -> None:
    pattern = ShakePattern(shake_on_s=0.9)  # over max_on: the shaker shortens it, the pattern only asks
    with pytest.raises(AttributeError):
        pattern.shake_on_s = 0.1  # type: ignore[misc]
    assert {f.name for f in fields(pattern)} == {
        "shake_count",
        "shake_on_s",
        "shake_off_s",
        "tap_on_s",
        "limits",
    }


def test_a_burst_is_told_a_shake_or_a_tap_by_the_pattern() -> None:
    built_in = ShakePattern()  # tap 25 ms, shake 6 x 80 ms: the split is at 52.5 ms
    assert not built_in.is_shake(0, 0.0)
    assert not built_in.is_shake(1, 0.025)
    assert not built_in.is_shake(1, 0.052)
    assert built_in.is_shake(1, 0.053)
    assert built_in.is_shake(2, 0.01)
    one_pulse = ShakePattern(shake_count=1, shake_on_s=0.05, tap_on_s=0.01)
    assert one_pulse.is_shake(1, 0.05) and not one_pulse.is_shake(1, 0.01)


def test_the_watch_reads_the_shakers_pattern_not_its_own(virtual: tuple[Any, Any]) -> None:
    """A one-pulse shake of 50 ms is a shake by its pattern, though the built-in one calls it a tap."""
    clock, factory = virtual
    pattern = ShakePattern(shake_count=1, shake_on_s=0.05, tap_on_s=0.01)
    with Shaker(17, pin_factory=factory, pattern=pattern, clock=clock) as shaker:
        told, built_in = SolenoidWatch(shaker.pin, shaker.pattern), SolenoidWatch(shaker.pin)
        assert [p.given_s for p in shaker.paced_shake()] == [0.05]
        assert (told.take(), built_in.take()) == ("shake", "tap")
        shaker.paced_tap()
        assert told.take() == "tap"
        assert told.take() is None  # nothing new on the pin


def test_the_sim_throws_on_the_shake_its_shaker_gives(virtual: tuple[Any, Any]) -> None:
    clock, factory = virtual
    pattern = ShakePattern(shake_count=1, shake_on_s=0.05, tap_on_s=0.01)
    sim = SimCamera(seed=3, clock=clock)
    for _ in range(8):
        still = sim.read_frame()
    before = list(sim.faces)
    with Shaker(17, pin_factory=factory, pattern=pattern, clock=clock) as shaker:
        sim.watch_solenoid(shaker.pin, shaker.pattern)
        shaker.paced_shake()
        assert sim.read_frame().tobytes() != still.tobytes()  # the dice are moving
        for _ in range(8):
            sim.read_frame()
    assert sim.faces != before  # thrown: new faces (a tap would have kept them, no die leaning)


def test_open_tower_gives_the_shaker_the_configs_pattern() -> None:
    cfg = sim_config(4, shaker={"shake_count": 1, "shake_on_ms": 50.0, "tap_on_ms": 10.0})
    with open_tower(cfg) as tower:
        assert tower.shaker.pattern == ShakePattern.from_config(cfg.shaker)
        assert [p["given_ms"] for p in tower.shake()] == [50.0]
        assert tower.tap()["given_ms"] == 10.0


def test_the_towers_sim_tells_shakes_by_the_configs_pattern() -> None:
    """One 50 ms pulse per shake: the sim built by ``open_tower`` throws the dice on it."""
    cfg = sim_config(4, shaker={"shake_count": 1, "shake_on_ms": 50.0, "tap_on_ms": 10.0})
    with open_tower(cfg) as tower:
        for _ in range(3):
            before = list(tower.camera.faces)
            tower.shake()
            tower.capture()
            assert tower.camera.faces != before  # thrown, not taken for a tap

"""The shake pattern: one definition of the solenoid's timings, read by the config, the shaker and the sim."""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any

import pytest
from dicetower.firmware.config import DEFAULT_CONFIG, ShakerConfig, parse_config
from dicetower.firmware.pattern import MAX_PATTERN_PULSES, ShakePattern, ShakerLimits, milliseconds
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


def test_open_tower_gives_the_shaker_the_configs_pattern() -> None:
    cfg = sim_config(4, shaker={"shake_count": 1, "shake_on_ms": 50.0, "tap_on_ms": 10.0})
    with open_tower(cfg) as tower:
        assert tower.shaker.pattern == ShakePattern.from_config(cfg.shaker)
        assert [p["given_ms"] for p in tower.shake()] == [50.0]
        assert tower.tap()["given_ms"] == 10.0

"""The tower's start button as a way in (gpiozero's MockFactory pins): a press is a roll like any other."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from dicetower.firmware.cli import main
from dicetower.firmware.config import DEFAULT_CONFIG
from dicetower.firmware.rolls.button import PressPlan
from dicetower.firmware.rolls.tower_supply import TowerSupply
from dicetower.firmware.server.app import ServerConfig, create_app
from server_helpers import wait_for
from starlette.testclient import TestClient


def _press(supply: TowerSupply) -> None:
    pin = supply.tower.panel.button.pin
    pin.drive_low()  # pull-up button: pressed is low
    pin.drive_high()


def test_presses_roll_the_queued_expressions_then_the_default_behind_other_rolls(
    config: ServerConfig,
) -> None:
    opened: list[TowerSupply] = []

    def open_tower() -> TowerSupply:
        opened.append(TowerSupply.open(DEFAULT_CONFIG.with_changes(sim=replace(DEFAULT_CONFIG.sim, seed=3))))
        return opened[0]

    plan = PressPlan(queued=("1d6", "2d6"))
    app = create_app(replace(config, rate_per_second=0, supply_factory=open_tower, presses=plan))
    with TestClient(app) as client:
        first = client.post("/api/rolls", json={"notation": "3d6", "roller": "Ann"}).json()["id"]
        for _ in range(3):
            _press(opened[0])
        wait_for(lambda: client.get("/api/tower").json()["rolled"] == 4, timeout=60)
        rolls = client.get("/api/rolls").json()["rolls"][::-1]
        button = client.get("/api/tower").json()["button"]
    assert rolls[0]["id"] == first
    assert [(r["label"], r["via"], r["roller"]) for r in rolls] == [
        ("3d6", "http", "Ann"),
        ("1d6", "button", "button"),
        ("2d6", "button", "button"),
        ("4d6kh3", "button", "button"),  # nothing queued for the button: [roll] default
    ]
    assert button == {"presses": 3, "accepted": 3, "refused": 0, "last_refusal": None, "next": "4d6kh3"}
    assert opened[0].tower.panel.closed  # the lifespan closed the tower: every LED off, the pins released


def test_a_press_on_a_full_queue_is_refused_and_counted(config: ServerConfig) -> None:
    opened: list[TowerSupply] = []

    def open_tower() -> TowerSupply:
        opened.append(TowerSupply.open(DEFAULT_CONFIG))
        return opened[0]

    app = create_app(
        replace(config, rate_per_second=0, max_waiting=1, supply_factory=open_tower, presses=PressPlan())
    )
    with TestClient(app) as client:
        for _ in range(6):  # one rolls, one waits, the rest find the queue full
            _press(opened[0])
        status = wait_for(
            lambda: (b := client.get("/api/tower").json()["button"])["accepted"] + b["refused"] == 6 and b
        )
        assert status["presses"] == 6 and status["refused"] >= 1 and "waiting" in status["last_refusal"]
        wait_for(lambda: client.get("/api/tower").json()["rolled"] == status["accepted"], timeout=60)


def test_serve_refuses_bad_press_options_before_anything_opens(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:

    data = ["--data", str(tmp_path / "data"), "--port", "1"]
    cases = {
        ("--tower", "sim", "--press-roll", "2d"): "--press-roll '2d': expected the number of sides",
        ("--tower", "sim", "--autopress", "--presses", "-1"): "--presses must be between 0 and 10000, got -1",
        ("--tower", "sim", "--presses", "2"): "--presses goes with --autopress",
        ("--rng", "--autopress"): "--autopress and --press-roll need a tower's button",
    }
    for argv, message in cases.items():
        assert main(["serve", *argv, *data]) == 1
        err = capsys.readouterr().err
        assert err.startswith(f"dicetower: error: {message}") and err.count("\n") == 1, err
    assert not (tmp_path / "data").exists()  # nothing opened, nothing written

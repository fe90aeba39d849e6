"""What a roll will cost and whether it can go at all is checked before it is queued: 422 with the reason."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from dicetower.firmware.config import DEFAULT_CONFIG, ConfigError, parse_config
from dicetower.firmware.rolllog import RollLog
from dicetower.firmware.rolls.rolling import RandomSupply
from dicetower.firmware.rolls.tower_supply import TowerSupply
from dicetower.firmware.server.app import ServerConfig, create_app
from dicetower.rules.notation import Roller, parse
from dicetower.rules.notation.plan import always_zero_divisor, base_requests, constant_value
from dicetower.rules.source import DiceRequest, DiceSource, RandomSource
from server_helpers import wait_for
from starlette.testclient import TestClient


def _tower(config: ServerConfig, max_throws: int = 20) -> ServerConfig:
    cfg = DEFAULT_CONFIG.with_changes(
        sim=replace(DEFAULT_CONFIG.sim, seed=3), roll=replace(DEFAULT_CONFIG.roll, max_throws=max_throws)
    )
    return replace(config, rate_per_second=0, supply_factory=lambda: TowerSupply.open(cfg))


def _log(data_dir: Path) -> tuple[int, int, int]:
    """Rows, pending rows, photo files: all 0 means nothing was thrown or written."""
    photos = len(list((data_dir / "photos").rglob("*.jpg"))) if (data_dir / "photos").exists() else 0
    with RollLog(data_dir) as log:
        return log.count(), len(log.pending()), photos


def _finished(client: TestClient, rid: int) -> dict:
    return wait_for(
        lambda: (r := client.get(f"/api/rolls/{rid}").json())["status"] in ("done", "failed") and r, 60
    )


class _Recorder(DiceSource):
    faces_are_valid = True

    def __init__(self, seed: int) -> None:
        self.rng = RandomSource(seed)
        self.base: list[list[tuple[str, str]]] = []

    def faces(self, request: DiceRequest) -> list[int]:
        if not request.is_follow_up:
            self.base.append([(s.die, s.role.value) for s in request.slots])
        return self.rng.faces(request)


@pytest.mark.parametrize(
    "notation",
    [
        "4d6kh3+2",
        "3d6x2 - 1d4!",
        "2d%+1d100",
        "0d6+1",
        "(1d8+2)*3d4r1",
        "10d10!>8kh3",
        "6d6>=5f1",
        "-1d6+2d6ro<3",
    ],
)
def test_the_planned_base_throws_are_the_ones_the_evaluator_asks_for(notation: str) -> None:
    node = parse(notation)
    planned = [[(s.die, s.role.value) for s in r] for r in base_requests(node)]
    for seed in range(5):
        rec = _Recorder(seed)
        Roller().roll(notation, rec)
        assert rec.base == planned


@pytest.mark.parametrize(
    ("notation", "zero"),
    [("1d6/0", "0"), ("1d6/(2-2)", "(2 - 2)"), ("1d6/(0*1d4)", "(0 * 1d4)"), ("2d6+(1d6/-0)", "-0")],
)
def test_a_divisor_that_is_always_zero_is_found(notation: str, zero: str) -> None:
    assert str(always_zero_divisor(parse(notation))) == zero


@pytest.mark.parametrize("notation", ["1d6/(1d2-1)", "1d6/2", "1d6*0", "1d6/(1d6*0+1)"])
def test_a_divisor_the_dice_decide_is_left_to_the_roll(notation: str) -> None:
    assert always_zero_divisor(parse(notation)) is None


def test_constant_values_fold_only_without_dice() -> None:
    assert constant_value(parse("2*(3-1)/2")) == 2
    assert constant_value(parse("-(0*1d6)")) == 0
    assert constant_value(parse("1d6-1")) is None


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ({"notation": "1000d6"}, "notation", "a roll may take at most 20"),
        ({"notation": "1d20"}, "notation", "the roll needs a d20; the tray holds 5 d6"),
        ({"notation": "1d6+1d%"}, "notation", "needs a d10t"),
        ({"notation": "1d6/0"}, "notation", "division by zero"),
        ({"notation": "2d6+3d6/(4-4)"}, "notation", "the divisor (4 - 4) is always 0"),
        ({"system": "wcrpg", "check": "check", "params": {"dc": 45, "skill": 35}}, "check", "d10t"),
    ],
)
def test_a_roll_the_tower_cannot_or_may_not_throw_is_refused_before_any_throw(
    config: ServerConfig, body: dict, field: str, words: str
) -> None:
    config = _tower(config)
    with TestClient(create_app(config)) as client:
        r = client.post("/api/rolls", json=body)
        tower = client.get("/api/tower").json()
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["field"] == field and words in error["message"], error
    assert tower["rolled"] == tower["failed"] == 0
    assert _log(config.data_dir) == (0, 0, 0)


def test_the_refusal_says_the_throws_and_the_bound(config: ServerConfig) -> None:
    with TestClient(create_app(_tower(config))) as client:
        error = client.post("/api/rolls", json={"notation": "1000d6", "roller": "Ann"}).json()["error"]
    assert error["max_throws"] == 20 and 20 < error["throws"] <= 200
    assert "1000d6 needs at least" in error["message"]


def test_an_accepted_roll_says_its_throws_and_the_bound(config: ServerConfig) -> None:
    config = _tower(config, max_throws=3)
    with TestClient(create_app(config)) as client:
        ok = client.post("/api/rolls", json={"notation": "15d6"})
        over = client.post("/api/rolls", json={"notation": "16d6"})
        check = client.post(
            "/api/rolls",
            json={
                "system": "runic-flux",
                "check": "skill",
                "params": {"level": 3, "stat": 4, "difficulty": 15},
            },
        )
        done = _finished(client, ok.json()["id"])
        _finished(client, check.json()["id"])
    assert ok.status_code == 202 and (ok.json()["throws"], ok.json()["max_throws"]) == (3, 3)
    assert over.status_code == 422 and over.json()["error"]["throws"] == 4
    assert check.status_code == 202 and check.json()["throws"] == 1
    assert done["status"] == "done" and len(done["throws"]) == 3 and len(done["dice"]) == 15


def test_follow_ups_stop_at_the_bound_and_fail_the_roll_with_the_reason(config: ServerConfig) -> None:
    # every die below 6 is rerolled until it shows 6: five dice need several rounds of rerolls
    with TestClient(create_app(_tower(config, max_throws=1))) as client:
        r = client.post("/api/rolls", json={"notation": "5d6r<6"})
        roll = _finished(client, r.json()["id"])
    assert r.status_code == 202 and r.json()["throws"] == 1
    assert roll["status"] == "failed" and "need more than 1 throws" in roll["error"]
    assert len(roll["throws"]) == 2  # the initial throw and one round of rerolls, no more


def test_the_rng_has_no_throw_bound_but_keeps_the_other_checks(config: ServerConfig) -> None:
    config = replace(config, supply_factory=lambda: RandomSupply(5))
    with TestClient(create_app(config)) as client:
        big = client.post("/api/rolls", json={"notation": "1000d6"})
        d20 = client.post("/api/rolls", json={"notation": "1d20+2d4"})
        zero = client.post("/api/rolls", json={"notation": "1d6/0"})
    assert big.status_code == 202 and (big.json()["throws"], big.json()["max_throws"]) == (1, None)
    assert d20.status_code == 202 and d20.json()["throws"] == 2
    assert zero.status_code == 422 and "division by zero" in zero.json()["error"]["message"]


def test_max_throws_is_a_checked_config_key() -> None:
    assert DEFAULT_CONFIG.roll.max_throws == 20
    assert parse_config({"roll": {"max_throws": 5}}).roll.max_throws == 5
    for bad in (0, 201, "many", True):
        with pytest.raises(ConfigError, match="max_throws"):
            parse_config({"roll": {"max_throws": bad}})

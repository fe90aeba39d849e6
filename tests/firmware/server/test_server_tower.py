"""The server over the simulated tower: photos and crops of real throws, re-throws charged to dice."""

from __future__ import annotations

import hashlib
from dataclasses import replace

import pytest
from dicetower.firmware.config import DEFAULT_CONFIG
from dicetower.firmware.server.app import ServerConfig, create_app
from dicetower.firmware.server.rolllog import RollLog
from dicetower.firmware.server.tower_supply import TowerSupply
from server_helpers import wait_for
from starlette.testclient import TestClient


def _sim(seed: int, **sim) -> object:
    return DEFAULT_CONFIG.with_changes(sim=replace(DEFAULT_CONFIG.sim, seed=seed, **sim))


def _finished(client: TestClient, rid: int) -> dict:
    return wait_for(
        lambda: (r := client.get(f"/api/rolls/{rid}").json())["status"] in ("done", "failed") and r, 60
    )


@pytest.fixture
def tower_config(config: ServerConfig) -> ServerConfig:
    cfg = _sim(5)
    return replace(config, rate_per_second=0, supply_factory=lambda: TowerSupply.open(cfg))


def test_tower_roll_keeps_photos_crops_and_truth(tower_config: ServerConfig) -> None:
    with TestClient(create_app(tower_config)) as client:
        rid = client.post(
            "/api/rolls",
            json={
                "system": "runic-flux",
                "check": "skill",
                "params": {"level": 3, "stat": 4, "difficulty": 15},
            },
        ).json()["id"]
        roll = _finished(client, rid)
        assert roll["status"] == "done" and roll["source"] == "tower:sim"
        throw = roll["throws"][0]
        photo = client.get(throw["photo_url"])
        assert photo.status_code == 200 and hashlib.sha256(photo.content).hexdigest() == throw["photo_sha256"]
        wild = [d for d in roll["dice"] if d["role"] == "wild"]
        assert wild and all(d["die"] == "red d6" for d in wild)  # the wild slot went to the red die
        for d in roll["dice"]:
            assert d["confidence"] > 0.5 and len(d["box"]) == 4
            crop = client.get(d["crop_url"])
            assert crop.status_code == 200 and crop.content[:2] == b"\xff\xd8"
        status = client.get("/api/tower").json()["roller"]
        assert status["camera"] == "sim" and status["solenoid"]["on"] is False
    with RollLog(tower_config.data_dir) as log:
        row = log.get(rid)
        assert row is not None
        truth = sorted(t["face"] for t in row["throws"][0]["reading"]["truth"])
        read = sorted(d["face"] for d in row["throws"][0]["reading"]["dice"])
        assert read == truth  # the sim knows what it rendered; the reader read it
        assert log.verify().ok


def test_rethrows_are_charged_to_the_die(config: ServerConfig) -> None:
    cfg = _sim(9, fault_rate=1.0, faults=("cocked",))
    config = replace(config, rate_per_second=0, supply_factory=lambda: TowerSupply.open(cfg))
    with TestClient(create_app(config)) as client:
        ids = [client.post("/api/rolls", json={"notation": "5d6"}).json()["id"] for _ in range(4)]
        rolls = [_finished(client, rid) for rid in ids]
        fairness = client.get("/api/fairness").json()["dice"]
    taps = [r for roll in rolls for t in roll["throws"] for r in t["retries"] if r["action"] == "tap"]
    assert taps, "a cocked die on every throw needs a tap"
    charged = [d for r in taps for d in r["dice"]]
    assert charged and all(d["die"].endswith(" d6") and 1 <= d["face"] <= 6 for d in charged)
    assert sum(d["rethrows"] for d in fairness) >= len(charged)


def test_a_kind_the_tray_lacks_is_a_failed_roll_with_the_reason(tower_config: ServerConfig) -> None:
    with TestClient(create_app(tower_config)) as client:
        rid = client.post("/api/rolls", json={"notation": "1d20"}).json()["id"]
        with client.websocket_connect("/ws?last=0") as ws:
            ws.receive_json()  # snapshot
            roll = _finished(client, rid)
        assert roll["status"] == "failed" and "d20" in roll["error"]
        assert client.get("/api/tower").json()["failed"] == 1

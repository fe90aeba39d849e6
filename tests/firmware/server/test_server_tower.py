"""The server over the simulated tower: photos and crops of real throws, re-throws charged to dice."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

import pytest
from dicetower.firmware.config import DEFAULT_CONFIG
from dicetower.firmware.records import Retry, SlotAnswer, ThrowRecord
from dicetower.firmware.server.app import ServerConfig, create_app
from dicetower.firmware.server.rolling import RandomSupply
from dicetower.firmware.server.rolllog import RollLog
from dicetower.firmware.server.tower_supply import TowerSupply, throw_info
from dicetower.rules.source import DieSlot
from dicetower.vision.reader import FrameReader
from dicetower.vision.reading import DieReading, Reading, ReadStatus, UnreadableReason
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


def test_photos_and_crops_are_served_as_the_throw_kept_them(config: ServerConfig) -> None:
    opened: list[TowerSupply] = []

    def open_supply() -> TowerSupply:
        opened.append(TowerSupply.open(_sim(5)))
        return opened[0]

    config = replace(config, rate_per_second=0, supply_factory=open_supply)
    with TestClient(create_app(config)) as client:
        rid = client.post("/api/rolls", json={"notation": "3d6"}).json()["id"]
        roll = _finished(client, rid)
        (tower,) = (r.tower for r in opened)
        assert isinstance(tower.reader, FrameReader)  # the tower reads with the reader itself
        record = tower.last_record
        assert record is not None and roll["status"] == "done" and len(roll["throws"]) == 1
        photo = client.get(roll["throws"][0]["photo_url"]).content
        assert (
            photo == record.photo and hashlib.sha256(photo).hexdigest() == roll["throws"][0]["photo_sha256"]
        )
        by_slot = {a.slot: a for a in record.answers}
        for d in roll["dice"]:
            crop = client.get(d["crop_url"]).content
            assert crop == record.crop_of(by_slot[d["slot"]])  # byte for byte: cut once, never re-encoded
    with RollLog(config.data_dir) as log:
        assert log.verify().ok


def _stored_slots(config: ServerConfig, notation: str) -> list[dict]:
    with TestClient(create_app(config)) as client:
        rid = client.post("/api/rolls", json={"notation": notation}).json()["id"]
        assert _finished(client, rid)["status"] == "done"
    with RollLog(config.data_dir) as log:
        row = log.get(rid)
    assert row is not None
    return [s for t in row["throws"] for s in t["slots"]]


def test_rng_and_tower_rolls_store_slots_of_one_shape(config: ServerConfig, tmp_path: Path) -> None:
    rng = _stored_slots(
        replace(config, data_dir=tmp_path / "rng", supply_factory=lambda: RandomSupply(1)), "3d6"
    )
    cfg = _sim(5)
    tower = _stored_slots(
        replace(
            config,
            data_dir=tmp_path / "tower",
            rate_per_second=0,
            supply_factory=lambda: TowerSupply.open(cfg),
        ),
        "3d6",
    )
    assert len(rng) == len(tower) == 3
    for a, b in zip(rng, tower, strict=True):
        assert set(a) == set(b) == {"slot", "die", "role", "purpose", "of_slot", "label"}
        assert {k: type(v) for k, v in a.items()} == {k: type(v) for k, v in b.items()}
        assert a == b  # the same request: the same slots, whoever threw the dice


def test_a_tap_is_charged_to_its_die_even_after_a_camera_retry() -> None:
    """Each retry names the reading that led to it, so a recapture does not shift the others."""
    cocked = DieReading(
        box=(10.0, 10.0, 20.0, 20.0),
        status=ReadStatus.UNREADABLE,
        reason=UnreadableReason.COCKED,
        colour="white",
    )
    first = Reading(
        dice=(cocked, DieReading(box=(60.0, 10.0, 20.0, 20.0), face=2, colour="red", confidence=0.9))
    )
    after = Reading(
        dice=(
            DieReading(box=(11.0, 11.0, 20.0, 20.0), face=5, colour="white", confidence=0.9),
            DieReading(box=(60.0, 10.0, 20.0, 20.0), face=2, colour="red", confidence=0.9),
        )
    )
    record = ThrowRecord(reason="throw", slots=[{"slot": 0}])
    record.retries.append(Retry("recapture", "black frame"))
    record.add_reading(first)
    record.retries.append(Retry("tap", "1 unreadable (cocked)", 0))
    record.add_reading(after)
    record.answers = [SlotAnswer.of(DieSlot(0, "d6"), 0, after)]
    record.crops = [b"\xff\xd8crop", None]
    info = throw_info(record)
    assert info.retries == [
        {"action": "recapture", "reason": "black frame", "dice": []},
        {"action": "tap", "reason": "1 unreadable (cocked)", "dice": [{"die": "white d6", "face": 5}]},
    ]
    assert info.crops == {0: b"\xff\xd8crop"} and info.dice[0]["die"] == "white d6"

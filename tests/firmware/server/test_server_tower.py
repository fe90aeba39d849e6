"""The server over the simulated tower: photos and crops of real throws, re-throws charged to dice."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

import pytest
from dicetower.firmware.config import DEFAULT_CONFIG, TrayDie
from dicetower.firmware.records import Retry, SlotAnswer, ThrowRecord
from dicetower.firmware.rolllog import RollLog
from dicetower.firmware.rolls.rolling import RandomSupply
from dicetower.firmware.rolls.tower_supply import TowerSupply, attempt_looks, loaded_identity, throw_info
from dicetower.firmware.server.app import ServerConfig, create_app
from dicetower.rules.source import DieSlot
from dicetower.vision.manifest import LabelledDie
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
    rejects = [d["rejects"] for d in fairness]
    assert all(r["basis"] == "truth" for r in rejects)  # the sim knows the faces of the dice it drew
    leaning = sum(r["leaning_looks"] for r in rejects)
    assert leaning and sum(r["leaning_rejected"] for r in rejects) > 0  # counted apart from the faces
    shakes = sum(
        1 + sum(r["action"] == "reshake" for r in t["retries"]) for roll in rolls for t in roll["throws"]
    )
    looks = sum(r["looks"] for r in rejects)
    assert (
        5 * shakes - shakes <= looks <= 5 * shakes
    )  # once a shake (a die may go unseen); taps' readings not


def test_a_kind_the_tray_lacks_is_refused_with_the_reason(tower_config: ServerConfig) -> None:
    with TestClient(create_app(tower_config)) as client:
        r = client.post("/api/rolls", json={"notation": "1d20"})
        assert r.status_code == 422 and "d20" in r.json()["error"]["message"]
        assert client.get("/api/tower").json()["failed"] == 0


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


def _die(x: float, face: int | None, colour: str = "white") -> DieReading:
    if face is None:
        return DieReading(box=(x, 10.0, 20.0, 20.0), status=ReadStatus.UNREADABLE, colour=colour)
    return DieReading(box=(x, 10.0, 20.0, 20.0), face=face, colour=colour, confidence=0.9)


def test_each_reading_is_logged_with_how_the_dice_came_to_lie_and_the_truth() -> None:
    """A jam's reading is no fresh landing; a tap's is not either; truth is matched per reading."""
    record = ThrowRecord(reason="throw")
    truth = (LabelledDie("d6", 4, (10.0, 10.0, 20.0, 20.0)), LabelledDie("d6", 6, (60.0, 10.0, 20.0, 20.0)))
    record.add_reading(Reading(dice=(_die(10, 3), _die(60, 1, "red"))), None)  # the tray as it lay: a jam
    record.retries.append(Retry("reshake", "jam: the dice did not move", 0))
    record.add_reading(Reading(dice=(_die(60, None, "red"), _die(10, 4))), truth)
    record.retries.append(Retry("tap", "1 unreadable (low_confidence)", 1))
    leaning = (LabelledDie("d6", 2, (10.0, 10.0, 20.0, 20.0), cocked=True), truth[1])
    record.add_reading(Reading(dice=(_die(10, None), _die(60, 6, "red"))), leaning)
    record.retries.append(Retry("reshake", "1 unreadable (cocked)", 2))
    record.add_reading(Reading(dice=(_die(10, 5), _die(60, 2, "red"), _die(200, 3))), truth)
    looks = attempt_looks(record)
    assert [a["after"] for a in looks] == ["jam", "shake", "tap", "shake"]
    assert looks[0]["dice"] == [{"die": "white d6", "face": 3}, {"die": "red d6", "face": 1}]  # no truth
    assert looks[1]["dice"] == [  # matched by place, not by order
        {"die": "red d6", "face": None, "truth": 6},
        {"die": "white d6", "face": 4, "truth": 4},
    ]
    assert looks[2]["dice"][0] == {"die": "white d6", "face": None, "truth": None, "cocked": True}
    assert looks[3]["dice"][2] == {"die": "white d6", "face": 3, "truth": None}  # a die no label matches
    assert throw_info(record).attempts == looks


def test_a_die_named_by_an_odd_colour_is_charged_to_the_loaded_die_it_is_nearest() -> None:
    tray = [TrayDie("d6", "white")] * 4 + [TrayDie("d6", "red", "wild")]
    pale_red = DieReading(box=(0.0, 0.0, 9.0, 9.0), colour="translucent", hsv=(2, 190, 200))
    pale_white = DieReading(box=(0.0, 0.0, 9.0, 9.0), colour="translucent", hsv=(20, 12, 230))
    assert loaded_identity(pale_red, tray) == "red d6" and loaded_identity(pale_white, tray) == "white d6"
    assert loaded_identity(pale_red, None) == "translucent d6"  # no tray: its own name
    assert loaded_identity(pale_red, [TrayDie("d6", "blue")]) == "blue d6"  # the one colour of its kind
    assert loaded_identity(pale_red, tray, "d10") == "translucent d10"  # no die of that kind is loaded


def test_a_sim_tower_logs_every_reading_of_a_tapped_throw(config: ServerConfig) -> None:
    cfg = _sim(9, fault_rate=1.0, faults=("cocked",))
    config = replace(config, rate_per_second=0, supply_factory=lambda: TowerSupply.open(cfg))
    with TestClient(create_app(config)) as client:
        rid = client.post("/api/rolls", json={"notation": "5d6"}).json()["id"]
        assert _finished(client, rid)["status"] == "done"
    with RollLog(config.data_dir) as log:
        row = log.get(rid)
    assert row is not None
    (throw,) = row["throws"]
    attempts = throw["attempts"]
    assert attempts[0]["after"] == "shake" and len(attempts) == 1 + sum(
        r["action"] in ("tap", "reshake") for r in throw["retries"]
    )
    leaning = [d for a in attempts for d in a["dice"] if d.get("cocked")]
    assert leaning and all(d["face"] is None and d["die"] == "white d6" for d in leaning)
    final = attempts[-1]["dice"]
    assert sorted(d["face"] for d in final) == sorted(d["truth"] for d in final) == sorted(throw["faces"])

"""A signed tower and a hub on a real Mosquitto, under the hostile cases: 10,000 invented tower
names announced (retained, so the broker hands them to the hub again after its restart) while a
real tower starts; forged rolls at n+1 and at seq 10**15 published before the real ones. The real
tower is listed and every one of its rolls arrives, before and after a hub restart; the forgeries
are reported; no resend request goes to an invented name."""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path
from typing import Any

import httpx
from dicetower.firmware.hub.app import HubConfig
from dicetower.firmware.mqtt.client import Connection
from dicetower.firmware.mqtt.signing import load_or_create_key
from dicetower.firmware.rolllog import row_hash
from dicetower.firmware.server.app import create_app
from mqtt_broker import Mosquitto, Probe
from mqtt_configs import live_hub, tower_config
from starlette.testclient import TestClient

FAKES = 10_000


def _until(what: str, check, timeout_s: float = 60.0):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"{what}: not within {timeout_s} s")


def _announce_fakes(probe: Probe, folder: Path) -> None:
    """10,000 names, retained, unsigned and (every other one) correctly self-signed."""
    signer = load_or_create_key(folder)
    last = None
    for i in range(FAKES):
        status: dict[str, Any] = {"v": 1, "tower": f"fake-{i}", "state": "online", "last_seq": 10**6}
        if i % 2:
            status = signer.sign(status)
        last = probe.client.publish(f"dicetower/fake-{i}/status", json.dumps(status), qos=1, retain=True)
    assert last is not None
    last.wait_for_publish(60)


def _forgery(real: dict[str, Any], seq: int) -> dict[str, Any]:
    """A correctly hashed roll linked to ``real``, as anyone able to publish could make one."""
    forged = {k: v for k, v in copy.deepcopy(real).items() if k not in ("sig", "key")}
    forged["seq"] = forged["row"]["id"] = seq
    forged["prev_seq"] = real["seq"]
    forged["row"]["prev_hash"] = real["hash"]
    forged["row"]["total"] = "18"
    forged["hash"] = row_hash(forged["row"])
    return forged


def _hub_seqs(hub: str) -> list[int]:
    return sorted(e["seq"] for e in httpx.get(hub + "/api/log?limit=500&tower=t1").json()["log"])


def test_a_flood_of_names_and_forged_rolls_never_keep_a_real_tower_out(
    broker: Mosquitto, tmp_path: Path
) -> None:
    tower_dir = tmp_path / "t"
    # the key the tower makes at its first start, pinned in the hub's config
    key = load_or_create_key(tower_dir)
    config = HubConfig(
        data_dir=tmp_path / "hub",
        connection=Connection(broker.url),
        hub_id="h1",
        tower_keys={"t1": key.public},
    )
    watch = Probe(broker.port, ["dicetower/+/rolls", "dicetower/+/resend/+"])
    try:
        with live_hub(config) as hub:
            _announce_fakes(watch, tmp_path / "fakes")
            with TestClient(create_app(tower_config(tower_dir, broker.url))) as tower:
                assert tower.get("/api/tower").json()["mqtt"]["key"] == key.public
                ids = [tower.post("/api/rolls", json={"notation": "2d6"}).json()["id"] for _ in range(2)]
                _until("the real rolls on the hub", lambda: _hub_seqs(hub) == ids)
                real = [e for e in watch.json("rolls") if e["tower"] == "t1"][-1]
                watch.publish("dicetower/t1/rolls", _forgery(real, real["seq"] + 1))  # before the real n+1
                watch.publish("dicetower/t1/rolls", _forgery(real, 10**15))
                more = [tower.post("/api/rolls", json={"notation": "2d6"}).json()["id"] for _ in range(2)]
                _until("the rolls after the forgeries", lambda: _hub_seqs(hub) == ids + more)
                towers = httpx.get(hub + "/api/towers").json()
                (t1,) = towers["towers"]
                assert t1["name"] == "t1" and t1["online"] and t1["last_seq"] == more[-1]
                assert t1["refused"] == 2 and t1["key"]["source"] == "config"
                assert len(towers["new_towers"]) <= 32
                problems = [p["problem"] for p in httpx.get(hub + "/api/problems").json()["problems"]]
                assert sum("unsigned" in p for p in problems) == 2
                log = httpx.get(hub + "/api/log?tower=t1").json()["log"]
                held = {e["seq"]: e["roll"]["hash"] for e in log}
                assert all(held[i] == tower.get(f"/api/rolls/{i}").json()["hash"] for i in ids + more)
        with (
            live_hub(config) as hub,
            TestClient(create_app(tower_config(tower_dir, broker.url))) as tower,
        ):  # restarted: the 10,000 retained names come again
            assert [t["name"] for t in httpx.get(hub + "/api/towers").json()["towers"]] == ["t1"]
            after = tower.post("/api/rolls", json={"notation": "2d6"}).json()["id"]
            _until("a roll after the restart", lambda: _hub_seqs(hub) == [*ids, *more, after])
            assert [t["name"] for t in httpx.get(hub + "/api/towers").json()["towers"]] == ["t1"]
        asked = {t.split("/")[1] for t, _p in watch.messages if "/resend/" in t}
        assert asked <= {"t1"}  # no resend request to an invented name
    finally:
        watch.close()

"""A correction on a tower reaches a subscriber and the hub over a real Mosquitto, checked by its hash."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from dicetower.firmware.hub.app import HubConfig
from dicetower.firmware.server.app import create_app
from mqtt_broker import Mosquitto, Probe
from mqtt_configs import live_hub, tower_config, trusted_hub_config, until
from starlette.testclient import TestClient


@pytest.fixture
def hub_config(broker: Mosquitto, tmp_path: Path) -> HubConfig:
    return trusted_hub_config(tmp_path / "hub", broker.url)


def _hub_roll(hub: str, seq: int) -> dict | None:
    return next((e["roll"] for e in httpx.get(hub + "/api/log").json()["log"] if e["seq"] == seq), None)


def _problems(hub: str, word: str) -> list[dict]:
    return [p for p in httpx.get(hub + "/api/problems").json()["problems"] if word in p["problem"]]


def test_a_correction_is_published_and_the_hub_shows_the_roll_corrected(
    broker: Mosquitto, hub_config: HubConfig, tmp_path: Path
) -> None:
    probe = Probe(broker.port, ["dicetower/+/amended"])
    try:
        with (
            live_hub(hub_config) as hub,
            TestClient(create_app(tower_config(tmp_path / "t", broker.url))) as tower,
        ):
            until(lambda: httpx.get(hub + "/api/towers").json()["towers"])
            rid = tower.post("/api/rolls", json={"notation": "3d6", "roller": "Bo"}).json()["id"]
            read = until(lambda: _hub_roll(hub, rid))
            new = read["dice"][1]["face"] % 6 + 1
            r = tower.post(f"/api/rolls/{rid}/corrections", json={"die": 1, "face": new, "by": "Cy"})
            assert r.status_code == 201, r.text
            (message,) = probe.wait("amended", 1)
            shown = until(lambda: (v := _hub_roll(hub, rid)) and v.get("corrected") and v)
            # a forged correction (its body changed, its hash kept) is refused by the hub: the tower's
            # signature no longer verifies
            forged = json.loads(json.dumps(message))
            body = json.loads(forged["note"]["body"])
            body["new"] = 1 if body["new"] != 1 else 2
            forged["note"]["body"] = json.dumps(body)
            probe.publish("dicetower/t1/amended", forged)
            problem = until(lambda: _problems(hub, "forged"), timeout_s=10)
            after = _hub_roll(hub, rid)
    finally:
        probe.close()
    expected = sum(d["face"] for d in read["dice"]) - read["dice"][1]["face"] + new
    assert message["tower"] == "t1" and message["seq"] == rid
    assert message["note"]["kind"] == "correct" and message["roll"]["total"] == expected
    assert message["roll"]["corrected"] is True
    assert shown["total"] == expected and shown["dice"][1]["face"] == new
    assert shown["dice"][1]["corrected"]["by"] == "Cy" and shown["as_read"]["total"] == read["total"]
    assert problem and after["total"] == expected

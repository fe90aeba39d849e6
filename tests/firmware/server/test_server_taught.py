"""``GET /api/tower`` over a tower that reads with a taught model: its dice and how sure it is lately."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from dicetower.firmware.config import parse_config
from dicetower.firmware.rolls.tower_supply import TowerSupply
from dicetower.firmware.server.app import ServerConfig, create_app
from dicetower.vision.taught.reader import TaughtFrameReader
from server_helpers import wait_for
from starlette.testclient import TestClient


def test_api_tower_shows_the_taught_reader_and_when_it_drifts(
    config: ServerConfig, taught_model: Path
) -> None:
    cfg = parse_config({"dice": {"plain": "2 white d6"}, "sim": {"seed": 4}}, taught=taught_model)
    opened: list[TowerSupply] = []

    def open_supply() -> TowerSupply:
        opened.append(TowerSupply.open(cfg))
        return opened[0]

    with TestClient(create_app(replace(config, rate_per_second=0, supply_factory=open_supply))) as client:
        rid = client.post("/api/rolls", json={"notation": "2d6"}).json()["id"]
        wait_for(lambda: client.get(f"/api/rolls/{rid}").json()["status"] == "done", 60)
        (supply,) = opened
        assert isinstance(supply.tower.reader, TaughtFrameReader)  # opened with the supply, not at a roll
        taught = client.get("/api/tower").json()["roller"]["taught"]
        assert (
            taught["model"] == str(taught_model)
            and taught["dice"] == ["white d6"]
            and taught["general"] == []
        )
        assert taught["drift"]["recent"] >= 2 and taught["drift"]["sure"] == taught["drift"]["recent"]
        assert taught["drifting"] is False and taught["message"] is None
        watch = supply.tower.taught
        assert watch is not None
        watch.monitor.add_reads([("white d6", 0.3)] * 40)  # a die swapped for one it was not taught on
        taught = client.get("/api/tower").json()["roller"]["taught"]
    assert taught["drifting"] is True and taught["drift"]["dice"][0]["drifting"] is True
    assert "the white d6 is read surely" in taught["message"]
    assert "teach again (dicetower teach collect --tower config" in taught["message"]

"""Two players at the table on phones (Chromium, 390 x 844, touch) with a simulated tower on a real
Mosquitto and a hub: one types the die the tower could not read, the other corrects a die. The
overlay, ``GET /api/rolls/{id}``, an MQTT subscriber and the hub then show the corrected roll with its
mark; ``dicetower log verify`` passes, and fails naming the record once a correction is edited."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import httpx
import pytest
from dicetower.firmware.cli import main
from dicetower.firmware.hub.app import HubConfig
from dicetower.firmware.mqtt.client import Connection
from dicetower.firmware.mqtt.settings import MqttConfig
from dicetower.firmware.server.app import ServerConfig
from dicetower.firmware.server.table import TableSettings
from hub_server import live_hub
from mqtt_broker import Mosquitto, Probe, mosquitto_path
from server_helpers import live_server, shot, wait_for
from table_helpers import PHONE, unsure_tower

pytestmark = pytest.mark.slow


def _hub_roll(hub: str, seq: int) -> dict | None:
    return next((e["roll"] for e in httpx.get(f"{hub}/api/log").json()["log"] if e["seq"] == seq), None)


def test_two_players_type_and_correct_and_every_output_shows_it(browser, tmp_path: Path, capsys) -> None:
    if mosquitto_path() is None:
        pytest.skip("mosquitto is not installed (apt-get install mosquitto)")
    data = tmp_path / "tower"
    config = ServerConfig(
        data_dir=data,
        supply_factory=unsure_tower,
        require_token=True,
        rate_per_second=0,
        table=TableSettings(unreadable="ask", ask_timeout_s=60),
    )
    with Mosquitto(tmp_path / "broker") as broker:
        config.mqtt = MqttConfig(url=broker.url, tower="t1")
        hub_config = HubConfig(
            data_dir=tmp_path / "hub", connection=Connection(broker.url), hub_id="h1", trust_first_use=True
        )
        probe = Probe(broker.port, ["dicetower/+/amended"])
        with live_hub(hub_config) as hub, live_server(config) as base:
            token = (data / "api-token").read_text().strip()
            code = (data / "table-code").read_text().strip()
            wait_for(lambda: httpx.get(f"{hub}/api/towers").json()["towers"], 30)
            ann, bo = browser.new_context(**PHONE), browser.new_context(**PHONE)
            desk = browser.new_context(viewport={"width": 800, "height": 600})
            try:
                pages = [ctx.new_page() for ctx in (ann, bo)]
                for page, name in zip(pages, ("Ann", "Bo"), strict=True):
                    page.goto(f"{base}/table#code={code}")
                    page.wait_for_selector("body[data-ready]")
                    page.fill("#me", name)
                    page.locator("#me").dispatch_event("change")
                overlay = desk.new_page()
                overlay.goto(f"{base}/overlay#token={token}")
                auth = {"Authorization": f"Bearer {token}"}
                rid = httpx.post(
                    f"{base}/api/rolls", json={"notation": "5d6", "roller": "Cy"}, headers=auth
                ).json()["id"]
                # Ann types the die the tower could not read
                ann_page, bo_page = pages
                ann_page.wait_for_selector("article.ask button[data-face='4']", timeout=30_000)
                assert ann_page.locator("article.ask img").count() == 1
                ann_page.locator("article.ask button[data-face='4']").tap()
                read = wait_for(
                    lambda: (r := httpx.get(f"{base}/api/rolls/{rid}").json())["status"] == "done" and r, 60
                )
                typed = next(d for d in read["dice"] if d.get("by_table"))
                # Bo corrects another die
                other = next(d for d in read["dice"] if d["slot"] != typed["slot"])
                new = other["face"] % 6 + 1
                card = f"article.roll[data-roll-id='{rid}']"
                bo_page.wait_for_selector(f"{card} button.die[data-slot='{other['slot']}']")
                bo_page.locator(f"{card} button.die[data-slot='{other['slot']}']").tap()
                bo_page.locator(f"#picker-faces button[data-face='{new}']").tap()
                bo_page.wait_for_selector(f"{card} .mark")
                shot(bo_page, "table-corrected.png", full_page=True)
                overlay.wait_for_selector(".corrected-mark")
                overlay_total = overlay.locator("#current .total").text_content()
                by_table_tiles = overlay.locator("#current .die.by-table").count()
                corrected_tiles = overlay.locator("#current .die.corrected").count()
                shown = httpx.get(f"{base}/api/rolls/{rid}").json()
                (amended,) = probe.wait("amended", 1)
                on_hub = wait_for(lambda: (v := _hub_roll(hub, rid)) and v.get("corrected") and v, 30)
                hub_page = desk.new_page()
                hub_page.goto(f"{hub}/overlay")
                hub_page.wait_for_selector("li.roll .corrected-mark")
            finally:
                for ctx in (ann, bo, desk):
                    ctx.close()
                probe.close()
    faces = [d["face"] for d in read["dice"]]
    faces[other["slot"]] = new
    assert typed["face"] == 4 and typed["by_table"]["by"] == "Ann"
    assert shown["corrected"] and shown["total"] == sum(faces) and shown["as_read"]["total"] == read["total"]
    assert shown["corrections"][0]["by"] == "Bo" and shown["corrections"][0]["new"] == new
    assert overlay_total.strip() == str(shown["total"])
    assert by_table_tiles == 1 and corrected_tiles == 1  # the die the table typed, the die it corrected
    assert amended["roll"]["total"] == shown["total"] and amended["roll"]["corrected"]
    assert on_hub["total"] == shown["total"] and on_hub["dice"][other["slot"]]["corrected"]["by"] == "Bo"
    assert main(["log", "verify", "--data", str(data)]) == 0
    db = sqlite3.connect(data / "rolls.sqlite3")
    with db:
        (seq, body) = db.execute("SELECT seq, body FROM notes WHERE kind = 'correct'").fetchone()
        edited = json.loads(body)
        edited["by"] = "Dee"
        db.execute("UPDATE notes SET body = ? WHERE seq = ?", (json.dumps(edited), seq))
    db.close()
    capsys.readouterr()
    assert main(["log", "verify", "--data", str(data)]) == 1
    out = capsys.readouterr()
    assert (
        f"record {seq} (after row {rid}): edited: this correction does not match its hash"
        in out.out + out.err
    )

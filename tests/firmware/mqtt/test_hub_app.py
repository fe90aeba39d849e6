"""The hub's app in this process under a real uvicorn, a tower under TestClient, both on a real
Mosquitto: the API, its refusals, and the overlay and towers page in headless Chromium."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import httpx
import pytest
from contrast import BLACK, CONTRAST_JS, WHITE
from dicetower.firmware.hub.app import HubConfig
from dicetower.firmware.mqtt.client import Connection
from dicetower.firmware.server.app import create_app
from mqtt_broker import Mosquitto
from mqtt_configs import live_hub, tower_config, trusted_hub_config, until
from starlette.testclient import TestClient

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def hub_config(broker: Mosquitto, tmp_path: Path) -> HubConfig:
    return trusted_hub_config(tmp_path / "hub", broker.url)


def test_the_hub_lists_a_tower_its_rolls_and_refuses_what_it_cannot_send(
    broker: Mosquitto, hub_config: HubConfig, tmp_path: Path
) -> None:
    with (
        live_hub(hub_config) as hub,
        TestClient(create_app(tower_config(tmp_path / "t", broker.url))) as tower,
    ):
        until(lambda: httpx.get(hub + "/api/towers").json()["towers"])
        ids = [
            tower.post("/api/rolls", json={"notation": "1d6", "roller": "Bo"}).json()["id"] for _ in range(2)
        ]
        log = until(
            lambda: (entries := httpx.get(hub + "/api/log").json()["log"]) and len(entries) == 2 and entries
        )
        assert [e["seq"] for e in log] == ids[::-1] and {e["check"] for e in log} == {"new"}
        assert log[0]["roll"]["roller"] == "Bo" and log[0]["roll"]["tower"] == "t1"
        (t1,) = httpx.get(hub + "/api/towers").json()["towers"]
        assert t1["online"] and t1["last_seq"] == ids[-1] and t1["needs_attention"] == []
        assert httpx.post(hub + "/api/towers/t9/rolls", json={"roll": {"notation": "1d6"}}).status_code == 404
        assert httpx.post(hub + "/api/towers/t1/rolls", json={"notation": "1d6"}).status_code == 422
        assert httpx.post(hub + "/api/towers/t1/rolls", content=b"{}").status_code == 415
        assert (
            httpx.post(hub + "/api/towers/t1/rolls", json={"roll": {}, "pad": "x" * 20_000}).status_code
            == 413
        )
    with live_hub(hub_config) as hub:  # the hub's log outlives it, and the chain carries on
        (t1,) = until(lambda: httpx.get(hub + "/api/towers").json()["towers"])
        assert t1["last_seq"] == ids[-1] and len(httpx.get(hub + "/api/log").json()["log"]) == 2


def test_beyond_loopback_the_roll_control_needs_the_hubs_token(
    broker: Mosquitto, hub_config: HubConfig
) -> None:
    hub_config.require_token = True
    with live_hub(hub_config) as hub:
        token = (hub_config.data_dir / "api-token").read_text().strip()
        assert httpx.post(hub + "/api/towers/t1/rolls", json={"roll": {}}).status_code == 401
        r = httpx.post(
            hub + "/api/towers/t1/rolls", json={"roll": {}}, headers={"Authorization": f"Bearer {token}"}
        )
        assert r.status_code == 404  # past the token: no such tower heard


def test_the_overlay_and_towers_page_show_each_roll_with_its_tower_and_roller(
    broker: Mosquitto, hub_config: HubConfig, tmp_path: Path, browser: object
) -> None:
    shots = REPO / "out" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    with (
        live_hub(hub_config) as hub,
        TestClient(create_app(tower_config(tmp_path / "t", broker.url))) as tower,
    ):
        until(lambda: httpx.get(hub + "/api/towers").json()["towers"])
        tower.post("/api/rolls", json={"notation": "4d6kh3", "roller": "Ann"})
        page = browser.new_page()  # type: ignore[attr-defined]
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(hub + "/overlay")
        page.wait_for_selector("li.roll")
        tower.post("/api/rolls", json={"notation": "2d6", "roller": "Bo"})
        page.locator("li.roll").nth(1).wait_for()  # (the pages' CSP allows no eval: locators, not functions)
        first = page.locator("li.roll").first
        assert first.locator(".tower").inner_text() == "t1"
        assert first.locator(".who").inner_text() == "Bo · 2d6"
        page.screenshot(path=str(shots / "hub-overlay.png"))
        page.goto(hub + "/towers")
        page.wait_for_selector("tr[data-tower='t1']")
        row = page.locator("tr[data-tower='t1']").inner_text()
        assert "t1" in row and "checked from 1" in row
        page.fill("#ask-notation", "1d20")
        page.fill("#ask-roller", "GM")
        page.click("button[type=submit]")
        page.locator("#replies", has_text="1d20").wait_for()
        assert page.locator("#log tr").count() == 3
        page.locator("#log-size", has_text="MB of its 512.0 MB cap").wait_for()  # the log's size and cap
        page.screenshot(path=str(shots / "hub-towers.png"), full_page=True)
        assert not errors, errors
    if os.environ.get("DICETOWER_UPDATE_DOCS_IMG"):  # the copies docs/towers.md shows
        for name in ("hub-overlay.png", "hub-towers.png"):
            shutil.copyfile(shots / name, REPO / "docs" / "img" / name)


def test_a_new_tower_waits_to_be_trusted_and_then_every_roll_arrives(
    broker: Mosquitto, tmp_path: Path, browser: object
) -> None:
    config = HubConfig(data_dir=tmp_path / "hub", connection=Connection(broker.url), hub_id="h1")
    with (
        live_hub(config) as hub,
        TestClient(create_app(tower_config(tmp_path / "t", broker.url))) as tower,
    ):
        ids = [tower.post("/api/rolls", json={"notation": "1d6"}).json()["id"] for _ in range(2)]
        (new,) = until(lambda: httpx.get(hub + "/api/towers").json()["new_towers"])
        mine = tower.get("/api/tower").json()["mqtt"]
        assert new["name"] == "t1" and new["fingerprint"] == mine["key_fingerprint"]
        assert (
            httpx.get(hub + "/api/towers").json()["towers"] == []
            and httpx.get(hub + "/api/log").json()["log"] == []
        )
        wrong = httpx.post(hub + "/api/towers/t1/trust", json={"fingerprint": "0000:0000:0000:0000"})
        assert wrong.status_code == 409 and wrong.json()["error"]["field"] == "fingerprint"
        assert (
            httpx.post(hub + "/api/towers/t9/trust", json={"fingerprint": new["fingerprint"]}).status_code
            == 404
        )
        page = browser.new_page()  # type: ignore[attr-defined]
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(hub + "/towers")
        waiting = page.locator("tr[data-new-tower='t1']")
        assert new["fingerprint"] in waiting.inner_text()
        waiting.locator("button").click()  # the operator compared the fingerprint: trust
        page.locator("tr[data-tower='t1']", has_text="(trusted)").wait_for()
        assert page.locator("tr[data-new-tower]").count() == 0 and not errors, errors
        # the rolls made before the trust come on the hub's resend, in order
        log = until(lambda: len(entries := httpx.get(hub + "/api/log").json()["log"]) == 2 and entries)
        assert [e["seq"] for e in log] == ids[::-1]
        assert httpx.get(hub + "/api/towers").json()["new_towers"] == []


#: the hub overlay's text: the tower, who rolled what, the total, the result
HUB_TEXT = ("li.roll .tower", "li.roll .who", "li.roll .total", "li.roll .text")


def test_the_hub_overlay_takes_the_towers_theme_and_scale_and_meets_wcag_aa(
    broker: Mosquitto, hub_config: HubConfig, tmp_path: Path, browser: object
) -> None:
    with (
        live_hub(hub_config) as hub,
        TestClient(create_app(tower_config(tmp_path / "t", broker.url))) as tower,
    ):
        until(lambda: httpx.get(hub + "/api/towers").json()["towers"])
        tower.post("/api/rolls", json={"notation": "4d6kh3+2", "roller": "Ann"})
        until(lambda: httpx.get(hub + "/api/log").json()["log"])
        refused = httpx.get(hub + "/overlay?theme=neon")
        assert refused.status_code == 400
        assert refused.json()["error"] == {
            "status": 400,
            "field": "theme",
            "message": "theme must be one of dark, light, glass; got 'neon'",
        }
        page = browser.new_page(viewport={"width": 1400, "height": 900})  # type: ignore[attr-defined]
        widths = {}
        for scale in ("1", "2", "99", "x"):  # clamped to 0.25..4; not a number is 1, as the tower's
            page.goto(f"{hub}/overlay?scale={scale}")
            page.wait_for_selector("li.roll")
            widths[scale] = page.locator("#overlay").bounding_box()["width"]
        assert widths["2"] == pytest.approx(2 * widths["1"], rel=0.01)
        assert widths["99"] == pytest.approx(4 * widths["1"], rel=0.01)
        assert widths["x"] == pytest.approx(widths["1"], rel=0.01)
        for theme in ("dark", "light", "glass"):
            page.goto(f"{hub}/overlay?theme={theme}")
            page.wait_for_selector("li.roll")
            assert page.evaluate("document.body.className") == f"overlay theme-{theme}"
            for backdrop in (WHITE, BLACK):  # OBS puts the page over the stream: the brightest and darkest
                for selector in HUB_TEXT:
                    found = page.evaluate(CONTRAST_JS, [selector, backdrop])
                    assert found, selector
                    for text, ratio in found:
                        assert ratio >= 4.5, (theme, backdrop, selector, text, round(ratio, 2))
        page.close()

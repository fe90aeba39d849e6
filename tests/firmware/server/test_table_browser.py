"""The /table page on a phone in headless Chromium (390 x 844, touch): players see the rolls with
each die's crop, face and outcome, and correct a misread die with two taps.

The screenshot goes to ``out/screenshots/table.png``.
"""

from __future__ import annotations

from dataclasses import replace

import httpx
import pytest
from dicetower.firmware.server.app import ServerConfig
from server_helpers import live_server, shot, wait_for
from table_helpers import PHONE

pytestmark = pytest.mark.slow


def _finished(base: str, rid: int) -> dict:
    return wait_for(lambda: (r := httpx.get(f"{base}/api/rolls/{rid}").json())["status"] == "done" and r)


def test_a_player_corrects_a_die_from_a_phone(browser, config: ServerConfig) -> None:
    config = replace(config, require_token=True, rate_per_second=0)
    with live_server(config) as base:
        token = (config.data_dir / "api-token").read_text().strip()
        code = (config.data_dir / "table-code").read_text().strip()
        auth = {"Authorization": f"Bearer {token}"}
        first = httpx.post(f"{base}/api/rolls", json={"notation": "1d20", "roller": "Ann"}, headers=auth)
        _finished(base, first.json()["id"])
        rid = httpx.post(
            f"{base}/api/rolls", json={"notation": "4d6kh3", "roller": "<b>Bo</b>"}, headers=auth
        ).json()["id"]
        roll = _finished(base, rid)
        context = browser.new_context(**PHONE)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        try:
            page.goto(f"{base}/table")  # no code: the page says how to open it
            page.wait_for_selector("#need-code:not([hidden])")
            page.goto(f"{base}/table#code={code}")
            page.reload()
            page.wait_for_selector(f"article.roll[data-roll-id='{rid}'] button.die")
            card = page.locator(f"article.roll[data-roll-id='{rid}']")
            assert card.locator(".who").text_content() == "<b>Bo</b>"  # text, never HTML
            assert page.locator("article.roll b").count() == 0
            assert card.locator(".total").text_content() == str(roll["total"])
            # the older roll is shown but no longer correctable
            assert page.locator(f"article.roll[data-roll-id='{first.json()['id']}'] button.die").count() == 0
            sizes = card.locator("button.die").evaluate_all(
                "bs => bs.map(b => [b.getBoundingClientRect().width, b.getBoundingClientRect().height])"
            )
            assert len(sizes) == 4 and all(w >= 48 and h >= 48 for w, h in sizes)
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= 390  # nothing runs off a phone's screen sideways
            read = roll["dice"][2]["face"]
            new = read % 6 + 1
            card.locator("button.die[data-slot='2']").tap()
            page.wait_for_selector("#picker:not([hidden])")
            face_sizes = page.locator("#picker-faces button").evaluate_all(
                "bs => bs.map(b => b.getBoundingClientRect().height)"
            )
            assert len(face_sizes) == 6 and min(face_sizes) >= 48
            page.fill("#me", "Cy")
            page.locator("#me").dispatch_event("change")
            page.locator(f"#picker-faces button[data-face='{new}']").tap()
            page.wait_for_selector(f"article.roll[data-roll-id='{rid}'] .mark")
            shown = httpx.get(f"{base}/api/rolls/{rid}").json()
            tile = page.locator(f"article.roll[data-roll-id='{rid}'] .die[data-slot='2']")
            assert tile.locator(".face").text_content() == str(new)
            assert page.locator(f"article.roll[data-roll-id='{rid}'] .total").text_content() == str(
                shown["total"]
            )
            shot(page, "table.png", full_page=True)
        finally:
            context.close()
    faces = [d["face"] for d in roll["dice"]]
    faces[2] = new
    assert shown["corrected"] and shown["total"] == sum(sorted(faces)[1:])
    assert shown["corrections"][0]["by"] == "Cy" and shown["corrections"][0]["old"] == read
    assert not errors

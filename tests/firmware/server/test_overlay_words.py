"""The overlay says what a viewer needs, in real headless Chromium: the system's display name, the
modifier that makes the dice add up to the total, what the wild die's red border means; and an
unknown ``theme`` or ``fields`` value is a 400 that lists the allowed ones."""

from __future__ import annotations

from dataclasses import replace

import httpx
import pytest
from dicetower.firmware.rolls.rolling import RandomSupply
from dicetower.firmware.server.app import ServerConfig
from server_helpers import live_server, wait_for
from test_overlay_explains import BLACK, CONTRAST_JS, FINISH_ANIMATIONS, WHITE

pytestmark = pytest.mark.slow

SKILL = {
    "system": "runic-flux",
    "check": "skill",
    "params": {"level": 3, "stat": 4, "difficulty": 15},
    "roller": "Bo",
}


def _post_all(client: httpx.Client, rolls: list[dict]) -> list[dict]:
    ids = [client.post("/api/rolls", json=r).json()["id"] for r in rolls]
    wait_for(lambda: client.get(f"/api/rolls/{ids[-1]}").json()["status"] == "done", timeout=60)
    return [client.get(f"/api/rolls/{i}").json() for i in ids]


@pytest.fixture
def rng_config(config: ServerConfig) -> ServerConfig:
    return replace(config, rate_per_second=0, supply_factory=lambda: RandomSupply(8))


@pytest.mark.parametrize("theme", ["dark", "light", "glass"])
def test_a_check_shows_its_name_its_modifier_its_sum_and_the_wild_dies_legend(
    browser, rng_config: ServerConfig, theme: str
) -> None:
    page = browser.new_page(viewport={"width": 600, "height": 600})
    with live_server(rng_config) as base, httpx.Client(base_url=base) as client:
        notation, skill = _post_all(client, [{"notation": "4d6kh3+2", "roller": "Ann"}, SKILL])
        page.goto(f"{base}/overlay?theme={theme}")
        page.wait_for_function(
            "id => document.querySelector('#current')?.dataset.rollId === String(id)", arg=skill["id"]
        )
        assert page.inner_text("#current .head .label") == "Runic Flux skill"
        assert "runic-flux" not in page.inner_text("#overlay")
        assert page.inner_text("#history .what") == "4d6kh3+2"
        # the dice and the modifier make the total (2 3 6 5 and +4 are 20); here the wild die came up 1
        # (it counts 0) and its botch re-roll of 2 is taken away: each says what it counts
        tiles = page.eval_on_selector_all(
            "#current .die",
            "ds => ds.map(d => [d.querySelector('.face').textContent, d.querySelector('.value')?.textContent,"
            " d.classList.contains('dropped')])",
        )
        assert [int(face) for face, _, _ in tiles] == [d["face"] for d in skill["dice"]]
        counts = [face if value is None else value.removeprefix("counts ") for face, value, _ in tiles]
        assert counts == ["6", "2", "5", "0", "−2"]  # the rules' values: 6 2 5, a wild 1 as 0, minus 2
        assert page.inner_text("#current .mod .mod-art") == "+4"
        added = sum(
            int(c.replace("−", "-")) for c, (_, _, dropped) in zip(counts, tiles, strict=True) if not dropped
        )
        assert added + 4 == skill["total"] == int(page.inner_text("#current .total"))
        assert (
            page.inner_text("#current .sum") == skill["sum"] and f"stat 4 = {skill['total']}" in skill["sum"]
        )
        # the wild die's red border is explained, in the colour the border has
        assert page.inner_text("#current .legend") == "red border: the wild die"
        border = page.eval_on_selector(
            "#current .die.wild .face-art", "e => getComputedStyle(e).borderTopColor"
        )
        swatch = page.eval_on_selector("#current .legend .swatch", "e => getComputedStyle(e).borderTopColor")
        assert border == swatch
        page.evaluate(FINISH_ANIMATIONS)
        for backdrop in (WHITE, BLACK):
            for selector in (
                "#current .sum",
                "#current .legend",
                "#current .mod .face",
                "#current .die .value",
            ):
                found = page.evaluate(CONTRAST_JS, [selector, backdrop])
                assert found, selector
                for text, ratio in found:
                    assert ratio >= 4.5, (theme, selector, text, backdrop, round(ratio, 2))
        # a notation roll adds its number too, and has no wild die to explain
        assert notation["modifier"] == 2 and notation["sum"] is None
        page.goto(f"{base}/overlay?theme={theme}&roller=Ann")
        page.wait_for_function(
            "id => document.querySelector('#current')?.dataset.rollId === String(id)", arg=notation["id"]
        )
        assert page.inner_text("#current .mod .mod-art") == "+2"
        assert page.locator("#current .legend").count() == 0 and page.locator("#current .sum").count() == 0
        page.goto(f"{base}/overlay?theme={theme}&fields=outcome")
        page.wait_for_selector("#current .badge")
        assert not page.is_visible("#current .sum") and not page.is_visible("#current .legend")
    page.close()


def test_unknown_theme_and_fields_are_a_400_listing_the_allowed(browser, rng_config: ServerConfig) -> None:
    page = browser.new_page()
    with live_server(rng_config) as base:
        for query, field, words in (
            ("theme=neon", "theme", "theme must be one of dark, light, glass; got 'neon'"),
            (
                "fields=dice,totals,odd",
                "fields",
                "fields takes a comma list of dice, total, outcome, roller, odds, history;"
                " 'totals', 'odd' are not",
            ),
        ):
            answer = page.goto(f"{base}/overlay?{query}")
            assert answer is not None and answer.status == 400
            assert words in page.inner_text("body")
            error = httpx.get(f"{base}/overlay?{query}").json()["error"]
            assert (error["field"], error["message"]) == (field, words)
        for query in ("theme=glass&fields=dice,%20total", "theme=&fields="):
            answer = page.goto(f"{base}/overlay?{query}")
            assert answer is not None and answer.status == 200
    page.close()


def test_a_check_is_named_while_it_waits_and_rolls(browser, rng_config: ServerConfig) -> None:
    """The ``queued`` event carries the display name, so the rolling card never shows the slug."""
    page = browser.new_page(viewport={"width": 600, "height": 600})
    slow = replace(rng_config, supply_factory=lambda: RandomSupply(8, throw_time=1.5))
    with live_server(slow) as base, httpx.Client(base_url=base) as client:
        page.goto(f"{base}/overlay")
        page.wait_for_function("() => document.querySelector('#overlay') !== null")
        client.post("/api/rolls", json=SKILL)
        page.wait_for_function("() => document.querySelector('#current .head .label')?.textContent")
        assert page.inner_text("#current .head .label") == "Runic Flux skill"
    page.close()

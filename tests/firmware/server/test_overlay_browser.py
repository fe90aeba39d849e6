"""The overlay and the fairness page in real headless Chromium (Debian's ``chromium``), with screenshots.

Screenshots go to ``out/screenshots/`` (git-ignored test artefacts); the copies in ``docs/img/``
that the README shows are refreshed by running with ``DICETOWER_UPDATE_DOCS_IMG=1``.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from dicetower.firmware.server.app import ServerConfig
from dicetower.firmware.server.rolling import RandomSupply
from server_helpers import live_server, shot, wait_for

pytestmark = pytest.mark.slow


ROLLS = [
    {"notation": "4d6kh3+2", "roller": "Ann"},
    {"system": "wcrpg", "check": "check", "params": {"dc": 45, "skill": 35}, "roller": "Dee"},
    {"system": "wizard-quest", "check": "pool", "params": {"level": 5}, "roller": "Cy"},
    {
        "system": "runic-flux",
        "check": "skill",
        "params": {"level": 3, "stat": 4, "difficulty": 15},
        "roller": "Bo",
    },
]

#: what the simulated tray (4 white d6, 1 red wild d6) can throw
TOWER_ROLLS = [
    {"notation": "4d6kh3+2", "roller": "Ann"},
    {"system": "wizard-quest", "check": "pool", "params": {"level": 5}, "roller": "Cy"},
    {"notation": "2d6+3", "roller": "Dee"},
    {
        "system": "runic-flux",
        "check": "skill",
        "params": {"level": 3, "stat": 4, "difficulty": 15},
        "roller": "Bo",
    },
]


def _post_all(client, rolls: list[dict]) -> list[int]:
    ids = [client.post("/api/rolls", json=r).json()["id"] for r in rolls]
    wait_for(lambda: client.get(f"/api/rolls/{ids[-1]}").json()["status"] in ("done", "failed"), timeout=60)
    assert [client.get(f"/api/rolls/{i}").json()["status"] for i in ids] == ["done"] * len(ids)
    return ids


def _overlay_ids(page) -> tuple[str | None, list[str]]:
    current = page.get_attribute("#current", "data-roll-id")
    history = page.eval_on_selector_all("#history li", "els => els.map(e => e.dataset.rollId)")
    return current, history


@pytest.fixture
def server_config(config: ServerConfig) -> ServerConfig:
    return replace(config, rate_per_second=0, supply_factory=lambda: RandomSupply(11))


@pytest.fixture
def tower_config(config: ServerConfig) -> ServerConfig:
    """The simulated tower: every die on the overlay is a crop of the throw's photo."""
    from dicetower.firmware.config import DEFAULT_CONFIG
    from dicetower.firmware.server.tower_supply import TowerSupply

    cfg = DEFAULT_CONFIG.with_changes(sim=replace(DEFAULT_CONFIG.sim, seed=21))
    return replace(config, rate_per_second=0, supply_factory=lambda: TowerSupply.open(cfg))


def test_overlay_shows_rolls_and_survives_refresh_and_restart(browser, tower_config: ServerConfig) -> None:
    import httpx

    page = browser.new_page(viewport={"width": 600, "height": 450})
    errors: list[str] = []
    # a refused reconnect while the server is down is expected; anything else is a bug
    page.on(
        "console",
        lambda m: (
            errors.append(m.text) if m.type == "error" and "ERR_CONNECTION_REFUSED" not in m.text else None
        ),
    )
    page.on("pageerror", lambda e: errors.append(str(e)))
    showing = "id => document.querySelector('#current')?.dataset.rollId === String(id)"
    with live_server(tower_config) as base, httpx.Client(base_url=base) as client:
        port = int(base.rsplit(":", 1)[1])
        ids = _post_all(client, TOWER_ROLLS)
        last = client.get(f"/api/rolls/{ids[-1]}").json()
        page.goto(f"{base}/overlay?theme=dark&scale=1&history=4")
        page.wait_for_function(showing, arg=ids[-1])
        assert page.locator("#current .die").count() == len(last["dice"])
        assert page.inner_text("#current .total").startswith(str(last["total"]))
        assert page.inner_text("#current .roller") == "Bo"
        assert page.inner_text("#current .badge").lower().startswith(last["outcome"])
        assert "P(" in page.inner_text("#current .odds")
        crops = page.eval_on_selector_all(
            "#current .die img",
            "imgs => imgs.map(i => [i.getAttribute('src'), i.complete && i.naturalWidth > 0])",
        )
        assert crops == [[d["crop_url"], True] for d in last["dice"]]  # every die a crop of the real photo
        assert _overlay_ids(page) == (str(ids[-1]), [str(i) for i in ids[-2::-1]])
        shot(page, "overlay.png", omit_background=True)

        live = _post_all(client, [{"notation": "3d6kh2", "roller": "Eve"}])[0]  # arrives over /ws
        page.wait_for_function(showing, arg=live)
        page.reload()  # an OBS refresh: the state comes back from the log
        page.wait_for_function(showing, arg=live)
        assert _overlay_ids(page)[1] == [str(i) for i in ids[::-1]]

    with live_server(tower_config, port=port) as base, httpx.Client(base_url=base) as client:
        after = _post_all(client, [{"notation": "3d6", "roller": "Fay"}])[0]  # a new server run, a new epoch
        page.wait_for_function(showing, arg=after, timeout=15000)
        current, history = _overlay_ids(page)
        assert current == str(after)
        assert history == [str(live), *[str(i) for i in ids[:0:-1]]]  # nothing lost, nothing twice
        assert page.evaluate("window.dicetowerOverlay.snapshots") >= 2
    assert not errors, errors
    page.close()


def test_overlay_query_options(browser, server_config: ServerConfig) -> None:
    import httpx

    page = browser.new_page(viewport={"width": 900, "height": 400})
    with live_server(server_config) as base, httpx.Client(base_url=base) as client:
        _post_all(client, ROLLS[:2])
        page.goto(f"{base}/overlay?theme=light&scale=1.5&fields=dice,total,outcome&history=0")
        page.wait_for_selector("#current .die")
        assert page.evaluate("document.body.className").split() == [
            "theme-light",
            "hide-roller",
            "hide-odds",
            "hide-history",
        ]
        assert not page.is_visible("#current .roller") and not page.is_visible("#current .odds")
        assert page.locator("#history li").count() == 0
        box = page.locator("#current").bounding_box()
        assert box is not None and box["width"] > 560 * 1.4  # scaled
    page.close()


def test_fairness_page(browser, server_config: ServerConfig) -> None:
    import httpx

    page = browser.new_page(viewport={"width": 1000, "height": 800})
    with live_server(server_config) as base, httpx.Client(base_url=base) as client:
        _post_all(client, [{"notation": "5d6+1d20", "roller": "bench"}] * 120)
        page.goto(f"{base}/fairness")
        assert page.locator("svg.hist").count() == 2
        assert page.locator("svg.hist .bar").count() == 26
        text = page.inner_text("main")
        assert "rng d6" in text and "rng d20" in text and "600" in text
        shot(page, "fairness.png", full_page=True)
    page.close()


def test_overlay_gives_the_token_from_its_fragment_and_shows_a_cut_roll(
    browser, server_config: ServerConfig
) -> None:
    import httpx

    tokens: list[str] = []
    config = replace(server_config, require_token=True, announce_token=lambda token, _: tokens.append(token))
    page = browser.new_page(viewport={"width": 900, "height": 600})
    requested: list[str] = []
    page.on("request", lambda r: requested.append(r.url))
    showing = "id => document.querySelector('#current')?.dataset.rollId === String(id)"
    with live_server(config) as base, httpx.Client(base_url=base) as client:
        (token,) = tokens
        auth = {"Authorization": f"Bearer {token}"}
        page.goto(f"{base}/overlay#token=wrong")
        page.wait_for_timeout(500)
        assert page.evaluate("window.dicetowerOverlay.connected") is False
        page.goto(f"{base}/overlay?history=2#token={token}")
        page.wait_for_function("window.dicetowerOverlay.connected")
        rid = client.post("/api/rolls", json={"notation": "1000d1000", "roller": "Big"}, headers=auth).json()[
            "id"
        ]
        page.wait_for_function(showing, arg=rid)
        page.wait_for_selector("#current .more")
        assert page.locator("#current .die").count() == 50
        assert page.inner_text("#current .more") == "+950 more"
        assert page.inner_text("#current .total") == str(client.get(f"/api/rolls/{rid}").json()["total"])
    assert not [u for u in requested if token in u.split("#")[0]]  # never in a URL sent to the server
    page.close()

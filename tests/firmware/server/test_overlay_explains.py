"""The overlay explains itself, in real headless Chromium: why a roll failed, what each badge
colour means (as docs/server.md states it), and header text that meets WCAG AA contrast."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from contrast import BLACK, CONTRAST_JS, WHITE
from dicetower.firmware.rolls.rolling import RandomSupply
from dicetower.firmware.server.app import ServerConfig
from server_helpers import live_server, wait_for

pytestmark = pytest.mark.slow

DOCS = Path(__file__).resolve().parents[3] / "docs" / "server.md"


#: the header (who rolled, what) and the rest of the overlay's text on cards
TEXT = (
    "#current .head .roller",
    "#current .head .label",
    "#current .total",
    "#current .odds",
    "#history .who",
    "#history .what",
    "#history .tot",
)

#: wait for every animation that ends (a fresh card's fade-in), not the endless "rolling" pulse
FINISH_ANIMATIONS = (
    "Promise.all(document.getAnimations()"
    ".filter(a => a.effect.getTiming().iterations !== Infinity).map(a => a.finished))"
)


def _badge_meanings() -> dict[str, str]:
    """docs/server.md's "Badge colours" table: tone -> what it means."""
    text = DOCS.read_text(encoding="utf-8")
    section = text.split("### Badge colours", 1)[1].split("\n#", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \| [^|]+ \| ([^|]+) \|", section, flags=re.M)
    return {tone: meaning.strip() for tone, meaning in rows}


def _tone(roll: dict) -> str:
    """The tone docs/server.md gives a roll, by its status, flags and outcome."""
    if roll["status"] == "failed":
        return "failed"
    if roll.get("botch") or roll["outcome"] == "botch":
        return "botch"
    if roll.get("critical") or roll["outcome"] in ("critical", "triple-critical", "death-blow"):
        return "critical"
    if roll["outcome"] in ("success", "hit", "win"):
        return "success"
    if roll["outcome"] in ("failure", "miss", "lose", "stalemate"):
        return "failure"
    return "neutral"


def _post_all(client, rolls: list[dict]) -> list[dict]:
    ids = [client.post("/api/rolls", json=r).json()["id"] for r in rolls]
    wait_for(lambda: client.get(f"/api/rolls/{ids[-1]}").json()["status"] in ("done", "failed"), timeout=60)
    return [client.get(f"/api/rolls/{i}").json() for i in ids]


@pytest.fixture
def rng_config(config: ServerConfig) -> ServerConfig:
    return replace(config, rate_per_second=0, supply_factory=lambda: RandomSupply(5))


SKILL = {"system": "runic-flux", "check": "skill", "params": {"level": 3, "stat": 4, "difficulty": 15}}


def test_each_badge_colour_has_the_meaning_the_docs_state(browser, rng_config: ServerConfig) -> None:
    import httpx

    meanings = _badge_meanings()
    assert set(meanings) == {"success", "critical", "failure", "botch", "failed", "neutral"}
    page = browser.new_page(viewport={"width": 600, "height": 900})
    with live_server(rng_config) as base, httpx.Client(base_url=base) as client:
        rolls = _post_all(client, [{**SKILL, "roller": f"r{n}"} for n in range(14)])
        rolls += _post_all(
            client,
            [{"system": "wizard-quest", "check": "opposed", "params": {"level": 3, "opponent_level": 3}}],
        )
        page.goto(f"{base}/overlay?history=20")
        page.wait_for_function("n => document.querySelectorAll('.badge').length === n", arg=len(rolls))
        badges = page.eval_on_selector_all(
            "#current .badge, #history .badge",
            "bs => bs.map(b => [b.closest('[data-roll-id]').dataset.rollId, b.dataset.tone, b.title,"
            " b.textContent, getComputedStyle(b).backgroundColor])",
        )
    page.close()
    by_id = {str(r["id"]): r for r in rolls}
    colours: dict[str, set[str]] = {}
    for rid, tone, title, text, colour in badges:
        roll = by_id[rid]
        assert tone == _tone(roll), (roll, tone)
        assert f": {meanings[tone]}" in title, (title, meanings[tone])  # the page says what the docs say
        if tone == "critical" and roll["outcome"] == "success":
            assert text.startswith("critical success")  # a yellow success says why it is yellow
        if tone == "botch" and roll["outcome"] in ("success", "failure"):
            assert text.startswith(f"botched {roll['outcome']}")
        colours.setdefault(tone, set()).add(colour)
    assert {"success", "critical", "botch"} <= set(colours), colours  # the rolls show the tones at issue
    assert all(len(c) == 1 for c in colours.values()), colours  # one colour per tone
    shown = [next(iter(colours[t])) for t in ("success", "critical", "failure", "botch") if t in colours]
    assert len(set(shown)) == len(shown)  # and a different colour for each


@pytest.fixture
def failing_tower(config: ServerConfig) -> ServerConfig:
    """The simulated tower with a die that leaves the tray on every throw and no re-shake."""
    from dicetower.firmware.config import DEFAULT_CONFIG
    from dicetower.firmware.rolls.tower_supply import TowerSupply

    cfg = DEFAULT_CONFIG.with_changes(
        sim=replace(DEFAULT_CONFIG.sim, seed=3, fault_rate=1.0, faults=("leaves_tray",)),
        cycle=replace(DEFAULT_CONFIG.cycle, max_taps=0, max_reshakes=0),
    )
    return replace(config, rate_per_second=0, supply_factory=lambda: TowerSupply.open(cfg))


def test_a_failed_roll_says_why_in_one_short_line(browser, failing_tower: ServerConfig) -> None:
    import httpx

    page = browser.new_page(viewport={"width": 600, "height": 500})
    with live_server(failing_tower) as base, httpx.Client(base_url=base) as client:
        rolls = _post_all(client, [{"notation": "4d6", "roller": "Ann"}, {"notation": "2d6", "roller": "Bo"}])
        assert [r["status"] for r in rolls] == ["failed", "failed"]
        reason = rolls[-1]["error"]
        assert "die missing" in reason  # the server's reason: what the test expects the page to show
        page.goto(f"{base}/overlay?theme=glass")
        page.wait_for_selector("#current .error")
        line = page.eval_on_selector(
            "#current .error",
            "e => [e.textContent, e.title, e.getClientRects().length, e.getBoundingClientRect().height,"
            " parseFloat(getComputedStyle(e).lineHeight) || 1.25 * parseFloat(getComputedStyle(e).fontSize)]",
        )
        text, title, rects, height, line_height = line
        assert text == reason.splitlines()[0] and title == reason
        assert rects == 1 and height <= 1.5 * line_height  # one line, however long the reason
        assert page.get_attribute("#current .badge", "data-tone") == "failed"
        assert page.get_attribute("#current .badge", "title").endswith(f"\n{reason}")
        earlier = page.eval_on_selector(
            f"#history li[data-roll-id='{rolls[0]['id']}']",
            "li => [li.querySelector('.why').textContent, li.querySelector('.why').title,"
            " li.getBoundingClientRect().height]",
        )
        assert earlier[0] == rolls[0]["error"].splitlines()[0] and earlier[1] == rolls[0]["error"]
        assert earlier[2] < 2.5 * line_height  # the history row stays one row
        page.evaluate(FINISH_ANIMATIONS)
        for backdrop in (WHITE, BLACK):
            for selector in ("#current .error", "#history .why"):
                ((_, ratio),) = page.evaluate(CONTRAST_JS, [selector, backdrop])
                assert ratio >= 4.5, (selector, backdrop, round(ratio, 2))
    page.close()


@pytest.mark.parametrize("theme", ["glass", "dark", "light"])
def test_header_text_meets_wcag_aa_over_any_backdrop(browser, rng_config: ServerConfig, theme: str) -> None:
    import httpx

    page = browser.new_page(viewport={"width": 600, "height": 500})
    with live_server(rng_config) as base, httpx.Client(base_url=base) as client:
        pool = {"system": "wizard-quest", "check": "pool", "params": {"level": 5}, "roller": "Bo"}
        _post_all(client, [{"notation": "4d6kh3+2", "roller": "Ann"}, pool])  # the last has odds
        page.goto(f"{base}/overlay?theme={theme}")
        page.wait_for_selector("#history .who")
        page.evaluate(FINISH_ANIMATIONS)  # a new card fades in: measure it as it stays
        for backdrop in (WHITE, BLACK):  # OBS puts the page over the stream: the brightest and darkest
            for selector in TEXT:
                found = page.evaluate(CONTRAST_JS, [selector, backdrop])
                assert found, selector
                for text, ratio in found:
                    assert ratio >= 4.5, (theme, backdrop, selector, text, round(ratio, 2))
    page.close()


def test_the_contrast_probe_fails_low_contrast(browser) -> None:
    page = browser.new_page()
    page.set_content(
        "<div style='background: rgba(20, 24, 32, 0.45)'><span id=t style='color: #b9b3a6'>x</span></div>"
    )
    ((_, ratio),) = page.evaluate(CONTRAST_JS, ["#t", WHITE])
    assert ratio < 2  # the glass theme's old header text over a white backdrop
    ((_, black),) = page.evaluate(CONTRAST_JS, ["#t", BLACK])
    assert black > 4.5
    page.close()

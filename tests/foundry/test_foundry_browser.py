"""The Foundry module end to end: Chromium loads it under the fake of Foundry's documented API, a real
simulated tower throws the dice, and the faces in the fake's roll equal the tower's roll log."""

from __future__ import annotations

import importlib.util
import json
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

RIG = Path(__file__).resolve().parents[2] / "bench" / "foundry_rig.py"


def _load_rig() -> Any:
    """``bench/foundry_rig.py`` as a module (bench/ is scripts, not a package)."""
    spec = importlib.util.spec_from_file_location("bench_foundry_rig", RIG)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_foundry_rig"] = module
    spec.loader.exec_module(module)
    return module


rig = _load_rig()
get_json, page_server, sim_tower = rig.get_json, rig.page_server, rig.sim_tower


@pytest.fixture(scope="module")
def pages() -> object:
    with page_server() as origin:
        yield origin


@pytest.fixture(scope="module")
def tower(tmp_path_factory: pytest.TempPathFactory, pages: str) -> object:
    with sim_tower(tmp_path_factory.mktemp("tower"), "--cors-origin", pages) as url:
        yield url


def open_harness(browser: object, pages: str) -> object:
    page = browser.new_page()
    page.goto(f"{pages}{rig.HARNESS}")
    page.wait_for_function("window.harnessReady === true")
    return page


def test_a_foundry_roll_is_thrown_by_the_tower(browser: object, pages: str, tower: str) -> None:
    page = open_harness(browser, pages)
    started = page.evaluate("([url]) => harness.start(url)", [tower])
    assert started["state"] == "online"
    assert {"d6", "d20"} <= set(started["denominations"])
    rolled = page.evaluate("() => harness.roll('2d20kh + 1d6')")
    assert rolled["notifications"] == []
    [thrown] = rolled["tower"]
    logged = get_json(f"{tower}/api/rolls/{thrown['id']}")
    assert logged["status"] == "done" and logged["hash"] == thrown["hash"]
    faces = [d["face"] for d in sorted(logged["dice"], key=lambda d: d["slot"]) if d["purpose"] == "base"]
    got = [r["result"] for term in rolled["results"] for r in term]
    assert got == faces
    d20s = [r["result"] for r in rolled["results"][0]]
    assert rolled["total"] == max(d20s) + rolled["results"][1][0]["result"]
    assert logged["roller"].endswith("(Foundry)")
    page.close()


def test_a_roll_made_at_the_tower_reaches_the_gms_chat(browser: object, pages: str, tower: str) -> None:
    page = open_harness(browser, pages)
    page.evaluate("([url]) => harness.start(url)", [tower])
    request = urllib.request.Request(
        f"{tower}/api/rolls",
        data=json.dumps({"notation": "1d6", "roller": "Bo"}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        roll_id = json.load(response)["id"]
    page.wait_for_function("() => harness.chat().length > 0", timeout=30_000)
    [message] = page.evaluate("() => harness.chat()")
    assert message["flags"]["dicetower"]["id"] == roll_id
    assert f'src="{tower}/api/rolls/{roll_id}/dice/0.jpg"' in message["content"]
    assert message["speaker"]["alias"] == "Bo at the tower"
    page.close()


def test_a_wrong_token_is_said_in_foundry(browser: object, pages: str, tmp_path: Path) -> None:
    with sim_tower(tmp_path, "--cors-origin", pages, "--require-token") as url:
        page = open_harness(browser, pages)
        page.evaluate("([url]) => harness.start(url, 'not-the-token')", [url])
        page.evaluate("() => { window.pending = harness.roll('1d6'); }")  # waits on the player
        page.wait_for_function("() => window.env.ui.notifications.messages.length > 0", timeout=30_000)
        said = page.evaluate("() => window.env.ui.notifications.messages[0].message")
        assert "token" in said and "by hand" in said
        page.evaluate("() => window.env.Roll.registerResult('manual', 'd6', 4)")
        assert page.evaluate("() => window.pending.then((r) => r.total)") == 4
        page.close()

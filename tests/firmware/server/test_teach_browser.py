"""The /teach page in real headless Chromium: the test names groups with keys, moves a misfit out,
splits a mixed group, undoes a step and saves, as the owner would; then reads the labelled folder.

The screenshot goes to ``out/screenshots/teach.png``.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from dicetower.firmware.server.app import ServerConfig
from dicetower.vision.manifest import read_manifest
from server_helpers import live_server, shot
from teach_folders import TeachFolder

pytestmark = pytest.mark.slow

D6 = "section.die[data-slug='white-d6']"
D20 = "section.die[data-slug='blue-d20']"


def _settled(page, steps: int) -> None:
    """Wait until the page has had ``steps`` steps accepted and has nothing queued."""
    page.wait_for_function(
        "n => window.dicetowerTeach.steps === n && window.dicetowerTeach.pending === 0", arg=steps
    )


def _focused(page) -> tuple[str, str]:
    """The die and the place (group index or "loose") that has the keyboard focus."""
    return tuple(
        page.evaluate(
            "() => [document.activeElement.closest('section.die')?.dataset.slug, "
            "document.activeElement.dataset.group]"
        )
    )  # type: ignore[return-value]


def _type(page, keys: str, steps: int) -> None:
    for key in keys:
        page.keyboard.press(key)
    page.keyboard.press("Enter")
    _settled(page, steps)


def test_the_owner_names_every_die_by_keys_and_clicks(
    browser, config: ServerConfig, teach_folder: TeachFolder
) -> None:
    page = browser.new_page(viewport={"width": 1000, "height": 1300})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    with live_server(replace(config, teach_dir=teach_folder.path, rate_per_second=0)) as base:
        page.goto(f"{base}/teach")
        page.wait_for_selector("body[data-ready]")
        assert page.locator(f"{D6} .group").count() == 4 and page.locator(f"{D20} .group").count() == 4
        page.wait_for_function(  # every crop is the real PNG, served under the CSP
            f'() => [...document.querySelectorAll("{D6} .crop img")]'
            ".filter(i => i.complete && i.naturalWidth === 72).length === 10"
        )
        assert _focused(page) == ("white-d6", "0")  # the first unnamed group has the focus
        page.keyboard.press("Tab")
        assert _focused(page) == ("white-d6", "1")  # Tab steps group to group, not crop to crop
        page.keyboard.press("Shift+Tab")

        # a d6: one key names a group, and the focus moves on to the next unnamed one
        for n, key in enumerate("3516", start=1):
            page.keyboard.press(key)
            _settled(page, n)
        assert page.locator(f"{D6} .group.named").count() == 4
        # the misfit: a plain click moves it out; then it is named alone
        page.click(f"{D6} .group[data-group='1'] .crop[data-crop='6']")
        _settled(page, 5)
        assert page.locator(f"{D6} .loose .crop").count() == 1
        page.click(f"{D6} .loose .crop[data-crop='6']")
        assert _focused(page) == ("white-d6", "loose")
        page.keyboard.press("2")
        _settled(page, 6)
        assert page.inner_text(f"{D6} .loose .cface") == "2"
        assert page.inner_text(f"{D6} .progress") == "white d6: 5 of 6 faces named, 0 crops left"

        # a d20: digits and Enter; the mixed group is split by picking its 9s
        assert _focused(page) == ("blue-d20", "0")  # the d6's last crop to name is named: on to the d20
        assert page.inner_text("#status") == "white d6: crop 6 named 2; next: blue d20"
        _type(page, "17", 7)
        assert _focused(page) == ("blue-d20", "1")
        page.click(f"{D20} .group[data-group='1'] .crop[data-crop='5']", modifiers=["Shift"])
        page.click(f"{D20} .group[data-group='1'] .crop[data-crop='6']", modifiers=["Shift"])
        assert page.locator(f"{D20} .crop.picked").count() == 2
        page.keyboard.press("s")
        _settled(page, 8)
        assert _focused(page) == ("blue-d20", "2")  # the new group, ready to be named
        _type(page, "9", 9)
        _type(page, "12", 10)
        _type(page, "2", 11)  # a slip: the last group shows 20
        assert page.locator(f"{D20} .group[data-group='4'] .face").inner_text() == "2"
        page.keyboard.press("Control+z")
        _settled(page, 12)
        assert page.locator(f"{D20} .group[data-group='4'] .face").inner_text() == "not named"
        assert _focused(page) == ("blue-d20", "1")
        _type(page, "4", 13)
        assert _focused(page) == ("blue-d20", "4")
        _type(page, "20", 14)
        assert page.inner_text(f"{D20} .progress") == "blue d20: 5 of 20 faces named, 0 crops left"

        page.click("#save")
        page.wait_for_function("() => window.dicetowerTeach.saves === 1")
        assert (
            page.inner_text("#status")
            == "Saved manifest.jsonl: 20 dice named in 10 photos, 0 left without a face"
        )
        assert page.evaluate("window.dicetowerTeach.refusals") == 0
        page.focus(f"{D20} .group[data-group='1']")
        shot(page, "teach.png", full_page=True)
    assert not errors, errors
    page.close()

    entries = list(read_manifest(teach_folder.path))  # every die named: faces required
    for die_id, column in (("white d6", 0), ("blue d20", 1)):
        assert [e.dice[column].face for e in entries] == teach_folder.truth[die_id]
    teach = json.loads((teach_folder.path / "teach.json").read_text())
    d6, d20 = teach["dice"]
    assert d6["work"] == {"names": 5, "moves": 1, "splits": 0, "undos": 0} and d6["touched"] == [6]
    assert d20["work"] == {"names": 6, "moves": 0, "splits": 1, "undos": 1} and d20["touched"] == [5, 6]
    assert d20["groups"] == [[0, 1, 2], [3, 4], [5, 6], [7, 8], [9]]
    assert d20["names"] == {"0": 17, "1": 4, "2": 9, "3": 12, "4": 20}


def test_a_refused_step_is_shown_and_changes_nothing(
    browser, config: ServerConfig, teach_folder: TeachFolder
) -> None:
    page = browser.new_page(viewport={"width": 900, "height": 700})
    with live_server(replace(config, teach_dir=teach_folder.path, require_token=True)) as base:
        page.goto(f"{base}/teach")
        page.wait_for_selector("body[data-ready]")
        assert page.is_visible("#token")  # beyond loopback (here: asked for) changes need the token
        page.keyboard.press("3")
        page.wait_for_function("() => window.dicetowerTeach.refusals === 1")
        assert "Authorization" in page.inner_text("#status")
        token = (config.data_dir / "api-token").read_text().strip()
        page.fill("#token-input", token)
        page.click("#token button")
        page.focus(f"{D6} .group[data-group='0']")
        page.keyboard.press("3")
        _settled(page, 1)
        page.keyboard.press("7")  # not on a d6
        page.wait_for_function("() => window.dicetowerTeach.refusals === 2")
        assert page.inner_text("#status") == "7 is not a face of white d6 (1 2 3 4 5 6)"
    page.close()


def _names(teach_folder: TeachFolder) -> list[dict[str, int]]:
    return [d["names"] for d in json.loads((teach_folder.path / "teach.json").read_text())["dice"]]


def test_the_focus_moves_on_a_merge_is_asked_and_a_stale_page_cannot_save(
    browser, config: ServerConfig, teach_folder: TeachFolder
) -> None:
    page = browser.new_page(viewport={"width": 1000, "height": 1300})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    with live_server(replace(config, teach_dir=teach_folder.path, rate_per_second=0)) as base:
        page.goto(f"{base}/teach")
        page.wait_for_selector("body[data-ready]")
        for n, key in enumerate("3516", start=1):
            page.keyboard.press(key)
            _settled(page, n)
        # the d6's last group is named: the keys now name the d20's first group, never a d6 group again
        assert _focused(page) == ("blue-d20", "0")
        assert page.inner_text("#status") == "white d6: group 3 named 6; next: blue d20"
        page.keyboard.press("5")  # a slip: the owner still means the d6; on the d20 it is one digit typed
        assert page.inner_text(f"{D20} .group[data-group='0'] .typed") == "face 5… Enter"
        page.keyboard.press("Escape")
        assert _names(teach_folder) == [{"0": 3, "1": 5, "2": 1, "3": 6}, {}]

        # renaming a named group onto the face another group has asks first; a wrong key keeps both
        page.focus(f"{D6} .group[data-group='1']")
        page.keyboard.press("3")
        page.wait_for_selector("#ask:not([hidden])")
        assert page.inner_text("#ask-text") == (
            "white d6: group 1 is named 5, and group 0 is named 3: merge them into one group named 3?"
        )
        page.keyboard.press("7")
        page.wait_for_selector("#ask", state="hidden")
        assert page.inner_text("#status") == "white d6: group 1 keeps its name 5; nothing merged"
        assert page.locator(f"{D6} .group").count() == 4 and _names(teach_folder)[0]["1"] == 5
        page.keyboard.press("3")
        page.wait_for_selector("#ask:not([hidden])")
        page.keyboard.press("Enter")
        _settled(page, 5)
        assert page.inner_text("#status") == "white d6: group 1 joined the group named 3"
        assert page.locator(f"{D6} .group").count() == 3
        assert page.locator(f"{D6} .group[data-group='0'] .crop").count() == 7
        page.focus(f"{D6} .group[data-group='1']")  # named 1; 2 names no other group: renamed at once
        page.keyboard.press("2")
        _settled(page, 6)
        assert page.inner_text("#status") == "white d6: group 1 renamed 1 → 2"
        assert _focused(page) == ("white-d6", "1") and page.is_hidden("#ask")

        # another command rewrites teach.json: the page notices, writes nothing over it, offers a reload
        doc = json.loads((teach_folder.path / "teach.json").read_text())
        for die in doc["dice"]:
            die["names"] = {}
        on_disk = json.dumps(doc, indent=1) + "\n"
        (teach_folder.path / "teach.json").write_text(on_disk)
        page.evaluate("window.dicetowerTeach.check()")
        page.wait_for_selector("#conflict:not([hidden])")
        assert "teach.json changed on disk since this page read it" in page.inner_text("#conflict-text")
        page.focus(f"{D6} .group[data-group='2']")
        page.keyboard.press("4")
        page.wait_for_function("() => window.dicetowerTeach.refusals === 1")
        page.click("#save")
        page.wait_for_function("() => window.dicetowerTeach.refusals === 2")
        assert "changed on disk since this page read it" in page.inner_text("#status")
        assert (teach_folder.path / "teach.json").read_text() == on_disk
        assert not (teach_folder.path / "manifest.unnamed.jsonl").exists()  # no save went through
        page.click("#reload")
        page.wait_for_selector("#conflict", state="hidden")
        assert page.locator(f"{D6} .group.named").count() == 0 and page.locator(f"{D6} .group").count() == 3
        assert _focused(page) == ("white-d6", "0")

        # named again and saved: the page says what to run next
        for n, key in enumerate("351", start=7):
            page.keyboard.press(key)
            _settled(page, n)
        page.click("#save")
        page.wait_for_function("() => window.dicetowerTeach.saves === 1")
        assert page.is_visible("#next") and page.inner_text("#next-label") == "Before fitting:"
        assert page.inner_text("#next-text").startswith(
            "teach more rolls before fitting: the white d6 about "
        )
        assert f"--out {teach_folder.path} carries on" in page.inner_text("#next-text")
        shot(page, "teach-next.png")
    assert not errors, errors
    page.close()

"""``[roll] unreadable = "ask"`` on the simulated tower: a die the reader cannot read is put to the
table, whose answer fills the slot without a re-throw; with no table page open it is thrown again, and
the throw says why."""

from __future__ import annotations

import threading
from dataclasses import replace

import httpx
from dicetower.firmware.config import DEFAULT_CONFIG
from dicetower.firmware.rolls.tower_supply import TowerSupply
from dicetower.firmware.server.app import ServerConfig
from dicetower.firmware.server.table import TableSettings
from dicetower.firmware.tower import open_tower, reader_for_tray
from dicetower.vision.reading import ReadStatus, UnreadableReason
from server_helpers import live_server, wait_for


class FirstDieUnsure:
    """The tray's reader, except that the first die of the first reading is unreadable (low confidence)."""

    def __init__(self, inner) -> None:  # type: ignore[no-untyped-def]
        self.inner = inner
        self.reads = 0

    def read(self, frame, reference=None, tray=None):  # type: ignore[no-untyped-def]
        reading = self.inner.read(frame, reference, tray)
        self.reads += 1
        if self.reads > 1 or not reading.dice:
            return reading
        first = replace(
            reading.dice[0], face=None, status=ReadStatus.UNREADABLE, reason=UnreadableReason.LOW_CONFIDENCE
        )
        return replace(reading, dice=(first, *reading.dice[1:]))


def _supply() -> TowerSupply:
    cfg = DEFAULT_CONFIG.with_changes(sim=replace(DEFAULT_CONFIG.sim, seed=5))
    reader = reader_for_tray(cfg.dice.dice, cfg.camera.tray_colour, cfg.reader.taught)
    return TowerSupply(open_tower(cfg, reader=FirstDieUnsure(reader)))


def _config(config: ServerConfig) -> ServerConfig:
    return replace(
        config,
        rate_per_second=0,
        supply_factory=_supply,
        table=TableSettings(unreadable="ask", ask_timeout_s=20),
    )


def _done(base: str, rid: int) -> dict:
    return wait_for(
        lambda: (r := httpx.get(f"{base}/api/rolls/{rid}").json())["status"] in ("done", "failed") and r, 60
    )


def test_the_table_reads_the_die_the_tower_could_not(config: ServerConfig) -> None:
    with live_server(_config(config)) as base:
        stop = threading.Event()
        asked: list[dict] = []

        def table_page() -> None:  # a phone with /table open: it polls, and answers the first question
            while not stop.is_set():
                state = httpx.get(f"{base}/api/table").json()
                for q in state["asks"]:
                    if not asked:
                        asked.append(q)
                        crop = httpx.get(base + q["crop_url"])
                        asked.append(
                            {"crop_type": crop.headers["content-type"], "crop_bytes": len(crop.content)}
                        )
                        r = httpx.post(
                            f"{base}/api/rolls/{q['roll']}/answers",
                            json={"die": q["die"], "face": 4, "by": "Ann"},
                        )
                        again = httpx.post(
                            f"{base}/api/rolls/{q['roll']}/answers",
                            json={"die": q["die"], "face": 2, "by": "Bo"},
                        )
                        asked.append({"first": r.status_code, "second": again.status_code})
                stop.wait(0.1)

        page = threading.Thread(target=table_page)
        page.start()
        try:
            wait_for(lambda: httpx.get(f"{base}/api/table").status_code == 200)
            rid = httpx.post(f"{base}/api/rolls", json={"notation": "5d6", "roller": "Cy"}).json()["id"]
            roll = _done(base, rid)
        finally:
            stop.set()
            page.join(10)
    question, crop, answers = asked
    assert question["roll"] == rid and question["faces"] == [1, 2, 3, 4, 5, 6]
    assert crop["crop_type"] == "image/jpeg" and crop["crop_bytes"] > 100
    assert answers == {"first": 201, "second": 409}
    assert roll["status"] == "done"
    (by_table,) = [d for d in roll["dice"] if d.get("by_table")]
    assert by_table["face"] == 4 and by_table["by_table"] == {"face": 4, "by": "Ann"}
    assert roll["throws"][0]["retries"] == []  # nothing was thrown again
    assert roll["throws"][0]["table"] == [{"attempt": 0, "index": 0, "face": 4, "by": "Ann"}]
    assert roll["total"] == sum(d["face"] for d in roll["dice"])


def test_with_no_table_page_the_die_is_thrown_again_and_the_throw_says_why(config: ServerConfig) -> None:
    with live_server(_config(config)) as base:
        rid = httpx.post(f"{base}/api/rolls", json={"notation": "5d6"}).json()["id"]
        roll = _done(base, rid)
        log = httpx.get(f"{base}/api/rolls/{rid}").json()
    assert roll["status"] == "done" and not any(d.get("by_table") for d in roll["dice"])
    assert [r["action"] for r in roll["throws"][0]["retries"]] == ["tap"]
    assert log["throws"][0]["table"] == [
        {"attempt": 0, "index": 0, "face": None, "why": "no table page is open: thrown again"}
    ]

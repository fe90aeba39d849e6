"""``[roll] unreadable = "ask"`` on the simulated tower: a die the reader cannot read is put to the
table, whose answer fills the slot without a re-throw; with no table page open it is thrown again, and
the throw says why."""

from __future__ import annotations

import threading
from dataclasses import replace

import httpx
from dicetower.firmware.server.app import ServerConfig
from dicetower.firmware.server.table import TableSettings
from server_helpers import live_server, wait_for
from table_helpers import unsure_tower


def _config(config: ServerConfig) -> ServerConfig:
    return replace(
        config,
        rate_per_second=0,
        supply_factory=unsure_tower,
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

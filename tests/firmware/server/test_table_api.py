"""The table's API: what the page polls, its code, and the questions the tower puts to it."""

from __future__ import annotations

import threading
from dataclasses import replace

import pytest
from dicetower.firmware.rolls.asking import AskDesk
from dicetower.firmware.server.app import ServerConfig, create_app
from dicetower.firmware.web.guards import ApiError
from server_helpers import wait_for
from starlette.testclient import TestClient


def test_the_table_state_shows_recent_rolls_and_only_the_last_is_correctable(config: ServerConfig) -> None:
    config = replace(config, require_token=True, rate_per_second=0)
    with TestClient(create_app(config)) as client:
        token = (config.data_dir / "api-token").read_text().strip()
        code = (config.data_dir / "table-code").read_text().strip()
        ids = [
            client.post(
                "/api/rolls", json={"notation": n}, headers={"Authorization": f"Bearer {token}"}
            ).json()["id"]
            for n in ("1d20", "2d6")
        ]
        wait_for(lambda: client.get(f"/api/rolls/{ids[-1]}").json()["status"] == "done")
        refused = client.get("/api/table")
        state = client.get("/api/table", headers={"Authorization": f"Bearer {code}"}).json()
        with_token = client.get("/api/table", headers={"Authorization": f"Bearer {token}"})
    assert refused.status_code == 401
    assert with_token.status_code == 200
    assert [r["id"] for r in state["rolls"]] == ids[::-1]
    last, older = state["rolls"]
    assert last["correctable"] and not older["correctable"]
    assert [d["faces"] for d in last["dice"]] == [[1, 2, 3, 4, 5, 6]] * 2 and older["dice"][0][
        "faces"
    ] is None
    assert state["asks"] == [] and state["rolling"] is None


def test_an_answer_with_no_question_open_is_refused(config: ServerConfig) -> None:
    with TestClient(create_app(config)) as client:
        r = client.post("/api/rolls/1/answers", json={"die": 0, "face": 3})
        bad = client.post("/api/rolls/1/answers", json={"die": 0, "face": "3"})
    assert r.status_code == 409 and "not waiting" in r.json()["error"]["message"]
    assert bad.status_code == 422 and bad.json()["error"]["field"] == "face"


def test_the_first_valid_answer_wins_and_no_table_means_no_question() -> None:
    now = [0.0]
    desk = AskDesk(presence_s=5, clock=lambda: now[0])
    assert desk.ask(1, 0, "d6", timeout_s=1) is None  # no table page seen: re-throw at once
    desk.seen()
    got: list = []
    asker = threading.Thread(target=lambda: got.append(desk.ask(1, 2, "d6", die="white d6", timeout_s=10)))
    asker.start()
    wait_for(desk.open_questions)
    (q,) = desk.open_questions()
    assert q.to_json()["faces"] == [1, 2, 3, 4, 5, 6] and q.to_json()["die"] == 2
    with pytest.raises(ApiError) as not_on_die:
        desk.answer(1, 2, 7, "Ann")
    assert not_on_die.value.status == 422
    desk.answer(1, 2, 5, "Bo")
    with pytest.raises(ApiError) as second:
        desk.answer(1, 2, 4, "Cy")
    assert second.value.status == 409
    asker.join(10)
    assert got[0].face == 5 and got[0].by == "Bo"
    assert desk.ask(1, 3, "d6", timeout_s=0.05) is None  # nobody answered in time
    now[0] = 6.0
    assert not desk.connected
    assert desk.status() == {"connected": False, "open": 0, "asked": 2, "answered": 1, "unanswered": 1}


def test_a_waiting_question_shows_progress_and_ends_when_the_server_stops(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("dicetower.firmware.rolls.asking._TICK_S", 0.01)
    ticks: list[int] = []
    desk = AskDesk(progress=lambda: ticks.append(1))
    desk.seen()
    got: list = []
    asker = threading.Thread(target=lambda: got.append(desk.ask(1, 0, "d20", timeout_s=30)))
    asker.start()
    wait_for(lambda: len(ticks) >= 3)  # the watchdog hears of the roll while the table thinks
    desk.close()
    asker.join(5)
    assert not asker.is_alive() and got == [None]
    assert desk.ask(1, 1, "d20", timeout_s=30) is None  # a closed desk asks nothing more

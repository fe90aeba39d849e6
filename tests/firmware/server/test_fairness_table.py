"""Fairness counts the faces the table settled on and says how many the table gave."""

from __future__ import annotations

from dicetower.firmware.server.app import ServerConfig, create_app
from dicetower.firmware.server.fairness import fairness_from_rows, format_fairness
from server_helpers import wait_for
from starlette.testclient import TestClient


def _die(slot: int, face: int, **more: object) -> dict:
    return {"slot": slot, "kind": "d6", "face": face, "die": "white d6", **more}


def test_final_faces_are_counted_and_each_way_they_came_is_told() -> None:
    rows = [
        {
            "status": "done",
            "dice": [_die(0, 2), _die(1, 5)],
            "corrections": [{"slot": 0, "old": 2, "new": 3}],
        },
        {
            "status": "done",
            "dice": [_die(0, 6, by_table={"face": 6, "by": "Ann"}), _die(1, 1)],
            "corrections": [],
        },
        {"status": "done", "dice": [_die(0, 4), _die(1, 4)]},
    ]
    (stats,) = fairness_from_rows(rows)
    assert stats.counts == {3: 1, 5: 1, 6: 1, 1: 1, 4: 2}  # the corrected 2 counts as the 3 it showed
    reading = stats.to_json()["reading"]
    assert reading["read_by_tower"] == 5 and reading["typed_by_table"] == 1 and reading["corrected"] == 1
    assert reading["corrected_share"] == 1 / 5
    lo, hi = reading["corrected_ci95"]
    assert 0 < lo < 0.2 < hi < 1
    assert "typed by the table 1; corrected by the table 1: 20.0 %" in format_fairness([stats])


def test_the_api_and_page_show_a_correction_in_the_tower_s_figures(config: ServerConfig) -> None:
    with TestClient(create_app(config)) as client:
        rid = client.post("/api/rolls", json={"notation": "3d6"}).json()["id"]
        roll = wait_for(lambda: (r := client.get(f"/api/rolls/{rid}").json())["status"] == "done" and r)
        face = roll["dice"][0]["face"]
        new = face % 6 + 1
        assert client.post(f"/api/rolls/{rid}/corrections", json={"die": 0, "face": new}).status_code == 201
        (die,) = client.get("/api/fairness").json()["dice"]
        page = client.get("/fairness").text
        tower = client.get("/api/tower").json()
    counts = {f["face"]: f["count"] for f in die["faces"]}
    expected = [new, *(d["face"] for d in roll["dice"][1:])]
    assert counts == {f: expected.count(f) for f in range(1, 7)}
    assert die["reading"]["corrected"] == 1 and die["reading"]["read_by_tower"] == 3
    assert '<dd class="corrected">1: 33.3 %' in page
    assert tower["table"]["corrections"] == 1 and tower["table"]["asks"]["connected"] is False

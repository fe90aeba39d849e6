"""The HTTP API through TestClient (inside ``with``: the lifespan runs): rolls, errors, photos, security."""

from __future__ import annotations

import json
import os
import stat
from dataclasses import replace
from pathlib import Path

import pytest
from dicetower.firmware.rolllog import PhotoFile, RollLog
from dicetower.firmware.server.app import ServerConfig, create_app
from server_helpers import wait_for
from starlette.routing import Mount
from starlette.testclient import TestClient


def _finished(client: TestClient, roll_id: int) -> dict:
    def done():
        body = client.get(f"/api/rolls/{roll_id}").json()
        return body if body["status"] in ("done", "failed") else None

    return wait_for(done)


def _log_counts(data_dir: Path) -> tuple[int, int]:
    with RollLog(data_dir) as log:
        return log.count(), len(log.pending())


def test_notation_roll_end_to_end(config: ServerConfig) -> None:
    with TestClient(create_app(config)) as client:
        r = client.post("/api/rolls", json={"notation": "4d6kh3+2", "roller": "Ann"})
        assert r.status_code == 202
        body = r.json()
        assert body["status"] == "queued" and r.headers["location"] == f"/api/rolls/{body['id']}"
        roll = _finished(client, body["id"])
    assert roll["status"] == "done" and roll["roller"] == "Ann" and roll["source"] == "rng"
    faces = [d["face"] for d in roll["dice"]]
    kept = sorted(faces)[1:]
    assert roll["total"] == sum(kept) + 2
    assert [d["slot"] for d in roll["dice"]] == [0, 1, 2, 3]
    assert all(d["die"] == "rng d6" and d["throw"] == 0 for d in roll["dice"])
    assert roll["throws"][0]["faces"] == faces
    assert roll["timings"]["roll_s"] >= 0 and len(roll["hash"]) == 64


def test_check_roll_has_outcome_and_exact_odds(config: ServerConfig) -> None:
    with TestClient(create_app(config)) as client:
        r = client.post(
            "/api/rolls",
            json={"system": "wcrpg", "check": "check", "params": {"dc": 45, "skill": 35}, "roller": "Bo"},
        )
        roll = _finished(client, r.json()["id"])
        listed = client.get("/api/rolls", params={"system": "wcrpg"}).json()["rolls"]
    assert roll["outcome"] in roll["odds"]["probabilities"]
    assert roll["odds"]["outcome_probability"] == pytest.approx(
        roll["odds"]["probabilities"][roll["outcome"]]
    )
    assert sum(roll["odds"]["probabilities"].values()) == pytest.approx(1)
    assert [x["id"] for x in listed] == [roll["id"]]


def test_rolls_are_listed_paged_and_filtered(config: ServerConfig) -> None:
    config = replace(config, rate_per_second=0)
    with TestClient(create_app(config)) as client:
        ids = [
            client.post("/api/rolls", json={"notation": "1d6", "roller": "Ann" if i % 2 else "Bo"}).json()[
                "id"
            ]
            for i in range(7)
        ]
        _finished(client, ids[-1])
        page = client.get("/api/rolls", params={"limit": 3}).json()
        assert [r["id"] for r in page["rolls"]] == ids[::-1][:3]
        nxt = client.get(page["next"]).json()
        assert [r["id"] for r in nxt["rolls"]] == ids[::-1][3:6]
        ann = client.get("/api/rolls", params={"roller": "Ann"}).json()["rolls"]
        assert {r["roller"] for r in ann} == {"Ann"} and len(ann) == 3
        assert client.get("/api/rolls", params={"limit": "x"}).json()["error"]["field"] == "limit"


@pytest.mark.parametrize(
    ("body", "status", "field", "words"),
    [
        ({"system": "chess", "check": "move"}, 422, "system", "unknown system 'chess'"),
        ({"system": "wcrpg", "check": "dance"}, 422, "check", "no check 'dance'"),
        ({"system": "wcrpg", "check": "check", "params": {"dc": "high"}}, 422, "params.dc", "must be int"),
        (
            {"system": "wcrpg", "check": "check", "params": {"luck": 3}},
            422,
            "params.luck",
            "unknown parameter",
        ),
        ({"notation": "4d6+"}, 422, "notation", "at column 5"),
        ({"notation": "1d6", "colour": "red"}, 422, "colour", "unknown field"),
        ({"notation": "1d6", "roller": "x" * 41}, 422, "roller", "at most 40"),
        ({"notation": "1d6", "system": "wcrpg"}, 422, "notation", "not both"),
        ([1, 2, 3], 422, "body", "JSON object"),
        ({}, 422, "notation", "give notation"),
    ],
)
def test_bad_roll_requests_name_the_field_and_write_nothing(
    config: ServerConfig, body: object, status: int, field: str, words: str
) -> None:
    with TestClient(create_app(config)) as client:
        r = client.post("/api/rolls", json=body)
    assert r.status_code == status
    error = r.json()["error"]
    assert error["field"] == field and words in error["message"], error
    assert _log_counts(config.data_dir) == (0, 0)


def test_notation_error_gives_the_position(config: ServerConfig) -> None:
    with TestClient(create_app(config)) as client:
        error = client.post("/api/rolls", json={"notation": "2d6 + * 3"}).json()["error"]
    assert error["field"] == "notation" and error["position"] == 6  # 0-based: "2d6 + * 3"[6] == "*"
    assert error["column"] == 7 and error["message"].endswith("at column 7")  # what the message counts


@pytest.mark.parametrize(
    ("content", "headers", "status", "field"),
    [
        (b"{not json", {"content-type": "application/json"}, 400, "body"),
        (b'{"notation": "1d6"}', {"content-type": "text/plain"}, 415, "content-type"),
        (b'{"notation": "' + b"1" * 40_000 + b'"}', {"content-type": "application/json"}, 413, "body"),
    ],
)
def test_malformed_bodies(
    config: ServerConfig, content: bytes, headers: dict, status: int, field: str
) -> None:
    with TestClient(create_app(config)) as client:
        r = client.post("/api/rolls", content=content, headers=headers)
    assert r.status_code == status and r.json()["error"]["field"] == field
    assert _log_counts(config.data_dir) == (0, 0)


def test_streamed_body_over_the_limit_is_refused(config: ServerConfig) -> None:
    def chunks():
        for _ in range(40):
            yield b"x" * 1024

    with TestClient(create_app(config)) as client:
        r = client.post("/api/rolls", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413 and "over 16384 bytes" in r.json()["error"]["message"]


def test_token_is_created_0600_and_required(config: ServerConfig) -> None:
    announced: list[str] = []
    config = replace(config, require_token=True, announce_token=lambda token, _: announced.append(token))
    with TestClient(create_app(config)) as client:
        no = client.post("/api/rolls", json={"notation": "1d6"})
        bad = client.post("/api/rolls", json={"notation": "1d6"}, headers={"Authorization": "Bearer nope"})
        reads = [client.get(p).status_code for p in ("/api/rolls", "/api/tower", "/api/fairness", "/overlay")]
        assert _log_counts(config.data_dir) == (0, 0)
        token = announced[0]
        ok = client.post("/api/rolls", json={"notation": "1d6"}, headers={"Authorization": f"Bearer {token}"})
    assert (no.status_code, no.json()["error"]["field"]) == (401, "authorization")
    assert bad.status_code == 401 and "not this server's token" in bad.json()["error"]["message"]
    assert reads == [200, 200, 200, 200]
    assert ok.status_code == 202
    path = config.data_dir / "api-token"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600 and path.read_text().strip() == token
    with TestClient(create_app(config)):  # a second start reuses the token and says nothing
        pass
    assert announced == [token]


def test_token_required_beyond_loopback_only(tmp_path: Path) -> None:
    assert ServerConfig(data_dir=tmp_path, host="0.0.0.0").token_required
    assert ServerConfig(data_dir=tmp_path, host="192.168.1.5").token_required
    assert not ServerConfig(data_dir=tmp_path, host="127.0.0.1").token_required
    assert not ServerConfig(data_dir=tmp_path, host="::1").token_required
    assert not ServerConfig(data_dir=tmp_path, host="localhost").token_required


def test_rolls_are_rate_limited_per_client(config: ServerConfig) -> None:
    config = replace(config, rate_per_second=0.01, rate_burst=3)
    with TestClient(create_app(config)) as client:
        codes = [client.post("/api/rolls", json={"notation": "1d6"}).status_code for _ in range(5)]
        r = client.post("/api/rolls", json={"notation": "1d6"})
    assert codes == [202, 202, 202, 429, 429]
    assert int(r.headers["retry-after"]) >= 1 and r.json()["error"]["status"] == 429
    assert _log_counts(config.data_dir)[0] + _log_counts(config.data_dir)[1] == 3


def test_queue_places_are_visible(config: ServerConfig) -> None:
    from dicetower.firmware.rolls.rolling import RandomSupply

    config = replace(config, rate_per_second=0, supply_factory=lambda: RandomSupply(1, throw_time=0.3))
    with TestClient(create_app(config)) as client:
        ids = [
            client.post("/api/rolls", json={"notation": "1d6", "roller": f"p{i}"}).json()["id"]
            for i in range(3)
        ]
        tower = wait_for(lambda: (t := client.get("/api/tower").json())["rolling"] == ids[0] and t)
        assert tower["queue_length"] == 2
        assert [(q["id"], q["place"]) for q in tower["queue"]] == [(ids[1], 1), (ids[2], 2)]
        assert client.get(f"/api/rolls/{ids[2]}").json()["place"] == 2
        assert (
            client.get(f"/api/rolls/{ids[0]}").json() | {"place": 0}
            == client.get(f"/api/rolls/{ids[0]}").json()
        )


def _with_photo(data_dir: Path) -> int:
    """A finished roll with one throw photo and one die crop, committed to the real log."""
    import cv2
    import numpy as np

    ok, jpg = cv2.imencode(".jpg", np.full((60, 80, 3), 200, np.uint8))
    assert ok
    with RollLog(data_dir) as log:
        rid = log.accept({"notation": "1d6"}, roller="Ann", client="t")
        log.commit(
            rid,
            status="done",
            source="test",
            total=3,
            dice=[{"slot": 0, "kind": "d6", "face": 3, "die": "red d6", "crop": "die-0.jpg", "throw": 0}],
            throws=[{"index": 0, "photo": "throw-0.jpg"}],
            photos=[PhotoFile("throw-0.jpg", jpg.tobytes()), PhotoFile("die-0.jpg", jpg.tobytes())],
        )
    (data_dir / "secret.txt").write_text("do not serve")
    return rid


@pytest.mark.parametrize(
    "path",
    [
        "/api/rolls/{id}/photos/../../rolls.sqlite3",
        "/api/rolls/{id}/photos/..%2F..%2Frolls.sqlite3",
        "/api/rolls/{id}/photos/%2e%2e%2f%2e%2e%2fsecret.txt",
        "/api/rolls/{id}/photos/1.jpg",
        "/api/rolls/{id}/photos/0.jpg%00.txt",
        "/api/rolls/{id}/photos/-1.jpg",
        "/api/rolls/{id}/dice/0.jpg/../../../secret.txt",
        "/api/rolls/999/photos/0.jpg",
        "/static/../rolls.sqlite3",
        "/static/%2e%2e/%2e%2e/%2e%2e/rolls.sqlite3",
        "/api/rolls/..%2f..%2fetc%2fpasswd",
    ],
)
def test_photo_urls_refuse_path_tricks(config: ServerConfig, path: str) -> None:
    config.data_dir.mkdir(parents=True)
    rid = _with_photo(config.data_dir)
    with TestClient(create_app(config)) as client:
        r = client.get(path.format(id=rid))
    assert r.status_code == 404, (path, r.status_code)
    assert b"do not serve" not in r.content and b"SQLite" not in r.content
    assert "message" in r.json()["error"]


def test_photos_and_crops_are_served_by_id(config: ServerConfig) -> None:
    config.data_dir.mkdir(parents=True)
    rid = _with_photo(config.data_dir)
    with TestClient(create_app(config)) as client:
        roll = client.get(f"/api/rolls/{rid}").json()
        photo = client.get(roll["throws"][0]["photo_url"])
        crop = client.get(roll["dice"][0]["crop_url"])
    assert roll["throws"][0]["photo_url"] == f"/api/rolls/{rid}/photos/0.jpg"
    assert photo.status_code == 200 and photo.headers["content-type"] == "image/jpeg"
    assert crop.status_code == 200 and crop.content[:2] == b"\xff\xd8"


def test_rows_whose_slots_name_the_kind_kind_stay_readable(config: ServerConfig) -> None:
    """Rows are never rewritten (the chain): slots stored as ``{"kind": ...}`` read and verify as stored."""
    old_slot = {"slot": 0, "kind": "d6", "role": "plain", "purpose": "base", "of_slot": None}
    config.data_dir.mkdir(parents=True)
    with RollLog(config.data_dir) as log:
        rid = log.accept({"notation": "1d6"}, roller="Ann", client="t")
        log.commit(
            rid,
            status="done",
            source="rng",
            total=4,
            dice=[{"slot": 0, "kind": "d6", "face": 4, "die": "rng d6", "throw": 0}],
            throws=[{"index": 0, "reason": "", "slots": [old_slot], "faces": [4]}],
        )
    with TestClient(create_app(config)) as client:
        roll = client.get(f"/api/rolls/{rid}").json()
        listed = client.get("/api/rolls").json()["rolls"]
        fairness = client.get("/api/fairness").json()["dice"]
    assert roll["status"] == "done" and roll["dice"][0]["face"] == 4 and listed[0]["id"] == rid
    assert [(d["die"], d["rolls"]) for d in fairness] == [("rng d6", 1)]
    with RollLog(config.data_dir) as log:
        row = log.get(rid)
        assert row is not None and row["throws"][0]["slots"] == [old_slot]
        assert log.verify().ok


def test_safe_headers_on_every_response(config: ServerConfig) -> None:
    with TestClient(create_app(config)) as client:
        for path in ("/overlay", "/api/rolls", "/fairness", "/api/rolls/5", "/nowhere"):
            h = client.get(path).headers
            assert (
                "script-src 'self'" in h["content-security-policy"]
                and "unsafe-inline" not in h["content-security-policy"]
            )
            assert h["x-content-type-options"] == "nosniff" and h["referrer-policy"] == "no-referrer"


def test_openapi_describes_every_route(config: ServerConfig) -> None:
    app = create_app(config)
    with TestClient(app) as client:
        doc = client.get("/openapi.json").json()
    described = {p.replace("{", "").replace("}", "") for p in doc["paths"]}
    routes = {
        r.path.replace("{", "").replace("}", "").replace(":int", "")
        for r in app.routes
        if not isinstance(r, Mount) and r.path not in ("/", "/openapi.json", "/favicon.ico")
    }
    assert routes == described
    assert doc["openapi"].startswith("3.1")


def test_openapi_lists_the_systems_of_the_systems_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    from dicetower.firmware.server.openapi import openapi_schema
    from dicetower.rules.systems import SYSTEM_MODULES

    def systems() -> list[str]:
        return openapi_schema()["components"]["schemas"]["RollRequest"]["properties"]["system"]["enum"]

    assert systems() == ["wizard-quest", "duelling", "wcrpg", "runic-flux"]
    monkeypatch.setitem(SYSTEM_MODULES, "gumshoe", "dicetower.rules.systems.wcrpg")
    assert systems()[-1] == "gumshoe"


def test_websocket_replays_after_since(config: ServerConfig) -> None:
    with TestClient(create_app(config)) as client:
        rid = client.post("/api/rolls", json={"notation": "2d6", "roller": "Ann"}).json()["id"]
        _finished(client, rid)
        with client.websocket_connect("/ws?last=10") as ws:
            snap = ws.receive_json()
            hello = ws.receive_json()
            replay = [ws.receive_json() for _ in range(4)]
        assert snap["type"] == "snapshot" and [r["id"] for r in snap["rolls"]] == [rid]
        assert hello["type"] == "hello" and hello["epoch"] == snap["epoch"]
        assert [e["type"] for e in replay] == ["queued", "rolling", "settled", "result"]
        assert [e["seq"] for e in replay] == [1, 2, 3, 4]
        assert replay[-1]["roll"]["total"] == sum(replay[2]["faces"])
        rid2 = client.post("/api/rolls", json={"notation": "1d6"}).json()["id"]
        _finished(client, rid2)
        with client.websocket_connect(f"/ws?since=4&epoch={hello['epoch']}") as ws:
            assert ws.receive_json()["type"] == "hello"
            missed = [ws.receive_json() for _ in range(4)]
        assert [e["seq"] for e in missed] == [5, 6, 7, 8] and missed[-1]["id"] == rid2
        with client.websocket_connect("/ws?since=4&epoch=stale") as ws:
            assert ws.receive_json()["type"] == "snapshot"  # another server run: rebuild from the log


def test_fairness_endpoint_and_page(config: ServerConfig) -> None:
    config = replace(config, rate_per_second=0)
    with TestClient(create_app(config)) as client:
        ids = [client.post("/api/rolls", json={"notation": "3d6"}).json()["id"] for _ in range(20)]
        _finished(client, ids[-1])
        dice = client.get("/api/fairness").json()["dice"]
        page = client.get("/fairness")
    assert [d["die"] for d in dice] == ["rng d6"] and dice[0]["rolls"] == 60
    assert page.status_code == 200 and page.text.count("<svg") == 1 and "rng d6" in page.text


def test_crash_leftovers_are_failed_at_start(config: ServerConfig) -> None:
    config.data_dir.mkdir(parents=True)
    with RollLog(config.data_dir) as log:
        rid = log.accept({"notation": "1d6"}, roller="Ann", client="t")
        log.mark_rolling(rid)
    with TestClient(create_app(config)) as client:
        roll = client.get(f"/api/rolls/{rid}").json()
    assert roll["status"] == "failed" and "server stopped" in roll["error"]
    assert json.loads(json.dumps(roll))["dice"] == []

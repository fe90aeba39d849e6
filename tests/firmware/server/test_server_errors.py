"""Input the API did not expect is a JSON refusal with the safe headers, never a plain-text 500."""

from __future__ import annotations

import logging
from dataclasses import replace

import pytest
from dicetower.firmware.rolllog import RollLog
from dicetower.firmware.rolls.rolling import RandomSupply
from dicetower.firmware.server.app import MAX_ROLL_ID, ServerConfig, create_app
from dicetower.firmware.web.guards import MAX_JSON_DEPTH, json_depth
from starlette.routing import Route
from starlette.testclient import TestClient

JSON = {"content-type": "application/json"}


def _assert_json_error(r, status: int, field: str | None = None) -> dict:
    assert r.status_code == status, r.text
    assert r.headers["content-type"] == "application/json"
    assert "default-src 'none'" in r.headers["content-security-policy"]
    assert r.headers["x-content-type-options"] == "nosniff"
    error = r.json()["error"]
    assert error["status"] == status
    if field is not None:
        assert error["field"] == field, error
    return error


def _nothing_logged(config: ServerConfig) -> None:
    with RollLog(config.data_dir) as log:
        assert (log.count(), len(log.pending())) == (0, 0)


@pytest.mark.parametrize("opener", [b"[", b'{"a":'])
def test_deeply_nested_bodies_are_400_json(
    config: ServerConfig, opener: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    body = opener * (8000 // len(opener))
    with caplog.at_level(logging.ERROR), TestClient(create_app(config)) as client:
        r = client.post("/api/rolls", content=body, headers=JSON)
        teach = client.post("/api/teach/white-d6", content=body, headers=JSON)
    error = _assert_json_error(r, 400, "body")
    assert f"deeper than {MAX_JSON_DEPTH}" in error["message"]
    assert teach.status_code in (400, 404) and teach.headers["content-type"] == "application/json"
    assert not [rec for rec in caplog.records if rec.levelno >= logging.ERROR]
    _nothing_logged(config)


def test_nesting_just_past_the_decoders_recursion_is_refused_too(config: ServerConfig) -> None:
    body = b'{"notation": "1d6", "roller": "a", "params": ' + b"[" * 40 + b"]" * 40 + b"}"
    with TestClient(create_app(config)) as client:
        r = client.post("/api/rolls", content=body, headers=JSON)
    _assert_json_error(r, 400, "body")


def test_json_depth_ignores_brackets_inside_strings() -> None:
    assert json_depth(b'{"notation": "[[[[{{{{", "x": "\\"[["}') == 1
    assert json_depth(b"[[1], [[2]]]") == 3
    assert json_depth(b"3") == 0


@pytest.mark.parametrize("constant", [b"NaN", b"Infinity", b"-Infinity"])
def test_nan_and_infinity_are_not_json(config: ServerConfig, constant: bytes) -> None:
    body = b'{"system": "runic-flux", "check": "skill", "params": {"level": ' + constant + b"}}"
    with TestClient(create_app(config)) as client:
        r = client.post("/api/rolls", content=body, headers=JSON)
    _assert_json_error(r, 400, "body")


@pytest.mark.parametrize(
    "path",
    [
        f"/api/rolls/{MAX_ROLL_ID + 1}",
        "/api/rolls/" + "9" * 40,
        "/api/rolls/" + "9" * 40 + "/photos/0.jpg",
        "/api/rolls/" + "9" * 40 + "/dice/0.jpg",
        "/api/rolls/1/photos/" + "9" * 40 + ".jpg",
        "/api/rolls/1/dice/" + "9" * 40 + ".jpg",
    ],
)
def test_ids_beyond_64_bits_are_404_json(config: ServerConfig, path: str, caplog) -> None:
    with caplog.at_level(logging.ERROR), TestClient(create_app(config)) as client:
        r = client.get(path)
    error = _assert_json_error(r, 404)
    assert len(error["message"]) < 200
    assert not [rec for rec in caplog.records if rec.levelno >= logging.ERROR]


def test_the_largest_64_bit_id_is_just_not_found(config: ServerConfig) -> None:
    with TestClient(create_app(config)) as client:
        r = client.get(f"/api/rolls/{MAX_ROLL_ID}")
    assert _assert_json_error(r, 404, "roll_id")["message"] == f"no roll {MAX_ROLL_ID}"


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"level": True, "stat": 4, "difficulty": 15}, "params.level"),
        ({"level": 3, "stat": False, "difficulty": 15}, "params.stat"),
        ({"level": 3, "stat": 4, "difficulty": True}, "params.difficulty"),
    ],
)
def test_booleans_are_not_numbers(config: ServerConfig, params: dict, field: str) -> None:
    body = {"system": "runic-flux", "check": "skill", "params": params}
    with TestClient(create_app(config)) as client:
        r = client.post("/api/rolls", json=body)
    error = _assert_json_error(r, 422, field)
    assert "must be int" in error["message"]
    _nothing_logged(config)


def test_numbers_are_not_booleans(config: ServerConfig) -> None:
    body = {"system": "duelling", "check": "spell", "params": {"level": 3, "ability": 4, "silent": 5}}
    with TestClient(create_app(config)) as client:
        r = client.post("/api/rolls", json=body)
    error = _assert_json_error(r, 422, "params.silent")
    assert "must be bool" in error["message"]


def test_an_unexpected_exception_is_a_json_500_with_the_headers(
    config: ServerConfig, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(request):
        raise KeyError("a bug")

    app = create_app(replace(config, supply_factory=lambda: RandomSupply(1)))
    app.router.routes.insert(0, Route("/broken", broken))
    with caplog.at_level(logging.ERROR), TestClient(app) as client:
        r = client.get("/broken")
    error = _assert_json_error(r, 500)
    assert "a bug" not in r.text and "Traceback" not in r.text
    assert error["message"].startswith("internal error")
    assert len([rec for rec in caplog.records if rec.levelno >= logging.ERROR]) == 1


def test_uvicorn_parses_with_h11_whatever_is_installed_and_bounds_connections(config: ServerConfig) -> None:
    from dicetower.firmware.server.listen import MAX_CONNECTIONS, MAX_HEADER_BYTES, uvicorn_config

    settings = uvicorn_config(create_app(config), "127.0.0.1", 0)
    assert settings.http == "h11" and settings.h11_max_incomplete_event_size == MAX_HEADER_BYTES
    assert settings.limit_concurrency == MAX_CONNECTIONS > config.max_ws_clients


@pytest.mark.slow
def test_headers_past_the_bound_are_refused_and_the_server_goes_on(config: ServerConfig) -> None:
    import socket

    import httpx
    from dicetower.firmware.server.listen import MAX_HEADER_BYTES
    from server_helpers import live_server

    with live_server(config) as base:
        port = int(base.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            pad = "a" * (MAX_HEADER_BYTES + 1024)
            # headers that never end: h11 holds them unfinished, past the bound (all of it is read, no reset)
            s.sendall(f"GET /api/tower HTTP/1.1\r\nHost: x\r\nX-Pad: {pad}".encode())
            answer = s.recv(4096)
        after = httpx.get(f"{base}/api/tower", timeout=10)
    assert answer.startswith(b"HTTP/1.1 400 "), answer
    assert after.status_code == 200

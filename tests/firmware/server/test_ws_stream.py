"""``/ws`` bounds what each connection may cost: a client that never reads is dropped, events and the
snapshot are bounded documents, and the stream asks for the token whenever rolling does."""

from __future__ import annotations

import base64
import json
import os
import socket
import time
from dataclasses import replace

import httpx
import pytest
from dicetower.firmware.rolls.rolling import RandomSupply
from dicetower.firmware.rolls.views import EVENT_DICE
from dicetower.firmware.server.app import ServerConfig, create_app
from server_helpers import live_server, wait_for
from starlette.testclient import TestClient, WebSocketDenialResponse

BIG = {"notation": "1000d1000", "roller": "Big"}


def _finished(client, rid: int) -> dict:
    return wait_for(
        lambda: (r := client.get(f"/api/rolls/{rid}").json())["status"] in ("done", "failed") and r
    )


def _until(ws, kind: str, limit: int = 50) -> tuple[dict, int]:
    """The next message of type ``kind`` (and its size in bytes of JSON)."""
    for _ in range(limit):
        text = ws.receive_text()
        msg = json.loads(text)
        if msg["type"] == kind:
            return msg, len(text.encode())
    raise AssertionError(f"no {kind} in {limit} messages")


def _never_reading_client(port: int, path: str = "/ws") -> socket.socket:
    """A WebSocket handshake, then nothing: the client never reads a byte."""
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall(
        f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
    )
    return s


def test_events_carry_a_bounded_roll_and_the_url_of_the_whole(config: ServerConfig) -> None:
    config = replace(config, supply_factory=lambda: RandomSupply(3))
    with TestClient(create_app(config)) as client:
        with client.websocket_connect("/ws?last=0") as ws:
            _until(ws, "hello")
            rid = client.post("/api/rolls", json=BIG).json()["id"]
            settled, settled_size = _until(ws, "settled")
            result, size = _until(ws, "result")
        whole = client.get(f"/api/rolls/{rid}")
    roll = result["roll"]
    assert len(whole.content) > 150_000  # the document itself stays whole
    assert size < 40_000 and settled_size < 2_000
    assert len(roll["dice"]) == EVENT_DICE and roll["dice_count"] == 1000 and roll["kinds"] == {"d1000": 1000}
    assert roll["truncated"] is True and roll["url"] == f"/api/rolls/{rid}"
    assert roll["dice"] == whole.json()["dice"][:EVENT_DICE] and roll["total"] == whole.json()["total"]
    assert len(settled["faces"]) == EVENT_DICE and settled["faces_count"] == 1000
    assert len(roll["throws"][0]["faces"]) == EVENT_DICE and roll["throws"][0]["faces_count"] == 1000
    assert len(roll["text"]) <= 400


def test_a_small_roll_is_sent_whole(config: ServerConfig) -> None:
    with TestClient(create_app(config)) as client:
        with client.websocket_connect("/ws?last=0") as ws:
            _until(ws, "hello")
            rid = client.post("/api/rolls", json={"notation": "4d6kh3"}).json()["id"]
            result, _ = _until(ws, "result")
        whole = client.get(f"/api/rolls/{rid}").json()
    assert result["roll"]["truncated"] is False
    assert {k: v for k, v in result["roll"].items() if k not in ("truncated", "url")} == whole


def test_the_snapshot_is_bounded_in_bytes_newest_rolls_first(config: ServerConfig) -> None:
    config = replace(config, rate_per_second=0, snapshot_bytes=60_000, supply_factory=lambda: RandomSupply(4))
    with TestClient(create_app(config)) as client:
        ids = [client.post("/api/rolls", json=BIG).json()["id"] for _ in range(8)]
        _finished(client, ids[-1])
        with client.websocket_connect("/ws?last=0") as ws:
            text = ws.receive_text()
        with client.websocket_connect("/ws?last=0") as ws:
            again = ws.receive_text()
    snap = json.loads(text)
    kept = [r["id"] for r in snap["rolls"]]
    assert len(text.encode()) <= 60_000
    assert 1 <= len(kept) < 8 and kept == ids[-len(kept) :]
    assert again == text  # no event in between: the same snapshot, built once


def test_a_reused_snapshot_is_followed_by_every_event_after_it(config: ServerConfig) -> None:
    config = replace(config, rate_per_second=0, snapshot_max_age_s=3600)
    with TestClient(create_app(config)) as client:
        first = client.post("/api/rolls", json={"notation": "2d6"}).json()["id"]
        _finished(client, first)
        with client.websocket_connect("/ws?last=0") as ws:
            old = json.loads(ws.receive_text())
        later = [client.post("/api/rolls", json={"notation": "1d6"}).json()["id"] for _ in range(3)]
        _finished(client, later[-1])
        with client.websocket_connect("/ws?last=0") as ws:
            snap = json.loads(ws.receive_text())
            assert ws.receive_json()["type"] == "hello"
            last = client.post("/api/rolls", json={"notation": "1d4"}).json()["id"]
            seqs: list[int] = []
            for _ in range(100):  # bounded: the events of five rolls
                msg = ws.receive_json()
                seqs.append(msg["seq"])
                if msg["type"] == "result" and msg["id"] == last:
                    break
    assert snap == old and [r["id"] for r in snap["rolls"]] == [first]  # the same snapshot, not read again
    assert seqs == list(range(old["seq"] + 1, seqs[-1] + 1))  # then every event after it, none missed


@pytest.mark.slow
def test_clients_that_never_read_are_dropped_and_the_server_answers(config: ServerConfig) -> None:
    config = replace(
        config,
        rate_per_second=0,
        send_timeout_s=0.5,
        supply_factory=lambda: RandomSupply(5),
        snapshot_rolls=5,
    )
    # small kernel buffers, so that what the server sends reaches its own queue soon
    with live_server(config, send_buffer_bytes=4096) as base, httpx.Client(base_url=base, timeout=10) as http:
        port = int(base.rsplit(":", 1)[1])
        for _ in range(5):  # snapshots of big rolls: more than a socket's buffers hold
            http.post("/api/rolls", json=BIG)
        wait_for(lambda: http.get("/api/tower").json()["rolled"] == 5, timeout=30)
        stalled = [_never_reading_client(port) for _ in range(5)]
        try:
            wait_for(lambda: http.get("/api/tower").json()["events"]["clients"] == 5, timeout=10)
            # each result event is about 10 KB: 15 of them are more than uvicorn's 64 KiB write buffer and
            # the kernel's buffers hold, so every client's sends stall
            for _ in range(15):
                http.post("/api/rolls", json=BIG)
            events = wait_for(
                lambda: (e := http.get("/api/tower").json()["events"])["clients"] == 0 and e, timeout=30
            )
            t0 = time.monotonic()
            assert http.get("/api/tower").status_code == 200 and time.monotonic() - t0 < 1.0
        finally:
            for s in stalled:
                s.close()
    assert events["dropped"] == 5


def test_the_stream_asks_for_the_token_whenever_rolling_does(config: ServerConfig) -> None:
    tokens: list[str] = []
    config = replace(config, require_token=True, announce_token=lambda token, _: tokens.append(token))
    with TestClient(create_app(config)) as client:
        refused = []
        for kw in (
            {},
            {"headers": {"Authorization": "Bearer nope"}},
            {"subprotocols": ["dicetower", "bearer.no"]},
        ):
            with pytest.raises(WebSocketDenialResponse) as denied, client.websocket_connect("/ws", **kw):
                pass
            refused.append(denied.value)
        (token,) = tokens
        with client.websocket_connect("/ws", headers={"Authorization": f"Bearer {token}"}) as ws:
            assert ws.receive_json()["type"] == "snapshot"
        with client.websocket_connect("/ws", subprotocols=["dicetower", f"bearer.{token}"]) as ws:
            assert ws.accepted_subprotocol == "dicetower"
            assert ws.receive_json()["type"] == "snapshot"
    for r in refused:
        assert r.status_code == 401 and r.json()["error"]["field"] == "authorization"
    assert token not in json.dumps([dict(r.headers) for r in refused])


def test_the_stream_is_open_when_rolling_is(config: ServerConfig) -> None:
    with TestClient(create_app(config)) as client, client.websocket_connect("/ws") as ws:
        assert ws.receive_json()["type"] == "snapshot"
        assert ws.accepted_subprotocol is None


def test_clients_past_the_bound_are_refused(config: ServerConfig) -> None:
    config = replace(config, max_ws_clients=1)
    with TestClient(create_app(config)) as client, client.websocket_connect("/ws") as first:
        assert first.receive_json()["type"] == "snapshot"
        with pytest.raises(WebSocketDenialResponse) as denied, client.websocket_connect("/ws"):
            pass
    assert denied.value.status_code == 503


def test_bad_since_is_refused_with_json(config: ServerConfig) -> None:
    with (
        TestClient(create_app(config)) as client,
        pytest.raises(WebSocketDenialResponse) as denied,
        client.websocket_connect("/ws?since=x"),
    ):
        pass
    assert denied.value.status_code == 400 and "whole numbers" in denied.value.json()["error"]["message"]


def test_the_listening_socket_hands_its_stall_timeout_to_every_connection() -> None:
    from dicetower.firmware.server.listen import listening_socket

    user_timeout = getattr(socket, "TCP_USER_TIMEOUT", None)
    if user_timeout is None:
        pytest.skip("no TCP_USER_TIMEOUT on this system")
    with listening_socket("127.0.0.1", 0, stalled_peer_s=1.5) as server:
        server.listen()
        with socket.create_connection(server.getsockname()) as client:
            client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            accepted, _ = server.accept()
            with accepted:
                assert accepted.getsockopt(socket.IPPROTO_TCP, user_timeout) == 1500
                accepted.setblocking(False)
                t0 = time.monotonic()
                error = None
                while time.monotonic() - t0 < 20 and error is None:
                    try:
                        accepted.send(b"x" * 65536)
                    except BlockingIOError:
                        time.sleep(0.1)
                    except OSError as exc:
                        error = exc
    assert error is not None and time.monotonic() - t0 < 10  # the kernel dropped the peer that never read


def test_malloc_arenas_are_limited_unless_the_environment_says(monkeypatch: pytest.MonkeyPatch) -> None:
    import platform

    from dicetower.firmware.server.listen import limit_malloc_arenas

    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    assert limit_malloc_arenas() is False  # the owner's setting stands
    monkeypatch.delenv("MALLOC_ARENA_MAX")
    assert limit_malloc_arenas() is (platform.libc_ver()[0] == "glibc")

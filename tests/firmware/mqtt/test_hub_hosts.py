"""The hub's Host check, against its real uvicorn on loopback: a page on another name (DNS rebinding)
can neither ask a tower for a roll, read the towers, nor open the event stream."""

from __future__ import annotations

import socket
from pathlib import Path

import httpx
from dicetower.firmware.hub.app import HubConfig
from dicetower.firmware.mqtt.client import Connection
from mqtt_broker import Mosquitto
from mqtt_configs import live_hub

EVIL = {"Host": "attacker.example"}


def _handshake(base: str, host: str) -> bytes:
    port = int(base.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(
            (
                f"GET /ws HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        return s.recv(4096).split(b"\r\n", 1)[0]


def test_the_hub_answers_only_to_its_own_names(broker: Mosquitto, tmp_path: Path) -> None:
    config = HubConfig(data_dir=tmp_path / "hub", connection=Connection(broker.url), hub_id="h1")
    assert not config.token_required
    with live_hub(config) as hub:
        for r in (
            httpx.post(hub + "/api/towers/t1/rolls", json={"roll": {"notation": "1d6"}}, headers=EVIL),
            httpx.get(hub + "/api/towers", headers=EVIL),
        ):
            assert r.status_code == 421, r.text
            assert r.json()["error"]["field"] == "host"
            assert "default-src 'none'" in r.headers["content-security-policy"]
            assert "access-control-allow-origin" not in r.headers
        assert _handshake(hub, "attacker.example").startswith(b"HTTP/1.1 421 ")
        port = hub.rsplit(":", 1)[1]
        assert httpx.get(hub + "/api/towers", headers={"Host": f"localhost:{port}"}).status_code == 200
        assert _handshake(hub, f"127.0.0.1:{port}").startswith(b"HTTP/1.1 101 ")

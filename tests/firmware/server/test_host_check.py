"""The Host check: a loopback server without a token answers only to its own names (DNS rebinding).

Against the real uvicorn on loopback (``server_helpers.live_server``), as a rebinding page's
browser would send: a roll, a teach step and the ``/ws`` handshake with ``Host: attacker.example``.
"""

from __future__ import annotations

import json
import socket
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from dicetower.firmware.rolllog import RollLog
from dicetower.firmware.server.app import ServerConfig, create_app
from dicetower.firmware.web.host_names import (
    REFRESH_S,
    AllowedHosts,
    check_allowed_host,
    check_allowed_hosts,
    host_name,
)
from server_helpers import live_server
from teach_folders import TeachFolder

EVIL = {"Host": "attacker.example"}
ROLL = {"notation": "1d6", "roller": "page"}


def _assert_misdirected(r: httpx.Response) -> None:
    assert r.status_code == 421, r.text
    assert r.headers["content-type"] == "application/json"
    assert "default-src 'none'" in r.headers["content-security-policy"]
    assert r.headers["x-content-type-options"] == "nosniff"
    assert "access-control-allow-origin" not in r.headers
    error = r.json()["error"]
    assert error["status"] == 421 and error["field"] == "host"
    assert "'attacker.example' is not a name of this server" in error["message"]
    assert "--allowed-host" in error["message"]


def _handshake(base: str, host: str) -> bytes:
    """The first line of the answer to a browser's WebSocket handshake on /ws naming ``host``."""
    port = int(base.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(
            (
                f"GET /ws HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                "Origin: http://attacker.example\r\n\r\n"
            ).encode()
        )
        return s.recv(4096).split(b"\r\n", 1)[0]


@pytest.mark.slow
def test_a_page_on_another_name_cannot_roll_teach_or_stream(
    config: ServerConfig, teach_folder: TeachFolder
) -> None:
    config = replace(config, allowed_hosts=(), teach_dir=teach_folder.path)
    assert not config.token_required  # loopback, no token: only the Host check stands in the way
    before = (teach_folder.path / "teach.json").read_bytes()
    with live_server(config) as base, httpx.Client(base_url=base, timeout=10) as client:
        _assert_misdirected(client.post("/api/rolls", json=ROLL, headers=EVIL))
        _assert_misdirected(
            client.post("/api/teach/white-d6", json={"op": "name", "group": 0, "face": 3}, headers=EVIL)
        )
        _assert_misdirected(client.get("/api/rolls", headers=EVIL))
        assert _handshake(base, "attacker.example").startswith(b"HTTP/1.1 421 ")
        # the same requests under the server's own names go through
        port = base.rsplit(":", 1)[1]
        assert client.post("/api/rolls", json=ROLL, headers={"Host": f"localhost:{port}"}).status_code == 202
        assert client.post("/api/rolls", json=ROLL).status_code == 202  # Host: 127.0.0.1:PORT
        assert _handshake(base, f"127.0.0.1:{port}").startswith(b"HTTP/1.1 101 ")
    assert (teach_folder.path / "teach.json").read_bytes() == before
    with RollLog(config.data_dir) as log:
        assert [r["roller"] for r in log.list(limit=10)] == ["page", "page"]  # the two allowed, not the third


@pytest.mark.slow
def test_a_configured_name_is_allowed(config: ServerConfig) -> None:
    with (
        live_server(replace(config, allowed_hosts=("tower.lan",))) as base,
        httpx.Client(base_url=base, timeout=10) as client,
    ):
        assert client.post("/api/rolls", json=ROLL, headers={"Host": "tower.lan:8080"}).status_code == 202
        _assert_misdirected(client.post("/api/rolls", json=ROLL, headers=EVIL))


def test_a_bad_configured_name_fails_before_the_server_starts(config: ServerConfig) -> None:
    with pytest.raises(ValueError, match=r"without a port.*'tower.lan:80'"):
        create_app(replace(config, allowed_hosts=("tower.lan:80",)))


@pytest.mark.parametrize(
    ("header", "name"),
    [
        ("localhost:8080", "localhost"),
        ("Tower.LAN.", "tower.lan"),
        ("[::1]:8080", "::1"),
        ("[0:0::1]", "::1"),
        ("127.0.0.1", "127.0.0.1"),
        ("a:b:c", None),
        ("[::1", None),
        ("tower.lan:80x", None),
        ("evil.example/x", None),
        ("", None),
        (None, None),
    ],
)
def test_host_headers_are_parsed_to_a_name_or_refused(header: str | None, name: str | None) -> None:
    assert host_name(header) == name


def test_loopback_the_machine_and_configured_names_are_allowed() -> None:
    allowed = AllowedHosts("127.0.0.1", ["tower.lan"], machine=lambda: {"pi", "pi.local", "192.168.1.20"})
    for ok in ("localhost", "a.localhost:80", "127.0.0.9", "[::1]", "pi", "PI.local", "192.168.1.20:8080"):
        assert allowed.allows(ok), ok
    for bad in ("attacker.example", "localhost.attacker.example", "192.168.1.21", "10.0.0.1", None, "a b"):
        assert not allowed.allows(bad), bad
    assert AllowedHosts("0.0.0.0", ["*"], machine=set).allows("anything.example")
    assert AllowedHosts("192.168.1.7", machine=set).allows("192.168.1.7:8080")  # the bound address


def test_an_address_the_machine_gains_later_is_allowed_after_a_bounded_refresh() -> None:
    now, looks, addresses = [0.0], [0], {"192.168.1.20"}

    def machine() -> set[str]:
        looks[0] += 1
        return set(addresses)

    allowed = AllowedHosts("0.0.0.0", machine=machine, clock=lambda: now[0])
    addresses.add("10.0.0.5")  # DHCP gave the Pi another address after the start
    assert not allowed.allows("10.0.0.5") and looks == [1]  # not looked again yet
    now[0] = REFRESH_S
    assert allowed.allows("10.0.0.5") and looks == [2]
    for _ in range(100):  # a flood of unknown names looks once per REFRESH_S at most
        assert not allowed.allows("attacker.example")
    assert looks == [2]


def test_configured_names_are_checked_like_the_other_keys(tmp_path: Path) -> None:
    from dicetower.firmware.config import ConfigError, load_config

    assert check_allowed_hosts(["Tower.LAN", "[fd00::2]", "*"]) == ("tower.lan", "fd00::2", "*")
    for bad in ("tower.lan", ["tower.lan:8080"], ["http://tower.lan"], [3]):
        with pytest.raises(ValueError):
            check_allowed_hosts(bad)
    with pytest.raises(ValueError, match="host name"):
        check_allowed_host("two words")
    path = tmp_path / "config.toml"
    path.write_text('[server]\nallowed_hosts = ["tower.lan", "http://x"]\n')
    with pytest.raises(ConfigError, match=r"\[server\] allowed_hosts = .*host name"):
        load_config(path)
    path.write_text('[server]\nallowed_hosts = ["tower.lan"]\n')
    assert load_config(path).server.allowed_hosts == ("tower.lan",)
    assert json.dumps(list(load_config(None).server.allowed_hosts)) == "[]"


def test_serve_takes_names_from_the_flag_the_environment_or_the_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from dicetower.firmware.cli import main
    from dicetower.firmware.server import listen
    from starlette.testclient import TestClient

    apps: list = []
    monkeypatch.setattr(listen, "serve", lambda app, host, port, announce, **_: apps.append(app))
    data = str(tmp_path / "data")
    config = tmp_path / "config.toml"
    config.write_text('[server]\nallowed_hosts = ["from-file.lan"]\n')
    assert main(["serve", "--rng", "--data", data, "--allowed-host", "flag.lan"]) == 0
    monkeypatch.setenv("DICETOWER_ALLOWED_HOSTS", "env.lan, other.lan")
    assert main(["serve", "--rng", "--data", data]) == 0
    monkeypatch.delenv("DICETOWER_ALLOWED_HOSTS")
    assert main(["serve", "--rng", "--data", data, "--config", str(config)]) == 0
    assert main(["serve", "--rng", "--data", data, "--allowed-host", "flag.lan:8080"]) == 1
    assert (
        capsys.readouterr()
        .err.splitlines()[-1]
        .startswith(
            "dicetower: error: --allowed-host: must be a host name (tower.lan) or IP address without a port"
        )
    )
    for app, good in zip(apps, ("flag.lan", "env.lan", "from-file.lan"), strict=True):
        with TestClient(app, base_url=f"http://{good}") as client:
            assert client.post("/api/rolls", json=ROLL).status_code == 202
        with TestClient(app, base_url="http://attacker.example") as client:
            assert client.post("/api/rolls", json=ROLL).status_code == 421

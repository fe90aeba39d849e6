"""X-Forwarded-For counts only from a proxy the owner named; the log keeps an address, never header text."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from dicetower.firmware.rolllog import RollLog
from dicetower.firmware.server.app import ServerConfig, create_app
from dicetower.firmware.server.clients import (
    MAX_FORWARDED_CHARS,
    TrustedProxies,
    clean_peer,
    client_address,
)
from server_helpers import live_server
from starlette.testclient import TestClient

HOSTILE = [
    "<script>alert(1)</script>",
    "\x1b[31mred\x1b[0m",
    "\x9b31m",
    "1.2.3.4" * 600,
    "1.2.3.4\r\nX-Evil: 1",
    "",
]


def _clients(data_dir: Path) -> list[str]:
    with RollLog(data_dir) as log:
        rows = [log.get(i) for i in range(1, log.count() + len(log.pending()) + 1)]
    return [r["client"] for r in rows if r is not None]


def test_without_trusted_proxies_the_header_is_ignored() -> None:
    none = TrustedProxies()
    assert client_address("127.0.0.1", ["9.9.9.9"], none) == "127.0.0.1"
    assert client_address("10.0.0.2", ["9.9.9.9"], none) == "10.0.0.2"


def test_a_trusted_proxy_names_the_first_untrusted_hop_from_the_right() -> None:
    trusted = TrustedProxies(["10.0.0.0/8", "192.168.1.1"])
    assert client_address("10.0.0.2", ["9.9.9.9"], trusted) == "9.9.9.9"
    # the client wrote "1.1.1.1" itself; the proxy appended what it saw (8.8.8.8)
    assert client_address("10.0.0.2", ["1.1.1.1, 8.8.8.8"], trusted) == "8.8.8.8"
    # a chain of trusted proxies is walked through
    assert client_address("10.0.0.2", ["7.7.7.7, 192.168.1.1", "10.1.1.1"], trusted) == "7.7.7.7"
    # an untrusted peer's header counts for nothing
    assert client_address("172.16.0.1", ["9.9.9.9"], trusted) == "172.16.0.1"
    assert client_address("::ffff:10.0.0.2", [" 2001:DB8::1 "], trusted) == "2001:db8::1"


@pytest.mark.parametrize("junk", HOSTILE)
def test_junk_in_the_header_is_never_the_client(junk: str) -> None:
    trusted = TrustedProxies(["10.0.0.0/8"])
    got = client_address("10.0.0.2", [junk], trusted)
    assert got == "10.0.0.2"
    assert client_address("10.0.0.2", [f"{junk}, 10.0.0.9"], trusted) == "10.0.0.9"


def test_a_header_longer_than_read_never_yields_a_cut_address() -> None:
    trusted = TrustedProxies(["10.0.0.0/8"])
    pad = "10.0.0.1, " * (MAX_FORWARDED_CHARS // 10 + 5)
    got = client_address("10.0.0.2", ["110.1.2.3, " + pad.rstrip(", ")], trusted)
    assert got.startswith("10.") and got != "0.1.2.3"


def test_peers_are_kept_as_addresses_or_short_names() -> None:
    assert clean_peer("::ffff:127.0.0.1") == "127.0.0.1"
    assert clean_peer("testclient") == "testclient"
    assert clean_peer("<b>" * 10) == "unknown"
    assert clean_peer(None) == "unknown"


def test_a_trusted_proxy_entry_must_be_an_address() -> None:
    with pytest.raises(ValueError, match="not an IP address or network"):
        TrustedProxies(["proxy.lan"])
    assert TrustedProxies.parse("10.0.0.1, ,fd00::/8").networks[1].version == 6


def test_the_app_trusts_the_configured_proxy_only(config: ServerConfig) -> None:
    config = replace(config, rate_per_second=0.01, rate_burst=2, trusted_proxies=("10.0.0.0/8",))
    app = create_app(config)
    with TestClient(app, client=("10.0.0.5", 4000)) as proxy:
        codes = [
            proxy.post("/api/rolls", json={"notation": "1d6"}, headers={"X-Forwarded-For": f"9.9.9.{i}"})
            for i in range(3)
        ]
        same = proxy.post("/api/rolls", json={"notation": "1d6"}, headers={"X-Forwarded-For": "9.9.9.0"})
    with TestClient(app, client=("172.16.0.7", 4000)) as direct:
        spoofed = [
            direct.post("/api/rolls", json={"notation": "1d6"}, headers={"X-Forwarded-For": f"8.8.8.{i}"})
            for i in range(3)
        ]
    assert [r.status_code for r in codes] == [202, 202, 202]
    assert same.status_code == 202  # 9.9.9.0 still has its burst
    assert [r.status_code for r in spoofed] == [202, 202, 429]  # a new address each time changes nothing
    assert "172.16.0.7" in spoofed[-1].json()["error"]["message"]
    assert sorted(set(_clients(config.data_dir))) == ["172.16.0.7", "9.9.9.0", "9.9.9.1", "9.9.9.2"]


def test_a_bad_trusted_proxy_fails_when_the_app_is_built(config: ServerConfig) -> None:
    with pytest.raises(ValueError, match="trusted proxy"):
        create_app(replace(config, trusted_proxies=("not-an-ip",)))


@pytest.mark.slow
def test_under_uvicorn_loopback_headers_are_not_believed(config: ServerConfig) -> None:
    config = replace(config, rate_per_second=0.01, rate_burst=3)
    sent = [junk.encode("latin-1") for junk in HOSTILE if "\r" not in junk and junk]
    sent += [f"6.6.6.{i}".encode() for i in range(6 - len(sent))]
    with live_server(config) as base, httpx.Client(base_url=base, timeout=10) as http:
        codes = [
            http.post("/api/rolls", json={"notation": "1d6"}, headers={"X-Forwarded-For": value}).status_code
            for value in sent
        ]
    assert codes == [202, 202, 202, 429, 429, 429]
    assert _clients(config.data_dir) == ["127.0.0.1"] * 3


def test_serve_takes_trusted_proxies_from_the_flag_or_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from dicetower.firmware.cli import main
    from dicetower.firmware.server import listen

    apps = []
    monkeypatch.setattr(
        listen, "serve", lambda app, host, port, announce, **_: (announce(port), apps.append(app))
    )
    data = str(tmp_path / "data")
    assert main(["serve", "--rng", "--data", data, "--trusted-proxy", "10.0.0.1"]) == 0
    monkeypatch.setenv("DICETOWER_TRUSTED_PROXIES", "10.0.0.0/8,fd00::/8")
    assert main(["serve", "--rng", "--data", data]) == 0
    assert main(["serve", "--rng", "--data", data, "--trusted-proxy", "proxy.lan"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[-1].startswith("dicetower: error: ") and "proxy.lan" in err[-1]
    assert len(apps) == 2
    for app, peer in zip(apps, ("10.0.0.1", "10.200.0.1"), strict=True):
        with TestClient(app, client=(peer, 1), base_url="http://localhost") as client:
            r = client.post("/api/rolls", json={"notation": "1d6"}, headers={"X-Forwarded-For": "5.5.5.5"})
            assert r.status_code == 202
    assert set(_clients(tmp_path / "data")) == {"5.5.5.5"}

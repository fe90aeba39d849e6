"""A tower and a hub on a Mosquitto that requires TLS and passwords, configured as docs/towers.md's
public host (its config lines and its ACL are read from the docs): rolls arrive; a wrong password
and a CA that did not sign the broker's certificate are each refused, said in the tower's status,
and cost no roll; the password is never shown or logged. The ACL holds each user to its own name:
a request under another user's name, or a roll under another tower's prefix, never arrives, and
a tower's rate limit counts a requester's rolls whatever its messages say."""

from __future__ import annotations

import json
import logging
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from dicetower.firmware.hub.app import HubConfig
from dicetower.firmware.mqtt.client import Connection
from dicetower.firmware.server.app import ServerConfig, create_app
from mqtt_broker import Certificates, Mosquitto, Probe, make_certificates, mosquitto_path
from mqtt_configs import live_hub, tower_config
from starlette.testclient import TestClient

DOCS = Path(__file__).resolve().parents[3] / "docs" / "towers.md"
USERS = {"table-1": "t1-Secret-91", "hub": "hub-Secret-37", "table-2": "t2-Secret-48", "gm": "gm-Secret-62"}


def _conf_blocks(heading: str) -> list[list[str]]:
    """The ```conf blocks under ``heading`` in docs/towers.md, as their non-comment lines."""
    text = DOCS.read_text(encoding="utf-8")
    section = text.split(heading, 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]
    blocks = re.findall(r"```conf\n(.*?)```", section, re.S)
    return [[ln.strip() for ln in b.splitlines() if ln.strip() and not ln.startswith("#")] for b in blocks]


def _docs_acl() -> str:
    return "\n".join(_conf_blocks("### A public host")[1]) + "\n"


def _as_tested(line: str, broker: Mosquitto, certs: Certificates | None) -> str:
    """A docs config line with the docs' host paths and port replaced by the test broker's."""
    if line.startswith("listener "):
        return f"listener {broker.port} 127.0.0.1"
    paths = {
        "/etc/mosquitto/passwd": broker.folder / "passwd",
        "/etc/mosquitto/acl": broker.folder / "acl",
    }
    if certs is not None:
        paths["/etc/mosquitto/certs/fullchain.pem"] = certs.fullchain
        paths["/etc/mosquitto/certs/privkey.pem"] = certs.key
    for docs_path, tested in paths.items():
        line = line.replace(docs_path, str(tested))
    return line


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    if mosquitto_path() is None or shutil.which("mosquitto_passwd") is None:
        pytest.skip("mosquitto is not installed (apt-get install mosquitto)")
    if shutil.which("openssl") is None:
        pytest.skip("the openssl CLI is not installed")
    return make_certificates(tmp_path_factory.mktemp("certs"))


@pytest.fixture
def secure(tmp_path: Path, certs: Certificates) -> Iterator[Mosquitto]:
    """The docs' public host on loopback: TLS only, passwords, the docs' ACL."""
    with Mosquitto(tmp_path / "broker", persistence=True, users=USERS, tls=certs, acl=_docs_acl()) as m:
        yield m


def _tower(tmp_path: Path, broker: Mosquitto, password: str, ca: Path) -> ServerConfig:
    """A tower as the docs connect one: the user in the URL, the password in a 0600 file, the CA."""
    secret = tmp_path / "mqtt-password"
    secret.write_text(password + "\n")
    secret.chmod(0o600)
    return tower_config(
        tmp_path / "tower",
        f"mqtts://table-1@127.0.0.1:{broker.port}",
        name="table-1",
        password_file=str(secret),
        ca_file=str(ca),
    )


def _hub_probe(broker: Mosquitto, certs: Certificates) -> Probe:
    return Probe(broker.port, ["dicetower/#"], login=("hub", USERS["hub"]), ca=certs.ca)


def _roll(client: TestClient, n: int) -> list[int]:
    roll = {"notation": "2d6", "roller": "Ann"}
    ids = [client.post("/api/rolls", json=roll).json()["id"] for _ in range(n)]
    deadline = time.monotonic() + 30
    for rid in ids:
        while client.get(f"/api/rolls/{rid}").json()["status"] != "done":
            assert time.monotonic() < deadline, "the tower did not finish its rolls"
            time.sleep(0.05)
    return ids


def _mqtt_until(client: TestClient, check, timeout_s: float = 20.0) -> dict:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while True:
        status = client.get("/api/tower").json()["mqtt"]
        if check(status):
            return status
        assert time.monotonic() < deadline, f"the tower's MQTT status stayed {status}"
        time.sleep(0.1)


def test_the_docs_mosquitto_configs_are_the_ones_the_tests_run(tmp_path: Path, certs: Certificates) -> None:
    public, acl = _conf_blocks("### A public host")
    assert acl[0].startswith("pattern write dicetower/%u/")
    broker = Mosquitto(tmp_path / "public", persistence=True, users=USERS, tls=certs, acl=_docs_acl())
    lines = broker.config_lines()
    assert [ln for ln in (_as_tested(d, broker, certs) for d in public) if ln not in lines] == []
    (home,) = _conf_blocks("### A home network")
    broker = Mosquitto(tmp_path / "home", persistence=True, users=USERS, acl=_docs_acl())
    lines = broker.config_lines()
    assert [ln for ln in (_as_tested(d, broker, None) for d in home) if ln not in lines] == []
    text = DOCS.read_text(encoding="utf-8")  # and the towers connect as these tests connect them
    assert "--mqtt mqtts://table-1@broker.example --mqtt-password-file" in text
    assert 'password_file = "/etc/dicetower/mqtt-password"' in text


def test_a_tower_publishes_over_tls_with_its_password_under_the_docs_acl(
    secure: Mosquitto, certs: Certificates, tmp_path: Path
) -> None:
    probe = _hub_probe(secure, certs)
    try:
        with TestClient(create_app(_tower(tmp_path, secure, USERS["table-1"], certs.ca))) as client:
            status = _mqtt_until(client, lambda s: s["connected"])
            assert status["error"] == "" and status["broker"] == f"mqtts://table-1@127.0.0.1:{secure.port}"
            described = client.get("/openapi.json").json()["paths"]["/api/tower"]["get"]["responses"]["200"]
            mqtt_schema = described["content"]["application/json"]["schema"]["properties"]["mqtt"]
            assert set(mqtt_schema["properties"]) == set(status)
            ids = _roll(client, 2)
            events = probe.wait("rolls", 2)
            assert [e["seq"] for e in events] == ids and events[0]["tower"] == "table-1"
            assert events[-1]["hash"] == client.get(f"/api/rolls/{ids[-1]}").json()["hash"]
        assert probe.json("status")[-1]["state"] == "offline"
    finally:
        probe.close()


def test_a_wrong_password_is_refused_said_and_never_shown_and_loses_no_roll(
    secure: Mosquitto, certs: Certificates, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    wrong = "Wrong-pw-5521"
    with TestClient(create_app(_tower(tmp_path, secure, wrong, certs.ca))) as client:
        status = _mqtt_until(client, lambda s: s["error"])
        ids = _roll(client, 3)  # the tower keeps rolling into its own log
        status = client.get("/api/tower").json()["mqtt"]
        assert status["error"] == "the broker refused the connection: Not authorized"
        assert not status["connected"] and status["published"] == 0
        assert wrong not in client.get("/api/tower").text
    assert wrong not in caplog.text and "Not authorized" in caplog.text
    assert caplog.text.count("refused the connection") == 1  # said once, not on every retry
    probe = _hub_probe(secure, certs)
    try:  # the password fixed, the tower publishes what it rolled while refused, in order
        with TestClient(create_app(_tower(tmp_path, secure, USERS["table-1"], certs.ca))) as client:
            assert [e["seq"] for e in probe.wait("rolls", 3)] == ids
            assert _mqtt_until(client, lambda s: s["acknowledged"] == ids[-1])["error"] == ""
    finally:
        probe.close()


def test_a_ca_that_did_not_sign_the_broker_is_refused_and_said(
    secure: Mosquitto, certs: Certificates, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with TestClient(create_app(_tower(tmp_path, secure, USERS["table-1"], certs.other_ca))) as client:
        status = _mqtt_until(client, lambda s: s["error"])
        assert status["error"].startswith(f"cannot connect to mqtts://table-1@127.0.0.1:{secure.port}: ")
        assert "certificate verify failed" in status["error"] and not status["connected"]
        assert len(_roll(client, 2)) == 2
        assert client.get("/api/tower").json()["mqtt"]["published"] == 0
    assert USERS["table-1"] not in caplog.text and "certificate verify failed" in caplog.text


def test_the_hub_connects_with_tls_and_a_password_and_says_why_it_cannot(
    secure: Mosquitto, certs: Certificates, tmp_path: Path
) -> None:
    url = f"mqtts://hub@127.0.0.1:{secure.port}"
    refused = HubConfig(
        data_dir=tmp_path / "refused", connection=Connection(url, None, "not-it", str(certs.ca)), hub_id="h0"
    )
    with live_hub(refused) as hub:
        deadline = time.monotonic() + 20
        while not (broker := httpx.get(hub + "/api/towers").json()["broker"])["error"]:
            assert time.monotonic() < deadline, "the hub did not say why it is not connected"
            time.sleep(0.1)
        assert broker == {
            "url": url,
            "connected": False,
            "error": "the broker refused the connection: Not authorized",
        }
    config = HubConfig(  # the ACL holds each tower to its own name: its first key may be trusted
        data_dir=tmp_path / "hub",
        connection=Connection(url, None, USERS["hub"], str(certs.ca)),
        hub_id="h1",
        trust_first_use=True,
    )
    with (
        live_hub(config) as hub,
        TestClient(create_app(_tower(tmp_path, secure, USERS["table-1"], certs.ca))) as tower,
    ):
        _mqtt_until(tower, lambda s: s["connected"])
        ids = _roll(tower, 2)
        deadline = time.monotonic() + 30
        while len(log := httpx.get(hub + "/api/log").json()["log"]) < 2:
            assert time.monotonic() < deadline, "the hub did not receive the tower's rolls"
            time.sleep(0.1)
        assert [e["seq"] for e in log] == ids[::-1] and {e["roll"]["tower"] for e in log} == {"table-1"}
        assert httpx.get(hub + "/api/towers").json()["broker"]["error"] == ""


def _publish_as(broker: Mosquitto, certs: Certificates, user: str, topic: str, message: dict) -> None:
    """Publish as broker user ``user`` (QoS 1; the broker acknowledges what its ACL drops too)."""
    probe = Probe(broker.port, [], login=(user, USERS[user]), ca=certs.ca)
    try:
        probe.publish(topic, message)
    finally:
        probe.close()


def test_the_docs_acl_refuses_a_spoofed_requester_and_rate_limits_by_the_broker_user(
    secure: Mosquitto, certs: Certificates, tmp_path: Path
) -> None:
    hub = _hub_probe(secure, certs)
    config = _tower(tmp_path, secure, USERS["table-1"], certs.ca)
    config.rate_per_second, config.rate_burst = 0.01, 3
    try:
        with TestClient(create_app(config)) as client:
            _mqtt_until(client, lambda s: s["connected"])
            time.sleep(0.3)  # the tower's subscriptions reach the broker
            ask = {"reply_to": "dicetower/_hub/gm/replies", "roll": {"notation": "1d6", "roller": "Ann"}}
            # gm asks under the hub's name: the broker's ACL drops it
            _publish_as(secure, certs, "gm", "dicetower/table-1/requests/hub", {**ask, "request_id": "spoof"})
            probe = Probe(secure.port, [], login=("gm", USERS["gm"]), ca=certs.ca)
            try:  # then 8 requests under its own name, each claiming to be someone else
                for i in range(8):
                    probe.publish(
                        "dicetower/table-1/requests/gm", {**ask, "request_id": f"r{i}", "from": f"p{i}"}
                    )
            finally:
                probe.close()
            replies = hub.wait("replies", 8)
            time.sleep(0.5)
            replies = {
                r["request_id"]: r for r in hub.json("replies") if r["status"] in ("queued", "refused")
            }
        assert "spoof" not in replies and len(replies) == 8
        refused = [r for r in replies.values() if r["status"] == "refused"]
        assert len(refused) == 5 and {r["error"]["status"] for r in refused} == {429}
        assert "mqtt:gm" in refused[0]["error"]["message"]
    finally:
        hub.close()


def test_the_docs_acl_refuses_a_tower_publishing_under_another_towers_prefix(
    secure: Mosquitto, certs: Certificates
) -> None:
    hub = _hub_probe(secure, certs)
    try:
        forged = {"v": 1, "tower": "table-2", "state": "online", "last_seq": 10**15}
        _publish_as(secure, certs, "table-1", "dicetower/table-2/status", forged)
        _publish_as(secure, certs, "table-1", "dicetower/table-2/rolls", {"tower": "table-2", "seq": 1})
        _publish_as(
            secure, certs, "table-1", "dicetower/table-1/status", {"tower": "table-1", "state": "idle"}
        )
        _publish_as(
            secure, certs, "table-2", "dicetower/table-2/status", {"tower": "table-2", "state": "idle"}
        )
        hub.wait("status", 2)
        time.sleep(0.5)
        assert [(t, json.loads(p)["state"]) for t, p in hub.messages if "status" in t] == [
            ("dicetower/table-1/status", "idle"),
            ("dicetower/table-2/status", "idle"),
        ]
        assert [t for t, _p in hub.messages if t.endswith("/rolls")] == []
    finally:
        hub.close()

"""A tower publishing to a real Mosquitto: rolls in order with their chain, status with a last
will, buffering while the broker is away, and roll requests over MQTT checked as HTTP checks them."""

from __future__ import annotations

import json
import time
from pathlib import Path

from dicetower.firmware.mqtt.outbox import SENT_NAME
from dicetower.firmware.mqtt.wire import check_event
from dicetower.firmware.rolllog import GENESIS
from dicetower.firmware.server.app import create_app
from mqtt_broker import Mosquitto, Probe
from mqtt_configs import tower_config
from starlette.testclient import TestClient


def _roll(client: TestClient, n: int) -> list[int]:
    ids = []
    for i in range(n):
        r = client.post("/api/rolls", json={"notation": "3d6", "roller": f"p{i}"})
        assert r.status_code == 202, r.text
        ids.append(r.json()["id"])
    return ids


def _wait_done(client: TestClient, roll_id: int) -> None:
    deadline = time.monotonic() + 30
    while client.get(f"/api/rolls/{roll_id}").json()["status"] not in ("done", "failed"):
        assert time.monotonic() < deadline, "the roll did not finish"
        time.sleep(0.05)


def _wait_connected(client: TestClient) -> None:
    """Until the tower's client is connected (and so subscribed to its requests)."""
    deadline = time.monotonic() + 20
    while not client.get("/api/tower").json()["mqtt"]["connected"]:
        assert time.monotonic() < deadline, "the tower did not connect to the broker"
        time.sleep(0.05)
    time.sleep(0.2)  # the subscription is sent on connect; let the broker take it


def _in_order_once(events: list[dict]) -> list[int]:
    """The sequence numbers as first seen; a repeat (QoS 1 delivers at least once) must be the same
    roll with the same hash, and is what a hub drops."""
    seen: dict[int, str] = {}
    for e in events:
        assert seen.setdefault(e["seq"], e["hash"]) == e["hash"]
    return list(seen)


def test_rolls_are_published_in_order_with_a_chain_a_hub_can_check(broker: Mosquitto, tmp_path: Path) -> None:
    probe = Probe(broker.port, ["dicetower/#"])
    try:
        with TestClient(create_app(tower_config(tmp_path / "d", broker.url))) as client:
            ids = _roll(client, 5)
            events = probe.wait("rolls", 5)
            assert [e["seq"] for e in events] == ids
            last = GENESIS
            for e in events:
                assert check_event(e, last).ok
                last = e["hash"]
            assert events[-1]["hash"] == client.get(f"/api/rolls/{ids[-1]}").json()["hash"]
            assert client.get("/api/tower").json()["mqtt"]["acknowledged"] == ids[-1]
        states = [s["state"] for s in probe.json("status")]
        assert states[0] == "online" and "rolling" in states and states[-1] == "offline"
        assert probe.json("status")[-1]["last_seq"] == ids[-1]
    finally:
        probe.close()


def test_a_tower_that_drops_off_is_announced_offline_by_its_last_will(
    broker: Mosquitto, tmp_path: Path
) -> None:
    import paho.mqtt.client as mqtt  # a connection that dies without a goodbye, as a crashed tower's does
    from dicetower.firmware.mqtt.client import Connection, new_client

    probe = Probe(broker.port, ["dicetower/+/status"])
    try:
        will = json.dumps({"tower": "t9", "state": "offline"}).encode()
        c = new_client(
            Connection(broker.url, keepalive_s=5), "dicetower-t9", will=("dicetower/t9/status", will)
        )
        c.connect("127.0.0.1", broker.port, keepalive=5)
        c.loop_start()
        time.sleep(0.5)
        c._sock.close()  # the socket goes away under paho: no DISCONNECT is sent
        c.loop_stop()
        assert isinstance(c, mqtt.Client)
        got = probe.wait("status", 1, timeout_s=20)
        assert got and got[-1] == {"tower": "t9", "state": "offline"}
    finally:
        probe.close()


def test_the_tower_keeps_rolling_while_the_broker_is_away_and_sends_the_rest_in_order(
    broker: Mosquitto, tmp_path: Path
) -> None:
    probe = Probe(broker.port, ["dicetower/t1/rolls"], session="probe-buffer")  # the broker queues for it
    try:
        with TestClient(create_app(tower_config(tmp_path / "d", broker.url))) as client:
            first = _roll(client, 3)
            assert len(probe.wait("rolls", 3)) == 3
            broker.stop()  # its sessions are saved; the tower's client keeps trying to reconnect
            during = _roll(client, 4)
            _wait_done(client, during[-1])
            assert client.get("/api/tower").json()["mqtt"]["connected"] is False
            broker.start()
            after = _roll(client, 2)
            events = probe.wait("rolls", 9, timeout_s=40)
            _wait_done(client, after[-1])
            deadline = time.monotonic() + 30
            while len(_in_order_once(probe.json("rolls"))) < 9 and time.monotonic() < deadline:
                time.sleep(0.05)
            events = probe.json("rolls")
        assert _in_order_once(events) == first + during + after  # nothing lost, in order
        last = GENESIS
        for e in {e["seq"]: e for e in events}.values():
            assert check_event(e, last).ok
            last = e["hash"]
    finally:
        probe.close()


def test_a_restarted_tower_resumes_after_what_the_broker_acknowledged(
    broker: Mosquitto, tmp_path: Path
) -> None:
    data = tmp_path / "d"
    probe = Probe(broker.port, ["dicetower/t1/rolls"])
    try:
        with TestClient(create_app(tower_config(data, broker.url))) as client:
            ids = _roll(client, 3)
            probe.wait("rolls", 3)
        mark = json.loads((data / SENT_NAME).read_text())
        assert list(mark.values()) == [ids[-1]]
        with TestClient(create_app(tower_config(data, broker.url))) as client:
            more = _roll(client, 2)
            events = probe.wait("rolls", 5)
            time.sleep(0.5)
        assert _in_order_once(probe.json("rolls")) == ids + more
        assert events[3]["prev_seq"] == ids[-1]
    finally:
        probe.close()


def test_a_request_over_mqtt_is_rolled_and_answered(broker: Mosquitto, tmp_path: Path) -> None:
    probe = Probe(broker.port, ["dicetower/_hub/test/replies"])
    reply_to = "dicetower/_hub/test/replies"
    try:
        with TestClient(create_app(tower_config(tmp_path / "d", broker.url))) as client:
            _wait_connected(client)
            probe.publish(
                "dicetower/t1/requests/test",
                {
                    "request_id": "r1",
                    "from": "gm",
                    "reply_to": reply_to,
                    "roll": {"notation": "2d6", "roller": "Ann"},
                },
            )
            queued, done = probe.wait("replies", 2)
            assert queued["status"] == "queued" and queued["request_id"] == "r1" and queued["tower"] == "t1"
            assert done["status"] == "done" and done["id"] == queued["id"]
            row = client.get(f"/api/rolls/{done['id']}").json()
            assert done["roll"]["text"] == row["text"] and row["roller"] == "Ann"
            assert row["label"] == "2d6"
    finally:
        probe.close()


def test_mqtt_requests_are_refused_as_http_refuses_them(broker: Mosquitto, tmp_path: Path) -> None:
    reply_to = "dicetower/_hub/test/replies"
    probe = Probe(broker.port, ["dicetower/#"])
    config = tower_config(tmp_path / "d", broker.url)
    config.require_token = True
    try:
        with TestClient(create_app(config)) as client:
            _wait_connected(client)
            token = (tmp_path / "d" / "api-token").read_text().strip()
            bad = {"notation": "2d6+", "roller": "Ann"}
            http = client.post("/api/rolls", json=bad, headers={"Authorization": f"Bearer {token}"})
            send = {"request_id": "a", "reply_to": reply_to, "roll": bad}
            probe.publish("dicetower/t1/requests/test", send)  # no token
            probe.publish("dicetower/t1/requests/test", {**send, "request_id": "b", "token": "wrong"})
            probe.publish("dicetower/t1/requests/test", {**send, "request_id": "c", "token": token})
            probe.publish(
                "dicetower/t1/requests/test", {**send, "request_id": "d", "reply_to": "dicetower/t2/rolls"}
            )
            probe.publish("dicetower/t1/requests/test", {**send, "request_id": "e", "pad": "x" * 20_000})
            probe.publish(
                "dicetower/t1/requests/test",
                {**send, "request_id": "f", "token": token, "roll": {"notation": "1d4"}},
            )
            never = {"notation": "1d6/0", "roller": "Ann"}  # always a division by zero: planned, refused
            http_never = client.post("/api/rolls", json=never, headers={"Authorization": f"Bearer {token}"})
            probe.publish(
                "dicetower/t1/requests/test", {**send, "request_id": "g", "token": token, "roll": never}
            )
            replies = {r["request_id"]: r for r in probe.wait("replies", 6)}
            time.sleep(0.5)
            # d's reply topic is another tower's, e is too large
            assert set(replies) == {"a", "b", "c", "f", "g"}
            assert http_never.status_code == 422
            assert replies["g"]["status"] == "refused" and replies["g"]["error"] == http_never.json()["error"]
            assert replies["a"]["error"]["status"] == replies["b"]["error"]["status"] == 401
            assert replies["c"]["error"] == http.json()["error"]  # the same refusal, field and position
            assert replies["f"]["status"] in ("queued", "done")
            assert not [
                e for e in probe.json("rolls") if e["row"]["request"] == '{"notation":"2d6+","roller":"Ann"}'
            ]
    finally:
        probe.close()


def test_a_new_broker_gets_new_rolls_and_older_ones_when_asked(broker: Mosquitto, tmp_path: Path) -> None:
    data = tmp_path / "d"
    config = tower_config(data, broker.url)
    config.mqtt = None
    with TestClient(create_app(config)) as client:  # rolls made before the tower had a broker
        old = _roll(client, 3)
        _wait_done(client, old[-1])
    probe = Probe(broker.port, ["dicetower/t1/rolls"])
    try:
        with TestClient(create_app(tower_config(data, broker.url))) as client:
            _wait_connected(client)
            new = _roll(client, 1)
            assert [e["seq"] for e in probe.wait("rolls", 1)] == new  # from the log's end, not its start
            probe.publish("dicetower/t1/resend/test", {"from": 2})
            assert _in_order_once(probe.wait("rolls", 4)) == [*new, *old[1:]]
            probe.publish("dicetower/t1/resend/test", {"from": "x"})  # refused quietly: nothing more is sent
            time.sleep(0.5)
        assert len(probe.json("rolls")) == 4
    finally:
        probe.close()

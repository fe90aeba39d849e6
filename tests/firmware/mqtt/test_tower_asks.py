"""What a tower does with what others ask of it on a real Mosquitto: a flood of resend requests
publishes one capped replay, not one per request; roll requests are rate-limited by the
requester named in the topic, whatever the message's own fields say."""

from __future__ import annotations

import time
from pathlib import Path

from dicetower.firmware.mqtt.resend import RESEND_CAP, ResendGate
from dicetower.firmware.rolllog import RollLog
from dicetower.firmware.server.app import create_app
from mqtt_broker import Mosquitto, Probe
from mqtt_configs import tower_config
from starlette.testclient import TestClient


def _wait_connected(client: TestClient) -> None:
    deadline = time.monotonic() + 20
    while not client.get("/api/tower").json()["mqtt"]["connected"]:
        assert time.monotonic() < deadline, "the tower did not connect to the broker"
        time.sleep(0.05)
    time.sleep(0.3)  # its subscriptions reach the broker


def test_a_resend_flood_publishes_one_capped_replay(broker: Mosquitto, tmp_path: Path) -> None:
    data = tmp_path / "d"
    rolls = RESEND_CAP + 300
    with RollLog(data, photo_cap_bytes=None) as log:  # a long log, made before the tower had a broker
        for i in range(rolls):
            rid = log.accept({"notation": "1d6"}, roller="r", client="test")
            log.commit(rid, status="done", source="rng", total=i % 6 + 1)
    probe = Probe(broker.port, ["dicetower/t1/rolls"])
    try:
        with TestClient(create_app(tower_config(data, broker.url))) as client:
            _wait_connected(client)
            for _ in range(100):  # 100 requests of {"from": 1}, as fast as they go
                probe.client.publish("dicetower/t1/resend/gm", b'{"from": 1}', qos=1)
            probe.client.publish("dicetower/t1/resend/other", b'{"from": 1}', qos=1).wait_for_publish(10)
            got = probe.wait("rolls", RESEND_CAP, timeout_s=60)
            time.sleep(3)  # anything more would be on its way by now
            got = probe.json("rolls")
        seqs = [e["seq"] for e in got]
        assert seqs[:RESEND_CAP] == list(range(rolls - RESEND_CAP + 1, rolls + 1))  # the last CAP, in order
        assert len(seqs) == RESEND_CAP  # once: the other requests are covered or refused
    finally:
        probe.close()


def test_the_resend_gate_limits_each_requester_and_never_stacks_replays() -> None:
    gate = ResendGate(cap=100, every_s=10)
    assert gate.allow("hub", now=0) and not gate.allow("hub", now=5) and gate.allow("other", now=5)
    assert gate.allow("hub", now=10.5)
    assert gate.rewind_to(1, next_seq=501, last_seq=500) == 401  # capped
    assert gate.rewind_to(1, next_seq=420, last_seq=500) is None  # the replay under way covers it
    assert gate.rewind_to(450, next_seq=420, last_seq=500) is None
    assert gate.rewind_to(1, next_seq=501, last_seq=500) == 401  # after it ended, again
    assert gate.rewind_to(600, next_seq=501, last_seq=500) is None  # nothing there yet


def test_roll_requests_are_limited_by_the_requester_in_the_topic_not_by_from(
    broker: Mosquitto, tmp_path: Path
) -> None:
    probe = Probe(broker.port, ["dicetower/_hub/test/replies"])
    config = tower_config(tmp_path / "d", broker.url)
    config.rate_per_second, config.rate_burst = 0.01, 3
    try:
        with TestClient(create_app(config)) as client:
            _wait_connected(client)
            for i in range(10):
                probe.publish(
                    "dicetower/t1/requests/gm",
                    {
                        "request_id": f"r{i}",
                        "from": f"player-{i}",  # each claims to be someone new
                        "reply_to": "dicetower/_hub/test/replies",
                        "roll": {"notation": "1d6", "roller": "Ann"},
                    },
                )
            probe.wait("replies", 10)
            time.sleep(0.5)
            first = {
                r["request_id"]: r for r in probe.json("replies") if r["status"] in ("queued", "refused")
            }
            rows = client.get("/api/rolls?limit=50").json()["rolls"]
        assert len(first) == 10
        assert sum(r["status"] == "queued" for r in first.values()) == 3
        assert {r["error"]["status"] for r in first.values() if r["status"] == "refused"} == {429}
        assert {r.get("client") for r in rows} <= {"mqtt:gm", None}
    finally:
        probe.close()

"""What travels over MQTT: the chain check a hub runs on each roll event, topics and settings.

Rows here are written by the real roll log (SQLite in a temporary folder), so the hashes
checked are the log's own.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from dicetower.firmware.config import ConfigError, parse_config
from dicetower.firmware.mqtt.outbox import Outbox
from dicetower.firmware.mqtt.settings import MqttConfig, Topics, parse_broker_url
from dicetower.firmware.mqtt.wire import (
    MAX_EVENT_BYTES,
    WireError,
    check_event,
    decode_json,
    event_view,
    roll_event,
)
from dicetower.firmware.rolllog import GENESIS, RollLog


def _log_with_rolls(folder: Path, n: int, *, note_after: int | None = None) -> None:
    with RollLog(folder, photo_cap_bytes=None) as log:
        for i in range(1, n + 1):
            rid = log.accept({"notation": "1d6"}, roller=f"r{i}", client="test")
            log.commit(rid, status="done", source="rng", total=i, dice=[{"slot": 0, "face": i}])
            if note_after == i:
                log.record("accept", {"problems": ["a test note"], "flag": "--accept-broken-log"})


def _events(folder: Path) -> list[dict]:
    box = Outbox(folder, "k")
    try:
        return [
            roll_event("t1", o.row, o.prev_seq, o.notes, note_count=o.note_count) for o in box.after(0, 50)
        ]
    finally:
        box.close()


def test_each_event_links_to_the_one_before(tmp_path: Path) -> None:
    _log_with_rolls(tmp_path, 4, note_after=2)
    events = _events(tmp_path)
    assert [e["seq"] for e in events] == [1, 2, 3, 4]
    assert [e["prev_seq"] for e in events] == [0, 1, 2, 3]
    assert [len(e["notes"]) for e in events] == [0, 0, 1, 0]  # the note after roll 2 travels with 3
    last = GENESIS
    for e in events:
        found = check_event(json.loads(json.dumps(e)), last)
        assert found.ok and found.linked, found.problem
        last = e["hash"]


def test_a_changed_field_a_dropped_note_or_a_skipped_roll_is_caught(tmp_path: Path) -> None:
    _log_with_rolls(tmp_path, 4, note_after=2)
    e1, e2, e3, e4 = _events(tmp_path)
    tampered = copy.deepcopy(e2)
    tampered["row"]["total"] = "6"
    found = check_event(tampered, e1["hash"])
    assert not found.ok and "tampered" in found.problem
    no_note = copy.deepcopy(e3)
    no_note["notes"] = []
    assert not check_event(no_note, e2["hash"]).ok
    assert not check_event(e4, e2["hash"]).ok  # roll 3 missing: 4 does not link to 2
    forged = copy.deepcopy(e3)
    forged["notes"][0]["body"] = '{"problems":[]}'
    assert "hash does not match" in check_event(forged, e2["hash"]).problem


def test_an_event_stays_bounded_and_crops_go_inline_under_their_cap(tmp_path: Path) -> None:
    _log_with_rolls(tmp_path, 1)
    box = Outbox(tmp_path, "k")
    (o,) = box.after(0, 5)
    box.close()
    small = roll_event("t1", o.row, 0, [], crops={0: b"\xff\xd8jpeg"}, inline_max_bytes=100)
    assert event_view(small)["dice"][0]["crop_url"] == "data:image/jpeg;base64,/9hqcGVn"
    assert small["crops"] == {"0": "/9hqcGVn"}
    huge = roll_event("t1", o.row, 0, [], crops={0: b"x" * 300_000}, inline_max_bytes=400_000)
    assert len(json.dumps(huge)) <= MAX_EVENT_BYTES and "crops" not in huge
    assert check_event(huge, GENESIS).ok
    many = roll_event("t1", o.row, 0, [{"seq": 1}] * 70)
    assert many["notes_elided"] == 70
    found = check_event(many, GENESIS)
    assert found.ok and not found.linked


def test_decode_json_refuses_oversized_and_non_objects() -> None:
    assert decode_json(b'{"a":1}', 100) == {"a": 1}
    for payload in (b"x" * 101, b"[1]", b"\xff", b"{"):
        with pytest.raises(WireError):
            decode_json(payload, 100)


def test_topics_and_reply_topics() -> None:
    t = Topics("dicetower")
    assert t.rolls("t1") == "dicetower/t1/rolls"
    assert t.split("dicetower/t1/status") == ("t1", "status")
    assert t.split("other/t1/status") is None and t.split("dicetower/a/b/c") is None
    assert t.reply_ok("dicetower/_hub/h1/replies") and t.reply_ok("dicetower/gm/replies")
    for bad in ("dicetower/t2/rolls", "dicetower/#", "elsewhere/x", "dicetower/" + "a" * 300, 5, ""):
        assert not t.reply_ok(bad), bad


def test_broker_urls() -> None:
    u = parse_broker_url("mqtts://ann:s%3Acret@broker.example:8884")
    assert (u.host, u.port, u.tls, u.username, u.password) == ("broker.example", 8884, True, "ann", "s:cret")
    assert parse_broker_url("mqtt://h").port == 1883 and parse_broker_url("mqtts://h").port == 8883
    assert "s:cret" not in u.describe()
    for bad in ("http://h", "mqtt://", "mqtt://h/x", "mqtt://h:99999", "mqtt://h?x=1"):
        with pytest.raises(ValueError):
            parse_broker_url(bad)


def test_the_mqtt_config_section_is_checked_key_by_key() -> None:
    cfg = parse_config({"mqtt": {"url": "mqtt://hub.local", "tower": "table-3", "photos": "inline"}})
    assert cfg.mqtt == MqttConfig(url="mqtt://hub.local", tower="table-3", photos="inline")
    with pytest.raises(ConfigError) as err:
        parse_config({"mqtt": {"url": "http://x", "tower": "a/b", "prefix": "a/#", "colour": 1}})
    text = "\n".join(err.value.problems)
    assert "[mqtt] colour: unknown key" in text
    with pytest.raises(ConfigError) as err:
        parse_config({"mqtt": {"url": "http://x", "tower": "a/b", "prefix": "a/#"}})
    text = "\n".join(err.value.problems)
    for key in ("[mqtt] url", "[mqtt] tower", "[mqtt] prefix"):
        assert key in text

"""The hub's keys and what they keep out, driven message by message (:meth:`Hub.take`) over a real
SQLite log: unsigned and forged events refused and recorded, a changed key refused, a far-ahead
seq parked, a real roll winning over a forgery that came first, 10,000 invented names taking
nothing, and no traceback for a 100k-deep JSON event or a seq of 2**70. Each holds after a restart.

The same over a real Mosquitto, with the tower and hub as they run: test_hub_signed.py."""

from __future__ import annotations

import copy
import json
import logging
from pathlib import Path
from typing import Any

import pytest
from dicetower.firmware.events import EventBus
from dicetower.firmware.hub.chain import SEQ_WINDOW
from dicetower.firmware.hub.core import HUB_EVENTS, Hub
from dicetower.firmware.hub.keys import MAX_NEW, KeyRing, read_keys_file
from dicetower.firmware.hub.store import HubStore
from dicetower.firmware.mqtt.outbox import Outbox
from dicetower.firmware.mqtt.settings import Topics
from dicetower.firmware.mqtt.signing import TowerKey, load_or_create_key
from dicetower.firmware.mqtt.wire import roll_event, status_message
from dicetower.firmware.rolllog import RollLog, row_hash

TOPICS = Topics()


def _events(folder: Path, n: int) -> list[dict[str, Any]]:
    with RollLog(folder, photo_cap_bytes=None) as log:
        for i in range(n):
            rid = log.accept({"notation": "1d6"}, roller="r", client="test")
            log.commit(rid, status="done", source="rng", total=i)
    box = Outbox(folder, "k")
    try:
        return [roll_event("t1", o.row, o.prev_seq, o.notes) for o in box.after(0, 100)]
    finally:
        box.close()


class Table:
    """A hub over ``folder`` whose broker is a list: what it publishes is kept."""

    def __init__(self, folder: Path, **keys: Any) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []
        self.store = HubStore(folder)
        bus = EventBus(history=10, client_queue=10, types=HUB_EVENTS)
        ring = KeyRing(self.store, keys.pop("configured", None), **keys)
        self.hub = Hub(
            self.store,
            bus,
            TOPICS,
            "dicetower/_hub/h/replies",
            lambda t, m: self.sent.append((t, m)),
            identity="hub",
            keys=ring,
        )

    def send(self, tower: str, leaf: str, message: dict[str, Any] | bytes) -> None:
        payload = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.hub.take(f"dicetower/{tower}/{leaf}", payload)

    def seqs(self, tower: str = "t1") -> list[int]:
        return sorted(r["seq"] for r in self.store.recent(500, tower=tower))

    def problems(self) -> list[str]:
        return [p["problem"] for p in self.store.problems(500)]

    def close(self) -> None:
        self.store.close()


@pytest.fixture
def key(tmp_path: Path) -> TowerKey:
    return load_or_create_key(tmp_path / "tower")


def _forge(event: dict[str, Any], seq: int, after: dict[str, Any]) -> dict[str, Any]:
    """A correctly hashed roll ``seq`` linked to ``after``: what anyone could make without the key."""
    forged = copy.deepcopy(event)
    forged["seq"] = forged["row"]["id"] = seq
    forged["prev_seq"] = after["seq"]
    forged["row"]["prev_hash"] = after["hash"]
    forged["row"]["total"] = "18"
    forged["hash"] = row_hash(forged["row"])
    return forged


def test_unsigned_and_forged_events_are_refused_and_the_real_rolls_win(tmp_path: Path, key: TowerKey) -> None:
    e = _events(tmp_path / "log", 4)
    t = Table(tmp_path / "hub", configured={"t1": key.public})
    t.send("t1", "rolls", key.sign(e[0]))
    t.send("t1", "rolls", key.sign(e[1]))
    stranger = load_or_create_key(tmp_path / "stranger")
    t.send("t1", "rolls", _forge(e[2], 3, e[1]))  # a forgery at n+1, unsigned, first
    t.send("t1", "rolls", stranger.sign(_forge(e[2], 3, e[1])))  # and one signed by another key
    t.send("t1", "rolls", _forge(e[2], 10**15, e[1]))  # the far-ahead forgery
    t.send("t1", "rolls", key.sign(e[2]))
    t.send("t1", "rolls", key.sign(e[3]))
    assert t.seqs() == [1, 2, 3, 4]  # every real roll, none displaced
    held = {r["seq"]: r["event"]["hash"] for r in t.store.recent(10)}
    assert held[3] == e[2]["hash"]
    problems = t.problems()
    assert sum("unsigned" in p for p in problems) == 2
    assert any("not its pinned key" in p for p in problems)
    (t1,) = t.hub.towers_json()
    assert t1["refused"] == 3 and any("refused" in why for why in t1["needs_attention"])
    assert t1["key"]["source"] == "config"
    t.close()


def test_a_far_ahead_seq_is_parked_even_with_the_right_key_and_after_a_restart(
    tmp_path: Path, key: TowerKey
) -> None:
    e = _events(tmp_path / "log", 3)
    t = Table(tmp_path / "hub", configured={"t1": key.public})
    t.send("t1", "rolls", key.sign(e[0]))
    ahead = copy.deepcopy(e[1])
    ahead["seq"] = ahead["row"]["id"] = 1 + SEQ_WINDOW + 1
    ahead["hash"] = row_hash(ahead["row"])
    t.send("t1", "rolls", key.sign(ahead))
    assert t.seqs() == [1] and any("parked" in p for p in t.problems())
    t.close()
    t = Table(tmp_path / "hub", configured={"t1": key.public})  # restarted: nothing of it stayed
    t.send("t1", "rolls", key.sign(e[1]))
    t.send("t1", "rolls", key.sign(e[2]))
    assert t.seqs() == [1, 2, 3]
    t.close()


def test_a_changed_key_is_refused_and_a_first_use_pin_survives_a_restart(
    tmp_path: Path, key: TowerKey
) -> None:
    e = _events(tmp_path / "log", 2)
    t = Table(tmp_path / "hub", trust_first_use=True)
    t.send("t1", "status", key.sign(status_message("t1", "online", last_seq=0)))
    (t1,) = t.hub.towers_json()
    assert t1["key"] == {"key": key.public, "fingerprint": key.fingerprint, "source": "first use"}
    t.close()
    t = Table(tmp_path / "hub", trust_first_use=True)
    changed = load_or_create_key(tmp_path / "new-key")
    t.send("t1", "rolls", changed.sign(e[0]))
    t.send("t1", "rolls", key.sign(e[0]))
    assert t.seqs() == [1]
    assert any(f"signed with key {changed.fingerprint}" in p for p in t.problems())
    t.close()


def test_unknown_names_take_nothing_and_a_known_tower_always_gets_in(
    tmp_path: Path, key: TowerKey, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    e = _events(tmp_path / "log", 2)
    t = Table(tmp_path / "hub", configured={"t1": key.public})
    fake_key = load_or_create_key(tmp_path / "fake")
    for i in range(10_000):  # half unsigned, half correctly self-signed
        status = status_message(f"fake-{i}", "online", last_seq=10**6)
        t.send(f"fake-{i}", "status", fake_key.sign(status) if i % 2 else status)
    t.send("t1", "status", key.sign(status_message("t1", "online", last_seq=2)))
    t.send("t1", "rolls", key.sign(e[0]))
    t.send("t1", "rolls", key.sign(e[1]))
    assert [x["name"] for x in t.hub.towers_json()] == ["t1"] and t.seqs() == [1, 2]
    assert len(t.hub.keys.new_json()) == MAX_NEW  # the newest few, for a person to look at
    assert {topic for topic, _m in t.sent} == {"dicetower/t1/resend/hub"}  # none to the fakes
    assert t.store.problems(10) == []  # nothing of the flood is kept
    assert sum("does not know" in r.getMessage() for r in caplog.records) <= 2
    assert sum("new tower" in r.getMessage() for r in caplog.records) <= MAX_NEW + 1
    t.close()
    t = Table(tmp_path / "hub", configured={"t1": key.public})  # restarted: only t1, at once
    assert [x["name"] for x in t.hub.towers_json()] == ["t1"] and t.hub.keys.new_json() == []
    t.close()


def test_a_new_tower_is_trusted_by_its_fingerprint_and_then_followed(tmp_path: Path, key: TowerKey) -> None:
    e = _events(tmp_path / "log", 2)
    t = Table(tmp_path / "hub")
    t.send("t1", "status", key.sign(status_message("t1", "online", last_seq=2)))
    t.send("t1", "rolls", key.sign(e[0]))
    assert t.hub.towers_json() == [] and t.seqs() == []
    (new,) = t.hub.keys.new_json()
    assert new["name"] == "t1" and new["fingerprint"] == key.fingerprint
    with pytest.raises(ValueError, match="not 0000"):
        t.hub.trust("t1", "0000")
    t.hub.trust("t1", key.fingerprint)
    assert t.sent == [("dicetower/t1/resend/hub", {"from": 1})]  # it asks for what it missed
    t.send("t1", "rolls", key.sign(e[0]))
    t.send("t1", "rolls", key.sign(e[1]))
    assert t.seqs() == [1, 2]
    t.close()
    t = Table(tmp_path / "hub")
    assert t.hub.towers_json()[0]["key"]["source"] == "trusted"
    t.close()


def test_a_deep_json_event_and_a_seq_of_2_to_the_70_are_problems_not_tracebacks(
    tmp_path: Path, key: TowerKey, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    e = _events(tmp_path / "log", 1)
    t = Table(tmp_path / "hub", configured={"t1": key.public})
    t.send("t1", "rolls", b"[" * 100_000 + b"]" * 100_000)
    t.send("t1", "rolls", b'{"a":' * 40_000 + b"1" + b"}" * 40_000)
    huge = copy.deepcopy(e[0])
    huge["seq"] = huge["row"]["id"] = 2**70
    huge["hash"] = row_hash(huge["row"])
    t.send("t1", "rolls", key.sign(huge))
    t.send("t1", "rolls", _forge(e[0], 2**70, e[0]))
    t.send("t1", "status", key.sign(status_message("t1", "online", last_seq=2**70)))
    t.hub.sweep()
    assert [r for r in caplog.records if r.exc_info] == []
    problems = t.problems()
    assert sum("nested too deeply" in p for p in problems) == 2
    assert any("not rising whole numbers" in p for p in problems)
    t.send("t1", "rolls", key.sign(e[0]))
    assert t.seqs() == [1]
    t.close()


def test_the_keys_file_is_read_line_by_line_with_errors_that_name_the_line(
    tmp_path: Path, key: TowerKey
) -> None:
    path = tmp_path / "keys"
    path.write_text(f"# towers\ntable-1 {key.public}  # the kitchen\n\n")
    assert read_keys_file(path) == {"table-1": key.public}
    path.write_text(f"table-1 {key.public}\ntable-2 ed25519:nope\n")
    with pytest.raises(ValueError, match="line 2: a public key is ed25519:"):
        read_keys_file(path)
    path.write_text(f"_hub {key.public}\n")
    with pytest.raises(ValueError, match="line 1: 1-64 letters"):
        read_keys_file(path)
    with pytest.raises(ValueError, match=r"keys file .*missing cannot be read: No such file"):
        read_keys_file(tmp_path / "missing")

"""The hub's combined log under its cap (``--log-cap-mb``), over a real SQLite file: events with
inline-crop-sized payloads thinned to stubs, stubs deleted but never a tower's last, the file
measured on disk, and the chain picked up after a restart: a new event links and is taken."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
from dicetower.firmware.events import EventBus
from dicetower.firmware.hub.app import HubConfig
from dicetower.firmware.hub.core import HUB_EVENTS, Hub
from dicetower.firmware.hub.keys import KeyRing
from dicetower.firmware.hub.store import HUB_DB_NAME, LOG_CAP_ENV, HubStore
from dicetower.firmware.mqtt.client import Connection
from dicetower.firmware.mqtt.outbox import Outbox
from dicetower.firmware.mqtt.settings import Topics
from dicetower.firmware.mqtt.wire import MAX_EVENT_BYTES, roll_event
from dicetower.firmware.rolllog import RollLog
from mqtt_broker import Mosquitto
from mqtt_configs import live_hub

CAP = 2**20  # the smallest cap the command takes
#: an inline crop as a tower sends one near its default ``inline_max_bytes`` (64 KiB of base64)
CROP = base64.b64encode(os.urandom(45_000)).decode()


def _events(folder: Path, tower: str, n: int) -> list[dict[str, Any]]:
    with RollLog(folder, photo_cap_bytes=None) as log:
        for i in range(n):
            rid = log.accept({"notation": "1d6"}, roller="r", client="test")
            log.commit(rid, status="done", source="rng", total=i)
    box = Outbox(folder, "k")
    try:
        out: list[dict[str, Any]] = []
        while len(out) < n:
            out += [roll_event(tower, o.row, o.prev_seq, o.notes) for o in box.after(len(out), 100)]
        return out
    finally:
        box.close()


class Table:
    """A hub over ``folder`` with the log capped at ``cap``; what it publishes is dropped."""

    def __init__(self, folder: Path, cap: int) -> None:
        self.store = HubStore(folder, cap_bytes=cap)
        bus = EventBus(history=10, client_queue=10, types=HUB_EVENTS)
        keys = KeyRing(self.store, accept_unsigned=True)
        self.hub = Hub(self.store, bus, Topics(), "dicetower/_hub/h/replies", lambda t, m: None, keys=keys)

    def send(self, event: dict[str, Any]) -> None:
        self.hub.take(f"dicetower/{event['tower']}/rolls", json.dumps(event).encode())


def test_the_log_stays_under_its_cap_and_keeps_the_chain(tmp_path: Path) -> None:
    towers = {name: _events(tmp_path / name, name, 81) for name in ("t1", "t2")}
    for events in towers.values():
        for e in events:
            e["crops"] = {"0": CROP}
    table = Table(tmp_path / "hub", CAP)
    db = tmp_path / "hub" / HUB_DB_NAME
    biggest = 0
    for i in range(80):  # about 9.6 MB of events under a 1 MB cap
        for events in towers.values():
            table.send(events[i])
        biggest = max(biggest, table.store.size()["file_bytes"])
    assert table.hub.counts["taken"] == 160 and table.hub.counts["breaks"] == 0
    # the file never passes the cap by more than one event (pruning starts at 90 % of it)
    assert biggest <= CAP + MAX_EVENT_BYTES
    size = table.store.size()
    assert size["cap_bytes"] == CAP and size["bytes"] <= CAP and size["thinned"] > 100
    newest = table.store.recent(4)
    assert {(r["tower"], r["seq"]) for r in newest} == {("t1", 80), ("t2", 80), ("t1", 79), ("t2", 79)}
    assert all(not r["thinned"] and r["event"]["crops"] == {"0": CROP} for r in newest)
    first = table.store.db.execute("SELECT * FROM events WHERE tower = 't1' AND seq = 1").fetchone()
    assert first["thinned"] == 1 and first["hash"] == towers["t1"][0]["hash"]
    assert json.loads(first["event"]) == {
        "tower": "t1",
        "seq": 1,
        "prev_seq": 0,
        "hash": towers["t1"][0]["hash"],
        "thinned": True,
    }
    assert table.store.tips() == {n: (80, e[79]["hash"]) for n, e in towers.items()}
    table.store.close()
    assert db.stat().st_size <= CAP + MAX_EVENT_BYTES

    again = Table(tmp_path / "hub", CAP)  # a restart: the chains go on from the tips
    again.send(towers["t1"][0])  # a resend of a thinned roll is a repeat, not a break
    again.send(towers["t1"][80])
    assert again.hub.counts == {**again.hub.counts, "taken": 1, "repeats": 1, "breaks": 0}
    (taken,) = again.store.recent(1)
    assert (taken["tower"], taken["seq"], taken["verdict"]) == ("t1", 81, "new")
    again.store.close()


def test_the_api_says_the_logs_size_and_cap_and_shows_a_thinned_roll_as_one(
    broker: Mosquitto, tmp_path: Path
) -> None:
    events = _events(tmp_path / "t1", "t1", 30)
    for e in events:
        e["crops"] = {"0": CROP}
    table = Table(tmp_path / "hub", CAP)
    for e in events:
        table.send(e)
    table.store.close()
    config = HubConfig(
        data_dir=tmp_path / "hub",
        connection=Connection(broker.url),
        hub_id="h1",
        accept_unsigned=True,
        log_cap_bytes=CAP,
    )
    with live_hub(config) as hub:
        size = httpx.get(hub + "/api/towers").json()["log"]
        assert size["cap_bytes"] == CAP and 0 < size["bytes"] <= size["file_bytes"] <= CAP
        log = httpx.get(hub + "/api/log?limit=30").json()["log"]
        assert [e["seq"] for e in log] == list(range(30, 0, -1))
        assert log[0]["roll"]["status"] == "done" and "thinned" not in log[0]["roll"]
        assert log[-1]["roll"] == {
            "tower": "t1",
            "seq": 1,
            "roller": "r",
            "finished_at": events[0]["row"]["finished_at"],
            "thinned": True,
        }
        assert log[-1]["check"] == "new"


def test_stubs_past_the_cap_go_but_never_a_towers_last(tmp_path: Path) -> None:
    cap = 96 * 1024  # below what the command takes, so that stubs alone pass it
    store = HubStore(tmp_path, cap_bytes=cap)
    for seq in range(1, 1201):
        for tower in ("busy", "quiet") if seq == 1 else ("busy",):
            row = {"roller": "r", "finished_at": 1.0, "total": "x" * 300}
            event = {"tower": tower, "seq": seq, "prev_seq": seq - 1, "hash": f"{tower}-{seq}", "row": row}
            store.add(event, "new", "")
    size = store.size()
    assert size["removed"] > 0 and size["file_bytes"] <= cap + MAX_EVENT_BYTES
    assert store.tips() == {"busy": (1200, "busy-1200"), "quiet": (1, "quiet-1")}
    assert store.held_hash("quiet", 1) == "quiet-1"  # the quiet tower's only roll, older than all
    assert store.held_hash("busy", 1) is None and store.count("busy") < 1200
    store.close()


def test_a_cap_under_the_least_or_not_a_number_stops_the_hub(tmp_path: Path) -> None:
    base = [sys.executable, "-m", "dicetower.firmware.cli", "hub", "--mqtt", "mqtt://127.0.0.1:1"]
    base += ["--data", str(tmp_path)]
    env = {k: v for k, v in os.environ.items() if k != LOG_CAP_ENV}
    low = subprocess.run([*base, "--log-cap-mb", "0.5"], capture_output=True, text=True, env=env)
    assert (low.returncode, low.stderr.strip()) == (
        1,
        "dicetower: error: --log-cap-mb must be a number of megabytes, 1 or more (got 0.5)",
    )
    bad = subprocess.run(base, capture_output=True, text=True, env={**env, LOG_CAP_ENV: "lots"})
    assert (bad.returncode, bad.stderr.strip()) == (
        1,
        f"dicetower: error: {LOG_CAP_ENV}='lots': not a number of megabytes",
    )


def test_a_log_over_a_lowered_cap_is_pruned_and_made_smaller_at_start(tmp_path: Path) -> None:
    with HubStore(tmp_path) as store:  # no cap: about 6 MB
        for seq in range(1, 101):
            event = {"tower": "t1", "seq": seq, "prev_seq": seq - 1, "hash": f"h{seq}", "crops": {"0": CROP}}
            store.add({**event, "row": {"roller": "r"}}, "new", "")
    db = tmp_path / HUB_DB_NAME
    assert db.stat().st_size > 5 * CAP
    with HubStore(tmp_path, cap_bytes=CAP) as store:
        assert store.size()["file_bytes"] <= CAP and store.tips() == {"t1": (100, "h100")}
        (newest,) = store.recent(1)
        assert newest["seq"] == 100 and not newest["thinned"]
    assert db.stat().st_size <= CAP

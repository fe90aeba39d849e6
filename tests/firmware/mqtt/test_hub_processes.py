"""Three sim towers and a hub as real processes on a real Mosquitto.

The broker is killed (SIGKILL) for 30 s in the middle of a stream of rolls: the hub ends with
every roll of every tower once, in each tower's order, its chain unbroken. A tower killed the
same way shows offline on the hub. A forged event and an edited roll sent again are caught by
the hub's chain check. A roll request sent from the hub over MQTT is rolled and answered.
The processes are shared by the tests of this module, which run in order.
"""

from __future__ import annotations

import contextlib
import copy
import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from dicetower.firmware.rolllog import row_hash
from mqtt_broker import Mosquitto, Probe, free_port, mosquitto_path
from mqtt_table import HubWatcher, Process, start_hub, start_tower

OUTAGE_S = 30.0
TOWERS = ("t1", "t2", "t3")


class Table:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.broker = Mosquitto(folder / "broker").start()
        self.hub = start_hub(self.broker.url, free_port(), folder).wait_up()
        self.towers = {n: start_tower(n, self.broker.url, free_port(), folder) for n in TOWERS}
        for t in self.towers.values():
            t.wait_up()
        self.watcher = HubWatcher(self.hub.base)

    def close(self) -> None:
        self.watcher.close()
        for p in [*self.towers.values(), self.hub]:
            p.stop()
        self.broker.stop()

    def wait(self, what: str, check, timeout_s: float = 90.0):  # type: ignore[no-untyped-def]
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            found = check()
            if found:
                return found
            time.sleep(0.25)
        raise AssertionError(f"{what}: not within {timeout_s} s; logs in {self.folder}")

    def tower_ids(self, tower: Process) -> list[int]:
        return sorted(r["id"] for r in tower.get("/api/rolls?limit=200")["rolls"])

    def hub_ids(self, name: str) -> list[int]:
        return sorted(e["seq"] for e in self.hub.get(f"/api/log?limit=500&tower={name}")["log"])

    def hub_tower(self, name: str) -> dict:
        return next((t for t in self.hub.get("/api/towers")["towers"] if t["name"] == name), {})


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Table]:
    if mosquitto_path() is None:
        pytest.skip("mosquitto is not installed (apt-get install mosquitto)")
    t = Table(tmp_path_factory.mktemp("table"))
    try:
        yield t
    finally:
        t.close()


def test_a_request_sent_from_the_hub_over_mqtt_is_rolled_and_answered(table: Table) -> None:
    table.wait("the hub hears every tower", lambda: len(table.hub.get("/api/towers")["towers"]) == 3)
    r = table.hub.post("/api/towers/t2/rolls", {"roll": {"notation": "2d6+1", "roller": "Ann"}, "from": "gm"})
    assert r.status_code == 202, r.text
    answer = table.wait("the answer", lambda: (a := table.hub.get(r.json()["url"]))["status"] == "done" and a)
    row = table.towers["t2"].get(f"/api/rolls/{answer['id']}")
    assert row["roller"] == "Ann" and row["label"] == "2d6+1" and row["text"] == answer["roll"]["text"]
    table.wait("the roll on the hub's log", lambda: answer["id"] in table.hub_ids("t2"))
    bad = table.hub.post("/api/towers/t2/rolls", {"roll": {"notation": "2d6+"}})
    refused = table.wait(
        "the refusal", lambda: (a := table.hub.get(bad.json()["url"]))["status"] != "sent" and a
    )
    assert refused["status"] == "refused" and refused["error"]["field"] == "notation"
    assert table.hub.post("/api/towers/nobody/rolls", {"roll": {"notation": "1d6"}}).status_code == 404


def test_killing_the_broker_for_30_s_mid_stream_loses_and_doubles_nothing(table: Table) -> None:
    stop = threading.Event()
    posted: dict[str, int] = {n: 0 for n in TOWERS}

    def roll_steadily() -> None:  # one roll every 1.5 s on each tower, the broker there or not
        while not stop.is_set():
            for name, tower in table.towers.items():
                if (
                    tower.post("/api/rolls", {"notation": "3d6", "roller": f"{name}-player"}).status_code
                    == 202
                ):
                    posted[name] += 1
            stop.wait(1.5)

    driver = threading.Thread(target=roll_steadily, daemon=True)
    driver.start()
    try:
        time.sleep(6)
        table.broker.kill()
        outage_from = time.time()
        time.sleep(OUTAGE_S)
        table.broker.start()
        time.sleep(6)
    finally:
        stop.set()
        driver.join(30)
    assert min(posted.values()) >= 15

    def all_there() -> bool:
        return all(table.hub_ids(n) == table.tower_ids(t) for n, t in table.towers.items())

    table.wait("every roll of every tower on the hub", all_there, timeout_s=120)
    during = [
        r
        for t in table.towers.values()
        for r in t.get("/api/rolls?limit=200")["rolls"]
        if outage_from < r["finished_at"] < outage_from + OUTAGE_S
    ]
    assert len(during) >= 3 * 10  # the towers kept rolling while the broker was away
    for name, tower in table.towers.items():
        ids = table.tower_ids(tower)
        assert table.hub_ids(name) == ids  # nothing lost; the log is keyed by (tower, seq): nothing twice
        t = table.hub_tower(name)
        assert t["chain_breaks"] == 0 and t["needs_attention"] == [] and t["last_seq"] == ids[-1]
    expected = {(n, i) for n, t in table.towers.items() for i in table.tower_ids(t)}
    with contextlib.suppress(AssertionError):
        table.wait("the overlay got every roll", lambda: expected <= set(table.watcher.keys()), timeout_s=30)
    keys = table.watcher.keys()
    missing = sorted(expected - set(keys))
    assert not missing, f"the overlay lacks {missing[:10]} ({table.watcher.why})"
    assert table.watcher.closed_at is None, table.watcher.why  # one connection throughout
    assert len(keys) == len(set(keys))  # the overlay was sent each roll once
    for name in TOWERS:  # and each tower's rolls in its order
        seqs = [s for t, s in keys if t == name]
        assert seqs == sorted(seqs)


def test_a_forged_event_and_an_edited_roll_are_caught_by_the_chain_check(table: Table) -> None:
    db = sqlite3.connect(f"file:{table.folder / 'hub' / 'hub.sqlite3'}?mode=ro", uri=True)
    (raw,) = db.execute("SELECT event FROM events WHERE tower = 't1' ORDER BY seq DESC LIMIT 1").fetchone()
    db.close()
    taken = json.loads(raw)
    forged = copy.deepcopy(taken)
    forged["seq"] = forged["row"]["id"] = taken["seq"] + 1
    forged["prev_seq"] = taken["seq"]
    forged["row"]["prev_hash"] = taken["hash"]
    forged["row"]["total"] = "18"  # its hash left as it was: the content does not match it
    edited = copy.deepcopy(taken)
    edited["row"]["total"] = "18"
    edited["hash"] = row_hash(edited["row"])  # re-hashed, as an edited tower log would be
    probe = Probe(table.broker.port, ["dicetower/#"])
    try:
        probe.publish("dicetower/t1/rolls", forged)
        probe.publish("dicetower/t1/rolls", edited)
    finally:
        probe.close()

    def caught() -> list[str]:
        found = [p["problem"] for p in table.hub.get("/api/problems")["problems"] if p["tower"] == "t1"]
        return found if len(found) >= 2 else []

    problems = caught() or table.wait("the hub reports both", caught)
    assert (
        sum("signature does not verify" in p for p in problems) == 2
    )  # the tower's signature no longer fits
    t1 = table.hub_tower("t1")
    assert t1["refused"] == 2 and t1["chain_breaks"] == 0  # refused before the chain: nothing moved
    assert any("refused" in why for why in t1["needs_attention"])
    r = table.towers["t1"].post("/api/rolls", {"notation": "1d6", "roller": "after"})
    table.wait("the real next roll is still taken", lambda: r.json()["id"] in table.hub_ids("t1"))
    assert table.hub_ids("t1") == table.tower_ids(table.towers["t1"])


def test_a_killed_tower_shows_offline_on_the_hub(table: Table) -> None:
    assert table.hub_tower("t3")["online"]
    table.towers["t3"].kill()
    t3 = table.wait(
        "t3 offline", lambda: (t := table.hub_tower("t3"))["state"] == "offline" and t, timeout_s=60
    )
    assert not t3["online"]
    assert table.hub_tower("t1")["online"] and table.hub_tower("t2")["online"]

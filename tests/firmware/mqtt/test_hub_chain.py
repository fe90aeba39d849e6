"""The hub's chain check on one tower (pure), over events made from a real roll log."""

from __future__ import annotations

import copy
from pathlib import Path

from dicetower.firmware.hub.chain import Take, TowerChain
from dicetower.firmware.mqtt.outbox import Outbox
from dicetower.firmware.mqtt.wire import roll_event
from dicetower.firmware.rolllog import RollLog, row_hash


def _events(folder: Path, n: int) -> list[dict]:
    with RollLog(folder, photo_cap_bytes=None) as log:
        for i in range(n):
            rid = log.accept({"notation": "1d6"}, roller="r", client="test")
            log.commit(rid, status="done", source="rng", total=i)
    box = Outbox(folder, "k")
    try:
        return [roll_event("t1", o.row, o.prev_seq, o.notes) for o in box.after(0, 100)]
    finally:
        box.close()


def test_in_order_events_are_taken_and_repeats_dropped(tmp_path: Path) -> None:
    e = _events(tmp_path, 3)
    chain = TowerChain()
    assert [chain.judge(x).take for x in e] == [Take.NEW] * 3
    assert chain.judge(e[1], e[1]["hash"]).take is Take.REPEAT
    assert (chain.last_seq, chain.breaks) == (3, 0)


def test_a_gap_is_asked_for_once_and_filled_in_order(tmp_path: Path) -> None:
    e = _events(tmp_path, 5)
    chain = TowerChain()
    chain.judge(e[0])
    v = chain.judge(e[3])
    assert v.take is Take.GAP and v.ask_from == 2
    assert chain.judge(e[4]).ask_from is None  # asked already: not again at once
    assert chain.in_gap
    assert [chain.judge(x).take for x in e[1:]] == [Take.NEW] * 4
    assert not chain.in_gap and chain.breaks == 0


def test_a_changed_row_or_a_second_version_of_a_roll_is_a_break(tmp_path: Path) -> None:
    e = _events(tmp_path, 3)
    chain = TowerChain()
    chain.judge(e[0])
    forged = copy.deepcopy(e[1])
    forged["row"]["total"] = "99"
    v = chain.judge(forged)
    assert v.take is Take.REFUSED and "tampered" in v.problem
    assert chain.last_seq == 1  # never taken: the real roll 2 still is
    assert [chain.judge(x).take for x in e[1:]] == [Take.NEW, Take.NEW]
    assert chain.judge(forged, e[1]["hash"]).take is Take.REFUSED  # a changed repeat too
    edited = copy.deepcopy(e[1])
    edited["row"]["total"] = "99"
    edited["hash"] = row_hash(edited["row"])  # changed and re-hashed, as a tower's edited log would be
    v = chain.judge(edited, e[1]["hash"])
    assert v.take is Take.BROKEN and "different hash" in v.problem
    unlinked = copy.deepcopy(e[2])
    unlinked["row"]["prev_hash"] = "0" * 64
    unlinked["seq"] = unlinked["row"]["id"] = 4
    unlinked["prev_seq"] = 3
    unlinked["hash"] = row_hash(unlinked["row"])
    v = chain.judge(unlinked)
    assert v.take is Take.BROKEN and "does not link" in v.problem
    assert chain.last_seq == 4  # taken and shown: the tower's own chain is what broke


def test_a_tower_first_heard_mid_stream_is_caught_up_from_the_backfill(tmp_path: Path) -> None:
    e = _events(tmp_path, 6)
    chain = TowerChain(backfill=2)
    v = chain.judge(e[5])
    assert v.take is Take.GAP and v.ask_from == 4
    v = chain.judge(e[3])
    assert v.take is Take.UNLINKED and chain.first_seq == 4
    assert [chain.judge(x).take for x in e[4:]] == [Take.NEW, Take.NEW]
    fresh = TowerChain(backfill=3)
    assert fresh.behind(6) == 4 and fresh.judge(e[3]).take is Take.UNLINKED


def test_the_hubs_problem_list_is_bounded(tmp_path: Path) -> None:
    from dicetower.firmware.hub import store as hub_store

    with hub_store.HubStore(tmp_path) as store:
        for i in range(hub_store.MAX_PROBLEMS + 300):
            store.problem("t1", i, "junk")
        assert store.db.execute("SELECT COUNT(*) FROM problems").fetchone()[0] <= hub_store.MAX_PROBLEMS + 100
        assert store.problems(1)[0]["seq"] == hub_store.MAX_PROBLEMS + 299

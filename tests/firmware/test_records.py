"""What a throw record keeps: every attempt's reading, the retries they led to, crops cut once."""

from __future__ import annotations

import json
from typing import Any

import pytest
from dicetower.firmware.errors import ThrowFailedError
from dicetower.firmware.photos import crop_jpeg, encode_jpeg
from dicetower.firmware.records import Retry, ThrowRecord
from dicetower.rules.source import DiceRequest, DieSlot
from dicetower.vision.reading import DieReading, Reading, ReadStatus


def plain(n: int) -> DiceRequest:
    return DiceRequest(tuple(DieSlot(i, "d6") for i in range(n)), "test")


def test_the_crops_are_cut_from_the_raw_frame_that_was_read(sim_tower: Any) -> None:
    tower = sim_tower(seed=2)
    (record,) = tower.roll(plain(4)).records
    assert record.reading is not None and record.attempts == [record.reading]
    frame = tower._last_frame  # the settled frame the reader read and the photo shows
    assert record.photo == encode_jpeg(frame)
    assert record.crops == [crop_jpeg(frame, d.box) for d in record.reading.dice]
    assert len(record.crops) == len(record.reading.dice) == 5
    assert all(c is not None and c[:2] == b"\xff\xd8" for c in record.crops)
    for a in record.answers:
        assert record.crop_of(a) is record.crops[a.index]


def test_a_tap_keeps_the_reading_that_led_to_it(sim_tower: Any) -> None:
    tower = sim_tower(seed=6, sim={"fault_rate": 1.0, "faults": ("cocked",)})
    (record,) = tower.roll(plain(4)).records
    assert record.ok and any(r.action == "tap" for r in record.retries)
    assert len(record.attempts) == len(record.retries) + 1  # no camera retries: each led to a reading
    assert record.attempts[-1] is record.reading
    for i, retry in enumerate(record.retries):
        assert retry.attempt == i
        before = record.attempts[i]
        if retry.action == "tap":
            assert any(d.status is not ReadStatus.READ for d in before.dice)
    assert record.reading is not None and len(record.crops) == len(record.reading.dice)


def test_each_attempt_keeps_the_truth_of_its_photo(sim_tower: Any) -> None:
    tower = sim_tower(seed=6, sim={"fault_rate": 1.0, "faults": ("cocked",)})
    (record,) = tower.roll(plain(4)).records
    assert len(record.truths) == len(record.attempts) and record.truths[-1] == record.truth
    tapped = [r.attempt for r in record.retries if r.action == "tap"]
    assert tapped
    before = record.truths[tapped[0]]
    assert before is not None and any(t.cocked for t in before)  # the photo the tap followed: a die leans
    assert record.truth is not None and not any(t.cocked for t in record.truth)
    doc = record.to_json()
    assert doc["attempt_truths"] == [[d.to_json() for d in t or ()] for t in record.truths]


def test_a_failed_throw_keeps_its_attempts_and_no_crops(sim_tower: Any) -> None:
    tower = sim_tower(seed=9)
    tower.camera.inject("leaves_tray")
    with pytest.raises(ThrowFailedError) as exc:
        tower.roll(plain(3))
    record = exc.value.record
    assert record is not None and not record.ok
    assert [(r.action, r.attempt) for r in record.retries] == [("reshake", 0), ("reshake", 1)]
    assert len(record.attempts) == 3 and record.attempts[-1] is record.reading
    assert record.crops == []


def test_a_camera_retry_comes_before_any_reading(sim_tower: Any) -> None:
    tower = sim_tower(seed=7, sim={"fault_rate": 1.0, "faults": ("black",)})
    (record,) = tower.roll(plain(3)).records
    camera = [r for r in record.retries if r.action in ("recapture", "reconnect")]
    assert camera and all(r.attempt is None for r in camera)


def test_the_record_json_holds_every_attempt() -> None:
    first = Reading(dice=(DieReading(box=(1.0, 2.0, 3.0, 4.0), status=ReadStatus.UNREADABLE),))
    second = Reading(dice=(DieReading(box=(1.0, 2.0, 3.0, 4.0), face=5),))
    record = ThrowRecord(reason="test")
    assert record.add_reading(first) == 0 and record.add_reading(second) == 1
    record.retries = [Retry("recapture", "black frame"), Retry("tap", "1 unreadable", 0)]
    doc = json.loads(json.dumps(record.to_json()))
    assert doc["reading"] == second.to_json() and record.reading is second
    assert doc["attempts"] == [first.to_json(), second.to_json()]
    assert doc["attempt_truths"] == [None, None]  # a camera that knows no truth
    assert doc["retries"] == [
        {"action": "recapture", "reason": "black frame", "attempt": None},
        {"action": "tap", "reason": "1 unreadable", "attempt": 0},
    ]

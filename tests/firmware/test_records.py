"""What a throw record keeps: crops cut once from the frame that was read."""

from __future__ import annotations

from typing import Any

from dicetower.firmware.photos import crop_jpeg, encode_jpeg
from dicetower.rules.source import DiceRequest, DieSlot


def plain(n: int) -> DiceRequest:
    return DiceRequest(tuple(DieSlot(i, "d6") for i in range(n)), "test")


def test_the_crops_are_cut_from_the_raw_frame_that_was_read(sim_tower: Any) -> None:
    tower = sim_tower(seed=2)
    (record,) = tower.roll(plain(4)).records
    assert record.reading is not None
    frame = tower._last_frame  # the settled frame the reader read and the photo shows
    assert record.photo == encode_jpeg(frame)
    assert record.crops == [crop_jpeg(frame, d.box) for d in record.reading.dice]
    assert len(record.crops) == len(record.reading.dice) == 5
    assert all(c is not None and c[:2] == b"\xff\xd8" for c in record.crops)
    for a in record.answers:
        assert record.crop_of(a) is record.crops[a.index]

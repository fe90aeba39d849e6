"""A throw for teaching: the cycle's bounds without needing a face; each die its loaded kind and colour."""

from __future__ import annotations

import re
from typing import Any

import cv2
import numpy as np
import pytest
from dicetower.firmware.errors import ThrowFailedError
from dicetower.firmware.records import FailureReason
from dicetower.firmware.tower import open_tower
from dicetower.vision.reading import DieReading, Reading, ReadStatus, UnreadableReason
from tower_helpers import sim_config

WHITE, RED = (0, 0, 235), (0, 204, 200)
LOW, COCKED, UNSURE = UnreadableReason.LOW_CONFIDENCE, UnreadableReason.COCKED, UnreadableReason.KIND_UNSURE


def located(x: float, colour: str, reason: UnreadableReason | None = LOW, kind: str = "d6") -> DieReading:
    """A die as a reader that cannot read its face reports it (a die it was never taught)."""
    face = None if reason is not None else 4
    status = ReadStatus.READ if reason is None else ReadStatus.UNREADABLE
    hsv = RED if colour == "red" else WHITE
    return DieReading((x, 200.0, 50.0, 50.0), kind, face, status, reason, colour=colour, hsv=hsv)


class StandIn:
    """A reader that reports the same dice for every frame (the real one reads the sim's dice well)."""

    def __init__(self, *dice: DieReading) -> None:
        self.dice = dice
        self.calls = 0

    def read(self, frame: np.ndarray, reference: Any = None, tray: Any = None) -> Reading:
        self.calls += 1
        return Reading(self.dice, frame.shape[1], frame.shape[0])


def tower_with(*dice: DieReading) -> Any:
    """The built-in simulated tray (four white d6 and the red wild d6) read by a stand-in."""
    return open_tower(sim_config(3), reader=StandIn(*dice))


def test_dice_whose_faces_cannot_be_read_count_at_once_with_their_loaded_kind_and_colour() -> None:
    dice = [located(20, "white"), located(100, "white"), located(180, "red"), located(260, "white")]
    dice.append(located(340, "white", reason=None))
    with tower_with(*dice) as tower:
        record = tower.throw_for_teaching()
        assert record.ok and record.retries == [] and tower.reader.calls == 1
        assert [(t.kind, t.colour) for t in record.teach] == [("d6", "white")] * 2 + [("d6", "red")] + [
            ("d6", "white")
        ] * 2
        crop = cv2.imdecode(np.frombuffer(record.teach[0].crop, np.uint8), cv2.IMREAD_COLOR)
        assert crop.shape == (128, 128, 3)  # lossless, at the reader's margin
        assert len(record.crops) == 5 and record.photo  # the throw's usual photo and JPEG crops too
        # the same tray rolled for a roll: the unread faces are tapped, then thrown again, then fail
        with pytest.raises(ThrowFailedError) as failed:
            tower.throw()
        assert failed.value.reason is FailureReason.UNREADABLE


def test_a_leaning_die_is_tapped_and_thrown_again_as_in_the_roll_cycle() -> None:
    dice = [located(20 + 80 * i, "white") for i in range(4)] + [located(340, "red", COCKED)]
    with tower_with(*dice) as tower, pytest.raises(ThrowFailedError) as failed:
        tower.throw_for_teaching()
    record = failed.value.record
    assert failed.value.reason is FailureReason.UNREADABLE
    cycle = tower.config.cycle
    assert [r.action for r in record.retries] == ["tap"] * cycle.max_taps + ["reshake"] * cycle.max_reshakes
    assert all("not lying flat (cocked)" in r.reason for r in record.retries)


@pytest.mark.parametrize(
    ("dice", "reason", "text"),
    [
        ([located(20 + 80 * i, "white") for i in range(4)], FailureReason.DIE_MISSING, "4 of the 5 dice"),
        ([located(20 + 80 * i, "white") for i in range(6)], FailureReason.EXTRA_DIE, "6 found, 5 loaded"),
        (
            [located(20 + 80 * i, "white") for i in range(4)] + [located(340, "red", None, kind="d20")],
            FailureReason.DIE_MISSING,
            "the red d6 (wild) not seen (d20 in its place)",
        ),
    ],
)
def test_missing_extra_and_foreign_dice_are_thrown_again_then_fail_with_the_cycle_s_reasons(
    dice: list[DieReading], reason: FailureReason, text: str
) -> None:
    with tower_with(*dice) as tower:
        with pytest.raises(ThrowFailedError, match=re.escape(text)) as failed:
            tower.throw_for_teaching()
        assert failed.value.reason is reason
        assert [r.action for r in failed.value.record.retries] == [
            "reshake"
        ] * tower.config.cycle.max_reshakes
        assert not tower.shaker.pin.state


def test_a_die_of_an_unsure_kind_is_told_by_its_colour() -> None:
    dice = [located(20 + 80 * i, "white") for i in range(4)] + [located(340, "red", UNSURE, kind="d10")]
    with tower_with(*dice) as tower:
        record = tower.throw_for_teaching()
    assert record.ok and (record.teach[4].kind, record.teach[4].colour) == ("d6", "red")


def test_the_real_reader_on_the_sim_tray_files_every_die_under_its_own_kind() -> None:
    from dicetower.firmware.config import DiceSet, TrayDie

    tray = DiceSet((TrayDie("d20", "blue"), TrayDie("d10t", "red", "tens"), TrayDie("d10", "white", "units")))
    with open_tower(sim_config(8, dice=tray)) as tower:
        for _ in range(3):
            record = tower.throw_for_teaching()
            assert record.truth is not None and record.reading is not None
            for die, teach in zip(record.reading.dice, record.teach, strict=True):
                cx, cy = die.centre
                truth = min(
                    record.truth, key=lambda t: abs(t.box[0] + t.box[2] / 2 - cx) + abs(t.box[1] - cy)
                )
                assert truth.die == teach.kind

"""The tower knows how many dice it threw: a missing die is looked for again, an extra one is named."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from dicetower.firmware.config import TrayDie
from dicetower.firmware.errors import ThrowFailedError
from dicetower.firmware.matching import count_problem
from dicetower.firmware.records import FailureReason
from dicetower.firmware.tower import open_tower
from dicetower.vision.reading import DieReading, Reading, ReadStatus
from dicetower.vision.running_tray import RECENT_THROWS
from tower_helpers import sim_config

WHITE, RED, BLUE = (0, 0, 235), (0, 204, 200), (110, 200, 180)
LOADED = [TrayDie("d6", "white")] * 4 + [TrayDie("d6", "red", "wild")]


def die(x: float, colour: str, hsv: tuple[int, int, int], kind: str = "d6", y: float = 200.0) -> DieReading:
    return DieReading((x, y, 50.0, 50.0), kind, 4, ReadStatus.READ, None, colour=colour, hsv=hsv)


def five(extra: list[DieReading] | None = None, throw: int = 0) -> Reading:
    """Five dice in a row, the row lower in the tray on each ``throw`` (dice land elsewhere each time)."""
    y = 40.0 + (throw * 67) % 360
    dice = [die(20 + 80 * i, "white", WHITE, y=y) for i in range(4)] + [die(340, "red", RED, y=y)]
    return Reading(tuple(dice + (extra or [])), 640, 480)


@pytest.mark.parametrize(
    ("extra", "why"),
    [
        (die(500, "white", WHITE, kind="d20"), "the white d20 at (525, 225): no d20 is loaded"),
        (die(500, "blue", BLUE), "the blue d6 at (525, 225): no blue die is loaded"),
    ],
)
def test_an_extra_die_is_named_with_its_place_and_why_it_is_the_odd_one_out(
    extra: DieReading, why: str
) -> None:
    reason, text = count_problem(five([extra]), LOADED)  # type: ignore[misc]
    assert reason is FailureReason.EXTRA_DIE
    assert text == f"extra die: 6 found, 5 loaded; {why}"


def test_one_die_more_of_a_loaded_kind_and_colour_says_so() -> None:
    reading = Reading((*five().dice, die(500, "red", RED)), 640, 480)
    reason, text = count_problem(reading, LOADED)  # type: ignore[misc]
    assert reason is FailureReason.EXTRA_DIE
    assert re.fullmatch(
        r"extra die: 6 found, 5 loaded; the red d6 at \(\d+, 225\): one red d6 more than loaded", text
    )


class HidesADieFromThePhoto:
    """A reader that misses a die against the calibration photo, once it has seen a few throws.

    It stands for a die the calibration photo hides (the camera nudged since): against any other
    empty tray (the running median of the recent throws) all five are found. It reports the dice
    where the simulated camera drew them, as the real reader would find them.
    """

    def __init__(self) -> None:
        self.photo: np.ndarray | None = None
        self.camera: Any = None
        self.calls: list[str] = []

    def dice(self, frame: np.ndarray) -> tuple[DieReading, ...]:
        return tuple(
            DieReading(t.box, "d6", 4, ReadStatus.READ, None, colour="white", hsv=WHITE)  # type: ignore[arg-type]
            for t in self.camera.truth
        )

    def read(self, frame: np.ndarray, reference: Any = None, tray: Any = None) -> Reading:
        against = "photo" if reference is self.photo else "other"
        self.calls.append(against)
        dice = self.dice(frame)
        if len(self.calls) > RECENT_THROWS and against == "photo":
            dice = dice[:4]
        return Reading(dice, frame.shape[1], frame.shape[0])


def test_a_missing_die_is_looked_for_again_against_the_running_tray_before_anything_is_shaken() -> None:
    reader = HidesADieFromThePhoto()
    with open_tower(sim_config(3), reader=reader) as tower:
        reader.photo, reader.camera = tower.calibration.reference, tower.camera
        for _ in range(RECENT_THROWS):
            assert tower.throw().retries == []
        record = tower.throw()
        assert record.ok and record.retries == []  # the second look found the fifth die: no reshake
        assert len(record.reading.dice) == 5
        assert reader.calls[-2:] == ["photo", "other"]
        assert tower._tray_reader.found_again == 1


def test_a_die_missing_against_both_trays_is_thrown_again_then_fails_as_before() -> None:
    class MissesOne(HidesADieFromThePhoto):
        def read(self, frame: np.ndarray, reference: Any = None, tray: Any = None) -> Reading:
            self.calls.append("photo" if reference is self.photo else "other")
            return Reading(self.dice(frame)[:4], frame.shape[1], frame.shape[0])

    reader = MissesOne()
    with open_tower(sim_config(3), reader=reader) as tower:
        reader.photo, reader.camera = tower.calibration.reference, tower.camera
        with pytest.raises(ThrowFailedError, match="4 of the 5 dice") as failed:
            tower.throw()
        assert failed.value.reason is FailureReason.DIE_MISSING
        assert [r.action for r in failed.value.record.retries] == [
            "reshake"
        ] * tower.config.cycle.max_reshakes

"""Slots to dice by colour: a role die near its configured colour is found, never a far one."""

from __future__ import annotations

import pytest
from dicetower.firmware.config import DiceSet
from dicetower.firmware.matching import NoDieForSlot, loaded_colours, match_slots, reading_problem, role_dice
from dicetower.firmware.records import FailureReason
from dicetower.rules.source import DieSlot, Role
from dicetower.vision.colour import colour_name
from dicetower.vision.reading import DieReading, Reading

PALE_RED = (175, 70, 235)  # the reader names it white; a few delta E from red
RED = (0, 220, 200)
WHITE = (0, 10, 240)
DICE = DiceSet.parse({"plain": "2 white d6", "wild": "red d6"})


def _reading(*hsvs: tuple[int, int, int]) -> Reading:
    return Reading(
        dice=tuple(
            DieReading(box=(10.0 + 40 * i, 10.0, 20.0, 20.0), kind="d6", face=4, colour=colour_name(h), hsv=h)
            for i, h in enumerate(hsvs)
        )
    )


def test_a_pale_red_wild_die_named_white_is_still_the_wild_die() -> None:
    reading = _reading(WHITE, PALE_RED, WHITE)
    assert [d.colour for d in reading.dice] == ["white", "white", "white"]
    assert reading_problem(reading, DICE.dice, DICE, {"wild"}) is None
    slots = [DieSlot(0, "d6", Role.WILD), DieSlot(1, "d6", Role.PLAIN), DieSlot(2, "d6", Role.PLAIN)]
    answers = match_slots(slots, reading, DICE.dice, {"wild"})
    assert [a.index for a in answers] == [1, 0, 2]


def test_no_die_near_red_is_a_missing_wild_die() -> None:
    reading = _reading(WHITE, WHITE, WHITE)
    assert role_dice(reading.dice, DICE.dice) == {}
    problem = reading_problem(reading, DICE.dice, DICE, {"wild"})
    assert problem is not None and problem[0] is FailureReason.ROLE_DIE_MISSING
    assert "was not seen" in problem[1]
    with pytest.raises(NoDieForSlot):
        match_slots([DieSlot(0, "d6", Role.WILD)], reading, DICE.dice, {"wild"})


def test_two_red_dice_are_not_one_wild_die() -> None:
    problem = reading_problem(_reading(RED, WHITE, RED), DICE.dice, DICE, {"wild"})
    assert problem is not None and problem[0] is FailureReason.ROLE_DIE_MISSING
    assert "seen 2 times" in problem[1]


def test_answers_name_the_loaded_colour_not_the_readers() -> None:
    # "4 white d6" and a red wild die: the reader calls two white dice translucent and grey
    tray = DiceSet.parse({"plain": "4 white d6", "wild": "red d6"})
    reading = Reading(
        dice=tuple(
            DieReading(box=(10.0 + 40 * i, 10.0, 20.0, 20.0), kind="d6", face=3, colour=name, hsv=hsv)
            for i, (name, hsv) in enumerate(
                [
                    ("translucent", WHITE),
                    ("white", WHITE),
                    ("red", RED),
                    ("grey", (0, 12, 170)),
                    ("white", WHITE),
                ]
            )
        )
    )
    slots = [DieSlot(k, "d6", Role.PLAIN) for k in range(4)] + [DieSlot(4, "d6", Role.WILD)]
    answers = match_slots(slots, reading, tray.dice, {"wild"})
    assert [a.colour for a in answers] == ["white"] * 4 + ["red"]
    assert answers[4].index == 2
    assert answers[0].describe().startswith("slot 0 (d6): white die at")
    assert "translucent" not in " ".join(a.describe() for a in answers)


def test_a_die_of_a_kind_the_tray_lacks_keeps_the_readers_name() -> None:
    reading = _reading(WHITE)
    tray = DiceSet.parse({"plain": "blue d20"})
    assert loaded_colours(reading.dice, tray.dice) == {}

"""The faces seen often enough, estimated from group sizes, and the rolls still needed."""

from __future__ import annotations

from dicetower.vision.taught.coverage import DieCoverage, rolls_to_go

D20 = tuple(range(1, 21))


def test_no_rolls_are_needed_once_every_face_has_its_crops() -> None:
    assert rolls_to_go([8] * 6, 6, 1, 8) == 0
    assert rolls_to_go([9, 8, 12, 8, 8, 30], 6, 2, 8) == 0


def test_fewer_crops_need_more_rolls_and_two_dice_a_throw_need_about_half() -> None:
    nothing, some, most = (
        rolls_to_go([], 20, 1, 8),
        rolls_to_go([4] * 20, 20, 1, 8),
        rolls_to_go([8] * 19, 20, 1, 8),
    )
    assert nothing > some > most > 0
    # one face short by all 8 crops at 1 in 20 a roll: about 160 rolls (a little more: the median's spread)
    assert 140 <= most <= 220
    two = rolls_to_go([4] * 20, 20, 2, 8)
    assert 0.4 * some <= two <= 0.6 * some
    assert rolls_to_go([4] * 20, 20, 1, 8) == some  # a fixed seed: the same counts, the same answer


def test_the_estimate_says_how_many_faces_and_what_the_general_reader_read_as_a_hint() -> None:
    cover = DieCoverage("blue d20", D20, (10,) * 17 + (3, 2, 1), 1, 8, {5: 9, 17: 2})
    assert (cover.seen, cover.missing, cover.done, cover.crops) == (17, 3, False, 176)
    text = cover.describe()
    assert text.startswith(
        "blue d20: 17 of 20 faces seen at least 8 times (estimated by grouping 176 crops); roll about "
    )
    assert text.endswith(" more")
    hint = cover.hint()
    assert hint.startswith("blue d20: the general reader (a hint: it reads untaught dice poorly) read these")
    assert "17 (2)" in hint and ", 5 (" not in hint and ": 1 (0)" in hint


def test_a_die_whose_groups_all_hold_enough_is_done_and_says_no_more() -> None:
    cover = DieCoverage("white d6", tuple(range(1, 7)), (9, 9, 8, 8, 8, 8), 2, 8, {})
    assert cover.done and cover.rolls_more() == 0
    assert cover.describe() == "white d6: 6 of 6 faces seen at least 8 times (estimated by grouping 50 crops)"

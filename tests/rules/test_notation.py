"""Dice notation: exact totals from typed-in faces for every operator and modifier."""

from __future__ import annotations

import pytest
from dicetower.rules import (
    ExtraFacesError,
    FaceMissingError,
    FaceRangeError,
    FixedSource,
    Flag,
    Purpose,
    RandomSource,
    Role,
    Roller,
    RollZeroDivisionError,
    parse,
    roll,
)


def total(expr: str, *faces: int) -> int:
    return roll(expr, source=FixedSource(faces)).total


def test_brief_example_4d6kh3_plus_2() -> None:
    result = roll("4d6kh3+2", source=FixedSource([1, 4, 5, 6]))
    assert result.total == 17
    assert str(result) == "4d6kh3 (~~1~~, 4, 5, 6) + 2 = 17"
    flags = [d.flags for d in result.dice]
    assert flags[0] == {Flag.DROPPED}
    assert all(f == {Flag.KEPT} for f in flags[1:])


@pytest.mark.parametrize(
    ("expr", "faces", "expected"),
    [
        ("7", (), 7),
        ("1d20+5", (12,), 17),
        ("d20", (20,), 20),
        ("2d6", (3, 4), 7),
        ("2d6-3", (3, 4), 4),
        ("2*3+4", (), 10),
        ("2+3*4", (), 14),
        ("(2+3)*4", (), 20),
        ("7/2", (), 3),
        ("-7/2", (), -4),  # floor division, as documented
        ("10-2-3", (), 5),  # left associative
        ("12/2/3", (), 2),
        ("-1d6", (4,), -4),
        ("--3", (), 3),
        ("+3", (), 3),
        ("1d6 - -2", (1,), 3),
        ("(1d8+3)*2", (5,), 16),
        ("0d6+1", (), 1),
        ("1d1", (1,), 1),
    ],
)
def test_arithmetic(expr: str, faces: tuple[int, ...], expected: int) -> None:
    assert total(expr, *faces) == expected


def test_d10_printed_zero_is_worth_ten() -> None:
    result = roll("2d10", source=FixedSource([0, 7]))
    assert result.total == 17
    assert [(d.face, d.value) for d in result.dice] == [(0, 10), (7, 7)]


@pytest.mark.parametrize(
    ("expr", "faces", "expected"),
    [
        ("d%", (40, 5), 45),
        ("d%", (0, 0), 0),
        ("d%", (90, 9), 99),
        ("d100", (0, 0), 100),  # 00 + 0 reads 100 so d100 is 1-100 (Wizard Quest resistance)
        ("d100", (0, 1), 1),
        ("d100", (20, 5), 25),
        ("2d%", (10, 0, 0, 3), 13),
        ("d%+1", (40, 5), 46),
    ],
)
def test_percentile_pairs(expr: str, faces: tuple[int, ...], expected: int) -> None:
    assert total(expr, *faces) == expected


def test_percentile_pair_slots_have_roles_and_own_values() -> None:
    result = roll("d%", source=FixedSource([70, 0]))
    tens, units = result.dice
    assert (tens.slot.die, tens.slot.role, tens.face, tens.value) == ("d10t", Role.TENS, 70, 70)
    assert (units.slot.die, units.slot.role, units.face, units.value) == ("d10", Role.UNITS, 0, 0)
    assert result.total == 70


def test_percentile_tens_face_must_be_a_multiple_of_ten() -> None:
    with pytest.raises(FaceRangeError):
        roll("d%", source=FixedSource([45, 5]))


@pytest.mark.parametrize(
    ("expr", "faces", "expected"),
    [
        ("4d6kh3", (1, 4, 5, 6), 15),
        ("4d6kh", (1, 4, 5, 6), 6),  # default count 1
        ("4d6kl2", (1, 4, 5, 6), 5),
        ("4d6dh1", (1, 4, 5, 6), 10),
        ("4d6dl1", (1, 4, 5, 6), 15),
        ("4d6dl", (1, 4, 5, 6), 15),
        ("2d20kl1", (17, 3), 3),
        ("2d20kh1", (17, 3), 17),
        ("3d6kh5", (1, 2, 3), 6),  # keeping more than rolled keeps all
        ("3d6kh0", (1, 2, 3), 0),
        ("4d6kh3kl2", (1, 4, 5, 6), 9),  # keeps apply in written order
        ("8d6kh3+2", (1, 2, 3, 4, 5, 6, 6, 1), 19),
    ],
)
def test_keep_and_drop(expr: str, faces: tuple[int, ...], expected: int) -> None:
    assert total(expr, *faces) == expected


def test_keep_ties_keep_the_earlier_die() -> None:
    result = roll("3d6kh1", source=FixedSource([5, 5, 2]))
    assert [Flag.KEPT in d.flags for d in result.dice] == [True, False, False]


def test_explosion_on_max_chains_and_names_the_exploding_slot() -> None:
    result = roll("3d6!", source=FixedSource([6, 2, 3, 6, 1]))
    assert result.total == 18
    dice = result.dice
    assert [d.face for d in dice] == [6, 2, 3, 6, 1]
    assert dice[3].slot.purpose is Purpose.EXPLOSION and dice[3].slot.of_slot == 0
    assert dice[4].slot.purpose is Purpose.EXPLOSION and dice[4].slot.of_slot == 3
    assert Flag.EXPLODED in dice[0].flags and Flag.EXPLODED in dice[3].flags
    assert Flag.EXPLODED not in dice[4].flags
    assert str(result) == "3d6! (6!, 6!, 1, 2, 3) = 18"


def test_explosions_are_separate_throws_after_one_initial_throw() -> None:
    result = roll("3d6!", source=FixedSource([6, 6, 3, 6, 1, 2]))
    sizes: dict[str, int] = {}
    for slot, _face in result.thrown:
        sizes[slot.purpose.value] = sizes.get(slot.purpose.value, 0) + 1
    assert sizes == {"base": 3, "explosion": 3}
    assert result.total == 6 + 6 + 3 + 6 + 1 + 2


@pytest.mark.parametrize(
    ("expr", "faces", "expected"),
    [
        ("2d6!>=5", (5, 2, 1), 8),
        ("2d6!5", (5, 2, 6), 13),  # a bare number explodes on exactly that value
        ("2d6!=5", (5, 2, 6), 13),
        ("1d10!", (0, 0, 4), 24),  # a d10's 0 is 10, the max
        ("1d6!<=2", (1, 2, 5), 8),
    ],
)
def test_explosion_conditions(expr: str, faces: tuple[int, ...], expected: int) -> None:
    assert total(expr, *faces) == expected


def test_reroll_while_condition_holds() -> None:
    result = roll("2d6r1", source=FixedSource([1, 4, 1, 3]))
    assert result.total == 7
    dice = result.dice
    assert [d.face for d in dice] == [1, 4, 1, 3]
    assert Flag.REROLLED in dice[0].flags and Flag.REROLLED in dice[2].flags
    assert dice[2].slot.purpose is Purpose.REROLL and dice[2].slot.of_slot == 0
    assert dice[3].slot.of_slot == 2
    assert str(result) == "2d6r1 (~~1~~, ~~1~~, 3, 4) = 7"


def test_reroll_once_keeps_the_second_roll() -> None:
    assert total("2d6ro1", 1, 4, 1) == 5
    assert total("3d6ro<3", 1, 2, 6, 2, 5) == 13
    assert total("1d6ro<=2", 3) == 3


def test_reroll_then_explode_then_keep() -> None:
    # 1 rerolled to 6, which explodes into 2; keep the best two of (6, 2, 5)
    assert total("2d6r1!kh2", 1, 5, 6, 2) == 11


@pytest.mark.parametrize(
    ("expr", "faces", "expected"),
    [
        ("4d6mi3", (1, 2, 5, 6), 3 + 3 + 5 + 6),
        ("4d6ma4", (1, 2, 5, 6), 1 + 2 + 4 + 4),
        ("4d6mi2ma5", (1, 2, 5, 6), 2 + 2 + 5 + 5),
    ],
)
def test_min_max_clamps(expr: str, faces: tuple[int, ...], expected: int) -> None:
    assert total(expr, *faces) == expected


@pytest.mark.parametrize(
    ("expr", "faces", "expected"),
    [
        ("6d6>=4", (1, 2, 3, 4, 5, 6), 3),
        ("6d6>4", (1, 2, 3, 4, 5, 6), 2),
        ("6d6<=2", (1, 2, 3, 4, 5, 6), 2),
        ("6d6<2", (1, 2, 3, 4, 5, 6), 1),
        ("6d6=6", (1, 2, 3, 4, 5, 6), 1),
        ("6d6>=4w6:5", (1, 2, 3, 4, 5, 6), 1 + 1 + 5),  # Wizard Quest: an Ace counts 5
        ("6d6>=4w6:5f1", (1, 1, 3, 4, 5, 6), 7 - 2),  # successes minus counted failures
        ("4d6>=5w5:0", (5, 6, 6, 5), 2),  # a weight of 0 makes a matching face worth nothing
        ("d%<=45", (40, 5), 1),  # WCRPG-style roll-under a percentile target
        ("d%<=45", (40, 6), 0),
    ],
)
def test_success_counting(expr: str, faces: tuple[int, ...], expected: int) -> None:
    assert total(expr, *faces) == expected


def test_success_flags_aces_and_failures() -> None:
    result = roll("6d6>=4w6:5f1", source=FixedSource([1, 2, 4, 6, 6, 1]))
    assert result.successes == 1 + 5 + 5
    assert result.failures == 2
    assert result.total == 11 - 2
    flags = [d.flags for d in result.dice]
    assert flags[0] == {Flag.BOTCH, Flag.ONE}
    assert flags[1] == frozenset()
    assert flags[2] == {Flag.SUCCESS}
    assert flags[3] == {Flag.SUCCESS, Flag.ACE}
    assert str(result) == "6d6>=4w6:5f1 (_1_, 2, **4**, **6**, **6**, _1_) = 9"


def test_failures_without_target_leave_the_sum() -> None:
    result = roll("3d6f1", source=FixedSource([1, 1, 5]))
    assert result.total == 7
    assert result.failures == 2
    assert result.successes is None


def test_failure_condition_counts_more_than_ones() -> None:
    result = roll("4d6>=5f<=2", source=FixedSource([1, 2, 5, 6]))
    assert (result.successes, result.failures, result.total) == (2, 2, 0)
    assert Flag.ONE not in result.dice[1].flags and Flag.BOTCH in result.dice[1].flags


def test_dropped_dice_do_not_count_successes() -> None:
    assert total("3d6kh1>=4", 6, 5, 1) == 1


@pytest.mark.parametrize(
    ("expr", "faces", "expected", "canonical"),
    [
        ("d6x4", (1, 2, 3, 6), 12, "1d6x4"),  # Wizard Quest "#1 d6x4": four d6 rolls
        ("20x10", (1, 2, 3, 4, 5, 6, 7, 8, 9, 20), 65, "1d20x10"),  # "#1 20x10": ten d20 rolls
        ("d100", (20, 5), 25, "1d100"),  # "#1 d100": 1-100
        ("2d6x2", (1, 2, 3, 4), 10, "2d6x2"),
        ("d6>=4w6:5x4", (6, 4, 1, 2), 6, "1d6>=4w6:5x4"),
    ],
)
def test_rolz_codes_from_the_wizard_quest_rule_book(
    expr: str, faces: tuple[int, ...], expected: int, canonical: str
) -> None:
    result = roll(expr, source=FixedSource(faces))
    assert result.total == expected
    assert str(result.expr) == canonical


def test_repeat_sets_are_separate_throws_and_print_separately() -> None:
    result = roll("d6x4", source=FixedSource([1, 2, 3, 6]))
    assert len({s.slot for s, _ in result.thrown}) == 4
    assert str(result) == "1d6x4 (1; 2; 3; 6) = 12"
    assert [s.total for s in result.root.children] == [1, 2, 3, 6]


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("d20+5", "1d20 + 5"),
        ("4D6KH3", "4d6kh3"),
        ("  2d6 *( 3 - 1 ) ", "2d6 * (3 - 1)"),
        ("3d6!>=5r1", "3d6r1!>=5"),
        ("6d6f1>=4w6:5", "6d6>=4w6:5f1"),
        ("4d6kh", "4d6kh1"),
        ("d%", "1d%"),
        ("2d6!=5", "2d6!5"),
        ("4d6ro=1", "4d6ro1"),
        ("10d10mi2ma9", "10d10mi2ma9"),
        ("-(-d4)", "-(-1d4)"),
    ],
)
def test_canonical_notation(text: str, canonical: str) -> None:
    node = parse(text)
    assert str(node) == canonical
    assert parse(canonical) == node  # canonical text parses back to the same tree


def test_every_die_goes_through_the_source_in_order() -> None:
    result = roll("1d4+1d6+1d8", source=FixedSource([4, 6, 8]))
    assert [(s.die, f) for s, f in result.thrown] == [("d4", 4), ("d6", 6), ("d8", 8)]
    assert [s.slot for s, _ in result.thrown] == [0, 1, 2]


def test_fixed_source_too_few_and_too_many_faces() -> None:
    with pytest.raises(FaceMissingError):
        roll("3d6", source=FixedSource([1, 2]))
    with pytest.raises(ExtraFacesError):
        roll("1d6", source=FixedSource([1, 2]))
    with pytest.raises(FaceMissingError):
        roll("1d6!", source=FixedSource([6]))  # the explosion needs another face


def test_division_by_zero_is_a_dice_error() -> None:
    with pytest.raises(RollZeroDivisionError):
        total("1d6/(1d2-1)", 3, 1)


def test_roller_parse_cache_is_bounded_and_shares_trees() -> None:
    roller = Roller(cache_size=2)
    a = roller.parse("1d6")
    assert roller.parse("1d6") is a
    roller.parse("1d8")
    roller.parse("1d10")
    assert len(roller._cache) == 2
    assert roller.parse("1d6") == a


def test_roller_rolls_a_parsed_tree() -> None:
    roller = Roller(cache_size=0)
    node = roller.parse("2d6+1")
    assert roller.roll(node, FixedSource([2, 3])).total == 6
    assert roller.roll(node, FixedSource([6, 6])).total == 13


def test_random_source_is_the_default_and_in_range() -> None:
    for _ in range(20):
        assert 3 <= roll("3d6").total <= 18
    assert 1 <= roll("1d20", RandomSource(seed=5)).total <= 20


def test_roll_refuses_what_is_not_notation() -> None:
    with pytest.raises(TypeError):
        Roller().roll(42)  # type: ignore[arg-type]

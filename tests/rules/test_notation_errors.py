"""Dice notation refusals: syntax errors name the position, every limit has its own error."""

from __future__ import annotations

import pytest
from dicetower.rules import DiceError, FixedSource, RandomSource, RollLimitError, RollSyntaxError, parse, roll
from dicetower.rules.notation import MAX_DEPTH, MAX_DICE, MAX_LENGTH, MAX_NESTING, MAX_SIDES


@pytest.mark.parametrize(
    ("text", "position"),
    [
        ("", 0),
        ("   ", 3),
        ("1+", 2),
        ("1 +", 3),
        ("d", 1),
        ("4d", 2),
        ("4d6q", 3),
        ("4d6 kh3", 4),
        ("(1+2", 4),
        ("1+2)", 3),
        (")", 0),
        ("1d0", 2),
        ("4d6k3", 3),
        ("3d6>", 4),
        ("3d6>=x", 5),
        ("3d6r", 4),
        ("3d6r1r2", 5),
        ("3d6!!", 4),
        ("3d6>=4<2", 6),
        ("3d6f1f2", 5),
        ("6d6>=4w7:2", 7),
        ("6d6>=4w6", 8),
        ("6d6>=4w6:5w6:1", 11),
        ("3d6mi", 5),
        ("1d6x0", 4),
        ("1d6x", 4),
        ("abc", 0),
        ("1d6 $", 4),
        ("2é", 1),
        ("1d6+*2", 4),
    ],
)
def test_syntax_errors_name_the_position(text: str, position: int) -> None:
    with pytest.raises(RollSyntaxError) as info:
        parse(text)
    err = info.value
    assert err.position == position, err
    assert err.expression == text
    assert str(err).endswith(f"at column {position + 1}") and err.column == position + 1  # counted from 1


def test_pretty_draws_a_caret_under_the_error() -> None:
    with pytest.raises(RollSyntaxError) as info:
        parse("4d6kh3+2q")
    lines = info.value.pretty().splitlines()
    assert lines[0] == "4d6kh3+2q"
    assert lines[1] == " " * 8 + "^"
    assert "unexpected 'q'" in lines[2]


def test_syntax_error_reports_what_was_expected() -> None:
    with pytest.raises(RollSyntaxError) as info:
        parse("4d6z")
    assert info.value.got == "z"
    assert "kh" in info.value.expected


def test_syntax_errors_are_value_errors_and_dice_errors() -> None:
    with pytest.raises(ValueError):
        parse("+")
    with pytest.raises(DiceError):
        parse("+")


def test_non_string_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        parse(42)  # type: ignore[arg-type]


# -- limits --------------------------------------------------------------------------------


def test_oversized_dice_are_refused_at_parse_time() -> None:
    with pytest.raises(RollLimitError, match="10000 dice"):
        parse("10000d10000")
    with pytest.raises(RollLimitError, match="sides"):
        parse(f"1d{MAX_SIDES + 1}")
    parse(f"1d{MAX_SIDES}")


def test_dice_limit_counts_every_term_and_repeat() -> None:
    parse(f"{MAX_DICE}d6")
    with pytest.raises(RollLimitError):
        parse(f"{MAX_DICE}d6+1d6")
    with pytest.raises(RollLimitError):
        parse(f"{MAX_DICE // 2 + 1}d%")  # a percentile roll is two physical dice
    with pytest.raises(RollLimitError):
        parse("100d6x11")
    parse("100d6x10")
    with pytest.raises(RollLimitError):
        parse(f"1d6x{MAX_DICE + 1}")


def test_expression_length_limit() -> None:
    ok = "+".join(["1"] * (MAX_LENGTH // 2)) + "1"
    assert len(ok) <= MAX_LENGTH
    parse(ok)
    too_long = "1" + "+1" * (MAX_LENGTH // 2)
    assert len(too_long) > MAX_LENGTH
    with pytest.raises(RollLimitError, match="characters"):
        parse(too_long)


def test_nesting_limit_for_parentheses_and_signs() -> None:
    parse("(" * MAX_NESTING + "1" + ")" * MAX_NESTING)
    with pytest.raises(RollLimitError, match="nests"):
        parse("(" * (MAX_NESTING + 1) + "1" + ")" * (MAX_NESTING + 1))
    parse("-" * MAX_NESTING + "1")
    with pytest.raises(RollLimitError, match="nests"):
        parse("-" * (MAX_NESTING + 1) + "1")


def test_explosion_and_reroll_that_would_never_stop_are_refused() -> None:
    for text in ("1d6!>=1", "1d6!<7", "1d1!", "1d6r<=6", "1d6r>0", "d%r<100", "d100!>=1"):
        with pytest.raises(RollLimitError):
            parse(text)
    parse("1d6ro<=6")  # rerolling once always stops


def test_explosion_chain_depth_is_bounded() -> None:
    faces = [6] * (MAX_DEPTH + 1)
    with pytest.raises(RollLimitError, match="exploded"):
        roll("1d6!", source=FixedSource(faces))
    # a chain of exactly MAX_DEPTH explosions is fine
    assert roll("1d6!", source=FixedSource([6] * MAX_DEPTH + [1])).total == 6 * MAX_DEPTH + 1


def test_reroll_chain_depth_is_bounded() -> None:
    with pytest.raises(RollLimitError, match="rerolled"):
        roll("1d6r1", source=FixedSource([1] * (MAX_DEPTH + 1)))
    assert roll("1d6r1", source=FixedSource([1] * MAX_DEPTH + [4])).total == 4


def test_runtime_dice_budget_counts_explosions() -> None:
    # 999 initial dice parse fine; explosions push the roll past the budget at run time
    faces = [6] * 999 + [6, 6]
    with pytest.raises(RollLimitError, match="more than"):
        roll("999d6!", source=FixedSource(faces))


def test_random_explosions_stay_within_the_budget() -> None:
    # d2! explodes half the time; 900 dice will try to throw ~900 more and hit the budget
    with pytest.raises(RollLimitError):
        roll("900d2!", source=RandomSource(seed=1))

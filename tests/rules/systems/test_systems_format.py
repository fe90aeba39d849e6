"""The one-line chat text of a check: faces, signs, exact halves and near-certain odds."""

from __future__ import annotations

from fractions import Fraction

import pytest
from dicetower.rules.source import FixedSource
from dicetower.rules.systems import get_system, run_check
from dicetower.rules.systems.format import format_exact, format_number, format_probability, format_result


def line(system: str, check: str, faces: list[int], **params) -> str:
    return format_result(run_check(get_system(system), check, FixedSource(faces), params))


@pytest.mark.parametrize(
    ("p", "text"),
    [
        (Fraction(193, 216), "89.35%"),
        (Fraction(1, 20), "5%"),
        (Fraction(0), "0%"),
        (Fraction(1), "100%"),
        (1 - Fraction(1, 10**6), "99.9999%"),
    ],
)
def test_probability_text(p, text):
    assert format_probability(p) == text


def test_probability_closer_to_one_than_a_float_is_still_not_certain():
    # float(1 - 1e-20) == 1.0: the "certain" test must be exact, not on the float.
    assert format_probability(1 - Fraction(1, 10**20)) == "100% − 1.00e-18%"
    assert format_probability(Fraction(1, 10**400)) == "1.00e-398%"


def test_probability_too_close_to_one_for_eight_decimals_is_not_shown_as_certain():
    # 300d6 succeeds with P = 1 - 2.5e-14: rounding it to "100.%" would claim certainty.
    p = 1 - Fraction(1, 4 * 10**13)
    text = format_probability(p)
    assert text == "100% − 2.50e-12%"
    assert format_probability(
        get_system("wizard-quest")
        .check("pool")
        .odds(level=300, botch_rule="dice", focus=0, focus_used=0)
        .probabilities["success"]
    ).startswith("100% − ")


@pytest.mark.parametrize(
    ("x", "text"),
    [
        (Fraction(11, 2), "5.5"),
        (Fraction(151, 2), "75.5"),
        (Fraction(4), "4"),
        (Fraction(1, 3), "1/3"),
        (7, "7"),
        (Fraction(-3, 2), "-1.5"),
        (Fraction(3) + Fraction(1, 10**320), "3.0"),  # a typed-in 1e-320 is not 320 digits of chat
    ],
)
def test_numbers_keep_exact_halves_as_decimals(x, text):
    assert format_number(x) == text


def test_half_damage_reads_as_a_decimal():
    # "do not round the number ... e.g. 75.5%": the chat line says 5.5, not 11/2.
    text = line("duelling", "spell-damage", [6, 5, 1], power=4, resistance=3, half=True, target_health=80)
    assert "5.5% damage" in text and "11/2" not in text
    assert "health 80 → 74.5" in text


def test_half_health_is_visible():
    # the line says how much was healed and the health it leaves
    text = line("duelling", "health", [3], half=True, current_health=74)
    assert "+1.5% health" in text and "74 → 75.5" in text


def test_subtracted_dice_carry_a_minus_sign():
    # Runic Flux: wild 1 then a botch reroll of 6 that is subtracted; Duelling: the resistance die.
    text = line("runic-flux", "skill", [3, 1, 6], level=1, difficulty=10)
    assert ": 3 1 −6 → " in text
    text = line("duelling", "physical-damage", [4, 4, 2], strength=1, resistance=1)
    assert ": 4 4 −2 → " in text


def test_runic_flux_line_names_the_wild_die():
    text = line("runic-flux", "skill", [3, 6, 6, 2], level=1, stat=2, difficulty=10)
    assert "skill 3 + wild 14 (critical) + stat 2 = 19 vs 10 (Easy)" in text


def test_wcrpg_sum_line_shows_each_die_value():
    # "xd5 ... a result of 7 becomes a result of 4 ... Zeroes count as 10 (a final result of 5)"
    assert "4 + 5 + 1 = 10" in line("wcrpg", "xd5", [7, 0, 1], x=3)
    assert "2 + 5 + 0 = 7" in line("wcrpg", "xd10", [2, 5, 0], x=3)


def test_wcrpg_check_line_shows_roll_dc_and_degree():
    text = line("wcrpg", "check", [40, 7], dc=45, modifier=3)
    assert "47 + 3 = 50 vs DC 45: degree of failure 5" in text


def test_wizard_quest_lines_show_focus_stamina_and_ar_bonus():
    # "The first re-roll costs -5 stamina, the second costs -10 ... the third costs -15"
    text = line("wizard-quest", "pool", [1, 1, 2, 3, 4, 4], level=2, focus=2, focus_used=1)
    assert "2 focus rerolls, 25 stamina" in text
    # "If 4 aces are rolled, character gains +1 AR."
    assert "+1 AR" in line("wizard-quest", "hit-4d6", [6, 6, 6, 6])


def test_format_exact_below_float_range_is_not_zero():
    # A float underflows to 0.0 below ~1e-308; a 700d6-sized probability must still print.
    assert format_exact(Fraction(1, 3**700)).startswith("1.035432e-334 (exact: 334-digit")
    assert format_exact(1 - Fraction(1, 3**700)).startswith("1 − 1.035432e-334")
    assert format_exact(Fraction(7, 20)) == "7/20"

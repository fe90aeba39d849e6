"""WCRPG: d% roll-under with degrees and critical thresholds, and the xd10/xd5/xd2 variants."""

from __future__ import annotations

from fractions import Fraction

import pytest
from dicetower.rules.errors import FaceRangeError, RuleParameterError
from dicetower.rules.source import FixedSource, Role
from dicetower.rules.systems import get_system, run_check
from dicetower.rules.systems.wcrpg import crit_failure_threshold, crit_success_threshold

SYSTEM = get_system("wcrpg")


def check(tens, units, dc, skill=0, crit="none", modifier=0):
    params = {"dc": dc, "skill": skill, "crit": crit, "modifier": modifier}
    return run_check(SYSTEM, "check", FixedSource([tens, units]), params)


def test_d_percent_reads_tens_and_units_dice():
    r = check(40, 7, dc=60)
    assert r.details["roll"] == 47 and r.total == 47
    assert [(d.slot.die, d.slot.role) for d in r.dice] == [("d10t", Role.TENS), ("d10", Role.UNITS)]


def test_double_zero_is_zero():
    # "valid results on a d% roll therefore range from zero to ninety-nine"
    assert check(0, 0, dc=0).details["roll"] == 0
    assert check(90, 9, dc=0).details["roll"] == 99


def test_roll_under_or_equal_dc_succeeds_with_degree_of_success():
    r = check(30, 5, dc=35)
    assert (r.outcome, r.degree, r.details["degree_of"]) == ("success", 0, "success")
    r = check(20, 0, dc=35)
    assert (r.outcome, r.degree, r.details["degree_of"]) == ("success", 15, "success")


def test_roll_over_dc_fails_with_degree_of_failure():
    r = check(50, 2, dc=35)
    assert (r.outcome, r.degree, r.details["degree_of"]) == ("failure", 17, "failure")


def test_modifier_changes_the_final_result():
    # "Other attributes of the character may modify the result of the roll."
    r = check(30, 0, dc=32, modifier=5)
    assert r.total == 35 and r.outcome == "failure" and r.degree == 3


def test_tens_die_face_must_be_a_multiple_of_ten():
    with pytest.raises(FaceRangeError):
        check(35, 0, dc=50)


def test_crit_thresholds_are_inclusive():
    # "If the player's roll falls within the bounds of a critical threshold": the bound is in the band.
    assert crit_success_threshold(25) == 2
    assert check(0, 2, dc=50, skill=25, crit="success").outcome == "critical-success"
    assert check(0, 3, dc=50, skill=25, crit="success").outcome == "success"
    assert crit_failure_threshold(25) == 92
    assert check(90, 2, dc=50, skill=25, crit="failure").outcome == "critical-failure"
    assert check(90, 1, dc=50, skill=25, crit="failure").outcome == "failure"


def test_crit_threshold_counts_full_tens():
    assert [crit_success_threshold(s) for s in (0, 9, 10, 19, 20, 55)] == [0, 0, 1, 1, 2, 5]
    assert [crit_failure_threshold(s) for s in (0, 9, 10, 19, 20, 55)] == [90, 90, 91, 91, 92, 95]


def test_double_zero_is_always_a_critical_success():
    # "a roll of 00 is always a critical success"
    for skill in (0, 5, 40):
        assert check(0, 0, dc=50, skill=skill, crit="success").outcome == "critical-success"
    assert check(0, 1, dc=50, skill=9, crit="success").outcome == "success"


def test_99_is_always_a_critical_failure():
    # "a roll of 99 is always a critical failure", even where 90 + skill/10 would pass 99
    for skill in (0, 90, 150, 500):
        assert check(90, 9, dc=99, skill=skill, crit="failure").outcome == "critical-failure"
    assert crit_failure_threshold(150) == 99


def test_more_skill_makes_critical_failure_rarer():
    # Decision: the threshold is the band's lower bound, so a higher skill shrinks the band.
    odds = SYSTEM.check("check").odds
    rates = [
        odds(dc=50, skill=s, crit="failure", modifier=0).probabilities["critical-failure"]
        for s in (0, 30, 60, 90)
    ]
    assert rates == [Fraction(10, 100), Fraction(7, 100), Fraction(4, 100), Fraction(1, 100)]


def test_critical_ignores_dc_and_modifier():
    # "the critical result occurs, whether or not the player succeeded against the Check's DC or not"
    r = check(0, 0, dc=-5, crit="both")
    assert r.outcome == "critical-success" and r.details["passed"] is False and r.critical
    r = check(90, 5, dc=99, crit="both", modifier=-50)
    assert r.outcome == "critical-failure" and r.details["passed"] is True and r.botch
    # the modifier does not push a roll into a critical band
    assert check(10, 0, dc=50, skill=0, crit="both", modifier=-10).outcome == "success"


def test_no_crit_potential_means_plain_outcomes():
    assert check(0, 0, dc=50).outcome == "success"
    assert check(90, 9, dc=50).outcome == "failure"
    assert not check(0, 0, dc=50).critical


def test_check_odds_are_exact_hundredths():
    odds = SYSTEM.check("check").odds(dc=45, skill=30, crit="both", modifier=0)
    assert odds.probabilities == {
        "critical-success": Fraction(4, 100),  # 00-03
        "success": Fraction(42, 100),  # 04-45
        "failure": Fraction(47, 100),  # 46-92
        "critical-failure": Fraction(7, 100),  # 93-99
    }


def roll_sum(check_name, faces):
    return run_check(SYSTEM, check_name, FixedSource(faces), {"x": len(faces)})


def test_worked_example_3d10_zero_counts_zero():
    # "in a 3d10 roll, the die results are 2, 5, and 0. The result of the roll is 7, not 17."
    assert roll_sum("xd10", [2, 5, 0]).total == 7


def test_worked_example_xd5_seven_becomes_four():
    # "a result of 7 becomes a result of 4"; "Zeroes count as 10 (a final result of 5)"
    assert roll_sum("xd5", [7]).total == 4
    assert roll_sum("xd5", [0]).total == 5
    r = roll_sum("xd5", [1, 2, 3, 4, 5, 6, 7, 8, 9, 0])
    assert r.details["values"] == [1, 1, 2, 2, 3, 3, 4, 4, 5, 5]


def test_xd2_zero_counts_as_even():
    # "treat all odd results as 1, all even results as 2": 0 is even.
    r = roll_sum("xd2", [0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    assert r.details["values"] == [2, 1, 2, 1, 2, 1, 2, 1, 2, 1]
    assert r.total == 15


def test_variants_are_fair_and_exact():
    xd5, xd2 = SYSTEM.check("xd5"), SYSTEM.check("xd2")
    assert xd5.dist(1).p == {v: Fraction(1, 5) for v in range(1, 6)}
    assert xd2.dist(1).p == {1: Fraction(1, 2), 2: Fraction(1, 2)}
    assert SYSTEM.check("xd10").dist(2).p[0] == Fraction(1, 100)
    assert SYSTEM.check("xd10").odds(x=3).note == "total 0-27, mean 13.5"


def test_dice_count_is_bounded():
    with pytest.raises(RuleParameterError):
        run_check(SYSTEM, "xd10", FixedSource([]), {"x": 101})
    with pytest.raises(RuleParameterError):
        run_check(SYSTEM, "xd10", FixedSource([]), {"x": 0})


def test_unknown_crit_choice_is_refused():
    with pytest.raises(RuleParameterError):
        run_check(SYSTEM, "check", FixedSource([0, 0]), {"dc": 10, "crit": "always"})


def test_sample_odds_sum_to_one():
    for c in SYSTEM.checks.values():
        for params in c.sample_params:
            odds = c.odds(**{**{p.name: p.default for p in c.params}, **params})
            assert sum(odds.probabilities.values()) == 1
            assert set(odds.probabilities) <= set(c.outcomes)


def test_skill_is_capped_so_the_critical_bands_never_meet():
    # success band <= skill // 10 (at most 50 at skill 500), failure band >= 90 + skill // 10 (capped 99)
    with pytest.raises(RuleParameterError):
        run_check(SYSTEM, "check", FixedSource([0, 0]), {"dc": 10, "skill": 501})
    assert check(50, 0, dc=10, skill=500, crit="both").outcome == "critical-success"
    assert check(50, 1, dc=10, skill=500, crit="both").outcome == "failure"
    assert check(90, 9, dc=200, skill=500, crit="both").outcome == "critical-failure"


def test_specialization_is_passed_as_the_summed_skill():
    # "for specializations, this is a combination of the specialization's score plus its
    # controlling Skill's score": 15 + 17 = 32 puts 00-03 in the critical-success band.
    assert check(0, 3, dc=50, skill=15 + 17, crit="success").outcome == "critical-success"
    assert check(0, 3, dc=50, skill=17, crit="success").outcome == "success"

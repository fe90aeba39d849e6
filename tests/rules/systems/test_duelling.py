"""Duelling: every formula of the rolling guide, its sign decisions, and exact half damage."""

from __future__ import annotations

import itertools
import json
from fractions import Fraction

import pytest
from dicetower.rules.errors import FaceMissingError, RuleParameterError
from dicetower.rules.result import Flag
from dicetower.rules.source import FixedSource
from dicetower.rules.systems import get_system, run_check, validate_params

SYSTEM = get_system("duelling")


def roll(check, faces, **params):
    return run_check(SYSTEM, check, FixedSource(faces), params)


def test_every_check_of_the_rule_book_is_there():
    assert set(SYSTEM.checks) == {
        "spell",
        "spell-damage",
        "physical",
        "physical-damage",
        "dodge",
        "auto-dodge",
        "potion",
        "potion-damage",
        "health",
        "d6-damage",
    }


def test_spell_sums_every_term_and_one_d6():
    r = roll("spell", [3], level=2, ability=3, ability_mod=1, rp_bonus=True, specialized=True)
    assert r.total == 2 + 3 + 1 + 1 + 2 + 3
    assert r.outcome == "success" and r.degree == 2
    assert len(r.dice) == 1


def test_ten_or_higher_succeeds():
    # "If this number is 10 or higher, the spell is successfully cast."
    assert roll("spell", [4], level=3, ability=3).outcome == "success"  # exactly 10
    assert roll("spell", [3], level=3, ability=3).outcome == "failure"  # 9
    assert roll("physical", [4, 4], strength=2).total == 10
    assert roll("physical", [4, 4], strength=2).outcome == "success"


def test_level_mod_makes_advanced_spells_harder():
    # "- level mod" with "-2 for advanced": the listed sign is the effect on the total.
    base = {"level": 3, "ability": 3}
    assert roll("spell", [5], **base).total == 11
    assert roll("spell", [5], **base, spell_level="advanced").total == 9
    assert roll("spell", [5], **base, spell_level="difficult").total == 7
    assert roll("potion", [2, 3], potions=5, potion_level="advanced").total == 8
    assert roll("potion", [2, 3], potions=5, potion_level="difficult").total == 6


def test_silent_cast_costs_four():
    # "Silent Mod: If it's a silent cast, subtract -4"
    r = roll("spell", [6], level=4, ability=3, silent=True)
    assert r.total == 4 + 3 + 6 - 4
    assert r.details["terms"]["silent_mod"] == -4


def test_spell_damage_formula():
    # power + power mod + specialized + level mod + 2d6 - (resistance + resistance mod - silent mod + 1d6)
    r = roll(
        "spell-damage",
        [5, 4, 2],
        power=4,
        power_mod=1,
        specialized=True,
        spell_level="advanced",
        resistance=3,
        resistance_mod=-1,
    )
    assert r.total == (4 + 1 + 2 + 1 + 5 + 4) - (3 - 1 + 2)
    assert r.damage == r.total and r.outcome == "damage"
    assert [d.value for d in r.dice] == [5, 4, -2]
    assert Flag.SUBTRACTED in r.dice[2].flags


def test_silent_cast_lowers_resistance():
    # "- (opponent resistance + resistance mod - silent mod + 1d6)" with "subtract -2"
    loud = roll("spell-damage", [3, 3, 3], power=3, resistance=3)
    silent = roll("spell-damage", [3, 3, 3], power=3, resistance=3, silent=True)
    assert silent.total == loud.total + 2
    assert silent.details["resistance"] == 3 + 3 - 2


def test_difficult_spell_adds_two_damage():
    simple = roll("spell-damage", [1, 1, 1], power=5, resistance=0)
    difficult = roll("spell-damage", [1, 1, 1], power=5, resistance=0, spell_level="difficult")
    assert difficult.total - simple.total == 2


def test_physical_and_potion_damage_formulas():
    r = roll("physical-damage", [6, 5, 1], strength=2, strength_mod=1, resistance=4, resistance_mod=2)
    assert r.total == (2 + 1 + 6 + 5) - (4 + 2 + 1)
    r = roll("potion-damage", [2, 2, 6], potions=3, potion_level="difficult", resistance=1)
    assert r.total == (3 + 2 + 2 + 2) - (1 + 6)


def test_attack_dice_come_before_the_resistance_die():
    with pytest.raises(FaceMissingError, match="resistance"):
        roll("physical-damage", [3, 3], strength=1, resistance=1)


def test_negative_percent_is_no_damage():
    # "This number is the percent damage done": at or under 0 nothing is done, nothing is healed.
    r = roll("physical-damage", [1, 1, 6], strength=0, resistance=3, target_health=60)
    assert r.total == 2 - 9
    assert r.outcome == "no-damage" and r.damage == 0
    assert r.details["new_health"] == 60
    assert roll("physical-damage", [1, 1, 2], strength=0, resistance=0).outcome == "no-damage"


def test_half_damage_is_not_rounded():
    r = roll("spell-damage", [6, 5, 1], power=4, resistance=3, half=True)
    assert r.total == 11
    assert r.damage == Fraction(11, 2)
    assert r.to_json()["damage"] == 5.5


def test_worked_example_75_5():
    # "the new health should reflect this accurately, e.g. 75.5%"
    r = roll("health", [3], half=True, current_health=74)
    assert r.details["new_health"] == Fraction(151, 2)
    assert json.loads(json.dumps(r.to_json()))["details"]["new_health"] == 75.5
    r = roll("spell-damage", [4, 4, 1], power=2, resistance=0, half=True, target_health=80)
    assert r.damage == Fraction(9, 2) and r.details["new_health"] == Fraction(151, 2)
    r = roll("d6-damage", [5], source="levicorpus", half=True, target_health=78)
    assert r.damage == Fraction(5, 2) and r.details["new_health"] == Fraction(151, 2)


def test_typed_in_health_keeps_its_decimal():
    r = roll("health", [1], half=True, current_health=75.1)
    assert r.details["new_health"] == Fraction(751, 10) + Fraction(1, 2)


def test_d6_damage_and_ally_damage_are_one_die():
    # "Damage from allies is rolled using just a 1d6."
    r = roll("d6-damage", [4], source="ally")
    assert (r.damage, r.outcome, len(r.dice)) == (4, "damage", 1)
    with pytest.raises(RuleParameterError):
        roll("d6-damage", [4], source="expelliarmus")


def test_dodge_formula():
    r = roll("dodge", [3, 2], agility=3, agility_mod=1, rp_bonus=True)
    assert r.total == 3 + 1 + 1 + 3 + 2 and r.outcome == "success"


def test_auto_dodge_penalties():
    # "agility + agility mod + 1d6 - silent mod - specialized spell", each "subtract -2"
    assert roll("auto-dodge", [4], agility=6).total == 10
    assert roll("auto-dodge", [4], agility=6, silent=True).total == 8
    assert roll("auto-dodge", [4], agility=6, silent=True, specialized=True).total == 6
    assert roll("auto-dodge", [4], agility=6, specialized=True).outcome == "failure"


def test_missing_stat_is_refused():
    with pytest.raises(RuleParameterError, match="ability"):
        roll("spell", [3], level=2)


def brute_force(check, params):
    """Enumerate every face combination through the real roll code, as an independent odds check."""
    clean = validate_params(check, params)
    n = 1 if check.name in ("spell", "auto-dodge") else 3 if check.name.endswith("damage") else 2
    counts: dict[str, Fraction] = {}
    for faces in itertools.product(range(1, 7), repeat=n):
        outcome = run_check(SYSTEM, check.name, FixedSource(faces), clean, with_odds=False).outcome
        counts[outcome] = counts.get(outcome, Fraction(0)) + Fraction(1, 6**n)
    return counts


@pytest.mark.parametrize(
    "name",
    [
        "spell",
        "spell-damage",
        "physical",
        "physical-damage",
        "dodge",
        "auto-dodge",
        "potion",
        "potion-damage",
    ],
)
def test_odds_match_enumeration(name):
    check = SYSTEM.check(name)
    for params in check.sample_params:
        odds = check.odds(**validate_params(check, params)).probabilities
        assert odds == brute_force(check, params)
        assert sum(odds.values()) == 1 and set(odds) <= set(check.outcomes)


#: (check, base params, one modifier changed, its effect on the total) - every term of every formula.
MODIFIER_EFFECTS = [
    ("spell", {"level": 1, "ability": 1}, {"level": 3}, +2),
    ("spell", {"level": 1, "ability": 1}, {"ability": 4}, +3),
    ("spell", {"level": 1, "ability": 1}, {"ability_mod": -2}, -2),
    ("spell", {"level": 1, "ability": 1}, {"rp_bonus": True}, +1),
    ("spell", {"level": 1, "ability": 1}, {"specialized": True}, +2),
    ("spell", {"level": 1, "ability": 1}, {"spell_level": "advanced"}, -2),
    ("spell", {"level": 1, "ability": 1}, {"spell_level": "difficult"}, -4),
    ("spell", {"level": 1, "ability": 1}, {"silent": True}, -4),
    ("spell-damage", {"power": 5, "resistance": 1}, {"power_mod": 2}, +2),
    ("spell-damage", {"power": 5, "resistance": 1}, {"specialized": True}, +2),
    ("spell-damage", {"power": 5, "resistance": 1}, {"spell_level": "advanced"}, +1),
    ("spell-damage", {"power": 5, "resistance": 1}, {"spell_level": "difficult"}, +2),
    ("spell-damage", {"power": 5, "resistance": 1}, {"resistance": 3}, -2),
    ("spell-damage", {"power": 5, "resistance": 1}, {"resistance_mod": 1}, -1),
    ("spell-damage", {"power": 5, "resistance": 1}, {"silent": True}, +2),
    ("physical", {"strength": 2}, {"strength_mod": 3}, +3),
    ("physical", {"strength": 2}, {"rp_bonus": True}, +1),
    ("physical-damage", {"strength": 5, "resistance": 1}, {"strength_mod": -1}, -1),
    ("physical-damage", {"strength": 5, "resistance": 1}, {"resistance_mod": 2}, -2),
    ("dodge", {"agility": 2}, {"agility_mod": 2}, +2),
    ("dodge", {"agility": 2}, {"rp_bonus": True}, +1),
    ("auto-dodge", {"agility": 5}, {"agility_mod": -1}, -1),
    ("auto-dodge", {"agility": 5}, {"silent": True}, -2),
    ("auto-dodge", {"agility": 5}, {"specialized": True}, -2),
    ("potion", {"potions": 2}, {"potions_mod": 1}, +1),
    ("potion", {"potions": 2}, {"rp_bonus": True}, +1),
    ("potion", {"potions": 2}, {"potion_level": "advanced"}, -2),
    ("potion", {"potions": 2}, {"potion_level": "difficult"}, -4),
    ("potion-damage", {"potions": 5, "resistance": 1}, {"potions_mod": 2}, +2),
    ("potion-damage", {"potions": 5, "resistance": 1}, {"potion_level": "advanced"}, +1),
    ("potion-damage", {"potions": 5, "resistance": 1}, {"potion_level": "difficult"}, +2),
    ("potion-damage", {"potions": 5, "resistance": 1}, {"resistance_mod": -3}, +3),
]


@pytest.mark.parametrize(("name", "base", "change", "effect"), MODIFIER_EFFECTS)
def test_every_modifier_moves_the_total_by_the_rule_book_amount(name, base, change, effect):
    n = 1 if name in ("spell", "auto-dodge") else 3 if name.endswith("damage") else 2
    faces = [3] * n
    before = roll(name, faces, **base).total
    assert roll(name, faces, **{**base, **change}).total - before == effect


def test_formulas_have_no_other_terms():
    # With every stat 0 the total is the dice alone (the damage checks: 2d6 minus the 1d6).
    assert roll("spell", [4], level=0, ability=0).total == 4
    assert roll("physical", [4, 2], strength=0).total == 6
    assert roll("dodge", [4, 2], agility=0).total == 6
    assert roll("auto-dodge", [4], agility=0).total == 4
    assert roll("potion", [4, 2], potions=0).total == 6
    for name, stat in (
        ("spell-damage", "power"),
        ("physical-damage", "strength"),
        ("potion-damage", "potions"),
    ):
        assert roll(name, [4, 2, 5], **{stat: 0, "resistance": 0}).total == 4 + 2 - 5

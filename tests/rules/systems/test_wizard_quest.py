"""Wizard Quest: every rule-book rule and every interpretation in docs/rules/wizard-quest.md.

Exact odds are checked against brute-force enumeration of every face sequence, run
through the real checks with a FixedSource; rolls use typed-in faces, not an RNG.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from itertools import product

import pytest
from dicetower.rules.errors import ExtraFacesError, RuleParameterError
from dicetower.rules.faces import printed_faces
from dicetower.rules.result import Flag
from dicetower.rules.source import FixedSource, Purpose, Role, RollBudget
from dicetower.rules.systems import get_system, run_check, validate_params
from dicetower.rules.systems.wizard_quest import (
    SYSTEM,
    botch_damage,
    damage,
    focus_stamina_cost,
    hit_bonus,
    magic_stamina_cost,
    opposed_weights,
    percentile,
    physical_stamina_cost,
    pool_weights,
    read_4d6,
    read_d20,
    read_pool,
)
from dicetower.rules.systems.wizard_quest import pools as pools_module


def roll(check: str, faces: list[int], **params):
    return run_check(SYSTEM, check, FixedSource(faces), params)


def enumerate_odds(check: str, kinds: list[str], **params) -> dict[str, Fraction]:
    """Exact odds by brute force: every face sequence of ``kinds``, through the real check.

    Checks that stop early (a miss skips the pools) use a prefix of the sequence; each full
    sequence still has weight 1/len(sequences), so the prefix is weighted correctly.
    """
    c = SYSTEM.check(check)
    clean = validate_params(c, params)
    counts: Counter[str] = Counter()
    seqs = list(product(*(printed_faces(k) for k in kinds)))
    for seq in seqs:
        counts[c.roll(RollBudget(FixedSource(seq)), **clean).outcome] += 1
    return {k: Fraction(v, len(seqs)) for k, v in counts.items()}


def assert_odds_equal(check: str, brute: dict[str, Fraction], **params):
    odds = SYSTEM.check(check).odds(**validate_params(SYSTEM.check(check), params)).probabilities
    assert {k: v for k, v in odds.items() if v} == brute


def test_registry_exposes_system():
    assert get_system("wizard-quest") is SYSTEM
    assert get_system("Wizard_Quest") is SYSTEM
    assert "pool" in SYSTEM.checks and "level" in {p.name for p in SYSTEM.check("pool").params}


# --- pools ---------------------------------------------------------------------------------------


def test_pool_counts_aces_successes_and_flags():
    r = roll("pool", [6, 4, 1, 3, 6], level=5)
    assert r.outcome == "success"
    assert r.details["aces"] == 2 and r.details["success_dice"] == 1 and r.details["ones"] == 1
    assert r.total == r.degree == r.details["successes"] == 11  # 4-5 = 1, Ace = 5
    assert r.details["adeptness"] == 5 + 11  # "Action Level + successes = adeptness total"
    assert [d.value for d in r.dice] == [5, 1, 0, 0, 5]
    assert Flag.ACE in r.dice[0].flags and Flag.SUCCESS in r.dice[1].flags and Flag.ONE in r.dice[2].flags


def test_pool_failure_is_no_successes_without_botch():
    assert roll("pool", [2, 3, 3], level=3).outcome == "failure"


def test_botch_rule_dice_counts_success_dice_and_aces():
    # one Ace (1 die, 5 successes), two ones: 2 > 1 die -> botch under the default "dice" rule
    r = roll("pool", [6, 1, 1], level=3)
    assert r.outcome == "botch" and r.botch
    assert all(Flag.BOTCH in d.flags for d in r.dice if d.face == 1)


def test_botch_rule_total_counts_five_per_ace():
    assert roll("pool", [6, 1, 1], level=3, botch_rule="total").outcome == "success"
    assert roll("pool", [5, 1, 1], level=3, botch_rule="total").outcome == "botch"


def test_ones_equal_to_successes_do_not_botch():
    # "exceeds": equal is not a botch
    assert roll("pool", [4, 1, 2], level=3).outcome == "success"
    assert roll("pool", [1], level=1).outcome == "botch"  # a lone 1 exceeds zero successes


@pytest.mark.parametrize("rule", ["dice", "total"])
@pytest.mark.parametrize("level", [1, 2, 3, 4])
def test_pool_odds_match_enumeration(level, rule):
    brute = enumerate_odds("pool", ["d6"] * level, level=level, botch_rule=rule)
    assert_odds_equal("pool", brute, level=level, botch_rule=rule)


def test_pool_weights_total_is_six_to_the_n():
    for n in (0, 7, 50):
        w = pool_weights(n)
        assert sum(map(sum, w.rows)) + w.botch == 6**n
        assert w.failure == 2**n  # every die a 2 or a 3


def test_pool_of_100_dice_is_exact():
    # Speed is measured in bench/rules.py (BENCHMARKS.md), not asserted here.
    pool_weights.cache_clear()
    pools_module._ones_cdf.cache_clear()
    odds = SYSTEM.check("pool").odds(level=100, botch_rule="dice", focus=0, focus_used=0)
    assert sum(odds.probabilities.values()) == 1
    assert odds.probabilities["failure"] == Fraction(1, 3**100)


def test_pool_level_bounds():
    with pytest.raises(RuleParameterError):
        roll("pool", [], level=0)
    with pytest.raises(RuleParameterError):
        roll("pool", [], level=pools_module.MAX_LEVEL + 1)


# --- focus rerolls -------------------------------------------------------------------------------


def test_focus_rerolls_failed_pool_as_follow_up_slots():
    budget = RollBudget(FixedSource([1, 2, 2, 3, 6, 4]))
    r = SYSTEM.check("pool").roll(budget, level=2, botch_rule="dice", focus=3, focus_used=0)
    assert r.outcome == "success"
    assert r.details["focus_rerolls"] == 2
    assert r.details["focus_stamina"] == 5 + 10
    slots = [s for s, _ in budget.thrown]
    assert [s.purpose for s in slots] == [Purpose.BASE] * 2 + [Purpose.REROLL] * 4
    assert [s.of_slot for s in slots[2:]] == [0, 1, 2, 3]
    assert [d.counted for d in r.dice] == [False] * 4 + [True] * 2


def test_focus_cost_continues_from_rerolls_used_this_conflict():
    r = roll("pool", [2, 3], level=1, focus=1, focus_used=2)
    assert r.details["focus_stamina"] == 15
    with pytest.raises(RuleParameterError):
        roll("pool", [2], level=1, focus=2, focus_used=2)  # "Up to 3 rerolls per conflict"


def test_focus_refuses_more_dice_than_a_check_may_throw():
    with pytest.raises(RuleParameterError, match="at most"):
        roll("pool", [], level=300, focus=3)


def test_focus_stops_at_first_success():
    with pytest.raises(ExtraFacesError):  # the reroll face is never asked for
        roll("pool", [5, 1], level=1, focus=1)


@pytest.mark.parametrize(("level", "focus"), [(1, 1), (1, 2), (2, 1)])
def test_focus_odds_match_enumeration(level, focus):
    brute = enumerate_odds("pool", ["d6"] * level * (focus + 1), level=level, focus=focus)
    assert_odds_equal("pool", brute, level=level, focus=focus)


# --- opposed -------------------------------------------------------------------------------------


def test_opposed_aces_beat_more_successes():
    r = roll("opposed", [6, 5, 5, 5, 5, 5, 5], level=1, opponent_level=6)
    assert r.outcome == "win"  # 1 Ace (5 successes) beats 0 Aces and 6 successes


def test_opposed_tied_aces_then_successes_then_stalemate():
    assert roll("opposed", [6, 4, 6, 2], level=2, opponent_level=2).outcome == "win"
    assert roll("opposed", [6, 3, 6, 4], level=2, opponent_level=2).outcome == "lose"
    assert roll("opposed", [6, 4, 6, 5], level=2, opponent_level=2).outcome == "stalemate"


def test_opposed_botches():
    assert roll("opposed", [1, 6], level=1, opponent_level=1).outcome == "botch"
    assert roll("opposed", [2, 1], level=1, opponent_level=1).outcome == "win"  # opponent botched


@pytest.mark.parametrize("rule", ["dice", "total"])
@pytest.mark.parametrize(("a", "b"), [(1, 1), (2, 1), (1, 3), (2, 2), (3, 0)])
def test_opposed_odds_match_enumeration(a, b, rule):
    brute = enumerate_odds("opposed", ["d6"] * (a + b), level=a, opponent_level=b, botch_rule=rule)
    assert_odds_equal("opposed", brute, level=a, opponent_level=b, botch_rule=rule)


def test_opposed_is_symmetric_for_equal_pools():
    w = opposed_weights(40, 40)
    assert w.win + w.lose + w.stalemate + w.botch == w.total
    # A wins exactly when B would lose, except B's own botches count to A's "win" and A's to "botch"
    p = w.probabilities()
    b = pool_weights(40).probabilities()["botch"]
    assert p["win"] - b * (1 - b) == p["lose"]


# --- hit dice ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("natural", "hb", "called", "grade", "total"),
    [
        (1, 50, True, "miss", 1),  # "1: Always misses ... HB does not apply."
        (2, 0, True, "miss", 2),  # the skipped 2 reads like 3-9
        (2, 8, True, "hit", 10),  # ... including "Add HB"
        (9, 0, True, "miss", 9),
        (9, 1, True, "hit", 10),
        (15, 0, True, "hit", 15),
        (16, 0, True, "critical", 16),
        (16, 0, False, "hit", 16),  # "Crits if called"
        (19, 5, True, "critical", 24),
        (20, 7, True, "triple-critical", 20),  # natural 20 without HB
        (20, 0, False, "hit", 20),
    ],
)
def test_d20_hit_scale(natural, hb, called, grade, total):
    r = read_d20(natural, hb, called=called)
    assert (r.grade, r.total) == (grade, total)


def test_hit_bonus_per_ten_levels():
    assert [hit_bonus(x) for x in (0, 9, 10, 19, 20, 105)] == [0, 0, 1, 1, 2, 10]


def test_hit_bonus_defaults_to_one_per_ten_levels_of_the_skill():
    # "Hit Bonuses {HB}: +1 HB per 10 Levels for each skill or stat." An attack at Level 10 has
    # HB 1 without being told; an explicit --hb (several skills or stats summed) replaces it.
    r = roll("attack", [9] + [4] * 10, level=10, power=3)
    assert (r.outcome, r.details["hb"], r.damage) == ("hit", 1, 3 + 10)
    assert roll("attack", [9], level=10, hb=0, power=3).outcome == "miss"
    assert roll("hit", [9], level=10).outcome == "hit"
    assert roll("hit", [9], level=9).outcome == "miss"
    assert roll("hit", [9], level=25, hb=0).outcome == "miss"
    assert roll("hit", [9], level=25).details["hb"] == 2
    assert roll("hit-4d6", [3, 3, 3, 2], level=10).outcome == "hit"  # 11 + 1
    hit = SYSTEM.check("hit")
    by_level = hit.odds(**validate_params(hit, {"level": 30})).probabilities
    assert by_level == hit.odds(**validate_params(hit, {"hb": 3})).probabilities


def test_death_blow_npc_needs_a_crit():
    assert roll("hit", [16], death_blow="npc").outcome == "death-blow"
    assert roll("hit", [13], hb=3, death_blow="npc").outcome == "death-blow"
    assert roll("hit", [15], death_blow="npc").outcome == "hit"
    r = roll("hit", [16], death_blow="npc", called=False)  # a death blow is a called crit
    assert r.outcome == "death-blow" and r.details["death_blow_stamina"] == 5


def test_death_blow_pc_needs_natural_20():
    assert roll("hit", [19], hb=5, death_blow="pc").outcome == "critical"
    assert roll("hit", [20], death_blow="pc").outcome == "death-blow"
    assert roll("hit", [20], death_blow="pc", no_death_blow_game=True).outcome == "triple-critical"
    assert roll("hit", [16], death_blow="npc", no_death_blow_game=True).outcome == "death-blow"


def test_no_death_blows_while_hasted():
    with pytest.raises(RuleParameterError):
        roll("hit", [20], death_blow="npc", hasted=True)
    assert roll("hit", [20], hasted=True).outcome == "triple-critical"


def test_hit_odds():
    odds = SYSTEM.check("hit").odds(
        hb=0, called=True, death_blow="no", no_death_blow_game=False, hasted=False
    )
    assert odds.probabilities["miss"] == Fraction(9, 20)  # 1-9
    assert odds.probabilities["hit"] == Fraction(6, 20)  # 10-15
    assert odds.probabilities["critical"] == Fraction(4, 20)  # 16-19
    assert odds.probabilities["triple-critical"] == Fraction(1, 20)


@pytest.mark.parametrize(
    ("faces", "hb", "called", "grade", "ar"),
    [
        ((1, 1, 1, 1), 50, True, "botch", 0),  # "4: Always fails and Botches"
        ((1, 1, 1, 2), 50, True, "miss", 0),  # "5: Always Fails ... HB does not apply"
        ((3, 3, 3, 2), 0, True, "miss", 0),  # 11
        ((3, 3, 3, 2), 1, True, "hit", 0),  # 12 with bonus
        ((5, 5, 5, 2), 0, True, "hit", 0),  # 17
        ((5, 5, 5, 2), 1, True, "critical", 0),  # 18
        ((5, 5, 5, 2), 1, False, "hit", 0),
        ((6, 6, 6, 1), 0, True, "triple-critical", 0),  # 3 Aces
        ((6, 6, 6, 1), 0, False, "hit", 0),
        ((6, 6, 6, 6), 0, True, "triple-critical", 1),  # 4 Aces: +1 AR
        ((6, 6, 6, 6), 0, False, "hit", 1),  # "If 4 aces are rolled, character gains +1 AR": called or not
        ((6, 6, 6, 5), 9, True, "triple-critical", 0),  # "Hit Bonus does not apply" to the Aces row
        ((6, 6, 5, 5), 0, True, "critical", 0),  # 22 with two Aces: the 18-23 row
        ((1, 1, 1, 1), 0, False, "botch", 0),
    ],
)
def test_4d6_hit_scale(faces, hb, called, grade, ar):
    r = read_4d6(faces, hb, called=called)
    assert (r.grade, r.ar_bonus) == (grade, ar)
    result = roll("hit-4d6", list(faces), hb=hb, called=called)
    assert result.outcome == grade and result.details["ar_bonus"] == ar


def test_4d6_hit_odds_match_enumeration():
    brute = enumerate_odds("hit-4d6", ["d6"] * 4, hb=2)
    assert_odds_equal("hit-4d6", brute, hb=2)
    assert brute["botch"] == Fraction(1, 1296)


# --- attack and damage ---------------------------------------------------------------------------


def test_attack_miss_rolls_no_pool():
    r = roll("attack", [5], level=3, power=10)
    assert r.outcome == "miss" and r.damage == 0 and len(r.dice) == 1


def test_attack_physical_damage_rows():
    # PAD: power + successes, less AC and Fortitude
    r = roll("attack", [12, 6, 4, 2], level=3, power=10, ac=3, fortitude=2)
    assert (r.outcome, r.damage) == ("hit", 10 + 6 - 5)
    r = roll("attack", [17, 6, 4, 2], level=3, power=10, ac=3, fortitude=2)  # PAC
    assert (r.outcome, r.damage) == ("critical", 2 * 10 + 6 - 5)
    r = roll("attack", [20, 6, 4, 2], level=3, power=10)  # PATC
    assert (r.outcome, r.damage) == ("triple-critical", 3 * 10 + 6)


def test_attack_magic_damage_rows():
    assert roll("attack", [12, 4], level=1, kind="magic", power=4).damage == 1 + 4  # MAD
    assert roll("attack", [16, 4], level=1, kind="magic", power=4).damage == 4 * 10 + 1  # MAC
    assert roll("attack", [20, 4], level=1, kind="magic", power=4).damage == 4 * 15 + 1  # MATC


def test_attack_botch_hurts_the_attacker():
    r = roll("attack", [12, 1, 1, 4], level=3, power=10)
    assert r.outcome == "botch" and r.damage == 0
    assert r.details["self_damage"] == Fraction(11, 2)  # 50% of PAD 10 + 1


def test_attack_against_defender():
    assert roll("attack", [12, 4, 6], level=1, opponent_level=1, power=10).outcome == "defended"
    assert roll("attack", [12, 4, 4], level=1, opponent_level=1, power=10).outcome == "stalemate"
    r = roll("attack", [12, 4, 1], level=1, opponent_level=1, power=10, ac=1)  # defender botches
    assert (r.outcome, r.damage) == ("hit", 2 * (10 + 1 - 1))


def test_attack_odds_match_enumeration():
    params = {"level": 1, "opponent_level": 1, "hb": 3, "power": 5}
    assert_odds_equal("attack", enumerate_odds("attack", ["d20", "d6", "d6"], **params), **params)
    params = {"level": 2, "called": False}
    assert_odds_equal("attack", enumerate_odds("attack", ["d20", "d6", "d6"], **params), **params)


def test_damage_rows_follow_the_hit_scale_not_9_to_15():
    # PAD/MAD say "(roll of 9-15 with hit dice and HB)" but the hit scale says "3-9: Misses or
    # fails, no damage": a total of 9 misses and throws no pool; 10 hits for normal damage.
    r = roll("attack", [9], level=1, power=7)
    assert (r.outcome, r.damage, len(r.dice)) == ("miss", 0, 1)
    assert roll("attack", [10, 2], level=1, power=7).damage == 7


def test_a_landed_hit_without_successes_still_does_its_row_damage():
    # "weapon damage + strength + magic damage = PA damage + successes": 0 successes add 0.
    r = roll("attack", [12, 2, 3], level=2, power=7, ac=2)
    assert (r.outcome, r.damage, r.details["successes"]) == ("hit", 7 - 2, 0)


def test_damage_never_negative():
    assert damage("physical", "hit", 3, 1, ac=10) == 0
    assert damage("magic", "miss", 30, 9) == 0


def test_botch_damage():
    assert botch_damage(7, defending=False) == Fraction(7, 2)  # "50% of their own attack"
    assert botch_damage(7, defending=True) == 14  # "double damage ... while defending"


# --- resistance, saves, initiative ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("tens", "units", "value"), [(0, 0, 100), (0, 5, 5), (90, 9, 99), (40, 5, 45), (0, 1, 1)]
)
def test_percentile_reading(tens, units, value):
    assert percentile(tens, units) == value


def test_resistance_roll_under_and_die_roles():
    r = roll("resistance", [40, 5], resistance=45)
    assert r.outcome == "resisted" and r.total == 45
    assert [d.slot.role for d in r.dice] == [Role.TENS, Role.UNITS]
    assert roll("resistance", [40, 6], resistance=45).outcome == "affected"
    assert roll("resistance", [0, 0], resistance=99).outcome == "affected"  # 00 + 0 is 100


def test_resistance_odds_match_enumeration():
    brute = enumerate_odds("resistance", ["d10t", "d10"], resistance=37)
    assert brute == {"resisted": Fraction(37, 100), "affected": Fraction(63, 100)}
    assert_odds_equal("resistance", brute, resistance=37)


def test_resistance_without_d100_uses_hit_dice():
    assert roll("resistance-hit", [6], resistance=45).outcome == "resisted"  # 6 + 4 HB = 10: a hit
    assert roll("resistance-hit", [5], resistance=45).outcome == "affected"  # 9: "fails on a miss"
    assert roll("resistance-hit", [1], resistance=200).outcome == "affected"
    assert_odds_equal(
        "resistance-hit", enumerate_odds("resistance-hit", ["d20"], resistance=45), resistance=45
    )


def test_saving_throws():
    assert roll("save", [11]).outcome == "success"
    assert roll("save", [10]).outcome == "failure"
    assert roll("save", [8], bonus=3).outcome == "success"
    r = roll("save-4d6", [1, 2, 3, 4, 6], bonus=1)  # +1 save = +1 d6
    assert r.outcome == "success" and len(r.dice) == 5
    assert roll("save-4d6", [5, 5, 5, 5]).outcome == "failure"
    assert_odds_equal("save-4d6", enumerate_odds("save-4d6", ["d6"] * 5, bonus=1), bonus=1)


def test_save_has_no_automatic_natural_1_or_20():
    # "Add save bonus to total. 11+ succeeds": unlike the hit scale, no face is named as automatic.
    assert roll("save", [1], bonus=10).outcome == "success"
    assert roll("save", [20], bonus=-10).outcome == "failure"
    assert roll("save-4d6", [6, 1, 1, 1]).outcome == "success"  # "1 Ace succeeds", ones do not botch a save


def test_initiative():
    assert roll("initiative", [5, 2]).outcome == "first"
    assert roll("initiative", [2, 5]).outcome == "second"
    assert roll("initiative", [3, 3]).outcome == "tie"
    assert_odds_equal("initiative", enumerate_odds("initiative", ["d6", "d6"]))


# --- stamina -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("level", "cost"),
    [
        (0, 0),
        (1, 1),
        (3, 1),
        (4, 2),
        (30, 10),
        (31, 11),
        (35, 11),
        (36, 12),
        (60, 16),
        (61, 17),
        (70, 17),
        (71, 18),
        (100, 20),
        (101, 21),
        (120, 21),
        (121, 22),
    ],
)
def test_magic_stamina_cost_boundaries(level, cost):
    assert magic_stamina_cost(level) == cost


def test_magic_stamina_matches_limited_magic_table():
    # "Learn up to 12 Spells: 1 (1-3), 2 (4-6), ..., 10 (28-30), 11 (31-35), 12 (36-40)"
    groups = [(g, 3 * g - 2, 3 * g) for g in range(1, 11)] + [(11, 31, 35), (12, 36, 40)]
    for cost, lo, hi in groups:
        assert {magic_stamina_cost(x) for x in range(lo, hi + 1)} == {cost}


def test_focus_and_physical_stamina():
    assert [focus_stamina_cost(k) for k in (1, 2, 3)] == [5, 10, 15]
    with pytest.raises(ValueError):
        focus_stamina_cost(4)
    assert physical_stamina_cost(6) == 6


def test_read_pool_key_orders_aces_first():
    assert read_pool([6]).key > read_pool([5, 5, 5, 5, 5, 5]).key

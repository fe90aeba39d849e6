"""Runic Flux: the wild die's explosions and botches, the ladder, opposed rolls and exact odds."""

from __future__ import annotations

from fractions import Fraction

import pytest
from dicetower.rules.errors import FaceMissingError, RollLimitError, RuleParameterError
from dicetower.rules.result import Flag
from dicetower.rules.source import DiceRequest, FixedSource, Purpose, RandomSource, Role
from dicetower.rules.systems import get_system, run_check
from dicetower.rules.systems.runic_flux import (
    MAX_EXPLOSIONS,
    average_roll,
    difficulty_name,
    skill_dist,
    wild_dist,
)

SYSTEM = get_system("runic-flux")


class RecordingSource(FixedSource):
    """Typed-in faces that also keep every request, to check what the tower is asked to throw."""

    def __init__(self, faces):
        super().__init__(faces)
        self.requests: list[DiceRequest] = []

    def faces(self, request: DiceRequest) -> list[int]:
        self.requests.append(request)
        return super().faces(request)


def skill(faces, level=2, stat=0, difficulty=10):
    params = {"level": level, "stat": stat, "difficulty": difficulty}
    return run_check(SYSTEM, "skill", FixedSource(faces), params)


def test_plain_roll_adds_skill_dice_wild_die_and_stat():
    r = skill([3, 4, 5], level=2, stat=4)
    assert r.total == 16
    assert not r.critical and not r.botch
    assert [d.slot.role for d in r.dice] == [Role.PLAIN, Role.PLAIN, Role.WILD]


def test_wild_six_explodes_until_it_stops_showing_six():
    # "if you roll repeated sixes on the wild die, you get to keep re-rolling and adding"
    src = RecordingSource([2, 2, 6, 6, 6, 3])
    r = run_check(SYSTEM, "skill", src, {"level": 2, "stat": 1, "difficulty": 30})
    assert r.total == 2 + 2 + 6 + 6 + 6 + 3 + 1
    assert r.critical and not r.botch
    assert r.outcome == "failure"  # a critical success does not decide the outcome
    wild = r.dice[2].slot
    follow = src.requests[1:]
    assert len(src.requests) == 4 and all(len(q) == 1 for q in follow)
    for q in follow:
        (s,) = q.slots
        assert (s.role, s.purpose, s.of_slot, s.die) == (Role.WILD, Purpose.EXPLOSION, wild.slot, "d6")
        assert q.is_follow_up
    assert Flag.CRITICAL in r.dice[2].flags and Flag.EXPLODED in r.dice[2].flags


def test_one_on_a_critical_reroll_is_just_one():
    # "if you get a 1 on a Critical Success reroll, it's just like any other number"
    r = skill([4, 6, 1], level=1)
    assert r.total == 4 + 6 + 1
    assert r.critical and not r.botch
    assert len(r.dice) == 3


def test_wild_one_scores_nothing_and_subtracts_one_reroll():
    src = RecordingSource([5, 5, 1, 4])
    r = run_check(SYSTEM, "skill", src, {"level": 2, "stat": 3, "difficulty": 10})
    assert r.total == 5 + 5 + 0 - 4 + 3
    assert r.botch and not r.critical
    assert r.dice[2].value == 0 and Flag.BOTCH in r.dice[2].flags
    reroll = r.dice[3]
    assert reroll.value == -4 and Flag.SUBTRACTED in reroll.flags
    assert (reroll.slot.purpose, reroll.slot.of_slot, reroll.slot.role) == (Purpose.REROLL, 2, Role.WILD)


@pytest.mark.parametrize("reroll", [1, 6])
def test_botch_reroll_of_one_or_six_is_just_subtracted(reroll):
    # "If you roll a 1 or a 6 on a Botch reroll, however, just subtract it ... don't roll again."
    r = skill([3, 1, reroll], level=1, stat=2)
    assert r.total == 3 + 0 - reroll + 2
    assert len(r.dice) == 3  # FixedSource would raise ExtraFacesError if more were wanted


def test_botch_can_leave_the_total_negative():
    r = skill([1, 6], level=0, stat=0, difficulty=0)
    assert r.total == -6 and r.outcome == "failure"


def test_success_when_total_equals_difficulty():
    # Decision: "rolled high enough to succeed" against a set number means total >= difficulty.
    assert skill([4, 4, 2], stat=5, difficulty=15).outcome == "success"
    assert skill([4, 4, 2], stat=5, difficulty=16).outcome == "failure"
    assert skill([4, 4, 2], stat=5, difficulty=15).degree == 0


def test_explosion_chain_is_bounded():
    faces = [6] * MAX_EXPLOSIONS + [3]  # the wild 6 and 99 more sixes, then a 3 on explosion 100
    r = skill(faces, level=0, difficulty=0)
    assert r.total == 6 * MAX_EXPLOSIONS + 3
    with pytest.raises(RollLimitError):
        skill([6] * (MAX_EXPLOSIONS + 1), level=0)


def test_missing_follow_up_face_names_the_wild_die():
    with pytest.raises(FaceMissingError, match="wild die explosion 1"):
        skill([2, 6], level=1)


@pytest.mark.parametrize(
    ("number", "name"),
    [
        (-3, "Trivial"),
        (5, "Trivial"),
        (6, "Easy"),
        (10, "Easy"),
        (11, "Moderate"),
        (15, "Moderate"),
        (16, "Challenging"),
        (20, "Challenging"),
        (21, "Difficult"),
        (25, "Difficult"),
        (26, "Extremely Difficult"),
        (90, "Extremely Difficult"),
    ],
)
def test_difficulty_ladder_boundaries(number, name):
    assert difficulty_name(number) == name


def test_skill_result_names_its_difficulty():
    assert skill([1, 2, 3], difficulty=18).details["difficulty_name"] == "Challenging"
    assert not skill([1, 2, 3], difficulty=18).details["rolling_optional"]
    assert skill([1, 2, 3], difficulty=5).details["rolling_optional"]  # "Trivial (rolling optional)"


def test_level_table_averages():
    # The rule book's "Difficulty Number (average)" table is empty; the averages are computed exactly.
    assert [float(average_roll(level)) for level in range(5)] == [3.45, 6.95, 10.45, 13.95, 17.45]
    for level in range(5):
        d = skill_dist(level)
        mean = sum((v * q for v, q in d.items()), Fraction(0))
        assert abs(mean - average_roll(level)) < Fraction(1, 10**70)


def test_wild_die_distribution_by_hand():
    w = wild_dist()
    assert w.p[2] == w.p[5] == Fraction(1, 6)
    assert w.p[-6] == w.p[-1] == Fraction(1, 36)
    assert w.p[7] == Fraction(1, 36)  # 6 then 1
    assert w.p[13] == Fraction(1, 216)  # 6, 6, 1
    assert 6 not in w.p and 0 not in w.p and 12 not in w.p  # a chain never stops on a 6


def test_odds_sum_to_one_within_truncation_error():
    for check in SYSTEM.checks.values():
        for params in check.sample_params:
            odds = check.odds(**{**{p.name: p.default for p in check.params}, **params})
            missing = 1 - sum(odds.probabilities.values())
            assert 0 < missing <= Fraction(odds.truncation_error)
            assert set(odds.probabilities) <= set(check.outcomes)


def test_benchmark_call_shape():
    odds = SYSTEM.check("skill").odds(level=4, stat=0, difficulty=15)
    assert set(odds.probabilities) == {"success", "failure"}
    assert abs(float(odds.probabilities["success"]) - 0.7189643347) < 1e-9
    assert odds.truncation_error < 1e-77


def test_skill_odds_match_icepool():
    icepool = pytest.importorskip("icepool")
    wild = icepool.d6.explode(depth=MAX_EXPLOSIONS).map(lambda v: -icepool.d6 if v == 1 else v)
    for level, stat, difficulty in [(4, 0, 15), (0, 3, 6), (2, 5, 11), (3, 1, 30)]:
        expected = (level @ icepool.d6 + wild + stat).probability(">=", difficulty)
        odds = SYSTEM.check("skill").odds(level=level, stat=stat, difficulty=difficulty)
        # icepool keeps the cut-off chain's mass on its last 6; we leave it out (truncation_error)
        assert abs(odds.probabilities["success"] - expected) <= Fraction(odds.truncation_error)


def opposed(faces, level=1, stat=0, opponent_level=1, opponent_stat=0):
    params = {"level": level, "stat": stat, "opponent_level": opponent_level, "opponent_stat": opponent_stat}
    return run_check(SYSTEM, "opposed", FixedSource(faces), params)


def test_opposed_tie_is_its_own_outcome():
    # Decision: "to see who's roll is highest" - equal totals have no highest roll.
    r = opposed([4, 3, 2, 5], stat=1, opponent_stat=1)
    assert (r.total, r.details["opponent_total"], r.outcome) == (8, 8, "tie")


def test_opposed_higher_total_wins_and_each_side_has_its_own_wild_die():
    src = RecordingSource([4, 6, 2, 3, 1, 5])
    r = run_check(SYSTEM, "opposed", src, {"level": 1, "stat": 0, "opponent_level": 1, "opponent_stat": 9})
    assert r.total == 4 + 6 + 2
    assert r.details["opponent_total"] == 3 + 0 - 5 + 9
    assert r.outcome == "win" and r.critical and r.details["opponent_botch"]
    assert [len(q) for q in src.requests] == [2, 1, 2, 1]
    assert src.requests[3].slots[0].of_slot == src.requests[2].slots[1].slot


def test_opposed_odds_are_symmetric_for_equal_characters():
    odds = SYSTEM.check("opposed").odds(level=2, stat=3, opponent_level=2, opponent_stat=3)
    assert odds.probabilities["win"] == odds.probabilities["loss"]
    assert odds.probabilities["tie"] > 0


def test_random_rolls_land_on_outcomes_with_odds():
    src = RandomSource(seed=7)
    for _ in range(50):
        r = run_check(SYSTEM, "skill", src, {"level": 3, "stat": 2, "difficulty": 14})
        assert r.outcome in ("success", "failure")
        assert r.odds is not None and r.odds.probabilities[r.outcome] > 0


@pytest.mark.parametrize(
    "params",
    [{"level": 5, "difficulty": 10}, {"level": 1, "stat": 11, "difficulty": 3}, {"stat": 3, "difficulty": 3}],
)
def test_bad_params_are_refused(params):
    with pytest.raises(RuleParameterError):
        run_check(SYSTEM, "skill", FixedSource([]), params)


def test_level_0_and_stat_0_are_allowed():
    # The rule book's level table starts at "Level 0" though skills are "between Level 1 and Level 4",
    # and stats are "from 1 to 10": 0 is allowed for both so a bare wild die can be checked.
    r = skill([4], level=0, stat=0, difficulty=4)
    assert (r.total, r.outcome, len(r.dice)) == (4, "success", 1)
    assert r.dice[0].slot.role is Role.WILD

"""The Wizard Quest checks by name: each check's parameters, outcomes, help and examples.

The checks themselves live by concern: pools in :mod:`.pool_checks`, hit dice and attacks in
:mod:`.hit_checks`, resistance, saves and initiative in :mod:`.other_checks`; each rolls
through a RollBudget and knows its exact odds as :class:`~fractions.Fraction` values.
"""

from __future__ import annotations

from ..base import Check, Param
from .costs import DAMAGE_KINDS, MAX_FOCUS
from .hit_checks import AttackCheck, Hit4d6Check, HitCheck
from .other_checks import (
    InitiativeCheck,
    ResistanceCheck,
    ResistanceHitCheck,
    Save4d6Check,
    SaveCheck,
    percentile,
)
from .pool_checks import OpposedCheck, PoolCheck
from .pools import BOTCH_RULES, MAX_LEVEL
from .scales import DEATH_BLOW_TARGETS

__all__ = [
    "AttackCheck",
    "Hit4d6Check",
    "HitCheck",
    "InitiativeCheck",
    "OpposedCheck",
    "PoolCheck",
    "ResistanceCheck",
    "ResistanceHitCheck",
    "Save4d6Check",
    "SaveCheck",
    "build_checks",
    "percentile",
]


_LEVEL = Param("level", int, required=True, min=1, max=MAX_LEVEL, help="Level = number of d6 in the pool")
_BOTCH_RULE = Param(
    "botch_rule",
    str,
    default="dice",
    choices=BOTCH_RULES,
    help="botch when ones exceed: 'dice' = 4-5 dice + 6s (default), 'total' = total successes",
)
_HB = Param(
    "hb",
    int,
    default=None,
    min=0,
    max=100,
    help="hit bonus (several skills or stats summed); not given: level // 10, or 0 without a level",
)
#: The hit checks' optional skill level: "+1 HB per 10 Levels for each skill or stat".
_HIT_LEVEL = Param(
    "level", int, default=None, min=0, max=10 * 100, help="skill or stat level; HB = level // 10 unless --hb"
)
_CALLED = Param("called", bool, default=True, help="a critical was called (16+ crits only if called)")


def build_checks() -> dict[str, Check]:
    """Every Wizard Quest check, by name."""
    opponent = Param(
        "opponent_level",
        int,
        required=True,
        min=0,
        max=MAX_LEVEL,
        help="the opposing pool's Level (number of d6)",
    )
    death_params = (
        Param(
            "death_blow",
            str,
            default="no",
            choices=DEATH_BLOW_TARGETS,
            help="attempt a death blow against an npc or a pc",
        ),
        Param("no_death_blow_game", bool, default=False, help="the GM called a No Death Blow game"),
        Param("hasted", bool, default=False, help="Hasted Combat, Haste or a Holding spell (no death blows)"),
    )
    checks: list[Check] = [
        PoolCheck(
            name="pool",
            help="action/check dice: Level d6, 4-5 = 1 success, 6 = Ace (5 successes)",
            params=(
                _LEVEL,
                _BOTCH_RULE,
                Param(
                    "focus",
                    int,
                    default=0,
                    min=0,
                    max=MAX_FOCUS,
                    help="focus rerolls to call if the pool fails or botches (5/10/15 stamina)",
                ),
                Param(
                    "focus_used",
                    int,
                    default=0,
                    min=0,
                    max=MAX_FOCUS,
                    help="focus rerolls already used this conflict",
                ),
            ),
            outcomes=("success", "failure", "botch"),
            example="dicetower check wizard-quest pool --level 5 --faces 6,4,1,3,6",
            sample_params=(
                {"level": 1},
                {"level": 5},
                {"level": 12, "botch_rule": "total"},
                {"level": 3, "focus": 2},
                {"level": 30},
            ),
        ),
        OpposedCheck(
            name="opposed",
            help="pool vs pool: most Aces, then most successes; a tie is a stalemate",
            params=(_LEVEL, opponent, _BOTCH_RULE),
            outcomes=("win", "lose", "stalemate", "botch"),
            example="dicetower check wizard-quest opposed --level 5 --opponent_level 4",
            sample_params=(
                {"level": 3, "opponent_level": 3},
                {"level": 6, "opponent_level": 2},
                {"level": 2, "opponent_level": 0},
                {"level": 8, "opponent_level": 9, "botch_rule": "total"},
            ),
        ),
        HitCheck(
            name="hit",
            help="hit dice: 1d20 + HB on the hit scale (death blows optional)",
            params=(_HB, _HIT_LEVEL, _CALLED, *death_params),
            outcomes=("miss", "hit", "critical", "triple-critical", "death-blow"),
            example="dicetower check wizard-quest hit --hb 2 --death_blow npc",
            sample_params=(
                {"hb": 0},
                {"hb": 3, "called": False},
                {"hb": 1, "death_blow": "npc"},
                {"hb": 5, "death_blow": "pc"},
                {"hb": 2, "death_blow": "pc", "no_death_blow_game": True},
                {"level": 25},
            ),
        ),
        Hit4d6Check(
            name="hit-4d6",
            help="4d6 + HB hit dice when no d20 is available",
            params=(_HB, _HIT_LEVEL, _CALLED),
            outcomes=("botch", "miss", "hit", "critical", "triple-critical"),
            example="dicetower check wizard-quest hit-4d6 --hb 1 --faces 6,6,6,2",
            sample_params=({"hb": 0}, {"hb": 4}, {"hb": 2, "called": False}, {"level": 40}),
        ),
        AttackCheck(
            name="attack",
            help="d20 hit dice, then the attack pool (vs the defender's), then damage",
            params=(
                _LEVEL,
                Param(
                    "opponent_level",
                    int,
                    default=0,
                    min=0,
                    max=MAX_LEVEL,
                    help="defender's pool Level (0 = unopposed)",
                ),
                _HB,
                _CALLED,
                Param(
                    "kind", str, default="physical", choices=DAMAGE_KINDS, help="physical (PA) or magic (MA)"
                ),
                Param(
                    "power",
                    int,
                    default=0,
                    min=0,
                    max=10_000,
                    help="PA damage (weapon + strength + magic) or spell level used",
                ),
                Param("ac", int, default=0, min=0, max=10_000, help="defender's armor class"),
                Param("fortitude", int, default=0, min=0, max=10_000, help="defender's Fortitude"),
                _BOTCH_RULE,
            ),
            outcomes=("miss", "botch", "defended", "stalemate", "hit", "critical", "triple-critical"),
            example="dicetower check wizard-quest attack --level 5 --hb 1 --power 12 --ac 3",
            sample_params=(
                {"level": 4, "power": 10},
                {"level": 5, "opponent_level": 4, "hb": 2, "power": 8},
                {"level": 3, "kind": "magic", "power": 6, "called": False},
            ),
        ),
        ResistanceCheck(
            name="resistance",
            help="1d100 (tens + units die) at or under the resistance % resists",
            params=(Param("resistance", int, required=True, min=0, max=100, help="resistance in %"),),
            outcomes=("resisted", "affected"),
            example="dicetower check wizard-quest resistance --resistance 45 --faces 40,5",
            sample_params=({"resistance": 25}, {"resistance": 100}, {"resistance": 0}),
        ),
        ResistanceHitCheck(
            name="resistance-hit",
            help="no d100: hit dice + 1 HB per 10% resistance; a miss fails",
            params=(Param("resistance", int, required=True, min=0, max=1000, help="resistance in %"),),
            outcomes=("resisted", "affected"),
            example="dicetower check wizard-quest resistance-hit --resistance 45",
            sample_params=({"resistance": 25}, {"resistance": 90}),
        ),
        SaveCheck(
            name="save",
            help="saving throw: 1d20 + save bonus, 11+ succeeds",
            params=(Param("bonus", int, default=0, min=-20, max=100, help="save bonus"),),
            outcomes=("success", "failure"),
            example="dicetower check wizard-quest save --bonus 2",
            sample_params=({"bonus": 0}, {"bonus": 4}, {"bonus": -3}),
        ),
        Save4d6Check(
            name="save-4d6",
            help="saving throw without a d20: 4d6 + 1d6 per +1 save; one Ace succeeds",
            params=(Param("bonus", int, default=0, min=0, max=96, help="save bonus (+1 d6 each)"),),
            outcomes=("success", "failure"),
            example="dicetower check wizard-quest save-4d6 --bonus 1",
            sample_params=({"bonus": 0}, {"bonus": 3}),
        ),
        InitiativeCheck(
            name="initiative",
            help="1d6 each, highest roll attacks first",
            params=(),
            outcomes=("first", "second", "tie"),
            example="dicetower check wizard-quest initiative --faces 5,2",
            sample_params=({},),
        ),
    ]
    return {c.name: c for c in checks}

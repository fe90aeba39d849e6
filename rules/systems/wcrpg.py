"""WCRPG: a d% (tens die + units die, 00-99) rolled under a DC, and the xd10/xd5/xd2 variants.

Rule book: ``../shared/seeds/002_f7eddc49df5e56e3.txt``; decisions are quoted in
``docs/rules/wcrpg.md``. Every value is computed from PRINTED faces: a tens die (``d10t``)
shows 0, 10, ..., 90, a units d10 shows 0-9, and "a result of 0 on a die counts as zero".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..odds import Dist
from ..result import CheckResult, Flag, Odds, RolledDie
from ..source import Role, RollBudget
from .base import Check, Param, System, validate_params
from .format import MINUS

__all__ = [
    "CRIT_CHOICES",
    "MAX_X",
    "SYSTEM",
    "PercentileCheck",
    "SumCheck",
    "crit_failure_threshold",
    "crit_success_threshold",
    "d2_value",
    "d5_value",
    "d10_value",
    "judge",
]

RULE_BOOK = "002_f7eddc49df5e56e3.txt"

#: Most dice one xd10/xd5/xd2 roll may ask for.
MAX_X = 100

#: Which critical results a check has ("some have outcomes for just critical success, ...").
CRIT_CHOICES = ("none", "success", "failure", "both")

_KEPT = frozenset({Flag.KEPT})


def crit_success_threshold(skill: int) -> int:
    """``00`` plus one per full ten skill points; a roll at or under it is a critical success."""
    return skill // 10


def crit_failure_threshold(skill: int) -> int:
    """``90`` plus one per full ten skill points, capped at 99 ("a roll of 99 is always a critical failure").

    A roll at or over it is a critical failure, so more skill moves the threshold up and
    makes critical failures rarer: 90-99 at skill 0-9, 95-99 at skill 50-59, 99 alone from 90.
    """
    return min(99, 90 + skill // 10)


def judge(roll: int, dc: int, skill: int, crit: str, modifier: int = 0) -> tuple[str, bool, int]:
    """Outcome name, whether the DC was met, and the degree for a d% ``roll`` (0-99).

    The DC test uses the final result (``roll + modifier``); the critical thresholds look
    at the dice alone ("if the player's roll falls within the bounds of a critical
    threshold, the critical result occurs, whether or not the player succeeded").
    """
    result = roll + modifier
    passed = result <= dc
    degree = dc - result if passed else result - dc
    if crit in ("success", "both") and roll <= crit_success_threshold(skill):
        return "critical-success", passed, degree
    if crit in ("failure", "both") and roll >= crit_failure_threshold(skill):
        return "critical-failure", passed, degree
    return ("success" if passed else "failure"), passed, degree


@dataclass
class PercentileCheck(Check):
    """A Check: d% roll-under a DC, with degrees and optional critical thresholds."""

    name: str = "check"
    help: str = "d% (tens die + units die, 00-99) roll-under: success if roll + modifier <= dc"
    params: tuple[Param, ...] = (
        Param(
            "dc",
            int,
            required=True,
            min=-999,
            max=999,
            help="difficulty class (or hit difficulty): the Attribute/Skill/Save score checked",
        ),
        Param(
            "skill",
            int,
            default=0,
            min=0,
            max=500,
            help="Skill score (plus specialization) that sets the critical thresholds",
        ),
        Param(
            "crit",
            str,
            default="none",
            choices=CRIT_CHOICES,
            help="critical potential of this check: none, success, failure or both",
        ),
        Param(
            "modifier",
            int,
            default=0,
            min=-999,
            max=999,
            help="added to the roll by other attributes ('may modify the result of the roll')",
        ),
    )
    outcomes: tuple[str, ...] = ("critical-success", "success", "failure", "critical-failure")
    example: str = "dicetower check wcrpg check --dc 45 --skill 30 --crit both"
    sample_params: tuple[dict[str, Any], ...] = (
        {"dc": 45, "skill": 30, "crit": "both"},
        {"dc": 60, "skill": 0, "crit": "none"},
        {"dc": 20, "skill": 55, "crit": "failure", "modifier": 5},
        {"dc": 95, "skill": 120, "crit": "success"},
    )

    def roll(self, budget: RollBudget, **params: Any) -> CheckResult:
        params = validate_params(self, params)  # also fills defaults for direct calls
        tens = budget.slot("d10t", role=Role.TENS, label="tens die")
        units = budget.slot("d10", role=Role.UNITS, label="units die")
        t, u = budget.throw([tens, units], "d% roll")
        roll = t + u  # printed faces: 00-90 and 0-9, so 00 + 0 reads 00 = 0
        dc, skill, crit, modifier = params["dc"], params["skill"], params["crit"], params["modifier"]
        outcome, passed, degree = judge(roll, dc, skill, crit, modifier)
        result = roll + modifier
        shown = f"{roll:02d}"
        if modifier:
            sign = "+" if modifier > 0 else MINUS
            shown += f" {sign} {abs(modifier)} = " + (f"{MINUS}{-result}" if result < 0 else str(result))
        summary = f"{shown} vs DC {dc}: degree of {'success' if passed else 'failure'} {degree}"
        return CheckResult(
            system="wcrpg",
            check=self.name,
            params=dict(params),
            dice=[RolledDie(tens, t, t, _KEPT), RolledDie(units, u, u, _KEPT)],
            total=roll + modifier,
            outcome=outcome,
            degree=degree,
            critical=outcome == "critical-success",
            botch=outcome == "critical-failure",
            details={
                "roll": roll,
                "dc": dc,
                "passed": passed,
                "degree_of": "success" if passed else "failure",
                "crit_success_threshold": crit_success_threshold(skill),
                "crit_failure_threshold": crit_failure_threshold(skill),
                "summary": summary,
            },
        )

    def odds(self, **params: Any) -> Odds:
        params = validate_params(self, params)
        p = dict.fromkeys(self.outcomes, Fraction(0))
        for roll in range(100):
            outcome, _, _ = judge(roll, params["dc"], params["skill"], params["crit"], params["modifier"])
            p[outcome] += Fraction(1, 100)
        return Odds({k: v for k, v in p.items() if v})


def d10_value(face: int) -> int:
    """xd10 (and d%): "a result of 0 on a die counts as zero, not 10"."""
    return face


def d5_value(face: int) -> int:
    """xd5: halve and round up (7 becomes 4); "Zeroes count as 10 (a final result of 5)"."""
    return 5 if face == 0 else (face + 1) // 2


def d2_value(face: int) -> int:
    """xd2: odd faces are 1, even faces 2, and a printed 0 is even, so 2."""
    return 1 if face % 2 else 2


@dataclass
class SumCheck(Check):
    """``x`` ten-sided dice, each face mapped by ``value`` and summed (xd10, xd5, xd2)."""

    value: Callable[[int], int] = d10_value
    params: tuple[Param, ...] = (
        Param("x", int, required=True, min=1, max=MAX_X, help="number of ten-sided dice"),
    )
    outcomes: tuple[str, ...] = ("rolled",)
    sample_params: tuple[dict[str, Any], ...] = ({"x": 1}, {"x": 3}, {"x": 10})

    def roll(self, budget: RollBudget, **params: Any) -> CheckResult:
        params = validate_params(self, params)  # also fills defaults for direct calls
        slots = [budget.slot("d10", label=f"{self.name} die {i + 1}") for i in range(params["x"])]
        faces = budget.throw(slots, f"{self.name} roll")
        dice = [RolledDie(s, f, self.value(f), _KEPT) for s, f in zip(slots, faces, strict=True)]
        total = sum(int(d.value) for d in dice)
        return CheckResult(
            system="wcrpg",
            check=self.name,
            params=dict(params),
            dice=dice,
            total=total,
            outcome="rolled",
            details={
                "values": [int(d.value) for d in dice],
                "summary": " + ".join(str(int(d.value)) for d in dice) + f" = {total}",
            },
        )

    def dist(self, x: int) -> Dist:
        """Exact distribution of the total."""
        return Dist.die("d10", self.value).repeat(x)

    def odds(self, **params: Any) -> Odds:
        params = validate_params(self, params)
        d = self.dist(params["x"])
        values = [v for v, _ in d.items()]
        mean = sum((v * q for v, q in d.items()), Fraction(0))
        return Odds({"rolled": Fraction(1)}, note=f"total {values[0]}-{values[-1]}, mean {float(mean):g}")


SYSTEM = System(
    name="wcrpg",
    title="WCRPG",
    rule_book=RULE_BOOK,
    checks={
        "check": PercentileCheck(),
        "xd10": SumCheck(
            name="xd10",
            help="x d10 summed; a 0 counts as zero",
            value=d10_value,
            example="dicetower check wcrpg xd10 --x 3",
        ),
        "xd5": SumCheck(
            name="xd5",
            help="x d10 read as d5: halve, round up, 0 counts as 5",
            value=d5_value,
            example="dicetower check wcrpg xd5 --x 2",
        ),
        "xd2": SumCheck(
            name="xd2",
            help="x d10 read as d2: odd 1, even (and 0) 2",
            value=d2_value,
            example="dicetower check wcrpg xd2 --x 4",
        ),
    },
)

"""Runic Flux: skill-level d6 plus one red Wild Die, a stat added, against a difficulty.

Rule book: ``../shared/seeds/003_702acfff1c994cdf.txt``; decisions are quoted in
``docs/rules/runic-flux.md``. The Wild Die is its own die (role :attr:`Role.WILD`) so the
tower can tell it by colour; its explosions and its botch reroll are follow-up throws of
that one die (``of_slot`` = the wild die's slot), never a re-throw of the whole pool.

Exact odds cut the explosion chain at :data:`MAX_EXPLOSIONS` follow-up throws (the same
depth the notation engine allows). :meth:`SkillCheck.roll` refuses a chain longer than
that with :class:`RollLimitError`, so the odds cover every roll that can return, and the
missing mass, ``(1/6) ** (MAX_EXPLOSIONS + 1)``, is reported as ``truncation_error``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

from ..errors import RollLimitError
from ..odds import Dist
from ..result import CheckResult, Flag, Odds, RolledDie
from ..source import Purpose, Role, RollBudget
from .base import Check, Param, System, validate_params
from .format import MINUS

__all__ = [
    "DIFFICULTIES",
    "MAX_EXPLOSIONS",
    "SYSTEM",
    "OpposedCheck",
    "SkillCheck",
    "WildRoll",
    "average_roll",
    "difficulty_name",
    "skill_dist",
    "throw_pool",
    "wild_dist",
]

RULE_BOOK = "003_702acfff1c994cdf.txt"

#: Longest chain of wild-die explosion throws one roll may need (notation's ``MAX_DEPTH``).
MAX_EXPLOSIONS = 100

#: The rule book's difficulty ladder: (name, lowest number, highest number or None).
DIFFICULTIES: tuple[tuple[str, int | None, int | None], ...] = (
    ("Trivial", None, 5),
    ("Easy", 6, 10),
    ("Moderate", 11, 15),
    ("Challenging", 16, 20),
    ("Difficult", 21, 25),
    ("Extremely Difficult", 26, None),
)

#: Mean value of the Wild Die under the unbounded rules: (2+3+4+5 - 3.5 + 6 + 21/5) / 6.
_WILD_MEAN = Fraction(69, 20)

_SIX = Fraction(1, 6)


def difficulty_name(number: int) -> str:
    """The rule book's name for a difficulty number: "5 and under" is Trivial, and so on up to
    "26 and up", Extremely Difficult."""
    for name, lo, hi in DIFFICULTIES:
        if (lo is None or number >= lo) and (hi is None or number <= hi):
            return name
    raise AssertionError("the ladder covers every integer")  # pragma: no cover


def average_roll(level: int, stat: int = 0) -> Fraction:
    """Average total of a roll at ``level`` (the rule book's empty "Difficulty Number (average)" table).

    Each skill d6 averages 7/2. The Wild Die averages 69/20 = 3.45: faces 2-5 count as
    shown, a 1 scores 0 and subtracts a reroll (-7/2), a 6 adds 6 plus a chain whose mean
    ``m`` solves ``m = 15/6 + (6 + m)/6``, i.e. ``m = 21/5``.
    """
    return Fraction(7, 2) * level + _WILD_MEAN + stat


@lru_cache(maxsize=1)
def wild_dist() -> Dist:
    """Exact distribution of the Wild Die's contribution, chains cut at :data:`MAX_EXPLOSIONS`.

    Sums to ``1 - (1/6) ** (MAX_EXPLOSIONS + 1)``: the missing mass is the chance the
    chain would need more throws than :meth:`SkillCheck.roll` allows.
    """
    p: dict[int, Fraction] = {}
    for face in (2, 3, 4, 5):
        p[face] = _SIX
    for reroll in range(1, 7):  # a 1 scores nothing and one reroll is subtracted
        p[-reroll] = p.get(-reroll, Fraction(0)) + _SIX * _SIX
    # A 6 then n-1 more sixes then a final 1-5 on explosion throw n (1 <= n <= MAX_EXPLOSIONS).
    for n in range(1, MAX_EXPLOSIONS + 1):
        q = _SIX ** (n + 1)
        for last in range(1, 6):
            p[6 * n + last] = p.get(6 * n + last, Fraction(0)) + q
    return Dist(p)


@lru_cache(maxsize=64)
def skill_dist(level: int) -> Dist:
    """Distribution of the dice part of a roll (``level`` skill d6 plus the Wild Die)."""
    return Dist.die("d6").repeat(level) + wild_dist()


def _truncation_error(rolls: int = 1) -> float:
    """An upper bound (rounded up to a float) on the probability mass the odds leave out."""
    exact = 1 - (1 - _SIX ** (MAX_EXPLOSIONS + 1)) ** rolls
    return math.nextafter(float(exact), math.inf)


@dataclass(frozen=True)
class WildRoll:
    """One character's thrown pool: the dice, the dice total, and whether the wild die fired."""

    dice: tuple[RolledDie, ...]
    total: int
    critical: bool
    botch: bool

    @property
    def wild_total(self) -> int:
        """What the Wild Die and its follow-ups added (negative after a botch)."""
        return sum(int(d.value) for d in self.dice if d.slot.role is Role.WILD)

    def text(self, stat: int) -> str:
        """``skill 3 + wild 14 (critical) + stat 2 = 19``: the wild die apart, as the rule book reads it."""
        tag = " (critical)" if self.critical else " (botch)" if self.botch else ""
        wild = self.wild_total
        wild_text = f"{MINUS}{-wild}" if wild < 0 else str(wild)
        total = self.total + stat
        total_text = f"{MINUS}{-total}" if total < 0 else str(total)
        return f"skill {self.total - wild} + wild {wild_text}{tag} + stat {stat} = {total_text}"


def throw_pool(budget: RollBudget, level: int, who: str = "") -> WildRoll:
    """Throw ``level`` skill dice and the Wild Die, then the wild die's follow-ups.

    The follow-ups are one die each (role WILD, ``of_slot`` = the first wild slot), so the
    tower re-throws only the red die. A botch reroll is never itself exploded or botched.
    """
    prefix = f"{who} " if who else ""
    slots = [budget.slot("d6", label=f"{prefix}skill die {i + 1}") for i in range(level)]
    wild = budget.slot("d6", role=Role.WILD, label=f"{prefix}wild die")
    faces = budget.throw([*slots, wild], f"{prefix}skill roll".strip())
    dice = [RolledDie(s, f, f, frozenset({Flag.KEPT})) for s, f in zip(slots, faces[:-1], strict=True)]
    w = faces[-1]
    critical = botch = False
    if w == 1:
        botch = True
        dice.append(RolledDie(wild, w, 0, frozenset({Flag.WILD, Flag.BOTCH, Flag.ONE})))
        s, f = budget.throw_one(
            "d6",
            role=Role.WILD,
            purpose=Purpose.REROLL,
            of_slot=wild.slot,
            label=f"{prefix}wild die botch reroll",
            reason="wild die botched",
        )
        dice.append(RolledDie(s, f, -f, frozenset({Flag.WILD, Flag.SUBTRACTED})))
    elif w == 6:
        critical = True
        dice.append(RolledDie(wild, w, w, frozenset({Flag.WILD, Flag.CRITICAL, Flag.EXPLODED})))
        f = w
        n = 0
        while f == 6:
            if n == MAX_EXPLOSIONS:
                raise RollLimitError(
                    f"the wild die exploded more than {MAX_EXPLOSIONS} times in a row; "
                    "Runic Flux rolls stop there"
                )
            n += 1
            s, f = budget.throw_one(
                "d6",
                role=Role.WILD,
                purpose=Purpose.EXPLOSION,
                of_slot=wild.slot,
                label=f"{prefix}wild die explosion {n}",
                reason="wild die exploded",
            )
            flags = {Flag.WILD, Flag.EXPLODED} if f == 6 else {Flag.WILD}
            dice.append(RolledDie(s, f, f, frozenset(flags)))
    else:
        dice.append(RolledDie(wild, w, w, frozenset({Flag.WILD})))
    return WildRoll(tuple(dice), sum(int(d.value) for d in dice), critical, botch)


_LEVEL = Param(
    "level", int, required=True, help="skill level: number of skill d6 besides the Wild Die", min=0, max=4
)
_STAT = Param(
    "stat", int, default=0, help="the base stat the skill relies on (1-10; 0 allowed)", min=0, max=10
)


@dataclass
class SkillCheck(Check):
    """A skill roll against a set difficulty: ``level`` d6 + Wild Die + ``stat`` >= ``difficulty``."""

    name: str = "skill"
    help: str = "skill d6 + Wild Die + stat against a difficulty number (success if total >= difficulty)"
    params: tuple[Param, ...] = (
        _LEVEL,
        _STAT,
        Param(
            "difficulty",
            int,
            required=True,
            min=-100,
            max=1000,
            help="number to reach: Trivial <=5, Easy 6-10, Moderate 11-15, Challenging 16-20, "
            "Difficult 21-25, Extremely Difficult 26+",
        ),
    )
    outcomes: tuple[str, ...] = ("success", "failure")
    example: str = "dicetower check runic-flux skill --level 2 --stat 4 --difficulty 15"
    sample_params: tuple[dict[str, Any], ...] = (
        {"level": 4, "stat": 0, "difficulty": 15},
        {"level": 0, "stat": 3, "difficulty": 6},
        {"level": 2, "stat": 5, "difficulty": 11},
    )

    def roll(self, budget: RollBudget, **params: Any) -> CheckResult:
        params = validate_params(self, params)  # also fills defaults for direct calls
        level, stat, difficulty = params["level"], params["stat"], params["difficulty"]
        pool = throw_pool(budget, level)
        total = pool.total + stat
        return CheckResult(
            system="runic-flux",
            check=self.name,
            params=dict(params),
            dice=list(pool.dice),
            total=total,
            outcome="success" if total >= difficulty else "failure",
            degree=total - difficulty,
            critical=pool.critical,
            botch=pool.botch,
            details={
                "dice_total": pool.total,
                "stat": stat,
                "difficulty": difficulty,
                "difficulty_name": difficulty_name(difficulty),
                "rolling_optional": difficulty_name(difficulty) == "Trivial",  # "Trivial (rolling optional)"
                "margin": total - difficulty,
                "summary": f"{pool.text(stat)} vs {difficulty} ({difficulty_name(difficulty)})",
            },
        )

    def odds(self, **params: Any) -> Odds:
        params = validate_params(self, params)
        dist = skill_dist(params["level"]) + params["stat"]
        win = dist.prob(lambda t: t >= params["difficulty"])
        return Odds(
            {"success": win, "failure": dist.total() - win},
            truncation_error=_truncation_error(),
            note=f"critical (wild 6) 1/6, botch (wild 1) 1/6; explosions cut at {MAX_EXPLOSIONS} throws",
        )


@dataclass
class OpposedCheck(Check):
    """Two characters roll; the higher total wins and equal totals are a tie (no winner)."""

    name: str = "opposed"
    help: str = "two characters' skill rolls; the higher total wins, equal totals tie"
    params: tuple[Param, ...] = (
        _LEVEL,
        _STAT,
        Param(
            "opponent_level", int, required=True, help="the opposing character's skill level", min=0, max=4
        ),
        Param("opponent_stat", int, default=0, help="the opposing character's stat", min=0, max=10),
    )
    outcomes: tuple[str, ...] = ("win", "loss", "tie")
    example: str = (
        "dicetower check runic-flux opposed --level 2 --stat 4 --opponent-level 1 --opponent-stat 6"
    )
    sample_params: tuple[dict[str, Any], ...] = (
        {"level": 2, "stat": 4, "opponent_level": 1, "opponent_stat": 6},
        {"level": 0, "stat": 0, "opponent_level": 0, "opponent_stat": 0},
        {"level": 4, "stat": 10, "opponent_level": 3, "opponent_stat": 2},
    )

    def roll(self, budget: RollBudget, **params: Any) -> CheckResult:
        params = validate_params(self, params)  # also fills defaults for direct calls
        mine = throw_pool(budget, params["level"])
        theirs = throw_pool(budget, params["opponent_level"], who="opponent")
        a = mine.total + params["stat"]
        b = theirs.total + params["opponent_stat"]
        outcome = "win" if a > b else "loss" if a < b else "tie"
        return CheckResult(
            system="runic-flux",
            check=self.name,
            params=dict(params),
            dice=[*mine.dice, *theirs.dice],
            total=a,
            outcome=outcome,
            degree=a - b,
            critical=mine.critical,
            botch=mine.botch,
            details={
                "opponent_total": b,
                "margin": a - b,
                "opponent_critical": theirs.critical,
                "opponent_botch": theirs.botch,
                "summary": f"{mine.text(params['stat'])} vs {theirs.text(params['opponent_stat'])}",
            },
        )

    def odds(self, **params: Any) -> Odds:
        params = validate_params(self, params)
        a = skill_dist(params["level"]) + params["stat"]
        b = skill_dist(params["opponent_level"]) + params["opponent_stat"]
        # P(A > B) by one sweep over B's cumulative distribution, not a full convolution.
        bv = list(b.items())
        win = tie = Fraction(0)
        below = Fraction(0)  # P(B < current value of A)
        j = 0
        for v, pa in a.items():
            while j < len(bv) and bv[j][0] < v:
                below += bv[j][1]
                j += 1
            win += pa * below
            if j < len(bv) and bv[j][0] == v:
                tie += pa * bv[j][1]
        loss = a.total() * b.total() - win - tie
        return Odds(
            {"win": win, "loss": loss, "tie": tie},
            truncation_error=_truncation_error(2),
            note="equal totals are a tie; the rule book names no winner",
        )


SYSTEM = System(
    name="runic-flux",
    title="Runic Flux",
    rule_book=RULE_BOOK,
    checks={"skill": SkillCheck(), "opposed": OpposedCheck()},
)

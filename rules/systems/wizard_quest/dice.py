"""What every Wizard Quest check shares: throwing and marking pool and hit dice, HB, odds tables.

A pool die is marked by its face (6 an Ace worth 5, 4-5 a success, 1 a one, a botch's ones
flagged); a hit die carries its grade. The checks in :mod:`.pool_checks`, :mod:`.hit_checks`
and :mod:`.other_checks` build their results from these.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from ...result import Flag, Odds, RolledDie
from ...source import DieSlot, Purpose, RollBudget
from .pools import PoolRead
from .scales import HitRead, hit_bonus, read_d20

__all__ = [
    "SYSTEM_NAME",
    "compare_pools",
    "d20_grades",
    "hit_bonus_of",
    "hit_die",
    "odds_of",
    "pool_details",
    "pool_dice",
    "pool_die",
    "throw_pool",
]

SYSTEM_NAME = "wizard-quest"


def pool_die(slot: DieSlot, face: int, botch: bool) -> RolledDie:
    flags: set[Flag] = set()
    value = 0
    if face == 6:
        flags.add(Flag.ACE)
        value = 5
    elif face in (4, 5):
        flags.add(Flag.SUCCESS)
        value = 1
    elif face == 1:
        flags.add(Flag.ONE)
        if botch:
            flags.add(Flag.BOTCH)
    return RolledDie(slot, face, value, frozenset(flags))


def throw_pool(
    budget: RollBudget, n: int, *, who: str, reason: str, replaces: Sequence[DieSlot] = ()
) -> tuple[list[DieSlot], list[int]]:
    """Throw ``n`` d6 as one request; with ``replaces`` each die is a REROLL of that slot."""
    if replaces:
        slots = [
            budget.slot("d6", purpose=Purpose.REROLL, of_slot=old.slot, label=f"{who} {reason}".strip())
            for old in replaces
        ]
    else:
        prefix = f"{who} " if who else ""
        slots = [budget.slot("d6", label=f"{prefix}pool die {i + 1}") for i in range(n)]
    return slots, budget.throw(slots, reason)


def pool_dice(slots: Sequence[DieSlot], faces: Sequence[int], read: PoolRead) -> list[RolledDie]:
    return [pool_die(s, f, read.botch) for s, f in zip(slots, faces, strict=True)]


def pool_details(prefix: str, level: int, read: PoolRead) -> dict[str, Any]:
    return {
        f"{prefix}aces": read.aces,
        f"{prefix}successes": read.successes,
        f"{prefix}success_dice": read.hits,
        f"{prefix}ones": read.ones,
        f"{prefix}botch": read.botch,
        f"{prefix}adeptness": level + read.successes,
    }


def compare_pools(mine: PoolRead, theirs: PoolRead) -> str:
    """Opposed pools from the first side: botch, win, lose or stalemate."""
    if mine.botch:
        return "botch"
    if theirs.botch or mine.key > theirs.key:
        return "win"
    return "stalemate" if mine.key == theirs.key else "lose"


def odds_of(probs: dict[str, Fraction], outcomes: Sequence[str], note: str = "") -> Odds:
    return Odds({o: probs.get(o, Fraction(0)) for o in outcomes}, note=note)


def hit_bonus_of(p: dict[str, Any]) -> int:
    """The HB a hit roll adds: ``hb`` when given, else "+1 HB per 10 Levels" of ``level``, else 0."""
    if p.get("hb") is not None:
        return int(p["hb"])
    return hit_bonus(p["level"]) if p.get("level") is not None else 0


def hit_die(slot: DieSlot, face: int, read: HitRead) -> RolledDie:
    flags = {Flag.KEPT}
    if read.grade in ("critical", "triple-critical"):
        flags.add(Flag.CRITICAL)
    if read.grade == "botch":
        flags.add(Flag.BOTCH)
    return RolledDie(slot, face, face, frozenset(flags))


def d20_grades(hb: int, called: bool, death_blow: str = "no", no_dbg: bool = False) -> Counter[str]:
    """How many of the 20 faces give each grade (``death-blow`` counted apart)."""
    c: Counter[str] = Counter()
    for n in range(1, 21):
        r = read_d20(n, hb, called=called, death_blow=death_blow, no_death_blow_game=no_dbg)
        c["death-blow" if r.death_blow else r.grade] += 1
    return c

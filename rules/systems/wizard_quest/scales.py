"""The two Wizard Quest hit scales (1d20 + HB, and 4d6 + HB) as pure functions.

A hit roll decides whether an attack lands and what grade of damage it does; the grades
name the damage rows (PAD/MAD for ``hit``, PAC/MAC for ``critical``, PATC/MATC for
``triple-critical``). Every interpretation of an unclear rule-book line is quoted in
``docs/rules/wizard-quest.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["DEATH_BLOW_TARGETS", "GRADES", "HitRead", "hit_bonus", "read_4d6", "read_d20"]

#: Hit grades from worst to best; ``botch`` only comes from the 4d6 scale.
GRADES = ("botch", "miss", "hit", "critical", "triple-critical")

#: Who a death blow is aimed at: ``no`` (no attempt), a non-played or a played character.
DEATH_BLOW_TARGETS = ("no", "npc", "pc")


def hit_bonus(level: int) -> int:
    """HB: "+1 HB per 10 Levels for each skill or stat" (level 9 -> 0, 10 -> 1, 25 -> 2)."""
    if level < 0:
        raise ValueError("a level is never negative")
    return level // 10


@dataclass(frozen=True, slots=True)
class HitRead:
    """A read hit roll: the grade, the total on the scale, and whether HB was added."""

    grade: str
    natural: int
    total: int
    hb_applied: bool
    death_blow: bool = False
    ar_bonus: int = 0  #: 4 Aces on 4d6 hit dice give +1 AR

    @property
    def lands(self) -> bool:
        return self.grade in ("hit", "critical", "triple-critical")


def read_d20(
    natural: int,
    hb: int = 0,
    *,
    called: bool = True,
    death_blow: str = "no",
    no_death_blow_game: bool = False,
) -> HitRead:
    """Read a natural d20 on the hit scale.

    * 1: always misses, HB not added.
    * 2-9 after HB: miss (the rule book's scale skips 2; a natural 2 is read like 3-9, HB added).
    * 10-15: hit. 16+: critical if a crit was called, else a hit.
    * natural 20: always hits; triple critical if called; HB not added (it only breaks
      ties between two 20s).
    * Death blows: vs an NPC on any critical (16+ or a natural 20); vs a PC only on a
      natural 20, and never in a No Death Blow game. A death-blow attempt is a called crit.
    """
    if not 1 <= natural <= 20:
        raise ValueError(f"a d20 shows 1-20, got {natural}")
    if death_blow not in DEATH_BLOW_TARGETS:
        raise ValueError(f"death_blow must be one of {DEATH_BLOW_TARGETS}, got {death_blow!r}")
    called = called or death_blow != "no"
    if natural == 1:
        return HitRead("miss", 1, 1, False)
    if natural == 20:
        grade = "triple-critical" if called else "hit"
        total, applied = 20, False
    else:
        total, applied = natural + hb, True
        if total < 10:
            grade = "miss"
        elif total < 16 or not called:
            grade = "hit"
        else:
            grade = "critical"
    blow = False
    if death_blow == "npc":
        blow = grade in ("critical", "triple-critical")
    elif death_blow == "pc":
        blow = grade == "triple-critical" and not no_death_blow_game
    return HitRead(grade, natural, total, applied, death_blow=blow)


def read_4d6(faces: Sequence[int], hb: int = 0, *, called: bool = True) -> HitRead:
    """Read four d6 hit dice (when no d20 is at hand).

    * sum 4 (four 1s): botch, HB not added. sum 5: always fails, HB not added.
    * 3-4 Aces: triple critical if called (else a plain hit), HB not added; 4 Aces +1 AR.
    * otherwise sum + HB: 6-11 miss, 12-17 hit, 18+ critical if called, else a hit.
    """
    if len(faces) != 4 or any(not 1 <= f <= 6 for f in faces):
        raise ValueError(f"4d6 hit dice need four faces 1-6, got {list(faces)}")
    natural = sum(faces)
    aces = sum(1 for f in faces if f == 6)
    if natural == 4:
        return HitRead("botch", natural, natural, False)
    if natural == 5:
        return HitRead("miss", natural, natural, False)
    if aces >= 3:
        return HitRead(
            "triple-critical" if called else "hit", natural, natural, False, ar_bonus=1 if aces == 4 else 0
        )
    total = natural + hb
    if total < 12:
        grade = "miss"
    elif total < 18 or not called:
        grade = "hit"
    else:
        grade = "critical"
    return HitRead(grade, natural, total, True)

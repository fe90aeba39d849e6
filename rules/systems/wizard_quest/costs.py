"""Wizard Quest's check-less arithmetic: stamina costs, damage rows, botch damage.

These are pure functions because the rule book applies them around rolls rather than as
rolls: the CLI, the server and the ``attack`` check all call the same definitions.
"""

from __future__ import annotations

from fractions import Fraction

__all__ = [
    "DAMAGE_KINDS",
    "DEATH_BLOW_STAMINA",
    "MAX_FOCUS",
    "aggravated_turns",
    "botch_damage",
    "damage",
    "focus_stamina_cost",
    "magic_stamina_cost",
    "physical_stamina_cost",
    "raw_damage",
]

#: "Up to 3 rerolls per conflict and no more are allowed."
MAX_FOCUS = 3

#: Extra stamina a death blow costs "IF the death blow hits".
DEATH_BLOW_STAMINA = 5

#: ``physical`` (PA: weapon + strength + magic damage) or ``magic`` (MA: spell level used).
DAMAGE_KINDS = ("physical", "magic")

# (first level of the band, levels per stamina point) - "Levels 1-30 uses -1 stamina per
# every 3 levels", "31-60 ... every additional 5", "61-100 ... 10", "101+ ... 20".
_MAGIC_BANDS = ((1, 30, 3), (31, 60, 5), (61, 100, 10), (101, None, 20))


def magic_stamina_cost(level: int) -> int:
    """Stamina one spell of ``level`` costs (MASC).

    Each band charges 1 per started step of its width, on top of the bands below it, so
    levels 1-3 cost 1, 28-30 cost 10, 31-35 cost 11, 36-40 cost 12 (the rule book's Limited
    Magic table groups spells exactly so), 60 costs 16, 100 costs 20, 120 costs 21.
    """
    if level < 0:
        raise ValueError("a spell level is never negative")
    cost = 0
    for lo, hi, step in _MAGIC_BANDS:
        if level < lo:
            break
        top = level if hi is None else min(level, hi)
        cost += -(-(top - lo + 1) // step)  # ceil: a started step costs a point
    return cost


def physical_stamina_cost(actions: int) -> int:
    """PASC: "-1 per each action or AR used" (six actions cost 6)."""
    if actions < 0:
        raise ValueError("actions are never negative")
    return actions


def focus_stamina_cost(reroll: int) -> int:
    """Cost of the ``reroll``-th focus reroll of a conflict: 5, 10, 15; a fourth is not allowed."""
    if not 1 <= reroll <= MAX_FOCUS:
        raise ValueError(f"focus rerolls are numbered 1-{MAX_FOCUS} per conflict, got {reroll}")
    return 5 * reroll


def raw_damage(kind: str, grade: str, power: int, successes: int) -> int:
    """Damage before armour and Fortitude.

    physical (``power`` = weapon + strength + magic damage): PAD = power + successes,
    PAC = 2 x power + successes, PATC = 3 x power + successes.
    magic (``power`` = spell level used): MAD = successes + level, MAC = level x 10 +
    successes, MATC = level x 15 + successes. A miss or botch does no damage.
    """
    if kind not in DAMAGE_KINDS:
        raise ValueError(f"damage kind must be one of {DAMAGE_KINDS}, got {kind!r}")
    factor = {
        ("physical", "hit"): 1,
        ("physical", "critical"): 2,
        ("physical", "triple-critical"): 3,
        ("magic", "hit"): 1,
        ("magic", "critical"): 10,
        ("magic", "triple-critical"): 15,
    }.get((kind, grade))
    if factor is None:
        return 0
    return factor * power + successes


def damage(kind: str, grade: str, power: int, successes: int, ac: int = 0, fortitude: int = 0) -> int:
    """Damage dealt: the row's raw damage less AC and Fortitude, never below 0."""
    return max(0, raw_damage(kind, grade, power, successes) - ac - fortitude)


def botch_damage(own_damage: int, *, defending: bool) -> Fraction:
    """Damage a botcher takes: 50% of their own attack or spell damage; double when defending.

    Exact (7 -> 7/2); the table rounds as it likes.
    """
    if own_damage < 0:
        raise ValueError("damage is never negative")
    return Fraction(own_damage * 2) if defending else Fraction(own_damage, 2)


def aggravated_turns(aces: int) -> int:
    """Aggravated damage keeps doing normal damage for "+1 turn, +1 per ace"."""
    if aces < 0:
        raise ValueError("aces are never negative")
    return 1 + aces

"""What the overlay says about a roll beyond its dice: the system's display name, the modifier no die
shows, and the rules' own sum.

Why: a check's request names its system by slug (``runic-flux``), which a stream's viewers should not
have to read; and a check adds terms no die shows (Runic Flux adds the stat), so the dice on screen
(2, 3, 6, 5) do not make the total (20) unless the overlay shows the +4 too. The sum is the rules'
``details.summary`` (``skill 11 + wild 5 + stat 4 = 20 vs 15``), written by the system that added it
up, so it never disagrees with the total.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

__all__ = ["roll_modifier", "roll_sum", "roll_title"]

#: notation whose total is its counted dice plus numbers: dice, keep/drop, rerolls, explosions, + and -
_PLAIN_SUM = re.compile(r"[0-9dkhlro!+\- ]+")


def roll_title(request: Mapping[str, Any]) -> str:
    """``4d6kh3+2`` for notation; ``Runic Flux skill`` for a check (the slug if the system is unknown)."""
    notation = request.get("notation")
    if notation:
        return str(notation)
    system, check = str(request.get("system")), str(request.get("check"))
    from ...rules.systems import UnknownSystemError, get_system

    try:
        title = get_system(system).title
    except UnknownSystemError:
        title = system
    return f"{title} {check}"


def _number(value: Any) -> float | Fraction | None:
    if isinstance(value, bool) or not isinstance(value, int | float | Fraction):
        return None
    return value


def _counted(dice: Any) -> float | Fraction | None:
    """The sum of the dice a plain sum counts (not dropped or rerolled), or None if one has no number."""
    if not isinstance(dice, list) or not dice:
        return None
    total: float | Fraction = 0
    for die in dice:
        if not isinstance(die, Mapping):
            return None
        flags = die.get("flags") or []
        if "dropped" in flags or "rerolled" in flags:
            continue
        value = _number(die.get("value"))
        if value is None:
            return None
        total += value
    return total


def roll_modifier(result: Mapping[str, Any], total: Any, dice: Any = None) -> int | float | None:
    """What a roll adds to its dice, or None where it adds nothing or it is not a plain sum.

    A check: ``total - details.dice_total``, where the system says what its dice made. Notation: the
    total less the dice it counts, when the notation is a plain sum (dice, keep and drop, rerolls,
    explosions, numbers, ``+`` and ``-``: ``4d6kh3+2`` adds 2); a count of successes or a product is not.
    """
    details = result.get("details")
    whole = _number(total)
    if isinstance(details, Mapping):
        dice_total = _number(details.get("dice_total"))
    elif isinstance(result.get("input"), str) and _PLAIN_SUM.fullmatch(result["input"]):
        dice_total = _counted(dice)
    else:
        return None
    if dice_total is None or whole is None or whole == dice_total:
        return None
    modifier = whole - dice_total
    return int(modifier) if float(modifier).is_integer() else float(modifier)


def roll_sum(result: Mapping[str, Any]) -> str | None:
    """The rules' own line of how a check's total was made (``details.summary``), or None."""
    details = result.get("details")
    summary = details.get("summary") if isinstance(details, Mapping) else None
    return summary if isinstance(summary, str) and summary else None

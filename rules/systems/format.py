"""One line of chat text for any :class:`~dicetower.rules.result.CheckResult`.

``wizard-quest pool level=5: 6 4 1 3 6 → 2 aces, 11 successes, 1 one — success (P≈89.35%)``

The formatter knows no system: it prints the faces in slot order, the system's own
``details["summary"]`` (or the total), the outcome and, when attached, the outcome's
probability. Rerolled or dropped dice are struck through (``~~3~~``) as in d20's
markdown stringifier, exploded dice carry a ``!``.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from ..errors import DiceError
from ..result import CheckResult, Flag, RolledDie

__all__ = ["format_die", "format_params", "format_probability", "format_result"]


def format_die(die: RolledDie) -> str:
    """A face as chat text: ``6``, ``6!`` (exploded), ``~~3~~`` (rerolled or dropped)."""
    text = str(die.face)
    if Flag.EXPLODED in die.flags:
        text += "!"
    if not die.counted:
        text = f"~~{text}~~"
    return text


def format_params(params: dict[str, Any], defaults: dict[str, Any] | None = None) -> str:
    """``level=5 hb=2``: every parameter that is set and differs from its default."""
    defaults = defaults or {}
    parts = []
    for k, v in params.items():
        if v is None or (k in defaults and defaults[k] == v):
            continue
        if isinstance(v, bool):
            v = "yes" if v else "no"
        parts.append(f"{k}={v}")
    return " ".join(parts)


def format_probability(p: Fraction | float) -> str:
    """A probability as a short percentage: ``89.35%``, ``5%``, ``5.55e-04%``, ``0%``."""
    pct = float(p) * 100
    if pct == 0 or pct == 100:
        return f"{pct:.0f}%"
    if pct < 0.01:
        return f"{pct:.2e}%"
    if pct > 99.99:  # keep the digits that say it is not certain
        return f"{pct:.8f}".rstrip("0") + "%"
    return f"{pct:.4g}%"


def _defaults(result: CheckResult) -> dict[str, Any]:
    """The check's declared defaults, so the line shows only what the player chose."""
    from . import get_system  # late: the registry imports system modules lazily

    try:
        check = get_system(result.system).check(result.check)
    except (DiceError, ImportError):  # an unregistered or unwritten system: show every parameter
        return {}
    return {p.name: p.default for p in check.params if not p.required}


def format_result(result: CheckResult) -> str:
    """The whole check as one line of chat text."""
    params = format_params(result.params, _defaults(result))
    head = f"{result.system} {result.check}" + (f" {params}" if params else "")
    faces = " ".join(format_die(d) for d in result.dice)
    summary = result.details.get("summary")
    if not summary:
        summary = f"total {result.total}"
    line = f"{head}: {faces} → {summary} — {result.outcome}"
    if result.damage:
        line += f", {result.damage} damage" if "damage" not in str(summary) else ""
    if result.odds and result.outcome in result.odds.probabilities:
        line += f" (P≈{format_probability(result.odds.probabilities[result.outcome])})"
    return line

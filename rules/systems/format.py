"""One line of chat text for any :class:`~dicetower.rules.result.CheckResult`.

``wizard-quest pool level=5: 6 4 1 3 6 → 2 aces, 11 successes, 1 one — success (P≈89.35%)``

The formatter knows no system: it prints the faces in slot order, the system's own
``details["summary"]`` (or the total), the outcome and, when attached, the outcome's
probability. Rerolled or dropped dice are struck through (``~~3~~``) as in d20's
markdown stringifier, exploded dice carry a ``!``.
"""

from __future__ import annotations

from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Any

from ..errors import DiceError
from ..result import CheckResult, Flag, RolledDie

__all__ = [
    "EXACT_MAX_CHARS",
    "format_die",
    "format_exact",
    "format_number",
    "format_params",
    "format_probability",
    "format_result",
    "format_scientific",
]

#: Most decimal places :func:`format_number` writes out before it falls back to a float.
MAX_PLACES = 12

#: Longest exact fraction :func:`format_exact` writes in full; longer ones (100d6 odds) as a float.
EXACT_MAX_CHARS = 60

#: Sign put before a die whose value counts against the total (U+2212, as in the summaries).
MINUS = "\u2212"


def format_die(die: RolledDie) -> str:
    """A face as chat text: ``6``, ``6!`` (exploded), ``−6`` (subtracted), ``~~3~~`` (rerolled or dropped)."""
    text = str(die.face)
    if Flag.SUBTRACTED in die.flags:  # a Runic Flux botch reroll, a Duelling resistance die
        text = MINUS + text
    if Flag.EXPLODED in die.flags:
        text += "!"
    if not die.counted:
        text = f"~~{text}~~"
    return text


def format_number(x: int | float | Fraction) -> str:
    """A number as people write it: halves as decimals (``75.5``, the Duelling rule book's own example).

    A :class:`~fractions.Fraction` whose decimal ends (denominator 2^a·5^b) is written out
    exactly; any other fraction stays ``n/d`` rather than a rounded float.
    """
    if isinstance(x, Fraction):
        if x.denominator == 1:
            return str(x.numerator)
        d = x.denominator
        for p in (2, 5):
            while d % p == 0:
                d //= p
        if d != 1:
            return str(x)
        sign, n = ("-" if x < 0 else ""), abs(x)
        places = 0
        while (n * 10**places).denominator != 1:  # ends: at most max(a, b) places
            places += 1
            if places > MAX_PLACES:  # a typed-in 1e-320: a float, not 320 digits of chat
                return repr(float(x))
        whole, frac = divmod((n * 10**places).numerator, 10**places)
        return f"{sign}{whole}.{frac:0{places}d}"
    if isinstance(x, float) and x.is_integer():
        return str(int(x))
    return str(x)


def format_params(params: dict[str, Any], defaults: dict[str, Any] | None = None) -> str:
    """``level=5 hb=2``: every parameter that is set and differs from its default."""
    defaults = defaults or {}
    parts = []
    for k, v in params.items():
        if v is None or (k in defaults and defaults[k] == v):
            continue
        if isinstance(v, bool):
            v = "yes" if v else "no"
        elif isinstance(v, (int, float, Fraction)):
            v = format_number(v)
        parts.append(f"{k}={v}")
    return " ".join(parts)


def format_scientific(x: Fraction, places: int = 2) -> str:
    """``x`` as ``1.00e-398`` (``places`` digits after the point), exact far below a float's range.

    A float stops near 1e-308 and the odds of a 100d6 outcome go past 1e-300, so values
    below 1e-300 are divided out in :mod:`decimal` instead.
    """
    with localcontext() as ctx:
        ctx.prec = places + 14
        if x > Fraction(1, 10**300):  # in a float's range: its usual two-digit exponent
            return f"{float(x):.{places}e}"
        return f"{Decimal(x.numerator) / Decimal(x.denominator):.{places}e}"


def format_exact(p: Fraction | float) -> str:
    """``17/20`` when short enough to read, else 7 significant digits and the fraction's size.

    Near 1 the digits say how far from 1 (``1 − 1.035432e-334``), never a rounded ``1.000000``.
    """
    if isinstance(p, Fraction):
        text = str(p)
        if len(text) <= EXACT_MAX_CHARS:
            return text
        digits = f"(exact: {len(str(p.denominator))}-digit denominator)"
        if 1 - p < Fraction(5, 10**7):  # would print as 1.000000e+00: show how far from 1 instead
            return f"1 {MINUS} {format_scientific(1 - p, 6)} {digits}"
        return f"{format_scientific(p, 6)} {digits}"
    return f"{p:.6g}"


def format_probability(p: Fraction | float) -> str:
    """A probability as a short percentage: ``89.35%``, ``5%``, ``5.55e-04%``, ``0%``.

    Only an exact 0 or 1 prints as ``0%`` or ``100%``: 1 - 1e-20 is ``1.0`` as a float, but
    printing it as certain would be wrong, so what is left is worked out on the exact value.
    """
    exact = p if isinstance(p, Fraction) else Fraction(p)
    if exact == 0 or exact == 1:
        return f"{exact * 100}%"
    pct = float(p) * 100
    if pct < 0.01:
        return f"{format_scientific(exact * 100)}%"
    if pct > 99.99:  # keep the digits that say it is not certain
        text = f"{pct:.8f}".rstrip("0")
        if text.startswith("100"):  # too close to 1 for 8 places: say how far, never "100.%"
            return f"100% {MINUS} {format_scientific((1 - exact) * 100)}%"
        return text + "%"
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
        summary = f"total {format_number(result.total)}"
    line = f"{head}: {faces} → {summary} — {result.outcome}"
    if result.damage:
        line += f", {format_number(result.damage)} damage" if "damage" not in str(summary) else ""
    if result.odds and result.outcome in result.odds.probabilities:
        line += f" (P≈{format_probability(result.odds.probabilities[result.outcome])})"
    return line

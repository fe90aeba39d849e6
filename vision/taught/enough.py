"""Enough rolls to fit: how many held-back dice a fit needs, and how many more rolls give them.

Why a module of its own: ``teach fit`` refuses when the held-back wrong rate could be over
``--max-wrong`` (the one-sided 95 % upper bound, :func:`~dicetower.vision.eval.intervals.binomial_upper`,
over every taught die's held-back dice), and ``teach collect`` must not stop early, nor ``teach fit``
start its minutes of work, before a fit could pass. All three read the bound here, from that one
function, so a collect that says "done" hands fit a folder it can accept.

The held-back share is counted as :func:`~.teaching.hold_back_split` counts it: whole photos, the
latest ``share`` of them. Even with no die read wrong, the bound falls only as dice are added:
0 wrong of 298 dice still allows 1.0 %, 0 of 299 shows under 1 %; at a 30 % share, about 200
rolls of a five-dice tray, 1,000 of a single die.
"""

from __future__ import annotations

import functools
import math

from ..eval.intervals import binomial_upper

__all__ = ["MAX_DICE", "dice_to_show", "held_back_photos", "rolls_to_show"]

#: Most held-back dice the search looks at; a bound that needs more is reported as this many.
MAX_DICE = 1_000_000


def held_back_photos(photos: int, share: float) -> int:
    """Photos a fit holds back of ``photos`` (the latest ``share``), as ``hold_back_split`` cuts them."""
    if photos <= 0:
        return 0
    return photos - math.floor(photos * (1.0 - share))


@functools.cache  # a pure function of one rate, asked every check of a collect
def dice_to_show(max_wrong: float) -> int:
    """Fewest held-back dice, none read wrong, whose wrong rate's 95 % upper bound is at most ``max_wrong``.

    0 when any rate is allowed (``max_wrong`` 1, as a fit with no held-back dice counts 1.0). Found
    by bisection over :func:`binomial_upper` itself, so this is the fit's own test.
    """
    if max_wrong >= 1.0:
        return 0
    if max_wrong <= 0.0 or binomial_upper(0, MAX_DICE) > max_wrong:
        return MAX_DICE
    lo, hi = 0, MAX_DICE  # binomial_upper(0, lo) > max_wrong >= binomial_upper(0, hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if binomial_upper(0, mid) > max_wrong:
            lo = mid
        else:
            hi = mid
    return hi


def rolls_to_show(photos: int, dice_per_photo: int, share: float, max_wrong: float) -> int:
    """More rolls until the held-back dice can show a wrong rate of at most ``max_wrong`` (0: enough now).

    ``photos`` rolls so far, each with ``dice_per_photo`` taught dice; the latest ``share`` held back.
    """
    need = dice_to_show(max_wrong)
    if need == 0:
        return 0
    if dice_per_photo <= 0:
        return MAX_DICE
    held = -(-need // dice_per_photo)  # held-back photos needed
    total = max(photos, 0)
    # about share * total photos are held back: start just short of (held - 1) / share and step
    total = max(total, math.floor((held - 1) / share) - 2)
    while held_back_photos(total, share) < held and total < MAX_DICE:
        total += 1
    return max(total - photos, 0)

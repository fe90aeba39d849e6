"""Wizard Quest d6 pools: reading a throw, and the exact odds of pools up to hundreds of dice.

A pool is Level d6. Each die is an Ace (6, worth 5 successes), a success (4-5), a one, or
a blank (2-3), so a pool's state is the four counts ``(aces, hits, ones, blanks)`` and its
probability is a multinomial weight ``n!/(a! h! o! b!) * 2^h * 2^b / 6^n`` (4 and 5 are two
faces, 2 and 3 are two faces). Counting over those counts instead of over faces is what
makes 100d6 cost a few thousand big-integer products instead of icepool's 24 s: all
arithmetic is on exact integers over the common denominator ``6^n``; one
:class:`~fractions.Fraction` is made per outcome at the end.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from math import comb

__all__ = [
    "BOTCH_RULES",
    "MAX_LEVEL",
    "OpposedWeights",
    "PoolRead",
    "PoolWeights",
    "is_botch",
    "opposed_weights",
    "pool_weights",
    "read_pool",
]

#: Largest pool (Level d6) a check accepts; the rule book's levels go past 100.
MAX_LEVEL = 300

#: How "the numbers of successes and Aces" is counted for a botch (docs/rules/wizard-quest.md):
#: ``dice`` - ones exceed the number of 4-5 dice plus the number of 6s (the default);
#: ``total`` - ones exceed the total successes, 5 per Ace.
BOTCH_RULES = ("dice", "total")


def is_botch(aces: int, hits: int, ones: int, rule: str = "dice") -> bool:
    """Whether a pool with these counts botches under ``rule`` (see :data:`BOTCH_RULES`)."""
    return ones > _botch_threshold(aces, hits, rule)


def _botch_threshold(aces: int, hits: int, rule: str) -> int:
    if rule == "dice":
        return aces + hits
    if rule == "total":
        return hits + 5 * aces
    raise ValueError(f"unknown botch rule {rule!r}; choose from {', '.join(BOTCH_RULES)}")


@dataclass(frozen=True, slots=True)
class PoolRead:
    """What a thrown pool is worth.

    ``hits`` counts the 4-5 dice; ``successes`` is the rule book's total, ``hits + 5 * aces``.
    Two pools compare by :attr:`key`: Aces first, then successes (with Aces tied,
    comparing total successes and comparing 4-5 dice agree, so the botch-rule choice
    never changes who wins).
    """

    aces: int
    hits: int
    ones: int
    blanks: int
    botch: bool

    @property
    def successes(self) -> int:
        return self.hits + 5 * self.aces

    @property
    def key(self) -> tuple[int, int]:
        return (self.aces, self.successes)

    def summary(self) -> str:
        aces = f"{self.aces} ace{'s' if self.aces != 1 else ''}"
        succ = f"{self.successes} success{'es' if self.successes != 1 else ''}"
        text = f"{aces}, {succ}"
        if self.ones:
            text += f", {self.ones} one{'s' if self.ones != 1 else ''}"
        return text + (" (botch)" if self.botch else "")


def read_pool(faces: Sequence[int], rule: str = "dice") -> PoolRead:
    """Count a thrown pool of d6 faces."""
    aces = sum(1 for f in faces if f == 6)
    hits = sum(1 for f in faces if f in (4, 5))
    ones = sum(1 for f in faces if f == 1)
    blanks = len(faces) - aces - hits - ones
    return PoolRead(aces, hits, ones, blanks, is_botch(aces, hits, ones, rule))


@dataclass(frozen=True)
class PoolWeights:
    """Exact distribution of one pool as integer weights over ``6**level``.

    ``rows[a][h]`` is the weight of "``a`` Aces, ``h`` 4-5 dice and no botch";
    ``botch`` is the weight of every botched throw. ``total == 6**level`` exactly.
    """

    level: int
    rule: str
    rows: tuple[tuple[int, ...], ...]
    botch: int

    @property
    def total(self) -> int:
        return 6**self.level

    @property
    def failure(self) -> int:
        """No successes and no botch: every die a 2 or 3 (no ones, since ones > 0 would botch)."""
        return self.rows[0][0]

    @property
    def success(self) -> int:
        """At least one success and no botch."""
        return self.total - self.botch - self.failure

    def probabilities(self) -> dict[str, Fraction]:
        d = self.total
        return {
            "success": Fraction(self.success, d),
            "failure": Fraction(self.failure, d),
            "botch": Fraction(self.botch, d),
        }


@lru_cache(maxsize=8)
def _ones_cdf(n: int) -> tuple[tuple[int, ...], ...]:
    """``cdf[m][t]`` = weight of at most ``t`` ones among ``m`` dice that are each a one or a blank.

    Each such die is a one (1 face) or a blank (2 faces): ``sum_{o<=t} C(m,o) 2^(m-o)``.
    """
    rows: list[tuple[int, ...]] = []
    for m in range(n + 1):
        acc, row = 0, []
        for o in range(m + 1):
            acc += comb(m, o) << (m - o)
            row.append(acc)
        rows.append(tuple(row))
    return tuple(rows)


@lru_cache(maxsize=32)
def pool_weights(level: int, rule: str = "dice") -> PoolWeights:
    """Exact weights of a ``level``-d6 pool; ``O(level^2)`` big-integer operations."""
    if level < 0:
        raise ValueError("a pool has at least 0 dice")
    cdf = _ones_cdf(level)
    rows: list[tuple[int, ...]] = []
    kept = 0
    for a in range(level + 1):
        ca = comb(level, a)
        row = []
        for h in range(level - a + 1):
            m = level - a - h
            t = min(_botch_threshold(a, h, rule), m)
            w = ca * comb(level - a, h) * (cdf[m][t] << h)
            row.append(w)
            kept += w
        rows.append(tuple(row))
    return PoolWeights(level, rule, tuple(rows), 6**level - kept)


@dataclass(frozen=True)
class OpposedWeights:
    """Outcome weights of pool A against pool B, from A's side, over ``6**(a+b)``.

    ``win`` includes every throw where B botches and A does not; ``botch`` is every throw
    where A botches (whatever B rolled).
    """

    win: int
    lose: int
    stalemate: int
    botch: int
    total: int

    def probabilities(self) -> dict[str, Fraction]:
        d = self.total
        return {
            "win": Fraction(self.win, d),
            "lose": Fraction(self.lose, d),
            "stalemate": Fraction(self.stalemate, d),
            "botch": Fraction(self.botch, d),
        }


@lru_cache(maxsize=32)
def opposed_weights(level: int, opponent_level: int, rule: str = "dice") -> OpposedWeights:
    """Exact outcome weights of ``level`` d6 against ``opponent_level`` d6.

    Keys compare lexicographically as (Aces, 4-5 dice); B's weights are prefix-summed so
    each of A's ``O(level^2)`` states costs O(1) products.
    """
    pa, pb = pool_weights(level, rule), pool_weights(opponent_level, rule)
    # below[a] = B's non-botch weight with fewer than a Aces; inrow[a][h] = same Aces, fewer 4-5s
    below = [0]
    for row in pb.rows:
        below.append(below[-1] + sum(row))
    b_kept = below[-1]
    win = stalemate = lose = 0
    for a, row in enumerate(pa.rows):
        brow = pb.rows[a] if a < len(pb.rows) else ()
        base = below[min(a, len(pb.rows))]
        less = 0  # B's weight with a Aces and fewer 4-5 dice than h
        for h, w in enumerate(row):
            eq = brow[h] if h < len(brow) else 0
            lt = base + less
            win += w * (pb.botch + lt)
            stalemate += w * eq
            lose += w * (b_kept - lt - eq)
            less += eq
    total = pa.total * pb.total
    return OpposedWeights(win, lose, stalemate, pa.botch * pb.total, total)

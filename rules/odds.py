"""Exact probability distributions over integers, for the systems' odds.

Probabilities are :class:`fractions.Fraction` so "odds sum to 1" is exact, not within a
float epsilon. Systems whose state space is large (100d6 pools) may compute with their own
closed forms; this module covers sums, maps and truncated explosions.

Sums are computed on integer counts over one common denominator, not on Fractions: adding two
Fractions costs a gcd of big integers, and the sum of 100 d10 adds about 400,000 of them (4 s).
Counts are convolved in one big-integer product (Kronecker substitution: each count gets a
slot of bits wide enough for any sum of products), which Python multiplies in sub-quadratic
time: the same sum takes milliseconds.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from fractions import Fraction
from math import lcm

from .faces import printed_faces

__all__ = ["Dist"]


#: Gaps a distribution's values may leave before it is summed as a dict instead of a dense list.
_DENSE_SLACK = 1024
#: Below this many terms a plain double loop beats packing the counts into big integers.
_PACK_FROM = 16


def _convolve(a: list[int], b: list[int]) -> list[int]:
    """The coefficients of the product of two polynomials with non-negative integer coefficients."""
    if min(len(a), len(b)) < _PACK_FROM:
        out = [0] * (len(a) + len(b) - 1)
        for i, x in enumerate(a):
            if x:
                for j, y in enumerate(b):
                    out[i + j] += x * y
        return out
    # every product coefficient is at most sum(a) * sum(b): that many bits per slot never carry
    width = ((sum(a) * sum(b)).bit_length() + 8) // 8
    pa = int.from_bytes(b"".join(x.to_bytes(width, "little") for x in a), "little")
    pb = int.from_bytes(b"".join(y.to_bytes(width, "little") for y in b), "little")
    n = len(a) + len(b) - 1
    raw = (pa * pb).to_bytes(n * width, "little")
    return [int.from_bytes(raw[i * width : (i + 1) * width], "little") for i in range(n)]


class Dist:
    """A finite distribution ``value -> Fraction`` (immutable by convention)."""

    __slots__ = ("p",)

    def __init__(self, p: Mapping[int, Fraction]):
        self.p: dict[int, Fraction] = {k: v for k, v in p.items() if v}

    @classmethod
    def constant(cls, v: int) -> Dist:
        return cls({v: Fraction(1)})

    @classmethod
    def die(cls, kind: str, value: Callable[[int], int] | None = None) -> Dist:
        """Uniform over the printed faces of ``kind``, mapped through ``value``."""
        faces = printed_faces(kind)
        q = Fraction(1, len(faces))
        out: dict[int, Fraction] = defaultdict(Fraction)
        for f in faces:
            out[value(f) if value else f] += q
        return cls(out)

    def map(self, fn: Callable[[int], int]) -> Dist:
        out: dict[int, Fraction] = defaultdict(Fraction)
        for v, q in self.p.items():
            out[fn(v)] += q
        return Dist(out)

    def __add__(self, other: Dist | int) -> Dist:
        if isinstance(other, int):
            return Dist({v + other: q for v, q in self.p.items()})
        a, b = self._counts(), other._counts()
        if a is None or b is None:
            out: dict[int, Fraction] = defaultdict(Fraction)
            for x, px in self.p.items():
                for y, py in other.p.items():
                    out[x + y] += px * py
            return Dist(out)
        return Dist._from_counts(a[0] + b[0], _convolve(a[1], b[1]), a[2] * b[2])

    def _counts(self) -> tuple[int, list[int], int] | None:
        """(lowest value, integer weight of each value from it up, denominator); None if sparse."""
        if not self.p:
            return None
        lo, hi = min(self.p), max(self.p)
        if hi - lo > 4 * len(self.p) + _DENSE_SLACK:  # a few far-apart values: the dict is cheaper
            return None
        den = lcm(*(q.denominator for q in self.p.values()))
        weights = [0] * (hi - lo + 1)
        for v, q in self.p.items():
            weights[v - lo] = q.numerator * (den // q.denominator)
        return lo, weights, den

    @staticmethod
    def _from_counts(lo: int, weights: list[int], den: int) -> Dist:
        return Dist({lo + i: Fraction(w, den) for i, w in enumerate(weights) if w})

    __radd__ = __add__

    def __neg__(self) -> Dist:
        return Dist({-v: q for v, q in self.p.items()})

    def __sub__(self, other: Dist | int) -> Dist:
        return self + (-other)

    def repeat(self, n: int) -> Dist:
        """Sum of ``n`` independent copies (binary powering, on integer counts throughout)."""
        counts = self._counts()
        if counts is None:
            result, base = Dist.constant(0), self
            while n:
                if n & 1:
                    result = result + base
                n >>= 1
                if n:
                    base = base + base
            return result
        lo, weights, den = counts
        r_lo, r_w, r_den = 0, [1], 1
        while n:
            if n & 1:
                r_lo, r_w, r_den = r_lo + lo, _convolve(r_w, weights), r_den * den
            n >>= 1
            if n:
                lo, weights, den = 2 * lo, _convolve(weights, weights), den * den
        return Dist._from_counts(r_lo, r_w, r_den)

    def prob(self, pred: Callable[[int], bool]) -> Fraction:
        return sum((q for v, q in self.p.items() if pred(v)), Fraction(0))

    def total(self) -> Fraction:
        return sum(self.p.values(), Fraction(0))

    def items(self) -> Iterable[tuple[int, Fraction]]:
        return sorted(self.p.items())

    def __repr__(self) -> str:
        return f"Dist({dict(self.items())})"

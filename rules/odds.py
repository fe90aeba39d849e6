"""Exact probability distributions over integers, for the systems' odds.

Probabilities are :class:`fractions.Fraction` so "odds sum to 1" is exact, not within a
float epsilon. Systems whose state space is large (100d6 pools) may compute with their own
closed forms; this module covers sums, maps and truncated explosions.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from fractions import Fraction

from .faces import printed_faces

__all__ = ["Dist"]


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
        out: dict[int, Fraction] = defaultdict(Fraction)
        for a, pa in self.p.items():
            for b, pb in other.p.items():
                out[a + b] += pa * pb
        return Dist(out)

    __radd__ = __add__

    def __neg__(self) -> Dist:
        return Dist({-v: q for v, q in self.p.items()})

    def __sub__(self, other: Dist | int) -> Dist:
        return self + (-other)

    def repeat(self, n: int) -> Dist:
        """Sum of ``n`` independent copies (binary powering)."""
        result, base = Dist.constant(0), self
        while n:
            if n & 1:
                result = result + base
            n >>= 1
            if n:
                base = base + base
        return result

    def prob(self, pred: Callable[[int], bool]) -> Fraction:
        return sum((q for v, q in self.p.items() if pred(v)), Fraction(0))

    def total(self) -> Fraction:
        return sum(self.p.values(), Fraction(0))

    def items(self) -> Iterable[tuple[int, Fraction]]:
        return sorted(self.p.items())

    def __repr__(self) -> str:
        return f"Dist({dict(self.items())})"

"""Which faces are printed on which die.

Sources (RNG, typed-in faces, the tower's camera) deal in *printed* faces; what a face is
worth is the rules' business (a d10's printed 0 is 10 in most games, 0 in WCRPG's xd10).
The die kinds match ``../shared/datasets`` manifests: ``d6``, ``d10`` (0-9), ``d10t``
(percentile tens die, 00-90) and ``d20``; any other ``dN`` is a plain 1..N die.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .errors import FaceRangeError

__all__ = [
    "MAX_SIDES",
    "PHYSICAL_DICE",
    "check_face",
    "face_set",
    "parse_die_kind",
    "printed_faces",
    "sides_of",
]

#: Largest N accepted for a ``dN``; beyond that nobody is rolling real dice.
MAX_SIDES = 1000

#: Die kinds a physical tower can be loaded with.
PHYSICAL_DICE = ("d4", "d6", "d8", "d10", "d10t", "d12", "d20")

_KIND = re.compile(r"d(\d+)(t?)")


def parse_die_kind(kind: str) -> tuple[int, bool]:
    """Return ``(sides, is_tens)`` for a kind such as ``d6`` or ``d10t``."""
    m = _KIND.fullmatch(kind)
    if not m:
        raise ValueError(f"unknown die kind {kind!r}; expected dN or d10t")
    sides = int(m.group(1))
    tens = bool(m.group(2))
    if tens and sides != 10:
        raise ValueError(f"only the d10 has a tens variant, got {kind!r}")
    if not 1 <= sides <= MAX_SIDES:
        raise ValueError(f"a die has 1 to {MAX_SIDES} sides, got {kind!r}")
    return sides, tens


def sides_of(kind: str) -> int:
    """Number of faces of a die kind."""
    return parse_die_kind(kind)[0]


@lru_cache(maxsize=256)
def printed_faces(kind: str) -> tuple[int, ...]:
    """The faces printed on a die kind, in ascending order."""
    sides, tens = parse_die_kind(kind)
    if tens:
        return tuple(range(0, 100, 10))
    if sides == 10:
        return tuple(range(10))
    return tuple(range(1, sides + 1))


@lru_cache(maxsize=256)
def face_set(kind: str) -> frozenset[int]:
    """The printed faces of ``kind`` as a set, for O(1) membership on the hot path."""
    return frozenset(printed_faces(kind))


def check_face(kind: str, face: int) -> int:
    """Return ``face`` if it is printed on ``kind``, else raise :class:`FaceRangeError`."""
    faces = printed_faces(kind)
    if isinstance(face, bool) or not isinstance(face, int) or face not in faces:
        lo, hi = faces[0], faces[-1]
        step = " in steps of 10" if kind == "d10t" else ""
        raise FaceRangeError(f"face {face!r} is not on a {kind} (faces {lo}-{hi}{step})")
    return face

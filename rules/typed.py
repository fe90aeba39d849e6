"""Faces and seeds typed by a person (``--faces 6,3,1,4``, ``--seed 7``): one rule for every caller.

The notation accepts ASCII digits only, so typed-in faces and seeds do too: Python's ``int()``
would also take ``٣`` (Arabic-Indic three), ``1_0`` (ten) and ``²`` would pass
``str.isdigit`` and then fail inside ``int()``. Lengths are bounded before any conversion, so
no input reaches Python's own limit on converting long digit strings.
"""

from __future__ import annotations

import re

from .errors import FaceError, RuleParameterError
from .source import MAX_DICE

__all__ = ["MAX_FACE_DIGITS", "MAX_SEED_CHARS", "parse_faces", "parse_seed"]

#: Most digits in one typed-in face (the largest printed face, 1000, has four).
MAX_FACE_DIGITS = 4
#: Longest seed accepted, digits or text.
MAX_SEED_CHARS = 100

_FACE = re.compile(rf"[0-9]{{1,{MAX_FACE_DIGITS}}}")
_SEED_NUMBER = re.compile(r"-?[0-9]+")
_SEED_WORD = re.compile(r"[A-Za-z0-9_.:+-]+")


def parse_faces(text: str, option: str = "--faces") -> list[int]:
    """``"6,3,1,4"`` (commas and/or blanks) as faces; :class:`FaceError` naming the bad part."""
    parts = text.replace(",", " ").split()
    if len(parts) > MAX_DICE:
        raise FaceError(f"{option}: {len(parts)} faces; a roll uses at most {MAX_DICE} dice")
    faces = []
    for i, part in enumerate(parts, 1):
        if not _FACE.fullmatch(part):
            shown = ascii(part[:20] + ("..." if len(part) > 20 else ""))
            raise FaceError(
                f"{option}: face {i}, {shown}, is not a whole number; {option} wants whole numbers"
                f" (ASCII digits 0-9, at most {MAX_FACE_DIGITS} each) separated by commas, e.g. 6,3,1,4"
            )
        faces.append(int(part))
    return faces


def parse_seed(text: str) -> int | str:
    """A seed: an integer when it is ASCII digits (a leading ``-`` allowed), else a word as it is.

    Words are letters, digits and ``_ . : + -``, so a seed written in a log can be typed back.
    """
    if len(text) > MAX_SEED_CHARS:
        raise RuleParameterError(f"--seed: {len(text)} characters; a seed has at most {MAX_SEED_CHARS}")
    if _SEED_NUMBER.fullmatch(text):
        return int(text)
    if not _SEED_WORD.fullmatch(text):
        raise RuleParameterError(
            f"--seed: {text!a} is not a seed: use a whole number (ASCII digits) or a word of"
            " letters, digits and _ . : + -"
        )
    return text

"""Dice notation: grammar -> syntax tree -> evaluated tree -> formatters (d20's pipeline).

``roll("4d6kh3+2")`` parses (cached), evaluates against a dice source and returns a
:class:`RollResult` whose ``str()`` is the chat line and ``to_json()`` the
``dicetower.roll/1`` document. The notation is documented in ``docs/notation.md``.
"""

from __future__ import annotations

from .ast import Node
from .evaluate import Roller, RollZeroDivisionError, roll
from .formatters import SCHEMA, to_json, to_text
from .limits import MAX_DEPTH, MAX_DICE, MAX_LENGTH, MAX_NESTING, MAX_SIDES
from .parser import parse
from .roll_result import RollResult
from .tree import DieRoll, Evaluated

__all__ = [
    "MAX_DEPTH",
    "MAX_DICE",
    "MAX_LENGTH",
    "MAX_NESTING",
    "MAX_SIDES",
    "SCHEMA",
    "DieRoll",
    "Evaluated",
    "Node",
    "RollResult",
    "RollZeroDivisionError",
    "Roller",
    "parse",
    "roll",
    "to_json",
    "to_text",
]

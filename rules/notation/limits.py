"""The bounds every notation roll is held to, in one place so docs and tests quote them.

Parse-time limits refuse work before any die is thrown; the run-time dice count is enforced
by :class:`~dicetower.rules.source.RollBudget`, which explosions and rerolls also go through.
"""

from __future__ import annotations

from ..faces import MAX_SIDES
from ..source import MAX_DICE

__all__ = ["MAX_DEPTH", "MAX_DICE", "MAX_LENGTH", "MAX_NESTING", "MAX_SIDES"]

#: Longest expression accepted, in characters.
MAX_LENGTH = 500

#: Deepest nesting of parentheses and unary signs (bounds the recursive-descent parser).
MAX_NESTING = 50

#: Longest chain of explosions or rerolls that one die may start.
MAX_DEPTH = 100

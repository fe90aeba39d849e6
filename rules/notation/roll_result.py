"""A rolled expression as callers see it: total, dice, successes, chat text and JSON.

It sits above both the evaluated tree (``tree.py``) and the formatters (``formatters.py``),
so neither of those imports the other's user.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..result import RolledDie
from ..source import DieSlot
from .ast import Node
from .formatters import to_json, to_text
from .tree import Evaluated

if TYPE_CHECKING:
    from ..source import RollBudget

__all__ = ["RollResult"]


class RollResult:
    """A rolled expression: the syntax tree, the evaluated tree, the total and every die.

    ``str(result)`` is the one-line chat text (``4d6kh3 (~~1~~, 4, 5, 6) + 2 = 17``);
    :meth:`to_json` is the ``dicetower.roll/1`` document (``docs/notation.md``).
    """

    __slots__ = ("_budget", "expr", "input", "root")

    def __init__(self, expr: Node, root: Evaluated, budget: RollBudget, text: str = ""):
        self.expr = expr
        self.root = root
        self.input = text or str(expr)
        self._budget = budget

    @property
    def total(self) -> int:
        return self.root.total

    @property
    def dice(self) -> list[RolledDie]:
        """Every physical die thrown, in slot order, with its final flags."""
        out: list[RolledDie] = []
        for node in self.root.walk():
            if node.rolls:
                for r in node.rolls:
                    out.extend(r.rolled_dice())
        out.sort(key=lambda d: d.slot.slot)
        return out

    @property
    def thrown(self) -> list[tuple[DieSlot, int]]:
        """What the dice source was asked and answered, throw by throw (the budget's log)."""
        return list(self._budget.thrown)

    @property
    def successes(self) -> int | None:
        """Successes over every dice term that counts them, or None if none does."""
        counts = [n.successes for n in self.root.walk() if n.successes is not None]
        return sum(counts) if counts else None

    @property
    def failures(self) -> int | None:
        counts = [n.failures for n in self.root.walk() if n.failures is not None]
        return sum(counts) if counts else None

    @property
    def text(self) -> str:
        return to_text(self)

    def to_json(self) -> dict[str, Any]:
        return to_json(self)

    def __str__(self) -> str:
        return self.text

    def __int__(self) -> int:
        return self.root.total

    def __repr__(self) -> str:
        return f"RollResult({str(self.expr)!r}, total={self.root.total})"

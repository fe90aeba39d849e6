"""The evaluated tree of a notation roll: one node per syntax node, with the dice and totals.

Formatters (``formatters.py``) walk this tree; nothing here knows how it will be shown.
Flags are kept as an int bitmask while evaluating (it is the hot loop) and turned into
``frozenset[Flag]`` only when someone asks, through :func:`flags_of`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..result import Flag, RolledDie
from ..source import DieSlot
from .ast import Node

if TYPE_CHECKING:
    from ..source import RollBudget

__all__ = [
    "BINARY",
    "DICE",
    "GROUP",
    "LITERAL",
    "REPEAT",
    "UNARY",
    "DieRoll",
    "Evaluated",
    "RollResult",
    "flag_bit",
    "flags_of",
]

#: kinds of evaluated node (the ``type`` key of the JSON tree)
LITERAL, DICE, REPEAT, UNARY, BINARY, GROUP = "literal", "dice", "repeat", "unary", "binary", "group"

_FLAGS: tuple[Flag, ...] = tuple(Flag)
_BIT: dict[Flag, int] = {f: 1 << i for i, f in enumerate(_FLAGS)}
_SETS: dict[int, frozenset[Flag]] = {}


def flag_bit(flag: Flag) -> int:
    """The bit that stands for ``flag`` in a :class:`DieRoll`'s mask."""
    return _BIT[flag]


def flags_of(mask: int) -> frozenset[Flag]:
    """The flags a bitmask stands for (memoised: there are few distinct masks)."""
    got = _SETS.get(mask)
    if got is None:
        got = frozenset(f for f in _FLAGS if mask & _BIT[f])
        _SETS[mask] = got
    return got


class DieRoll:
    """One value a dice term rolled: a single die, or a d%/d100 tens+units pair.

    ``slots``/``faces`` hold one entry per physical die (two for a pair); ``value`` is what
    the roll is worth after clamps; ``mask`` its flags; ``followups`` the rerolls and
    explosion dice it caused, so formatters can print each chain where it started.
    """

    __slots__ = ("faces", "followups", "mask", "slots", "value")

    def __init__(self, slots: tuple[DieSlot, ...], faces: tuple[int, ...], value: int, mask: int = 0):
        self.slots = slots
        self.faces = faces
        self.value = value
        self.mask = mask
        self.followups: list[DieRoll] | None = None

    @property
    def flags(self) -> frozenset[Flag]:
        return flags_of(self.mask)

    @property
    def counted(self) -> bool:
        """Whether this roll's value is part of the term's total."""
        return not self.mask & _NOT_COUNTED

    def rolled_dice(self) -> list[RolledDie]:
        """The physical dice of this roll, as the shared :class:`RolledDie` result type."""
        flags = flags_of(self.mask)
        if len(self.slots) == 1:
            return [RolledDie(self.slots[0], self.faces[0], self.value, flags)]
        # a pair: the tens die is worth its printed face, the units die its face (0-9)
        return [RolledDie(s, f, f, flags) for s, f in zip(self.slots, self.faces, strict=True)]

    def __repr__(self) -> str:
        return f"DieRoll(value={self.value}, faces={self.faces}, flags={sorted(self.flags)})"


_NOT_COUNTED = _BIT[Flag.DROPPED] | _BIT[Flag.REROLLED]


class Evaluated:
    """One evaluated node: its syntax ``node``, its ``total`` and its evaluated ``children``.

    ``kind`` is one of :data:`LITERAL`, :data:`DICE`, :data:`REPEAT`, :data:`UNARY`,
    :data:`BINARY`, :data:`GROUP`. Dice nodes carry ``rolls`` (display order: each die
    followed by its reroll/explosion chain) and, when the term counts them, ``successes``
    and ``failures``; repeat nodes carry one dice node per set in ``children``.
    """

    __slots__ = ("_plain", "_rolls", "children", "failures", "kind", "node", "successes", "total")

    def __init__(
        self,
        kind: str,
        node: Node,
        total: int,
        children: tuple[Evaluated, ...] = (),
        rolls: list[DieRoll] | None = None,
        successes: int | None = None,
        failures: int | None = None,
        plain: tuple[list[DieSlot], list[int], list[int]] | None = None,
    ):
        self.kind = kind
        self.node = node
        self.total = total
        self.children = children
        self._rolls = rolls
        self.successes = successes
        self.failures = failures
        self._plain = plain

    @property
    def rolls(self) -> list[DieRoll] | None:
        """A dice node's rolls (built on first use for a term without modifiers: most are never shown)."""
        if self._rolls is None and self._plain is not None:
            slots, faces, values = self._plain
            self._rolls = [DieRoll((s,), (f,), v) for s, f, v in zip(slots, faces, values, strict=True)]
            self._plain = None
        return self._rolls

    def walk(self) -> Iterator[Evaluated]:
        """This node and every node below it, depth first (iterative: trees nest 50 deep)."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))

    def __repr__(self) -> str:
        return f"Evaluated({self.kind}, {str(self.node)!r}, total={self.total})"


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
        from .formatters import to_text

        return to_text(self)

    def to_json(self) -> dict[str, Any]:
        from .formatters import to_json

        return to_json(self)

    def __str__(self) -> str:
        return self.text

    def __int__(self) -> int:
        return self.root.total

    def __repr__(self) -> str:
        return f"RollResult({str(self.expr)!r}, total={self.root.total})"

"""The evaluated tree of a notation roll: one node per syntax node, with the dice and totals.

Formatters (``formatters.py``) walk this tree; nothing here knows how it will be shown.
:class:`~.roll_result.RollResult` wraps a finished tree with its text and JSON.
Flags are kept as an int bitmask while evaluating (it is the hot loop) and turned into
``frozenset[Flag]`` only when someone asks, through :func:`flags_of`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ..result import Flag, RolledDie
from ..source import DieSlot
from .ast import Node

__all__ = [
    "BINARY",
    "DICE",
    "GROUP",
    "LITERAL",
    "REPEAT",
    "UNARY",
    "DieRoll",
    "Evaluated",
    "FlatDice",
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

    The evaluator may hand a dice node its dice as flat lists instead of ``rolls``: ``plain``
    (slots, printed faces, whether it is a d10 whose 0 is worth 10) for an unmodified
    ``NdX``, or ``flat`` (:data:`FlatDice`) for one with rerolls, explosions, clamps or
    keeps. ``rolls`` builds the same :class:`DieRoll` objects from them on first access.
    """

    __slots__ = ("_flat", "_plain", "_rolls", "children", "failures", "kind", "node", "successes", "total")

    def __init__(
        self,
        kind: str,
        node: Node,
        total: int,
        children: tuple[Evaluated, ...] = (),
        rolls: list[DieRoll] | None = None,
        successes: int | None = None,
        failures: int | None = None,
        plain: tuple[Sequence[DieSlot], list[int], bool] | None = None,
        flat: FlatDice | None = None,
    ):
        self.kind = kind
        self.node = node
        self.total = total
        self.children = children
        self._rolls = rolls
        self.successes = successes
        self.failures = failures
        self._plain = plain
        self._flat = flat

    @property
    def rolls(self) -> list[DieRoll] | None:
        """A dice node's rolls (built on first use where the evaluator kept them as flat lists:
        most rolls are never shown die by die)."""
        if self._rolls is None:
            if self._plain is not None:
                slots, faces, ten = self._plain
                values = [f or 10 for f in faces] if ten else faces  # a d10's printed 0 is worth 10
                self._rolls = [DieRoll((s,), (f,), v) for s, f, v in zip(slots, faces, values, strict=True)]
                self._plain = None
            elif self._flat is not None:
                self._rolls = _flat_rolls(*self._flat)
                self._flat = None
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


#: a dice term kept as parallel lists by :mod:`.flat`: slots, printed faces, values, flag masks,
#: follow-ups (die index -> indices of its rerolls/explosions, in order) and how many dice were
#: thrown initially (indices below it; every other die is some die's follow-up)
FlatDice = tuple[list[DieSlot], list[int], list[int], list[int], dict[int, list[int]], int]


def _flat_rolls(
    slots: list[DieSlot],
    faces: list[int],
    values: list[int],
    masks: list[int],
    follow: dict[int, list[int]],
    n: int,
) -> list[DieRoll]:
    """The DieRolls of a :data:`FlatDice` term, in display order: each initial die, then its chain."""
    rolls = [DieRoll((s,), (f,), v, m) for s, f, v, m in zip(slots, faces, values, masks, strict=True)]
    if not follow:
        return rolls
    for i, chain in follow.items():
        rolls[i].followups = [rolls[j] for j in chain]
    out: list[DieRoll] = []
    for r in rolls[:n]:
        stack = [r]
        while stack:  # bounded: each die is pushed once (follow-ups form a forest)
            cur = stack.pop()
            out.append(cur)
            if cur.followups:
                stack.extend(reversed(cur.followups))
    return out

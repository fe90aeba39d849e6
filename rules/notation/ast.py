"""Syntax tree of dice notation: immutable nodes that print canonical notation.

Nodes are named tuples, so they are immutable (the :class:`~.evaluate.Roller` caches parsed
trees and shares them between rolls; d20 caches mutable trees and has to copy them on
write) and cheap to build (a frozen dataclass costs several times more per node, and node
construction is most of a parse). ``str(node)``
prints the canonical spelling: ``d6`` becomes ``1d6``, modifiers come out in the order they
are applied, and binary operators get one space either side, as d20 prints them.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = [
    "COMPARATORS",
    "Binary",
    "Clamp",
    "Cond",
    "DiceTerm",
    "Explode",
    "Failure",
    "Group",
    "Keep",
    "Literal",
    "Node",
    "Repeat",
    "Reroll",
    "Success",
    "Unary",
    "die_values",
]

#: Comparison operators a condition may start with ("=" is also what a bare number means).
COMPARATORS = ("<=", ">=", "<", ">", "=")


def die_values(sides: int, percent: bool) -> range:
    """The values one die (or one d%/d100 pair) can be worth in plain notation.

    A d10's printed 0 is worth 10, so a d10 is 1..10 like every other dN. ``d%`` reads a
    tens and a units die as 0..99; ``d100`` reads the same pair with 00+0 as 100.
    """
    if sides == 100 or percent:
        return range(0, 100) if percent else range(1, 101)
    return range(1, sides + 1)


class Cond(NamedTuple):
    """A comparison against a die's value: ``op`` is one of :data:`COMPARATORS`."""

    op: str
    value: int

    def matches(self, v: int) -> bool:
        op = self.op
        if op == "=":
            return v == self.value
        if op == ">=":
            return v >= self.value
        if op == "<=":
            return v <= self.value
        if op == ">":
            return v > self.value
        return v < self.value

    def __str__(self) -> str:
        # a bare number means "equal to", so "=" never needs printing after a letter
        return str(self.value) if self.op == "=" else f"{self.op}{self.value}"


class Reroll(NamedTuple):
    """``r<cond>`` rerolls while the condition holds (bounded); ``ro<cond>`` rerolls once."""

    cond: Cond
    once: bool = False

    def __str__(self) -> str:
        return f"{'ro' if self.once else 'r'}{self.cond}"


class Explode(NamedTuple):
    """``!`` explodes on the die's highest value; ``!<cond>`` on any value matching ``cond``."""

    cond: Cond | None = None

    def __str__(self) -> str:
        return "!" if self.cond is None else f"!{self.cond}"


class Clamp(NamedTuple):
    """``miN`` raises each die's value to at least N; ``maN`` lowers it to at most N (d20's)."""

    op: str  #: "mi" or "ma"
    value: int

    def __str__(self) -> str:
        return f"{self.op}{self.value}"


class Keep(NamedTuple):
    """``khN``/``klN`` keep the N highest/lowest dice; ``dhN``/``dlN`` drop them."""

    op: str  #: "kh", "kl", "dh" or "dl"
    count: int = 1

    def __str__(self) -> str:
        return f"{self.op}{self.count}"


class Success(NamedTuple):
    """``<cmp>N`` counts dice meeting the target; ``wV:W`` makes a die of value V count W.

    ``6d6>=4w6:5`` is a Wizard Quest pool: a 4 or 5 is one success, an Ace (6) is five.
    """

    cond: Cond
    weights: tuple[tuple[int, int], ...] = ()

    def weight(self, v: int) -> int:
        for value, w in self.weights:
            if value == v:
                return w
        return 1 if self.cond.matches(v) else 0

    def __str__(self) -> str:
        c = self.cond
        target = f"{c.op}{c.value}"  # always spelled out: a bare number would join the sides
        return target + "".join(f"w{v}:{w}" for v, w in self.weights)


class Failure(NamedTuple):
    """``f<cond>`` counts dice matching ``cond`` as failures (``f1`` counts ones)."""

    cond: Cond

    def __str__(self) -> str:
        return f"f{self.cond}"


class Literal(NamedTuple):
    """An integer constant."""

    value: int

    def __str__(self) -> str:
        return str(self.value)


class DiceTerm(NamedTuple):
    """``NdX`` with its modifiers; ``percent`` marks ``d%``, and ``sides == 100`` a d100 pair.

    Modifiers apply in a fixed order whatever order they were typed in: rerolls, then
    explosions, then min/max clamps, then keep/drop (in written order), then successes and
    failures. ``str()`` prints them in that order, except that a success target is printed
    before a bare ``!`` it would otherwise follow (``!>=4`` is an explosion condition).
    """

    count: int
    sides: int
    percent: bool = False
    reroll: Reroll | None = None
    explode: Explode | None = None
    clamps: tuple[Clamp, ...] = ()
    keeps: tuple[Keep, ...] = ()
    success: Success | None = None
    failure: Failure | None = None

    @property
    def values(self) -> range:
        """Every value one roll of this term can show (before clamps)."""
        return die_values(self.sides, self.percent)

    @property
    def paired(self) -> bool:
        """Whether each roll is a tens+units pair (``d%`` and ``d100``)."""
        return self.percent or self.sides == 100

    @property
    def physical_dice(self) -> int:
        """Dice thrown initially: a d%/d100 is two d10s (tens and units)."""
        return self.count * (2 if self.paired else 1)

    def __str__(self) -> str:
        parts = [f"{self.count}d{'%' if self.percent else self.sides}"]
        if self.reroll is not None:
            parts.append(str(self.reroll))
        success = self.success
        if self.explode is not None:
            if success is not None and self.explode.cond is None and not (self.clamps or self.keeps):
                # "!>=4" would read as an explosion condition: print the target first
                parts.append(str(success))
                success = None
            parts.append(str(self.explode))
        parts.extend(map(str, self.clamps))
        parts.extend(map(str, self.keeps))
        if success is not None:
            parts.append(str(success))
        if self.failure is not None:
            parts.append(str(self.failure))
        return "".join(parts)


class Repeat(NamedTuple):
    """``<dice>xN`` rolls the dice term N times as separate sets and adds the sets (Rolz)."""

    term: DiceTerm
    times: int

    def __str__(self) -> str:
        return f"{self.term}x{self.times}"


class Unary(NamedTuple):
    """``-x`` or ``+x``."""

    op: str
    operand: Node

    def __str__(self) -> str:
        return f"{self.op}{self.operand}"


class Binary(NamedTuple):
    """``a + b``, ``a - b``, ``a * b`` or ``a / b`` (``/`` is floor division)."""

    op: str
    left: Node
    right: Node

    def __str__(self) -> str:
        return f"{self.left} {self.op} {self.right}"


class Group(NamedTuple):
    """Parentheses, kept so results print the grouping the user wrote."""

    inner: Node

    def __str__(self) -> str:
        return f"({self.inner})"


#: any expression node (``isinstance(x, Node)`` works: it is a union)
Node = Literal | DiceTerm | Repeat | Unary | Binary | Group

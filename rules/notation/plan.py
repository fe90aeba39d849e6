"""What an expression will ask of its dice source before it asks: its base throws, and a divisor always 0.

Why: a tower's throw costs seconds and a photo, so whoever accepts a roll for a tower wants to
know the cost, and every failure that can be known, before the first throw. Neither depends on
a face. Every dice term asks for its initial dice as one request, in evaluation order (left
operand, then right; a repeat ``xN`` once a set), and the evaluator asks for them whatever the
faces are. Rerolls and explosions are follow-ups that only faces decide: they are not counted
here; the roll's :class:`~dicetower.rules.source.RollBudget` bounds them.

A divisor that is always 0 (``1d6/0``, ``1d6/(2-2)``, ``1d6/(0*1d4)``) would fail the roll
only after the dice before it were thrown.
"""

from __future__ import annotations

from ..source import DieSlot, Role
from .ast import Binary, DiceTerm, Group, Literal, Node, Repeat, Unary

__all__ = ["always_zero_divisor", "base_requests", "constant_value"]


def _term_slots(t: DiceTerm, first: int) -> tuple[DieSlot, ...]:
    """The slots of one term's initial throw, as the evaluator builds them (numbered from ``first``)."""
    if t.paired:  # d% and d100: a tens and a units d10 a roll
        slots: list[DieSlot] = []
        for i in range(t.count):
            slots.append(DieSlot(first + 2 * i, "d10t", Role.TENS))
            slots.append(DieSlot(first + 2 * i + 1, "d10", Role.UNITS))
        return tuple(slots)
    kind = f"d{t.sides}"
    return tuple(DieSlot(first + i, kind) for i in range(t.count))


def base_requests(node: Node) -> list[tuple[DieSlot, ...]]:
    """The initial throw of every dice term of ``node``, in the order the evaluator asks for them.

    A term of no dice (``0d6``) asks for nothing and is left out. Slot numbers count the base
    dice only (follow-ups, which are not planned, take numbers in between when the roll runs).
    """
    out: list[tuple[DieSlot, ...]] = []
    used = 0
    stack: list[Node] = [node]
    while stack:  # depth-first, left before right: the evaluator's order
        n = stack.pop()
        if isinstance(n, DiceTerm):
            terms = [n]
        elif isinstance(n, Repeat):
            terms = [n.term] * n.times
        else:
            if isinstance(n, Binary):
                stack.extend((n.right, n.left))
            elif isinstance(n, Unary):
                stack.append(n.operand)
            elif isinstance(n, Group):
                stack.append(n.inner)
            continue
        for t in terms:
            slots = _term_slots(t, used)
            if slots:
                out.append(slots)
                used += len(slots)
    return out


def constant_value(node: Node) -> int | None:
    """The value of ``node`` whatever the dice show, if it has one (``2-2``, ``0*1d6``); else None."""
    if isinstance(node, Literal):
        return node.value
    if isinstance(node, Group):
        return constant_value(node.inner)
    if isinstance(node, Unary):
        v = constant_value(node.operand)
        return None if v is None else (-v if node.op == "-" else v)
    if isinstance(node, Binary):
        a, b = constant_value(node.left), constant_value(node.right)
        if node.op == "*" and (a == 0 or b == 0):
            return 0
        if a is None or b is None:
            return None
        if node.op == "+":
            return a + b
        if node.op == "-":
            return a - b
        if node.op == "*":
            return a * b
        return None if b == 0 else a // b
    return None


def always_zero_divisor(node: Node) -> Node | None:
    """The first divisor in ``node`` that is 0 whatever the dice show (``1d6/0``'s ``0``), or None."""
    stack: list[Node] = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Binary):
            if n.op == "/" and constant_value(n.right) == 0:
                return n.right
            stack.extend((n.right, n.left))
        elif isinstance(n, Unary):
            stack.append(n.operand)
        elif isinstance(n, Group):
            stack.append(n.inner)
    return None

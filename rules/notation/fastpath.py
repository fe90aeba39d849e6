"""A fast path for the everyday shapes of notation: numbers, ``NdX``, one keep/drop or ``!``.

Most rolls people type (``1d20+5``, ``4d6kh3``, ``(1d8+3)*2``, ``3d6!``) need none of the
full parser's care. One regex ``findall`` turns them into tokens in C, and an
operator-precedence loop builds the same tree the recursive-descent parser would. Anything
else (another modifier, an error, a limit close by) returns ``None`` and the full parser
takes over, so every error message and position still comes from one place.
``tests/rules/test_notation_fastpath.py`` checks both parsers agree wherever this one answers.
"""

from __future__ import annotations

import re

from .ast import Binary, DiceTerm, Explode, Group, Keep, Literal, Node, Unary
from .limits import MAX_DICE, MAX_NESTING, MAX_SIDES

__all__ = ["fast_parse"]

# groups: count, sides, keep op, keep count, "!", number, operator, anything else
_TOKEN = re.compile(
    r"[ \t]*(?:(\d*)d(\d+)(?:([kd][hl])(\d*)|(!))?|(\d+)|([-+*/()])|(.))",
    re.DOTALL,
)
_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2}
_EXPLODE = Explode(None)
_UNARY_PLUS, _UNARY_MINUS = "u+", "u-"


def fast_parse(text: str) -> Node | None:
    """The syntax tree of lower-cased ``text``, or ``None`` to hand it to the full parser."""
    out: list[Node] = []  # operands
    ops: list[str] = []  # "+", "-", "*", "/", "(", "u+", "u-"
    expect_operand = True
    nesting = dice = 0
    for count_s, sides_s, kop, kcount, bang, num, op, other in _TOKEN.findall(text.rstrip(" \t")):
        if other:
            return None
        if op:
            if expect_operand:
                if op == "(":
                    ops.append("(")
                elif op == "+" or op == "-":
                    ops.append(_UNARY_MINUS if op == "-" else _UNARY_PLUS)
                else:
                    return None
                nesting += 1
                if nesting > MAX_NESTING:
                    return None
                continue
            if op == ")":
                while ops and ops[-1] != "(":
                    _reduce(out, ops.pop())
                if not ops:
                    return None
                ops.pop()
                out[-1] = Group(out[-1])
                _unary(out, ops)
                continue
            prec = _PRECEDENCE.get(op)
            if prec is None:  # "(" right after an operand
                return None
            while ops and ops[-1] in _PRECEDENCE and _PRECEDENCE[ops[-1]] >= prec:
                _reduce(out, ops.pop())
            ops.append(op)
            expect_operand = True
            continue
        if not expect_operand:
            return None
        if num:
            out.append(Literal(int(num)))
        else:
            count = int(count_s) if count_s else 1
            sides = int(sides_s)
            if not 1 <= sides <= MAX_SIDES or (bang and sides == 1):
                return None
            dice += count * 2 if sides == 100 else count
            if dice > MAX_DICE:
                return None
            if kop:
                out.append(DiceTerm(count, sides, False, None, None, (), (Keep(kop, int(kcount or 1)),)))
            elif bang:
                out.append(DiceTerm(count, sides, False, None, _EXPLODE))
            else:
                out.append(DiceTerm(count, sides))
        _unary(out, ops)
        expect_operand = False
    if expect_operand:
        return None
    while ops:
        op = ops.pop()
        if op == "(":
            return None
        _reduce(out, op)
    return out[0]


def _reduce(out: list[Node], op: str) -> None:
    right = out.pop()
    out[-1] = Binary(op, out[-1], right)


def _unary(out: list[Node], ops: list[str]) -> None:
    """Apply the unary signs written directly before the operand just completed."""
    while ops and (ops[-1] == _UNARY_MINUS or ops[-1] == _UNARY_PLUS):
        out[-1] = Unary("-" if ops.pop() == _UNARY_MINUS else "+", out[-1])

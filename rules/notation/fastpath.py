"""A fast path for the everyday shapes of notation: numbers, ``NdX`` with r/ro, !, mi/ma, keep/drop.

Most rolls people type (``1d20+5``, ``4d6kh3``, ``(1d8+3)*2``, ``3d6!``) need none of the
full parser's care. One regex ``findall`` turns them into tokens in C, and an
operator-precedence loop builds the same tree the recursive-descent parser would. Anything
else (another modifier, an error, a limit close by) returns ``None`` and the full parser
takes over, so every error message and position still comes from one place.
``tests/rules/test_notation_fastpath.py`` checks both parsers agree wherever this one answers.
"""

from __future__ import annotations

import re

from .ast import Binary, Clamp, Cond, DiceTerm, Explode, Group, Keep, Literal, Node, Reroll, Unary
from .limits import MAX_DICE, MAX_NESTING, MAX_SIDES

__all__ = ["fast_parse"]

#: a comparison as ``cond()`` in the full parser reads one: an optional operator, then digits
_CMP = r"(?:[<>]=?|=)?\d+"
#: the modifiers this path answers: r/ro, !, mi/ma and keep/drop, in any order
_MOD = rf"ro?{_CMP}|!(?:{_CMP})?|m[ia]\d+|[kd][hl]\d*"
# groups: count, sides, modifiers, number, operator, anything else
_TOKEN = re.compile(
    rf"[ \t]*(?:(\d*)d(\d+)((?:{_MOD})*)|(\d+)|([-+*/()])|(.))",
    re.DOTALL,
)
# groups of one modifier: reroll ("r"/"ro"), its op, its value; "!", its op, its value;
# clamp ("mi"/"ma"), its value; keep ("kh", "kl", "dh", "dl"), its count
_MODS = re.compile(r"(ro?)([<>]=?|=)?(\d+)|(!)(?:([<>]=?|=)?(\d+))?|(m[ia])(\d+)|([kd][hl])(\d*)")
_KEEP = re.compile(r"([kd][hl])(\d*)")
_EXPLODE = Explode(None)
#: NamedTuple construction without the generated ``__new__`` (same tuples, a third of the cost)
_new = tuple.__new__


def fast_parse(text: str) -> Node | None:
    """The syntax tree of lower-cased ``text``, or ``None`` to hand it to the full parser.

    Two precedence levels need no operator stack: ``sum_node sum_op (prod_node prod_op
    operand)``. Each ``(`` saves that state (with the unary signs written before it) and
    ``)`` restores it, the group becoming the operand.
    """
    stack: list[tuple] = []  # the state saved at each open "("
    sum_node: Node | None = None
    prod_node: Node | None = None
    sum_op = prod_op = ""
    signs: list[str] | None = None  # unary signs written before the coming operand
    expect_operand = True
    nesting = dice = 0
    for count_s, sides_s, mods, num, op, other in _TOKEN.findall(text.rstrip(" \t")):
        if op:
            if expect_operand:
                if op == "(":
                    stack.append((sum_node, sum_op, prod_node, prod_op, signs))
                    sum_node = prod_node = signs = None
                    sum_op = prod_op = ""
                elif op == "-" or op == "+":
                    if signs is None:
                        signs = [op]
                    else:
                        signs.append(op)
                else:
                    return None
                nesting += 1  # never decremented: stricter than the full parser's depth
                if nesting > MAX_NESTING:
                    return None
                continue
            if op == "+" or op == "-":
                sum_node = _new(Binary, (sum_op, sum_node, prod_node)) if sum_op else prod_node
                sum_op, prod_op = op, ""
                expect_operand = True
                continue
            if op == "*" or op == "/":
                prod_op = op
                expect_operand = True
                continue
            if op == "(" or not stack:  # "(" right after an operand, or an unmatched ")"
                return None
            inner = _new(Binary, (sum_op, sum_node, prod_node)) if sum_op else prod_node
            sum_node, sum_op, prod_node, prod_op, signs = stack.pop()
            node: Node = _new(Group, (inner,))
        elif other or not expect_operand:
            return None
        elif num:
            node = _new(Literal, (int(num),))
        else:
            count = int(count_s) if count_s else 1
            sides = int(sides_s)
            if not 1 <= sides <= MAX_SIDES:
                return None
            dice += count * 2 if sides == 100 else count
            if dice > MAX_DICE:
                return None
            if not mods:
                node = _new(DiceTerm, (count, sides, False, None, None, (), (), None, None))
            elif mods == "!":
                if sides == 1:  # would explode forever: the full parser says so
                    return None
                node = _new(DiceTerm, (count, sides, False, None, _EXPLODE, (), (), None, None))
            else:
                term = _modified(count, sides, mods)
                if term is None:
                    return None
                node = term
        if signs is not None:  # the sign written last binds tightest
            for sign in reversed(signs):
                node = _new(Unary, (sign, node))
            signs = None
        prod_node = _new(Binary, (prod_op, prod_node, node)) if prod_op else node
        expect_operand = False
    if expect_operand or stack:
        return None
    return _new(Binary, (sum_op, sum_node, prod_node)) if sum_op else prod_node


def _modified(count: int, sides: int, mods: str) -> DiceTerm | None:
    """``count``d``sides`` with the modifiers in ``mods``, or ``None`` where the full parser objects.

    A single keep/drop (``4d6kh3``) is one regex match; anything else goes modifier by modifier.
    """
    m = _KEEP.fullmatch(mods)
    if m is not None:
        kop, kcount = m.groups()
        keep = _new(Keep, (kop, int(kcount) if kcount else 1))
        return _new(DiceTerm, (count, sides, False, None, None, (), (keep,), None, None))
    reroll: Reroll | None = None
    explode: Explode | None = None
    clamps: list[Clamp] = []
    keeps: list[Keep] = []
    for rop, rcmp, rval, bang, ecmp, evalue, cop, cval, kop, kcount in _MODS.findall(mods):
        if rop:
            if reroll is not None:  # one reroll per term
                return None
            cond = _new(Cond, (rcmp or "=", int(rval)))
            if rop == "r" and cond.matches(1) and cond.matches(sides):  # rerolls every value forever
                return None
            reroll = _new(Reroll, (cond, rop == "ro"))
        elif bang:
            if explode is not None:  # one explosion per term
                return None
            if evalue:
                cond = _new(Cond, (ecmp or "=", int(evalue)))
                if cond.matches(1) and cond.matches(sides):  # explodes on every value forever
                    return None
                explode = _new(Explode, (cond,))
            elif sides == 1:
                return None
            else:
                explode = _EXPLODE
        elif cop:
            clamps.append(_new(Clamp, (cop, int(cval))))
        else:
            keeps.append(_new(Keep, (kop, int(kcount) if kcount else 1)))
    return _new(DiceTerm, (count, sides, False, reroll, explode, tuple(clamps), tuple(keeps), None, None))

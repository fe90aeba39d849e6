"""A hand-written recursive-descent parser for dice notation (grammar in ``docs/notation.md``).

Hand-written rather than lark-built (d20's choice) because parsing dominates an uncached
roll. Everyday expressions are answered by :mod:`.fastpath`; the rest (and every error) is
scanned here once, left to right, with no token objects. Every refusal is a
:class:`RollSyntaxError` naming a 0-based position (so ``pretty()`` can draw a caret) or a
:class:`RollLimitError` for expressions that parse but are too big.
"""

from __future__ import annotations

import re

from ..errors import RollLimitError, RollSyntaxError
from .ast import (
    Binary,
    Clamp,
    Cond,
    DiceTerm,
    Explode,
    Failure,
    Group,
    Keep,
    Literal,
    Node,
    Repeat,
    Reroll,
    Success,
    Unary,
    die_values,
)
from .fastpath import fast_parse
from .limits import MAX_DICE, MAX_LENGTH, MAX_NESTING, MAX_SIDES

__all__ = ["parse"]

_DIGITS = frozenset("0123456789")
_WS = frozenset(" \t")
#: what may follow a dice term that has no modifiers
_TERM_END = frozenset(" \t+-*/)")
#: a number, or a dice head: count digits, "d", sides digits or "%" (sides may be missing: an error)
_HEAD = re.compile(r"(\d*)(?:(d)(%|\d*))?")
_INT = re.compile(r"\d+")
_CMP_START = frozenset("<>=")
_OPERAND = ("number", "dice", "'('", "'-'")
_MODIFIERS = ("r", "ro", "!", "mi", "ma", "kh", "kl", "dh", "dl", "<, >, <=, >=, = (successes)", "f", "x")


def parse(expr: str) -> Node:
    """Parse ``expr`` into an immutable syntax tree, enforcing the parse-time limits."""
    if not isinstance(expr, str):
        raise TypeError(f"dice notation must be a str, not {type(expr).__name__}")
    if len(expr) > MAX_LENGTH:
        raise RollLimitError(f"expression is {len(expr)} characters long; the limit is {MAX_LENGTH}")
    if not expr.isascii():
        bad = next(i for i, ch in enumerate(expr) if not ch.isascii())
        raise RollSyntaxError(f"unexpected character {expr[bad]!r}", expr, bad, expr[bad], _OPERAND)
    text = expr.lower()
    node = fast_parse(text)  # the everyday shapes; None hands everything else to the full parser
    if node is None:
        node = _Parser(expr, text).parse()
    return node


class _Parser:
    """One parse: the lower-cased text, a cursor, the nesting depth and the dice counted so far."""

    __slots__ = ("depth", "n", "ndice", "pos", "src", "text")

    def __init__(self, src: str, text: str):
        self.src = src
        self.text = text
        self.n = len(src)
        self.pos = 0
        self.depth = 0
        self.ndice = 0

    # -- helpers ---------------------------------------------------------------------------

    def error(self, message: str, expected: tuple[str, ...] = (), pos: int | None = None) -> RollSyntaxError:
        at = self.pos if pos is None else pos
        got = self.src[at] if at < self.n else "end of input"
        return RollSyntaxError(message, self.src, at, got, expected)

    def got(self) -> str:
        return repr(self.src[self.pos]) if self.pos < self.n else "end of input"

    def integer(self, what: str) -> int:
        m = _INT.match(self.text, self.pos)
        if m is None:
            raise self.error(f"expected {what}, got {self.got()}", ("number",))
        self.pos = m.end()
        return int(m.group())

    def nest(self) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise RollLimitError(
                f"expression nests deeper than {MAX_NESTING} levels (at column {self.pos + 1})"
            )

    # -- grammar ---------------------------------------------------------------------------

    def parse(self) -> Node:
        if not self.text.strip(" \t"):
            raise self.error("empty expression", _OPERAND, len(self.text) - len(self.text.lstrip(" \t")))
        node = self.expr()  # leaves the cursor past trailing blanks
        if self.pos < self.n:
            ch = self.text[self.pos]
            if ch == ")":
                raise self.error("unmatched ')'", ("+", "-", "*", "/", "end of input"))
            raise self.error(f"unexpected {self.got()}", ("+", "-", "*", "/", "end of input"))
        return node

    def expr(self) -> Node:
        node = self.term()
        text, n = self.text, self.n
        while True:
            pos = self.pos
            while pos < n and text[pos] in _WS:
                pos += 1
            if pos < n and text[pos] in "+-":
                self.pos = pos + 1
                node = Binary(text[pos], node, self.term())
            else:
                self.pos = pos
                return node

    def term(self) -> Node:
        node = self.operand()
        text, n = self.text, self.n
        while True:
            pos = self.pos
            while pos < n and text[pos] in _WS:
                pos += 1
            if pos < n and text[pos] in "*/":
                self.pos = pos + 1
                node = Binary(text[pos], node, self.operand())
            else:
                self.pos = pos
                return node

    def operand(self) -> Node:
        """A unary sign, a parenthesised expression, a number or a dice term."""
        text, n = self.text, self.n
        pos = self.pos
        while pos < n and text[pos] in _WS:
            pos += 1
        self.pos = pos
        if pos >= n:
            raise self.error("expression ends too soon: expected a number, dice or '('", _OPERAND)
        ch = text[pos]
        if ch in _DIGITS or ch == "d":
            m = _HEAD.match(text, pos)
            count_s, d, sides_s = m.group(1, 2, 3)
            if d is None:  # a plain number (maybe Rolz "20x10")
                self.pos = m.end()
                value = int(count_s)
                if self.pos < n and text[self.pos] == "x":  # Rolz shorthand: "20x10" is a d20 rolled 10 times
                    if not 1 <= value <= MAX_SIDES:
                        raise self.side_error(value, pos)
                    return self.repeat(self.checked(DiceTerm(1, value), pos), pos)
                return Literal(value)
            return self.dice(int(count_s) if count_s else 1, sides_s, pos, m.end())
        if ch in "+-":
            self.nest()
            self.pos = pos + 1
            node = Unary(ch, self.operand())
            self.depth -= 1
            return node
        if ch == "(":
            self.nest()
            self.pos = pos + 1
            inner = self.expr()
            if self.pos >= n or text[self.pos] != ")":
                expected = ("')'", "+", "-", "*", "/")
                raise self.error(f"'(' at column {pos + 1} is never closed", expected)
            self.pos += 1
            self.depth -= 1
            return Group(inner)
        if ch == ")":
            raise self.error("unexpected ')': expected a number, dice or '('", _OPERAND)
        raise self.error(f"unexpected {self.got()}: expected a number, dice or '('", _OPERAND)

    def side_error(self, sides: int, at: int) -> Exception:
        if sides > MAX_SIDES:
            return RollLimitError(f"a die has at most {MAX_SIDES} sides, got d{sides} (at column {at + 1})")
        return self.error(f"a die needs at least 1 side, got d{sides}", ("number",), at)

    def dice(self, count: int, sides_s: str, start: int, end: int) -> Node:
        """A dice term from its head (``NdX``/``d%`` matched from ``start`` to ``end``) on."""
        text, n = self.text, self.n
        sides_at = end - len(sides_s)
        self.pos = end
        if count > MAX_DICE:
            raise RollLimitError(f"{count} dice in one term; the limit is {MAX_DICE} (at column {start + 1})")
        percent = sides_s == "%"
        if percent:
            sides = 100
        elif not sides_s:
            raise self.error(f"expected the number of sides after 'd', got {self.got()}", ("number", "'%'"))
        else:
            sides = int(sides_s)
            if not 1 <= sides <= MAX_SIDES:
                raise self.side_error(sides, sides_at)
        if end >= n or text[end] in _TERM_END:  # no modifiers: the common case
            return self.checked(DiceTerm(count, sides, percent), start)
        values = die_values(sides, percent)
        reroll: Reroll | None = None
        explode: Explode | None = None
        success: Success | None = None
        failure: Failure | None = None
        clamps: list[Clamp] = []
        keeps: list[Keep] = []
        while self.pos < n:
            at = self.pos
            ch = text[at]
            nxt = text[at + 1] if at + 1 < n else ""
            if ch == "r":
                if reroll is not None:
                    raise self.error("a dice term takes one reroll (r or ro)")
                once = nxt == "o"
                self.pos += 2 if once else 1
                reroll = Reroll(self.cond(bare=True), once)
                if not once and all(reroll.cond.matches(v) for v in values):
                    raise RollLimitError(f"'{reroll}' at column {at + 1} would reroll every value forever")
            elif ch == "!":
                if explode is not None:
                    raise self.error("a dice term explodes once ('!' given twice)")
                self.pos += 1
                cond = None
                if self.pos < n and (text[self.pos] in _DIGITS or text[self.pos] in _CMP_START):
                    cond = self.cond(bare=True)
                explode = Explode(cond)
                forever = all(cond.matches(v) for v in values) if cond is not None else len(values) == 1
                if forever:
                    raise RollLimitError(
                        f"'{explode}' at column {at + 1} would explode on every value forever"
                    )
            elif ch == "m" and nxt in ("i", "a"):
                self.pos += 2
                clamps.append(Clamp(ch + nxt, self.integer(f"a number after '{ch + nxt}'")))
            elif ch == "k" or (ch == "d" and nxt in ("h", "l")):
                if nxt not in ("h", "l"):
                    message = "'k' must be 'kh' (keep highest) or 'kl' (keep lowest)"
                    raise self.error(message, ("kh", "kl"), at)
                self.pos += 2
                kcount = 1
                if self.pos < n and text[self.pos] in _DIGITS:
                    kcount = self.integer("a count")
                keeps.append(Keep(ch + nxt, kcount))
            elif ch in _CMP_START:
                if success is not None:
                    raise self.error("a dice term takes one success target")
                success = self.success(values)
            elif ch == "f":
                if failure is not None:
                    raise self.error("a dice term takes one failure count (f)")
                self.pos += 1
                failure = Failure(self.cond(bare=True))
            else:
                break
        if self.pos < n and (text[self.pos].isalpha() or text[self.pos] in "!%") and text[self.pos] != "x":
            raise self.error(f"unknown dice modifier {self.got()}", _MODIFIERS)
        term = DiceTerm(count, sides, percent, reroll, explode, tuple(clamps), tuple(keeps), success, failure)
        if self.pos < n and text[self.pos] == "x":
            return self.repeat(self.checked(term, start, 1), start)
        return self.checked(term, start)

    def checked(self, term: DiceTerm, start: int, times: int = 1) -> DiceTerm:
        """Count ``term``'s dice (times repetitions) against the parse-time dice limit."""
        self.ndice += term.physical_dice * times
        if self.ndice > MAX_DICE:
            raise RollLimitError(
                f"expression throws {self.ndice} dice by column {start + 1}; the limit is {MAX_DICE}"
            )
        return term

    def repeat(self, term: DiceTerm, start: int) -> Repeat:
        self.pos += 1  # the "x"
        times_at = self.pos
        times = self.integer("how many times to repeat (xN)")
        if times < 1:
            raise self.error("a repeat needs at least 1 (x1)", ("number",), times_at)
        if times > MAX_DICE:
            raise RollLimitError(f"repeat x{times} is more than {MAX_DICE} (at column {times_at + 1})")
        self.checked(term, start, times - 1)  # the first repetition was counted already
        return Repeat(term, times)

    def cond(self, *, bare: bool) -> Cond:
        text, pos, n = self.text, self.pos, self.n
        op = "="
        if pos < n and text[pos] in _CMP_START:
            if pos + 1 < n and text[pos + 1] == "=" and text[pos] != "=":
                op = text[pos : pos + 2]
                self.pos = pos + 2
            else:
                op = text[pos]
                self.pos = pos + 1
        elif not bare:
            raise self.error("expected a comparison (<, >, <=, >=, =)", ("<", ">", "<=", ">=", "="))
        return Cond(op, self.integer("a number to compare with"))

    def success(self, values: range) -> Success:
        cond = self.cond(bare=False)
        weights: list[tuple[int, int]] = []
        text, n = self.text, self.n
        while self.pos < n and text[self.pos] == "w":
            self.pos += 1
            value_at = self.pos
            value = self.integer("a die value after 'w' (wV:W)")
            if value not in values:
                raise self.error(f"w{value}: no die of this kind shows {value}", (), value_at)
            if any(v == value for v, _ in weights):
                raise self.error(f"w{value} is weighted twice", (), value_at)
            if self.pos >= n or text[self.pos] != ":":
                raise self.error("expected ':' and a weight (wV:W)", ("':'",))
            self.pos += 1
            weights.append((value, self.integer("a weight after ':'")))
        return Success(cond, tuple(weights))

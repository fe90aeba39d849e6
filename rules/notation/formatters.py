"""Formatters for evaluated rolls: the one-line chat text and the ``dicetower.roll/1`` JSON.

Each is a table from node kind to a function (d20's ``Stringifier._nodes``), so a new output
(the overlay, a log line) is one more table, and the evaluator never formats anything.

Text marks, per die: ``~~v~~`` dropped or rerolled, ``v!`` exploded, ``**v**`` a success,
``_v_`` a counted failure; ``4d6kh3 (~~1~~, 4, 5, 6) + 2 = 17``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..result import Flag
from .tree import BINARY, DICE, GROUP, LITERAL, REPEAT, UNARY, DieRoll, Evaluated, flag_bit

if TYPE_CHECKING:
    from .roll_result import RollResult

__all__ = ["SCHEMA", "die_text", "node_json", "node_text", "to_json", "to_text"]

#: identifies the JSON document; keys may be added in a /1 document, never renamed
SCHEMA = "dicetower.roll/1"

_STRUCK = flag_bit(Flag.DROPPED) | flag_bit(Flag.REROLLED)
_EXPLODED = flag_bit(Flag.EXPLODED)
_SUCCESS = flag_bit(Flag.SUCCESS)
_BOTCH = flag_bit(Flag.BOTCH)


def die_text(r: DieRoll) -> str:
    """One die's value with its marks."""
    s = str(r.value)
    mask = r.mask
    if mask & _EXPLODED:
        s += "!"
    if mask & _SUCCESS:
        s = f"**{s}**"
    elif mask & _BOTCH:
        s = f"_{s}_"
    if mask & _STRUCK:
        s = f"~~{s}~~"
    return s


def _dice_list(node: Evaluated) -> str:
    return ", ".join(die_text(r) for r in node.rolls or ())


def _text_dice(node: Evaluated) -> str:
    return f"{node.node} ({_dice_list(node)})"


def _text_repeat(node: Evaluated) -> str:
    return f"{node.node} ({'; '.join(_dice_list(s) for s in node.children)})"


def _text_literal(node: Evaluated) -> str:
    return str(node.total)


def _text_unary(node: Evaluated) -> str:
    return f"{node.node.op}{node_text(node.children[0])}"  # type: ignore[attr-defined]


def _text_binary(node: Evaluated) -> str:
    left, right = node.children
    return f"{node_text(left)} {node.node.op} {node_text(right)}"  # type: ignore[attr-defined]


def _text_group(node: Evaluated) -> str:
    return f"({node_text(node.children[0])})"


_TEXT: dict[str, Callable[[Evaluated], str]] = {
    LITERAL: _text_literal,
    DICE: _text_dice,
    REPEAT: _text_repeat,
    UNARY: _text_unary,
    BINARY: _text_binary,
    GROUP: _text_group,
}


def node_text(node: Evaluated) -> str:
    """The chat text of one evaluated node (no ``= total``)."""
    return _TEXT[node.kind](node)


def to_text(result: RollResult) -> str:
    """``4d6kh3 (~~1~~, 4, 5, 6) + 2 = 17``: the roll as one line for chat or a terminal."""
    return f"{node_text(result.root)} = {result.total}"


def _roll_json(r: DieRoll) -> dict[str, Any]:
    return {
        "value": r.value,
        "slots": [s.slot for s in r.slots],
        "faces": list(r.faces),
        "flags": sorted(f.value for f in r.flags),
    }


def node_json(node: Evaluated) -> dict[str, Any]:
    """The ``tree`` part of the JSON document, for one node and everything below it."""
    out: dict[str, Any] = {"type": node.kind, "notation": str(node.node), "total": node.total}
    kind = node.kind
    if kind == DICE:
        out["rolls"] = [_roll_json(r) for r in node.rolls or ()]
        out["successes"] = node.successes
        out["failures"] = node.failures
    elif kind == REPEAT:
        out["sets"] = [node_json(c) for c in node.children]
    elif kind == UNARY:
        out["op"] = node.node.op  # type: ignore[attr-defined]
        out["operand"] = node_json(node.children[0])
    elif kind == BINARY:
        out["op"] = node.node.op  # type: ignore[attr-defined]
        out["left"] = node_json(node.children[0])
        out["right"] = node_json(node.children[1])
    elif kind == GROUP:
        out["inner"] = node_json(node.children[0])
    return out


def to_json(result: RollResult) -> dict[str, Any]:
    """The ``dicetower.roll/1`` document (schema in ``docs/notation.md``)."""
    return {
        "schema": SCHEMA,
        "input": result.input,
        "expression": str(result.expr),
        "total": result.total,
        "successes": result.successes,
        "failures": result.failures,
        "text": to_text(result),
        "dice": [d.to_json() for d in result.dice],
        "tree": node_json(result.root),
    }

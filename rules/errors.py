"""Every error the rules core raises, under one base (the shape of ``d20/errors.py``).

Callers (CLI, HTTP API) catch :class:`DiceError` once and show its message; the
subclasses let tests and the API tell a typo from a limit from a bad typed-in face.
"""

from __future__ import annotations

import unicodedata

__all__ = [
    "DiceError",
    "ExtraFacesError",
    "FaceError",
    "FaceMissingError",
    "FaceRangeError",
    "RollLimitError",
    "RollSyntaxError",
    "RuleParameterError",
    "SourceUnavailableError",
    "UnknownCheckError",
    "UnknownSystemError",
    "caret_lines",
    "printable",
]

_ESCAPES = {"\n": "\\n", "\r": "\\r", "\x1b": "\\x1b"}


def _shown(ch: str) -> str:
    """``ch`` as it is safe to write to a terminal: control and format characters escaped."""
    if ch == "\t":
        return " "  # a tab's width depends on where the line starts; the caret line cannot follow it
    if ch in _ESCAPES:
        return _ESCAPES[ch]
    if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"):
        code = ord(ch)
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
    return ch


def _columns(text: str) -> int:
    """Terminal columns ``text`` takes: wide (East Asian) characters two, combining marks none."""
    n = 0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        n += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return n


def printable(text: str) -> str:
    """``text`` with control characters (escape sequences, newlines, bidi overrides) shown escaped.

    User input goes back to a terminal in error messages; an escape sequence in it could retitle
    the terminal or hide the rest of the line.
    """
    return "".join(_shown(ch) for ch in text)


def caret_lines(expression: str, position: int) -> tuple[str, str]:
    """The expression as it is safe to print, and a line with a caret under character ``position``.

    The caret's column counts what the terminal shows: escaped control characters take their
    escape's width, a tab one space, a wide character two columns. A position at the end of the
    expression points just past it ("end of input").
    """
    shown: list[str] = []
    col = caret = 0
    for i, ch in enumerate(expression):
        if i == position:
            caret = col
        piece = _shown(ch)
        shown.append(piece)
        col += _columns(piece)
    if position >= len(expression):
        caret = col
    return "".join(shown), " " * caret + "^"


class DiceError(Exception):
    """Base of every error the rules core raises on bad input."""


class RollSyntaxError(DiceError, ValueError):
    """Notation that does not parse; carries where, what was found and what was expected.

    ``position`` is a 0-based character offset into ``expression`` (what code indexes with);
    the message and :attr:`column` count characters from 1 (``at column 8``), as people do.
    The HTTP API's error gives both, named so. :meth:`pretty` draws the caret like the
    ``dice`` package's pretty errors.
    """

    def __init__(
        self, message: str, expression: str, position: int, got: str = "", expected: tuple[str, ...] = ()
    ):
        self.message = message
        self.expression = expression
        self.position = position
        self.got = got
        self.expected = tuple(expected)
        super().__init__(f"{message} at column {position + 1}")

    @property
    def column(self) -> int:
        """1-based column, as people count."""
        return self.position + 1

    def pretty(self) -> str:
        """The expression, a caret under the offending character, and the message."""
        shown, caret = caret_lines(self.expression, self.position)
        return f"{shown}\n{caret}\n{printable(str(self))}"


class RollLimitError(DiceError, ValueError):
    """An expression or roll that would exceed a documented bound (dice, depth, length, nesting)."""


class SourceUnavailableError(DiceError):
    """The dice source cannot deliver faces (the tower failed, a die stayed unreadable after its retries)."""


class FaceError(DiceError, ValueError):
    """A face from a dice source that cannot be used."""


class FaceMissingError(FaceError):
    """A fixed (typed-in) source ran out of faces before the rules were done asking."""


class ExtraFacesError(FaceError):
    """A fixed (typed-in) source was given more faces than the roll used."""


class FaceRangeError(FaceError):
    """A face that is not printed on the die it was given for (a 7 on a d6, a 35 on a tens die)."""


class UnknownSystemError(DiceError, KeyError):
    """A rule system name that is not registered."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class UnknownCheckError(DiceError, KeyError):
    """A check name that the chosen system does not have."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class RuleParameterError(DiceError, ValueError):
    """A missing, unknown or out-of-range parameter of a system's check."""

"""Every error the rules core raises, under one base (the shape of ``d20/errors.py``).

Callers (CLI, HTTP API) catch :class:`DiceError` once and show its message; the
subclasses let tests and the API tell a typo from a limit from a bad typed-in face.
"""

from __future__ import annotations

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
]


class DiceError(Exception):
    """Base of every error the rules core raises on bad input."""


class RollSyntaxError(DiceError, ValueError):
    """Notation that does not parse; carries where, what was found and what was expected.

    ``position`` is a 0-based character offset into ``expression``; :meth:`pretty` draws
    the caret like the ``dice`` package's pretty errors.
    """

    def __init__(
        self, message: str, expression: str, position: int, got: str = "", expected: tuple[str, ...] = ()
    ):
        self.message = message
        self.expression = expression
        self.position = position
        self.got = got
        self.expected = tuple(expected)
        super().__init__(f"{message} at position {position + 1}")

    @property
    def column(self) -> int:
        """1-based column, as people count."""
        return self.position + 1

    def pretty(self) -> str:
        """The expression, a caret under the offending character, and the message."""
        return f"{self.expression}\n{' ' * self.position}^\n{self}"


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

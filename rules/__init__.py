"""dicetower.rules: the pure rules core (dice notation, dice sources, game systems).

Everything a caller needs is re-exported here::

    from dicetower.rules import roll, RandomSource, FixedSource
    roll("4d6kh3+2", source=FixedSource([1, 4, 5, 6])).total  # 17
"""

from __future__ import annotations

from .errors import (
    DiceError,
    ExtraFacesError,
    FaceError,
    FaceMissingError,
    FaceRangeError,
    RollLimitError,
    RollSyntaxError,
    RuleParameterError,
    UnknownCheckError,
    UnknownSystemError,
)
from .notation import Roller, RollResult, RollZeroDivisionError, parse, roll
from .result import CheckResult, Flag, Odds, RolledDie
from .source import DiceRequest, DiceSource, DieSlot, FixedSource, Purpose, RandomSource, Role, RollBudget
from .systems import get_system, run_check, system_names

__all__ = [
    "CheckResult",
    "DiceError",
    "DiceRequest",
    "DiceSource",
    "DieSlot",
    "ExtraFacesError",
    "FaceError",
    "FaceMissingError",
    "FaceRangeError",
    "FixedSource",
    "Flag",
    "Odds",
    "Purpose",
    "RandomSource",
    "Role",
    "RollBudget",
    "RollLimitError",
    "RollResult",
    "RollSyntaxError",
    "RollZeroDivisionError",
    "RolledDie",
    "Roller",
    "RuleParameterError",
    "UnknownCheckError",
    "UnknownSystemError",
    "get_system",
    "parse",
    "roll",
    "run_check",
    "system_names",
]

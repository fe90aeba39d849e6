"""Whether a tray can roll an expression: the rules' parser, then a dry run planned on the tray.

Why: ``[roll] default`` is what the start button rolls. An expression that does not parse, or
that asks for a die the tray does not hold, would otherwise pass ``tower config --check`` and
fail at the first press, with the dice already shaken for nothing. The dry run throws RNG faces
through the rules exactly as a roll would, and plans each throw on the tray as the tower does
(:func:`~dicetower.firmware.matching.plan_rounds`), so the same refusals come out here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .dice_set import TrayDie

__all__ = ["roll_problem"]


def roll_problem(expression: str, tray: Sequence[TrayDie]) -> str | None:
    """Why ``tray`` cannot roll ``expression``, or None.

    A syntax error says where (``... at column 8``); a die the tray lacks says what it holds.
    """
    from ..rules.errors import DiceError
    from ..rules.notation import Roller
    from ..rules.source import DiceRequest, RandomSource
    from .errors import TrayKindError
    from .matching import plan_rounds

    class Planned(RandomSource):
        """RNG faces for each throw, once the tray has been found able to throw it."""

        def faces(self, request: DiceRequest) -> list[int]:
            plan_rounds(request.slots, tray)
            return super().faces(request)

    try:
        Roller(cache_size=0).roll(expression, Planned(seed=0))
    except (DiceError, TrayKindError) as exc:
        return str(exc)
    return None

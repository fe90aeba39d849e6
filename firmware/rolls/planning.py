"""Everything that can be known about a roll before its first throw, checked before it is queued.

Why: a request costs one line of JSON, and its roll can cost a tower minutes of throws and
hundreds of files (``1000d6`` on a tray of five d6 is 200 throws), or fail only after some dice
were thrown (``1d6/0``, a d20 on a tray of d6). :func:`plan_roll` finds each of those first and
refuses with 422 and the reason: a divisor that is always 0, a die the dice supply cannot
throw, and more initial throws than the supply allows (a tower's ``[roll] max_throws``).

What is counted is the roll's initial dice, which do not depend on any face: notation's terms
read from its syntax tree (:mod:`dicetower.rules.notation.plan`), a system check's base
requests from a rehearsal with the RNG (checks ask for their base dice whatever the faces; a
follow-up never counts). Follow-ups (explosions, rerolls) are decided by faces: the tower
supply bounds them while the roll runs (``tower_supply.py``), and the rules' budget bounds
their dice (at most 1000 in a roll).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...rules.errors import DiceError
from ...rules.notation import parse
from ...rules.notation.plan import always_zero_divisor, base_requests
from ...rules.source import DiceRequest, DiceSource, DieSlot, RandomSource
from ...rules.systems import get_system, run_check
from .rolling import DiceSupply, RequestFieldError, RollRequest

__all__ = ["RollPlan", "plan_roll", "requests_of"]


@dataclass(frozen=True)
class RollPlan:
    """What accepting a roll commits the supply to: ``throws`` for its initial dice, of ``max_throws``."""

    throws: int
    max_throws: int | None

    def to_json(self) -> dict[str, int | None]:
        return {"throws": self.throws, "max_throws": self.max_throws}


class _Rehearsal(DiceSource):
    """Answers a check from a fixed-seed RNG and notes its base requests (never its follow-ups)."""

    faces_are_valid = True

    def __init__(self) -> None:
        self._rng = RandomSource(0)
        self.base: list[tuple[DieSlot, ...]] = []

    def faces(self, request: DiceRequest) -> list[int]:
        if not request.is_follow_up:
            self.base.append(tuple(request.slots))
        return self._rng.faces(request)


def requests_of(request: RollRequest) -> list[tuple[DieSlot, ...]]:
    """The slots of each initial throw ``request`` will ask for, in order (validated requests only)."""
    if request.notation is not None:
        node = request.tree or parse(request.notation)
        zero = always_zero_divisor(node)
        if zero is not None:
            raise RequestFieldError("notation", f"division by zero: the divisor {zero} is always 0")
        return base_requests(node)
    rehearsal = _Rehearsal()
    try:
        run_check(
            request.rules or get_system(request.system or ""),
            request.check or "",
            rehearsal,
            request.params,
            with_odds=False,
        )
    except DiceError as exc:
        raise RequestFieldError("check", str(exc)) from None
    return rehearsal.base


def plan_roll(request: RollRequest, supply: DiceSupply) -> RollPlan:
    """The plan of a validated ``request`` on ``supply``; :class:`RequestFieldError` (422) if it cannot go."""
    field_name = "notation" if request.notation is not None else "check"
    requests = requests_of(request)
    bound = supply.max_throws
    try:
        throws = supply.throws_for(requests)
    except ValueError as exc:
        raise RequestFieldError(field_name, str(exc)) from None
    if bound is not None and throws > bound:
        raise RequestFieldError(
            field_name,
            f"{request.label} needs at least {throws} throws of this tower; a roll may take at most {bound} "
            "(the tower's [roll] max_throws)",
            throws=throws,
            max_throws=bound,
        )
    return RollPlan(throws, bound)

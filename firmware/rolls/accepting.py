"""Taking a roll request: the one path every way in goes through, HTTP, MQTT or the button.

Why a module of its own: ``POST /api/rolls``, a request arriving over MQTT
(:mod:`dicetower.firmware.mqtt`) and a press of the tower's button must refuse the same things
the same way: a missing or wrong
token, a body that is not a roll, a caller over its rate, a full queue. Each refusal is the
exception the API maps (:class:`~.guards.ApiError`, :class:`~.rolling.RequestFieldError`,
:class:`~.rollqueue.QueueFullError`), so an MQTT reply can carry the same status and field. A roll
is planned before it is queued (:func:`~.planning.plan_roll`): what the tower cannot throw, or
would take more throws than one request may, is refused before the first throw.
"""

from __future__ import annotations

import hmac
from typing import Any

from ..web.guards import ApiError
from ..web.security import RateLimiter
from .planning import RollPlan, plan_roll
from .rolling import DiceSupply, RollRequest, parse_roll_request
from .rollqueue import RollQueue

__all__ = ["accept_roll", "check_token"]


def check_token(given: Any, token: str | None, field_name: str = "token") -> None:
    """Refuse (401) unless ``given`` is the server's token, when the server has one."""
    if token is None:
        return
    if not isinstance(given, str) or not given:
        raise ApiError(401, "this server needs its token", field_name=field_name)
    if not hmac.compare_digest(given.encode(), token.encode()):
        raise ApiError(401, "the token is not this server's token", field_name=field_name)


async def accept_roll(
    body: Any,
    client: str,
    *,
    via: str,
    supply: DiceSupply,
    limiter: RateLimiter | None,
    queue: RollQueue,
) -> tuple[int, int, RollPlan, RollRequest]:
    """Validate and plan ``body`` (come by ``via``) on ``supply``, charge ``client``'s rate (no
    ``limiter``: no rate), queue the roll; its id, place, plan (the throws it needs and the bound,
    which the answer states) and the request, parsed once and carried as parsed.

    The caller has checked the token (HTTP reads it from a header, MQTT from the request).
    """
    roll = parse_roll_request(body, via=via)
    plan = plan_roll(roll, supply)  # refused here, not after the first throw
    wait = limiter.allow(client) if limiter is not None else 0.0
    if wait:
        raise ApiError(
            429, f"too many rolls from {client}; wait {wait:.1f} s", retry_after=max(1, round(wait))
        )
    roll_id, place = await queue.submit(roll, client)
    return roll_id, place, plan, roll

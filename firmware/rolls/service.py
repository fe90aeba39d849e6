"""The roll service: one accept for every way in, the queue behind it, the log and the outputs it feeds.

Why one object: the API, MQTT and the tower's button must refuse the same things the same way
and put every roll into the same chained log and the same outputs, so none of them holds a
queue, a supply or a rate limit of its own: each calls :meth:`RollService.accept` with the
body it got, who sent it, and which way it came (``via``: ``http``, ``mqtt``, ``button``).
The service does not speak HTTP or MQTT; the server, the MQTT output and the button are its
callers (``docs/server.md``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..rolllog import RollLog
from ..web.security import RateLimiter
from .accepting import accept_roll, check_token
from .outputs import Outputs
from .planning import RollPlan
from .rolling import DiceSupply, RollRequest
from .rollqueue import RollQueue

__all__ = ["Accepted", "RollService"]


@dataclass(frozen=True)
class Accepted:
    """A roll the service took: its id, its place in the queue, its plan and its parsed request."""

    id: int
    place: int
    plan: RollPlan
    request: RollRequest

    def to_json(self) -> dict[str, Any]:
        """The answer every way in gives: id, ``"status": "queued"``, place, via, throws, max_throws."""
        return {
            "id": self.id,
            "status": "queued",
            "place": self.place,
            "via": self.request.via,
            **self.plan.to_json(),
        }


class RollService:
    """Accepts rolls from every way in and rolls them, in order, on one dice supply.

    ``token`` is the server's bearer token (None: callers need none); ``limiter`` charges each
    client's rate. :meth:`start` starts the worker, :meth:`stop` lets the roll in progress finish.
    """

    def __init__(
        self,
        log: RollLog,
        supply: DiceSupply,
        outputs: Outputs,
        *,
        limiter: RateLimiter,
        token: str | None = None,
        max_waiting: int = 100,
    ) -> None:
        self.log = log
        self.supply = supply
        self.outputs = outputs
        self.limiter = limiter
        self.token = token
        self.queue = RollQueue(log, supply, outputs.publish, max_waiting=max_waiting)

    def check_token(self, given: Any, field_name: str = "token") -> None:
        """Refuse (401) unless ``given`` is the server's token, when it has one (MQTT's requests)."""
        check_token(given, self.token, field_name)

    async def accept(self, body: Any, client: str, *, via: str, rate_limited: bool = True) -> Accepted:
        """Parse and plan ``body`` once, charge ``client``'s rate (unless not ``rate_limited``),
        queue it; refuses with the error the API maps (the caller has checked the token)."""
        roll_id, place, plan, request = await accept_roll(
            body,
            client,
            via=via,
            supply=self.supply,
            limiter=self.limiter if rate_limited else None,
            queue=self.queue,
        )
        return Accepted(roll_id, place, plan, request)

    def status(self) -> dict[str, Any]:
        """The queue's state: what is rolling, what waits, how many rolled and failed."""
        return self.queue.status()

    def start(self) -> None:
        self.queue.start()

    async def stop(self) -> None:
        await self.queue.stop()

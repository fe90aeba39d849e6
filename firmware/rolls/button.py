"""The tower's start button as a way in: a press is a roll, accepted as HTTP and MQTT rolls are.

Why through the roll service: a press must be logged, chained and shown on the overlay like any
roll, and wait its turn behind the rolls already queued, so it calls the same accept with
``via="button"``. A press rolls the next of the expressions queued for the button
(``--queue``), then ``[roll] default``. A press is not charged to a rate (a person at the tower
is there), but the queue's bound still holds: a press on a full queue is refused, counted,
logged and shown in ``GET /api/tower`` (``button``). The panel's LEDs follow the tower's roll
cycle, whoever asked for the roll: idle, rolling, or attention after a failed throw.

gpiozero calls ``when_pressed`` on its own thread; the press is handed to the event loop at
once. With mock pins, :class:`PressPlan`'s ``autopress`` presses the button that many times once
the server is up (what ``dicetower serve --autopress --presses N`` does, for demos and checks).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .rollqueue import QueueFullError

if TYPE_CHECKING:
    from .rolling import DiceSupply
    from .service import RollService

__all__ = ["BUTTON_ROLLER", "MAX_AUTOPRESSES", "ButtonWayIn", "PressPlan"]

#: the roller a press is logged under
BUTTON_ROLLER = "button"
#: presses one ``autopress`` may make
MAX_AUTOPRESSES = 10_000
#: seconds an autopress waits for its roll to be accepted before the next press
_PRESS_WAIT_S = 10.0

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PressPlan:
    """What presses roll: ``queued`` expressions first, one a press, then ``default`` (``[roll] default``
    when None); ``autopress`` presses the server makes itself once up (mock pins only)."""

    default: str | None = None
    queued: tuple[str, ...] = ()
    autopress: int = 0

    def __post_init__(self) -> None:
        if not 0 <= self.autopress <= MAX_AUTOPRESSES:
            raise ValueError(f"presses must be between 0 and {MAX_AUTOPRESSES}, got {self.autopress}")


class ButtonWayIn:
    """Turns presses of ``button`` (a gpiozero ``Button``) into rolls on ``service``.

    Open it with ``async with`` on the event loop: it listens from then until it is closed.
    ``default`` is what a press rolls when nothing is queued for the button.
    """

    def __init__(self, service: RollService, button: Any, plan: PressPlan, default: str) -> None:
        self.service = service
        self.button = button
        self.plan = plan
        self.default = plan.default or default
        self._queued = deque(plan.queued)
        self.presses = 0
        self.accepted = 0
        self.refused = 0
        self.last_refusal = ""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._accepted_event = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self._autopress: asyncio.Task[None] | None = None

    @classmethod
    def for_supply(cls, service: RollService, supply: DiceSupply, plan: PressPlan) -> ButtonWayIn:
        """The button of the tower behind ``supply``; ``ValueError`` if the supply has none (the RNG)."""
        tower = getattr(supply, "tower", None)
        if tower is None:
            raise ValueError(f"the {supply.name} dice supply has no button: presses need a tower")
        if plan.autopress and tower.config.pins.factory != "mock":
            raise ValueError("--autopress works with mock pins only")
        return cls(service, tower.panel.button, plan, tower.config.roll.default)

    # -- presses --------------------------------------------------------------------------

    def _on_press(self) -> None:
        """From gpiozero's thread: hand the press to the loop."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._press)

    def _press(self) -> None:
        self.presses += 1
        expression = self._queued.popleft() if self._queued else self.default
        task = asyncio.create_task(self._accept(expression), name="dicetower-button-press")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _accept(self, expression: str) -> None:
        try:
            await self.service.accept(
                {"notation": expression, "roller": BUTTON_ROLLER}, "button", via="button", rate_limited=False
            )
        except (QueueFullError, ValueError) as exc:  # a full queue; a default the tower cannot throw
            self.refused += 1
            self.last_refusal = str(exc)[:200]
            log.warning("a press of the button was refused: %s", exc)
        else:
            self.accepted += 1
        finally:
            self._accepted_event.set()

    async def _press_n(self, count: int) -> None:
        pin = self.button.pin
        for _ in range(count):
            self._accepted_event.clear()
            pin.drive_low()  # pull-up button: pressed is low
            pin.drive_high()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(_PRESS_WAIT_S):
                    await self._accepted_event.wait()

    # -- state and lifecycle --------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        return {
            "presses": self.presses,
            "accepted": self.accepted,
            "refused": self.refused,
            "last_refusal": self.last_refusal or None,
            "next": self._queued[0] if self._queued else self.default,
        }

    async def __aenter__(self) -> ButtonWayIn:
        self._loop = asyncio.get_running_loop()
        self.button.when_pressed = self._on_press
        if self.plan.autopress:
            self._autopress = asyncio.create_task(
                self._press_n(self.plan.autopress), name="dicetower-autopress"
            )
        return self

    async def __aexit__(self, *exc: object) -> None:
        with contextlib.suppress(Exception):
            self.button.when_pressed = None
        self._loop = None
        tasks = [t for t in (self._autopress, *self._tasks) if t is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

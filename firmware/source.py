"""``TowerSource``: the rules core's :class:`~dicetower.rules.source.DiceSource` answered by real dice.

Every request is a throw of the tray (or several, when it asks for more dice of a kind than
are loaded). A follow-up request (an exploding wild die, a focus reroll) is a new shake
whose reading is taken for the named die only: the wild die by its colour, a plain die by
the same left-to-right order as any plain slot. When the tower cannot deliver, the rules
get a :class:`TowerSourceError` (a :class:`~dicetower.rules.errors.SourceUnavailableError`)
that carries the failed throw's record, last photo included.
"""

from __future__ import annotations

from collections.abc import Callable

from ..rules.errors import SourceUnavailableError
from ..rules.source import DiceRequest, DiceSource
from .errors import ThrowFailedError, TrayKindError
from .records import SlotAnswer, ThrowRecord
from .tower import Tower

__all__ = ["TowerSource", "TowerSourceError"]


class TowerSourceError(SourceUnavailableError):
    """The tower could not answer a request; ``reason`` and ``record`` say why and show the photo."""

    def __init__(self, message: str, reason: str = "", record: ThrowRecord | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.record = record


class TowerSource(DiceSource):
    """Faces from the tower. ``records`` and ``answers`` collect every throw of one evaluation.

    ``on_throw`` is called with each throw's record as it is made (the CLI's ``--save``, the
    server's roll log).
    """

    def __init__(self, tower: Tower, *, on_throw: Callable[[ThrowRecord], None] | None = None) -> None:
        self.tower = tower
        self.on_throw = on_throw
        self.records: list[ThrowRecord] = []
        self.answers: list[SlotAnswer] = []

    def faces(self, request: DiceRequest) -> list[int]:
        try:
            answer = self.tower.roll(request)
        except ThrowFailedError as exc:
            if exc.record is not None:
                self._keep(exc.record)
            reason = getattr(exc.reason, "value", str(exc.reason))
            raise TowerSourceError(f"the tower could not roll: {exc}", reason, exc.record) from exc
        except TrayKindError as exc:
            raise TowerSourceError(f"the tower cannot roll this: {exc}", "tray_kind") from exc
        for record in answer.records:
            self._keep(record)
        self.answers.extend(answer.answers)
        return answer.faces

    def _keep(self, record: ThrowRecord) -> None:
        self.records.append(record)
        if self.on_throw is not None:
            self.on_throw(record)

    def __repr__(self) -> str:
        return f"TowerSource({self.tower.camera.name} camera, {len(self.records)} throws)"

"""How sure the tower's taught reader is lately: the running figure ``tower status`` and the API show.

:class:`TaughtWatch` keeps the running figure of a taught reader
(:class:`~dicetower.vision.taught.drift.DriftMonitor`), fed after every reading. Why keep it at
all: a taught reader under a changed light, or shown a swapped die, does not read wrong faces, it
abstains, so throws fail as unreadable or fall back to the general reader, and nothing else tells
the owner that teaching again is the cure. A real camera's tower keeps the figure beside its
calibration (``[calibration] dir``), so ``tower status`` run later still sees it; the simulated
and replay towers keep theirs in memory, as they keep their calibration.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..vision.files import read_bounded
from .config import Config, TrayDie
from .taught_config import TEACH_AGAIN

if TYPE_CHECKING:
    from ..vision.reading import DiceReader, Reading
    from ..vision.taught.model import TaughtDieCard
    from ..vision.taught.reader import TaughtFrameReader
    from .cameras import CameraBackend

__all__ = ["DRIFT_FILE", "DRIFT_SCHEMA", "MAX_DRIFT_BYTES", "TaughtWatch", "general_dice", "watch_reader"]

log = logging.getLogger(__name__)

#: Where a real camera's tower keeps the taught reader's running figure (in ``[calibration] dir``).
DRIFT_FILE = "taught-drift.json"
DRIFT_SCHEMA = "dicetower.drift/1"
#: The kept figure is at most this long (it holds a few counts a die).
MAX_DRIFT_BYTES = 1 << 20


def general_dice(dice: Sequence[TrayDie], taught: Sequence[TaughtDieCard]) -> list[TrayDie]:
    """The tray's dice no taught die is, by kind and colour (a die taught without a colour is any colour)."""
    known = {(t.kind, t.colour) for t in taught}
    return [d for d in dice if (d.kind, d.colour) not in known and (d.kind, "") not in known]


def watch_reader(reader: DiceReader, config: Config, camera: CameraBackend) -> TaughtWatch | None:
    """A :class:`TaughtWatch` over ``reader`` when it is a taught reader; None otherwise."""
    from ..vision.taught.reader import TaughtFrameReader

    if not isinstance(reader, TaughtFrameReader):
        return None
    store = None if camera.can_show_empty_tray else config.calibration_dir / DRIFT_FILE
    return TaughtWatch(reader, config.dice.dice, store=store)


class TaughtWatch:
    """The taught reader as the tower reports it: its model, its dice, the tray's dice it leaves to
    the general reader, and how sure it is lately (``store``: a file that keeps the figure)."""

    def __init__(
        self, reader: TaughtFrameReader, dice: Sequence[TrayDie], *, store: Path | None = None
    ) -> None:
        from ..vision.taught.drift import DriftMonitor

        self.reader = reader
        self.general = general_dice(dice, reader.model.dice)
        self.monitor = DriftMonitor.from_card(reader.model.card)
        self.store = store
        self._lock = threading.Lock()  # the server reports while a roll feeds
        text = json.dumps(reader.model.card, sort_keys=True).encode()
        self._card = hashlib.sha256(text).hexdigest()
        self._restore()

    @property
    def model(self) -> Path:
        return self.reader.model.folder

    def feed(self, reading: Reading) -> None:
        """Add the taught reads of ``reading`` (the reader's last frame) to the running figure."""
        with self._lock:
            self.monitor.add_reading(reading, self.reader.last_taught)
            state = self.monitor.state()
        self._save(state)

    @property
    def drifting(self) -> bool:
        with self._lock:
            return self.monitor.drifting

    def message(self) -> str | None:
        """What the owner should know and do, when the taught reader is less sure than when taught."""
        with self._lock:
            said = self.monitor.messages()
        if not said:
            return None
        return (
            f"the taught reader is less sure than when it was taught: {'; '.join(said)}."
            f" The light may have changed or a die been swapped: teach again ({TEACH_AGAIN},"
            " then group, name and fit)"
        )

    def status(self) -> dict[str, Any]:
        """The ``taught`` block of ``tower status`` and ``GET /api/tower`` (docs/server.md)."""
        with self._lock:
            drift = self.monitor.to_json()
        return {
            "model": str(self.model),
            "dice": [d.id for d in self.reader.model.dice],
            "general": list(dict.fromkeys(f"{d.colour} {d.kind}" for d in self.general)),
            "drift": drift,
            "drifting": drift["drifting"],
            "message": self.message(),
        }

    def _restore(self) -> None:
        if self.store is None or not self.store.is_file():
            return
        try:
            kept = json.loads(read_bounded(self.store, MAX_DRIFT_BYTES).decode("utf-8"))
            if kept.get("schema") != DRIFT_SCHEMA or kept.get("card") != self._card:
                return  # another model's figure: this one starts afresh
            self.monitor.restore(kept["state"])
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
            log.warning("%s: not a running figure, started afresh (%s)", self.store, exc)

    def _save(self, state: dict[str, Any]) -> None:
        if self.store is None:
            return
        from .records import write_atomic

        doc = {"schema": DRIFT_SCHEMA, "model": str(self.model), "card": self._card, "state": state}
        try:
            self.store.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(self.store, (json.dumps(doc) + "\n").encode())
        except OSError as exc:
            log.warning("%s: cannot keep the taught reader's running figure (%s)", self.store, exc)
            self.store = None

"""The tower's reader: the general one, or a taught model's for the dice it was taught.

With a taught model (``[reader] taught``, ``--taught``) each die the model knows is read by its
own head, which answers only with that die's faces or says it is unsure; the tray's other dice
fall back to the general reader, and the log says which. :class:`TrayReader` opens the reader
when it is first needed (a shake or a calibration reads nothing) and feeds each reading to the
taught reader's running figure (:mod:`.taught_watch`).

Each photo is read against the empty tray :class:`~dicetower.vision.running_tray.TrayChoice`
picks: the calibration photo while the light on the tray holds, else the running median of the
recent throws. When fewer dice are found than were thrown, the photo is looked at again against
the other empty tray (the running median, or the calibration photo) before any die is shaken:
a die the one tray hides (the light moved, the camera was nudged) the other may show.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..vision.running_tray import TrayChoice
from .config import Config, TrayDie, tray_bgr
from .taught_watch import TaughtWatch, general_dice, watch_reader

if TYPE_CHECKING:
    import numpy as np

    from ..vision.reading import DiceReader, Reading
    from .cameras import CameraBackend

__all__ = ["TrayReader", "reader_for_tray"]

log = logging.getLogger(__name__)


def reader_for_tray(dice: Sequence[TrayDie], tray_colour: str = "", taught: str = "") -> DiceReader:
    """The frame reader for the loaded dice: the numeral reader only when a die the general reader
    reads is not a pip d6 (it costs a few ms a die); a ``[camera] tray_colour`` white-balances die
    colours; ``taught`` names a taught model's folder, whose dice it reads."""
    from ..vision.reader import open_reader

    if not taught:
        reader = open_reader(numerals=any(d.kind != "d6" for d in dice))
        reader.white_balance, reader.tray_colour = bool(tray_colour), tray_bgr(tray_colour)
        return reader
    from ..vision.taught.model import TaughtModel
    from ..vision.taught.reader import open_taught_reader

    model = TaughtModel(taught)
    general = general_dice(dice, model.dice)
    if general:
        names = ", ".join(dict.fromkeys(f"{d.colour} {d.kind}" for d in general))
        log.info("the taught model %s does not know the %s: the general reader reads them", taught, names)
    taught_reader = open_taught_reader(model, numerals=any(d.kind != "d6" for d in general) or None)
    taught_reader.general.white_balance = bool(tray_colour)
    taught_reader.general.tray_colour = tray_bgr(tray_colour)
    return taught_reader


class TrayReader:
    """The reader of a tower's tray, opened on first use, and the taught reader's running figure.

    ``reader`` is used as given (tests, the server, which opens it before the first roll);
    otherwise :func:`reader_for_tray` opens the one ``config`` names.
    """

    def __init__(self, config: Config, camera: CameraBackend, reader: DiceReader | None = None) -> None:
        self.config = config
        self.camera = camera
        self._reader: DiceReader | None = None
        self._taught: TaughtWatch | None = None
        #: The empty tray each photo is read against, and the recent throws behind the running one.
        self.trays = TrayChoice()
        #: How many photos were read a second time for a missing die, and how many that found it.
        self.looked_again, self.found_again = 0, 0
        if reader is not None:
            self._use(reader)

    def _use(self, reader: DiceReader) -> None:
        self._reader, self._taught = reader, watch_reader(reader, self.config, self.camera)

    @property
    def reader(self) -> DiceReader:
        if self._reader is None:
            cfg = self.config
            self._use(reader_for_tray(cfg.dice.dice, cfg.camera.tray_colour, cfg.reader.taught))
        assert self._reader is not None
        return self._reader

    @property
    def taught(self) -> TaughtWatch | None:
        """The taught reader's running figure, when the tray is read with one (opens it to say so)."""
        if self.config.reader.taught:
            _ = self.reader
        return self._taught

    def read(
        self,
        frame: np.ndarray,
        reference: np.ndarray | None,
        tray: np.ndarray | None,
        expected: int | None = None,
    ) -> Reading:
        """Read ``frame`` against the empty tray chosen for it (``reference``: the calibration's);
        with fewer than ``expected`` dice, look again against the other one. A taught reader's
        reads join its running figure."""
        chosen = self.trays.pick(frame, reference)
        reading = self.reader.read(frame, chosen, tray)
        if expected is not None and len(reading.dice) < expected:
            other = reference if self.trays.source == "running" else self.trays.running.reference(frame)
            if other is not None and other is not chosen:
                self.looked_again += 1
                again = self.reader.read(frame, other, tray)
                if abs(len(again.dice) - expected) < abs(len(reading.dice) - expected):
                    self.found_again += 1
                    log.info(
                        "looked again against the other empty tray: %d dice of %d", len(again.dice), expected
                    )
                    reading = again
        self.trays.seen(frame, [d.box for d in reading.dice])
        if self._taught is not None:
            self._taught.feed(reading)
        return reading

"""The replay camera: plays a folder in the ``manifest.jsonl`` format, one photo per throw.

The camera of recorded-dice CI: ``dicetower record`` writes such a folder from the simulated
(or a real) tower, and ``--tower replay --replay DIR`` rolls with it. It watches the
solenoid's pin like the simulated camera: a shake shows the next photo; a tap changes
nothing (a photo's dice cannot fall flat). Before the first shake it shows the empty tray
(the first line's ``reference``), which is also what :meth:`empty_tray` shows for calibration.
Each photo's labelled dice are its :attr:`truth`. Stills repeat bit for bit, so
``live`` is False: an identical frame is not taken for a frozen camera.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ...vision.imageio import ImageError, load_image
from ...vision.manifest import LabelledDie, ManifestEntry, ManifestError, read_manifest
from ..clock import Clock
from ..errors import CalibrationError, CameraFrameError, CameraUnavailableError
from ..pattern import ShakePattern
from . import CameraBackend, SolenoidWatch

if TYPE_CHECKING:
    from ..config import Config

__all__ = ["MAX_REPLAY_ENTRIES", "ReplayCamera"]

#: Most photos one replay folder may list (the entries are held in memory, the photos are not).
MAX_REPLAY_ENTRIES = 100_000


class ReplayCamera(CameraBackend):
    """Plays ``folder``'s photos in manifest order; :meth:`advance` (or a shake) moves to the next."""

    name = "replay"
    live = False
    can_show_empty_tray = True

    def __init__(self, folder: str | Path, *, clock: Clock | None = None, fps: float = 30.0) -> None:
        super().__init__(clock=clock)
        self.folder = Path(folder)
        try:
            entries: list[ManifestEntry] = []
            for e in read_manifest(self.folder):
                entries.append(e)
                if len(entries) > MAX_REPLAY_ENTRIES:
                    raise CameraUnavailableError(f"{self.folder}: more than {MAX_REPLAY_ENTRIES} photos")
        except ManifestError as exc:
            raise CameraUnavailableError(f"replay: {exc}") from None
        if not entries:
            raise CameraUnavailableError(f"replay: {self.folder}/manifest.jsonl lists no photos")
        self.entries = entries
        self.index = -1  #: the photo shown; -1: the empty tray before the first throw
        self.frame_s = 1.0 / fps
        self._watch: SolenoidWatch | None = None
        self._cache: tuple[Path, np.ndarray] | None = None
        self._empty = False

    @classmethod
    def from_config(cls, config: Config, *, clock: Clock | None = None) -> ReplayCamera:
        return cls(config.camera.replay, clock=clock)

    def watch_solenoid(self, pin: Any, pattern: ShakePattern | None = None) -> None:
        self._watch = SolenoidWatch(pin, pattern)

    def advance(self) -> None:
        """Show the next photo (what a shake does)."""
        self.index += 1

    @property
    def remaining(self) -> int:
        return max(0, len(self.entries) - 1 - self.index)

    @property
    def truth(self) -> tuple[LabelledDie, ...]:
        if self._empty or self.index < 0 or self.index >= len(self.entries):
            return ()
        return self.entries[self.index].dice

    @contextlib.contextmanager
    def empty_tray(self) -> Iterator[None]:
        if self._reference_path() is None:
            raise CalibrationError(
                f"replay: {self.folder}/manifest.jsonl names no 'reference' (empty-tray photo) to calibrate"
            )
        self._empty = True
        try:
            yield
        finally:
            self._empty = False

    def _reference_path(self) -> Path | None:
        return next((e.reference for e in self.entries if e.reference is not None), None)

    def _load(self, path: Path) -> np.ndarray:
        if self._cache is not None and self._cache[0] == path:
            return self._cache[1]
        try:
            frame = load_image(path)
        except ImageError as exc:
            raise CameraFrameError(f"replay: {exc}") from None
        self._cache = (path, frame)
        return frame

    def capture(self) -> np.ndarray:
        self.wait(self.frame_s)
        if self._watch is not None and self._watch.take() == "shake":
            self.advance()
        if self._empty or self.index < 0:
            ref = self._reference_path()
            if ref is not None:
                return self._load(ref)
            return self._load(self.entries[0].image)
        if self.index >= len(self.entries):
            raise CameraUnavailableError(
                f"replay: all {len(self.entries)} photos of {self.folder} are played"
            )
        return self._load(self.entries[self.index].image)

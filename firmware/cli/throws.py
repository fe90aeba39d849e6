"""Where the tower commands keep each throw's photo and record, and what they say about them.

Every throw of ``roll --tower``, ``check --tower`` and ``tower watch`` is saved
as ``throw-STAMP-PID-NNNN.jpg`` and ``.json`` in ``--save DIR`` or the state directory
(``$XDG_STATE_HOME/dicetower/throws``, ``~/.local/state/dicetower/throws``). That folder is
held under the photo cap the server's roll log has (``--photo-cap-mb``, else
``DICETOWER_PHOTO_CAP_MB``, else 512 MB; :mod:`dicetower.firmware.photo_cap`): after each
save the oldest throws go until the rest fit, never one of the roll being shown.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..photo_cap import THROW_PREFIX, photo_cap_bytes, prune_throw_folder

if TYPE_CHECKING:
    from ..records import ThrowRecord

__all__ = ["ThrowFolder", "default_save_dir", "describe_throws"]


def default_save_dir() -> Path:
    """``$XDG_STATE_HOME/dicetower/throws`` (``~/.local/state/dicetower/throws``)."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "dicetower" / "throws"


class ThrowFolder:
    """The folder a command saves throws in, kept under ``cap`` bytes.

    ``save`` writes each record and then prunes; the throws saved since the last
    :meth:`next_roll` are the roll being shown, and are never pruned.
    """

    _counter = 0  #: throws saved by this process, for unique names within one second

    def __init__(self, folder: str | Path | None, cap: int) -> None:
        self.folder = Path(folder) if folder else default_save_dir()
        self.cap = cap
        self._roll: set[str] = set()

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> ThrowFolder:
        """The folder and cap of ``--save`` and ``--photo-cap-mb`` (checked before anything moves)."""
        return cls(getattr(args, "save", None), photo_cap_bytes(getattr(args, "photo_cap_mb", None)))

    def next_roll(self) -> None:
        """The throws saved so far may be pruned from now on."""
        self._roll.clear()

    def save(self, records: Sequence[ThrowRecord]) -> list[Path]:
        """Write each record not yet saved (``STEM.jpg`` + ``STEM.json``); returns the JSON paths."""
        paths = []
        stamp = time.strftime("%Y%m%d-%H%M%S")
        for record in records:
            path = record.saved
            if path is None:
                ThrowFolder._counter += 1
                path = record.save(
                    self.folder, f"{THROW_PREFIX}{stamp}-{os.getpid()}-{ThrowFolder._counter:04d}"
                )
            self._roll.add(path.stem)
            paths.append(path)
        prune_throw_folder(self.folder, self.cap, keep=self._roll)
        return paths


def describe_throws(records: Sequence[ThrowRecord]) -> str:
    """Per throw: what was read, retries, which die gave which face, and where the photo is.

    Paths (``--save DIR``) and messages are shown with control characters escaped.
    """
    from ...rules.errors import printable

    lines = []
    for n, r in enumerate(records, 1):
        read = (
            " ".join(str(d.face) if d.face is not None else "?" for d in r.reading.dice) if r.reading else "-"
        )
        retries = "; ".join(f"{x.action} ({x.reason})" for x in r.retries) or "none"
        head = f"throw {n}"
        if r.rounds > 1:
            head += f" (round {r.round} of {r.rounds})"
        lines.append(f"{head}: {r.reason}: read {read}; retries: {retries}")
        if r.failure is not None:
            lines.append(f"  failed ({r.failure.value}): {printable(r.message)}")
        for a in r.answers:
            lines.append(f"  {a.describe()}")
        if r.saved is not None:
            photo = r.saved.with_suffix(".jpg")
            shown = printable(str(photo)) if photo.exists() else "(none)"
            lines.append(f"  photo: {shown}  record: {printable(str(r.saved))}")
    return "\n".join(lines)

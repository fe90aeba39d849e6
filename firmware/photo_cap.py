"""The one bound on kept photos: how many bytes of them, and which go first.

The server's roll log and the CLI's throw folder both keep a photo of every throw; left alone
either grows until the disk is full (the tower's service on a Pi rolls for weeks). Both take the
cap the same way (``--photo-cap-mb``, else ``DICETOWER_PHOTO_CAP_MB``, else
:data:`DEFAULT_PHOTO_CAP_MB`) and choose what to remove with :func:`oldest_over_cap`: the
oldest first, until the rest fit. The roll log keeps each removed file's row and hash;
the throw folder holds nothing else, so a throw's photo and record go together.
"""

from __future__ import annotations

import math
import os
from collections.abc import Collection, Iterable
from pathlib import Path
from typing import TypeVar

__all__ = [
    "DEFAULT_PHOTO_CAP_MB",
    "PHOTO_CAP_ENV",
    "THROW_PREFIX",
    "oldest_over_cap",
    "photo_cap_bytes",
    "prune_throw_folder",
]

#: The cap when neither the flag nor the environment gives one.
DEFAULT_PHOTO_CAP_MB = 512.0

#: The environment variable that sets the cap for ``dicetower serve`` and the tower commands.
PHOTO_CAP_ENV = "DICETOWER_PHOTO_CAP_MB"

#: The stem every saved throw starts with; :func:`prune_throw_folder` touches nothing else.
THROW_PREFIX = "throw-"

#: Most entries one prune of a throw folder looks at; a folder with more is pruned in turns.
MAX_SCAN = 200_000

K = TypeVar("K")


def photo_cap_bytes(mb: float | None = None) -> int:
    """The cap in bytes: ``mb`` when given, else ``$DICETOWER_PHOTO_CAP_MB``, else 512 MB.

    0 keeps no photo but the newest; a negative, infinite or non-numeric cap is a ``ValueError``
    that names where it came from.
    """
    where = "--photo-cap-mb"
    if mb is None:
        text = os.environ.get(PHOTO_CAP_ENV, "").strip()
        if not text:
            return int(DEFAULT_PHOTO_CAP_MB * 2**20)
        where = PHOTO_CAP_ENV
        try:
            mb = float(text)
        except ValueError:
            raise ValueError(f"{where}={text!r}: not a number of megabytes") from None
    if not math.isfinite(mb) or mb < 0:
        raise ValueError(f"{where} must be a number of megabytes, 0 or more (got {mb})")
    return int(mb * 2**20)


def oldest_over_cap(files: Iterable[tuple[K, int]], used: int, cap: int) -> list[K]:
    """The first of ``files`` (oldest first, each with its bytes) whose removal brings ``used`` to ``cap``.

    ``files`` is read lazily and only as far as needed, so a caller can stream it from a query.
    """
    out: list[K] = []
    if used <= cap:
        return out
    for key, size in files:
        if used <= cap:
            break
        out.append(key)
        used -= size
    return out


def prune_throw_folder(folder: str | Path, cap: int, keep: Collection[str] = ()) -> list[Path]:
    """Remove the oldest throws (``throw-*`` photo and record together) until ``folder`` fits ``cap``.

    ``keep`` names stems never removed (the throws of the roll being shown). Throws are ordered
    by their files' modification time, then name. Returns the files removed.
    """
    groups: dict[str, list[tuple[Path, int, float]]] = {}
    try:
        entries = os.scandir(folder)
    except FileNotFoundError:
        return []
    with entries:
        for n, entry in enumerate(entries):
            if n >= MAX_SCAN:
                break
            if not entry.name.startswith(THROW_PREFIX) or not entry.is_file(follow_symlinks=False):
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue
            stem = entry.name.rsplit(".", 1)[0]
            groups.setdefault(stem, []).append((Path(entry.path), st.st_size, st.st_mtime))
    used = sum(size for files in groups.values() for _p, size, _t in files)
    order = sorted(
        (min(t for _p, _s, t in files), stem) for stem, files in groups.items() if stem not in keep
    )
    removed: list[Path] = []
    for stem in oldest_over_cap(
        ((stem, sum(s for _p, s, _t in groups[stem])) for _t, stem in order), used, cap
    ):
        for path, _size, _t in groups[stem]:
            try:
                path.unlink()
            except FileNotFoundError:
                continue
            removed.append(path)
    return removed

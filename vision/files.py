"""Files written whole or not at all.

Why: a dataset, a teach folder or a model is read by other commands while, or after, it is
written; a crash or Ctrl-C half-way through a file must leave the old file or the new one, never
half of one. Writing a temporary file in the same folder and renaming it over the target gives
that on every POSIX file system (a rename within one file system is atomic).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["write_atomic"]


def write_atomic(path: Path, data: bytes) -> None:
    """Write through a temporary file in the same folder, then rename: readers see all or nothing."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise

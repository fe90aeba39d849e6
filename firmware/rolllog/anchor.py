"""The head file: the chain's last link, kept beside the database in ``rolls.head``.

A database cut short (rows deleted from the end, the file truncated or swapped for an older
copy) still chains correctly as far as it goes, so nothing inside it can show what is gone.
The head file names the last link the server committed: its row and hash. It is written
*after* each commit, through a temporary file, ``fsync`` and a rename (and an ``fsync`` of the
folder), so a crash leaves the old head or the new one, never half of one, and a crash
between the commit and the rename leaves the head exactly one link behind, a link that
chains on from it. Everything else that disagrees with the database is a loss or tampering.

The file is one line of JSON: ``{"format": "dicetower.head/1", "row": 57, "hash": "…"}``,
``row`` being the last roll's id when the link was written (0 before any roll).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["HEAD_FORMAT", "HEAD_NAME", "MAX_HEAD_BYTES", "Head", "HeadFileError", "read_head", "write_head"]

#: the head file's name in the data directory
HEAD_NAME = "rolls.head"
HEAD_FORMAT = "dicetower.head/1"
#: a head file is one short line; anything longer is not one
MAX_HEAD_BYTES = 4096

_HEX64 = re.compile(r"[0-9a-f]{64}")


class HeadFileError(ValueError):
    """``rolls.head`` exists but is not a head file (edited, damaged, or something else)."""


@dataclass(frozen=True)
class Head:
    """The last link the server committed: the roll id it came after (or was) and its hash."""

    row: int
    hash: str

    def to_text(self) -> str:
        return json.dumps({"format": HEAD_FORMAT, "row": self.row, "hash": self.hash}) + "\n"


def read_head(data_dir: Path) -> Head | None:
    """The head file of ``data_dir``; None where there is none."""
    path = Path(data_dir) / HEAD_NAME
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_HEAD_BYTES + 1)
    except FileNotFoundError:
        return None
    if len(raw) > MAX_HEAD_BYTES:
        raise HeadFileError(f"{HEAD_NAME} is longer than {MAX_HEAD_BYTES} bytes: not a head file")
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise HeadFileError(f"{HEAD_NAME} is not JSON ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != HEAD_FORMAT:
        raise HeadFileError(f"{HEAD_NAME} is not a {HEAD_FORMAT} file")
    row, digest = doc.get("row"), doc.get("hash")
    if not isinstance(row, int) or isinstance(row, bool) or row < 0:
        raise HeadFileError(f"{HEAD_NAME}: row must be a whole number >= 0, not {row!r}")
    if not isinstance(digest, str) or not _HEX64.fullmatch(digest):
        raise HeadFileError(f"{HEAD_NAME}: hash must be 64 hex digits")
    return Head(row, digest)


def write_head(data_dir: Path, head: Head) -> None:
    """Replace the head file whole, durably: temporary file, fsync, rename, fsync of the folder."""
    folder = Path(data_dir)
    tmp = folder / f".{HEAD_NAME}.tmp"
    try:
        with open(tmp, "wb") as fh:
            fh.write(head.to_text().encode())
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, folder / HEAD_NAME)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)  # the rename itself survives power loss
    finally:
        os.close(fd)

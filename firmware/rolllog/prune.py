"""Keeping the photo folder in step with the log: pruning under the cap, and a tidy start.

Pruning removes a file's bytes, never its record: the ``prune`` note lists each file with the
hash its row holds, it is committed *before* the files are unlinked, and the ``photos`` table
marks them pruned in the same transaction. A crash in between leaves a pruned file on disk
with its recorded bytes, which the next start removes; a file marked pruned that no note
removed, or pruned bytes replaced by others, is what ``log verify`` reports.

At start every entry under ``photos/`` is accounted for: a file the log serves stays, a pruned
file with its recorded bytes is removed (the prune is finished), and anything else (a crash's
leftovers, a folder with no row, a pruned file with other bytes) is set aside, never deleted.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path

from ..photo_cap import oldest_over_cap
from .store import file_sha256, folder_name

__all__ = ["MAX_NOTE_FILES", "PhotoRecord", "plan_prune", "remove_files", "sort_photo_dir"]

#: files listed in one ``prune`` or ``set-aside`` note; more make more notes (or are counted)
MAX_NOTE_FILES = 1000

#: ``(roll_id, name, bytes, sha256)`` of one ``photos`` row
PhotoRecord = tuple[int, str, int, "str | None"]


def plan_prune(db: sqlite3.Connection, cap: int) -> list[PhotoRecord]:
    """The oldest served files whose removal brings the rest under ``cap`` bytes.

    The choice is :func:`~dicetower.firmware.photo_cap.oldest_over_cap`'s, the one the CLI's
    throw folder is pruned by; the rows are streamed to it in batches, oldest roll first.
    """
    used = db.execute("SELECT COALESCE(SUM(bytes), 0) FROM photos WHERE pruned = 0").fetchone()[0]
    if used <= cap:
        return []
    cur = db.execute(
        "SELECT roll_id, name, bytes, sha256 FROM photos WHERE pruned = 0 ORDER BY roll_id, name"
    )
    rows = (
        ((int(r[0]), str(r[1]), int(r[2]), r[3]), int(r[2]))
        for batch in iter(lambda: cur.fetchmany(500), [])
        for r in batch
    )
    return oldest_over_cap(rows, used, cap)


def remove_files(photo_dir: Path, files: list[tuple[int, str]]) -> None:
    """Unlink files whose removal the log has committed, and their folders once empty."""
    folders = set()
    for rid, name in files:
        with contextlib.suppress(FileNotFoundError):
            (photo_dir / folder_name(rid) / name).unlink()
        folders.add(photo_dir / folder_name(rid))
    for folder in folders:
        with contextlib.suppress(OSError):  # not empty, or gone
            folder.rmdir()


def sort_photo_dir(
    photo_dir: Path, recorded: dict[tuple[int, str], tuple[bool, str | None]], pending: set[int]
) -> tuple[list[tuple[int, str]], list[tuple[Path, str]]]:
    """Every entry under ``photo_dir`` that is not served: pruned files to finish removing (their
    bytes are the pruned ones) and paths to set aside, each with why."""
    finish: list[tuple[int, str]] = []
    aside: list[tuple[Path, str]] = []
    try:
        folders = sorted(os.scandir(photo_dir), key=lambda e: e.name)
    except FileNotFoundError:
        return finish, aside
    for folder in folders:
        if not folder.is_dir(follow_symlinks=False) or not folder.name.isdigit():
            aside.append((Path(folder.path), "not a roll's folder"))
            continue
        rid = int(folder.name)
        if rid in pending:
            continue  # written for a roll in flight
        with os.scandir(folder.path) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                path = Path(entry.path)
                rec = recorded.get((rid, entry.name))
                if rec is None or not entry.is_file(follow_symlinks=False):
                    aside.append((path, f"no row of the log records it for roll {rid}"))
                elif rec[0]:
                    if rec[1] is not None and file_sha256(path) == rec[1]:
                        finish.append((rid, entry.name))
                    else:
                        aside.append((path, "the log pruned this file, and these are not its recorded bytes"))
    return finish, aside

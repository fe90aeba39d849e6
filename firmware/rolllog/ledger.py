"""Every file the chain accounts for, checked against the ``photos`` table and the disk.

The chain says which files each roll has and their hashes (``rolls.files``; for rows of
version 1, ``throws[].photo_sha256`` and the hashes the ``migrate`` note adopted), and which
the pruner removed (``prune`` notes). The ``photos`` table is only the index the server serves
from, so it is checked against the chain, never trusted: a row deleted from it, a file marked
pruned there that no prune note removed, or a file it serves that no link records, is named.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

from .migrate import recorded_photo_hashes
from .report import VerifyReport
from .store import file_sha256, folder_name, plain_name

__all__ = ["FileLedger"]

Key = tuple[int, str]


class FileLedger:
    """Collects, link by link, the files the chain records; then checks them in one pass."""

    def __init__(self, report: VerifyReport) -> None:
        self.report = report
        #: file -> the SHA-256 its link records (None: a version 1 crop no note adopted)
        self.expected: dict[Key, str | None] = {}
        #: file -> the prune (or migrate) note that removed it
        self.pruned: dict[Key, int] = {}

    # -- collecting, as the chain is walked ---------------------------------------------------

    def add_row(self, row: dict[str, Any]) -> None:
        rid = int(row["id"])
        try:
            if row.get("files") is not None:
                for f in json.loads(row["files"]):
                    self._expect(rid, str(f["name"]), str(f["sha256"]))
                return
            hashes = recorded_photo_hashes(row["throws"])
            for t in json.loads(row["throws"]):
                if isinstance(t, dict) and t.get("photo"):
                    self._expect(rid, str(t["photo"]), hashes.get(str(t["photo"])))
            for d in json.loads(row["dice"]):
                if isinstance(d, dict) and d.get("crop"):
                    self._expect(rid, str(d["crop"]), None)
        except (ValueError, TypeError, KeyError, AttributeError):
            pass  # an unreadable column fails its row's hash, which is reported already

    def _expect(self, rid: int, name: str, sha: str | None) -> None:
        if not plain_name(name):
            self.report.add(rid, f"names a file outside its folder ({name!r})")
            return
        if sha is not None or (rid, name) not in self.expected:
            self.expected[(rid, name)] = sha

    def add_note(self, note: dict[str, Any]) -> None:
        body, seq, after = note.get("parsed"), int(note["seq"]), int(note["after_id"])
        if not isinstance(body, dict):
            return  # an edited body fails the note's hash
        try:
            if note["kind"] == "migrate":
                for rid, name, sha, _size in body.get("adopted", []):
                    if self.expected.get((rid, name)) is None:
                        self.expected[(rid, name)] = sha
                for rid, name, _sha in body.get("pruned", []):
                    self.pruned[(rid, name)] = seq
            elif note["kind"] == "prune":
                for rid, name, sha in body.get("files", []):
                    want = self.expected.get((rid, name))
                    if (rid, name) not in self.expected:
                        self.report.add(after, f"prunes {name} of row {rid}, which no row records", seq)
                    elif want is not None and sha != want:
                        self.report.add(after, f"prunes {name} of row {rid} under another hash", seq)
                    self.pruned[(rid, name)] = seq
        except (ValueError, TypeError):
            self.report.add(after, "its body is not a list of files", seq)

    # -- checking -------------------------------------------------------------------------

    def check(
        self,
        db: sqlite3.Connection,
        photo_dir: Path,
        *,
        hash_after: int,
        pending: set[int],
        version: int,
        since: int = 0,
    ) -> None:
        """Check the ``photos`` table and the disk; hash the files of rolls after ``hash_after``.

        A log of ``version`` 1 (not yet migrated) kept no prune records: there its ``photos``
        table's mark is all there is, as it was then. ``since``: the first roll the walk covered
        (a check of the chain's tail); files of rolls before it are not looked at.
        """
        report = self.report
        served = _photos_rows(db, since)
        present, strays = _scan(photo_dir, since)
        for key, sha in self.expected.items():
            rid, name = key
            p = served.pop(key, None) if served is not None else None
            if served is not None and p is None:
                report.add(rid, f"photo {name} is in the log but not in the photos table (no longer served)")
            elif p is not None and p.get("sha256") and sha and p["sha256"] != sha:
                report.add(rid, f"the photos table serves {name} against another hash than the log records")
            on_disk = name in present.get(rid, ())
            path = f"{photo_dir}/{folder_name(rid)}/{name}"  # a string: pathlib costs a second per 100,000
            seq = self.pruned.get(key)
            if seq is None and version < 2 and p is not None and p["pruned"]:
                seq = 0
            if seq is not None:
                report.files_pruned += 1
                if p is not None and not p["pruned"]:
                    report.add(rid, f"photo {name} was pruned (record {seq}) but is served again")
                if on_disk and sha is not None and file_sha256(path) != sha:
                    by = f" (record {seq})" if seq else ""
                    report.add(rid, f"photo {name} was pruned{by}, but other bytes are in its place")
                continue
            if p is not None and p["pruned"]:
                report.add(rid, f"photo {name} is marked pruned, but no prune record removed it")
            elif not on_disk:
                report.add(rid, f"photo {name} is missing")
            elif sha is None:
                report.files_unhashed += 1
            elif rid <= hash_after:
                report.files_unchecked += 1
            elif file_sha256(path) != sha:
                report.add(rid, f"photo {name} was changed")
            else:
                report.files_checked += 1
        for (rid, name), _p in sorted((served or {}).items()):
            report.add(rid, f"the photos table serves {name}, which no link of the log records")
        report.files_unrecorded = strays + sum(
            1
            for rid, names in present.items()
            if rid not in pending
            for name in names
            if (rid, name) not in self.expected
        )


def _scan(photo_dir: Path, since: int) -> tuple[dict[int, set[str]], int]:
    """The files in each roll's folder (one directory read a folder, no stat a file), and the
    count of entries that are not a roll's folder."""
    present: dict[int, set[str]] = {}
    strays = 0
    try:
        folders = list(os.scandir(photo_dir))
    except FileNotFoundError:
        return present, 0
    for folder in folders:
        if not (folder.is_dir(follow_symlinks=False) and folder.name.isdigit()):
            strays += 1
            continue
        if int(folder.name) < since:
            continue
        with os.scandir(folder.path) as entries:
            present[int(folder.name)] = {e.name for e in entries if e.is_file()}
    return present, strays


def _photos_rows(db: sqlite3.Connection, since: int) -> dict[Key, dict[str, Any]] | None:
    """The ``photos`` table by file (None if the table is gone: reported with the tables)."""
    have = {r[0] for r in db.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")}
    if "photos" not in have:
        return None
    columns = {r[1] for r in db.execute("PRAGMA table_info(photos)")}
    sha = "sha256" if "sha256" in columns else "NULL AS sha256"
    rows = db.execute(f"SELECT roll_id, name, pruned, {sha} FROM photos WHERE roll_id >= ?", (since,))
    return {(int(r[0]), str(r[1])): {"pruned": r[2], "sha256": r[3]} for r in rows}

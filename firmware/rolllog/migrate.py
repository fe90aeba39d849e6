"""Moving a version 1 log on to version 2, recorded in the chain.

Version 1 rows hash their throw photos (``throws[].photo_sha256``) but not their die crops.
Rows are never rewritten, so the migration *adopts* the crops as they are on disk at that
moment: their hashes go into a ``migrate`` note in the chain, and from then on a crop that
changes is found. The note can vouch only for what the files were when it was written: a crop
replaced before the migration is adopted as it stands (docs/server.md says so).
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from pathlib import Path
from typing import Any

from .anchor import Head
from .notes import append_note
from .schema import SCHEMA_VERSION, TABLES, table_names
from .store import file_sha256, folder_name

__all__ = ["migrate_v1", "recorded_photo_hashes"]


def recorded_photo_hashes(throws_text: str) -> dict[str, str]:
    """The photo hashes a row's ``throws`` column records, by file name (empty where unreadable)."""
    out: dict[str, str] = {}
    with contextlib.suppress(ValueError, TypeError, AttributeError):
        for t in json.loads(throws_text):
            if isinstance(t, dict) and t.get("photo") and t.get("photo_sha256"):
                out[str(t["photo"])] = str(t["photo_sha256"])
    return out


def migrate_v1(db: sqlite3.Connection, photo_dir: Path) -> Head:
    """Add version 2's columns and table, adopt the unhashed files, record it; in one transaction.

    Returns the new tip (the ``migrate`` note) for the head file.
    """
    db.execute("BEGIN IMMEDIATE")
    try:
        db.execute("ALTER TABLE rolls ADD COLUMN files TEXT")
        have = table_names(db)
        if "photos" in have:
            db.execute("ALTER TABLE photos ADD COLUMN sha256 TEXT")
        for name in ("pending", "head", "photos", "notes"):
            if name not in have:
                db.execute(TABLES[name])
        recorded: dict[tuple[int, str], str] = {}
        cur = db.execute("SELECT id, throws FROM rolls WHERE throws != '[]'")
        for batch in iter(lambda: cur.fetchmany(500), []):
            for r in batch:
                for name, digest in recorded_photo_hashes(r["throws"]).items():
                    recorded[(int(r["id"]), name)] = digest
        body: dict[str, Any] = {"from": 1, "to": SCHEMA_VERSION, "adopted": [], "pruned": [], "missing": []}
        rows = db.execute("SELECT roll_id, name, pruned FROM photos ORDER BY roll_id, name").fetchall()
        for p in rows:
            key = (int(p["roll_id"]), str(p["name"]))
            digest = recorded.get(key)
            path = photo_dir / folder_name(key[0]) / key[1]
            if p["pruned"]:
                body["pruned"].append([*key, digest])
            elif digest is None:
                try:
                    digest = file_sha256(path)
                except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
                    body["missing"].append(list(key))
                else:
                    body["adopted"].append([*key, digest, path.stat().st_size])
            db.execute(
                "UPDATE photos SET sha256 = ? WHERE roll_id = ? AND name = ?", (digest, key[0], key[1])
            )
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        head = append_note(db, "migrate", body)
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return head

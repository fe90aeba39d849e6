"""A roll log written as version 1 wrote it: its schema, its row hash, no head file, no crop hashes.

Kept apart from the package on purpose: the migration must read what the old code wrote, so
this builds it with the old code's own SQL and hashing, not with anything the package exports.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from pathlib import Path
from typing import Any

__all__ = ["V1_SCHEMA", "write_v1_log"]

V1_SCHEMA = """
CREATE TABLE IF NOT EXISTS pending (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at REAL NOT NULL,
    state TEXT NOT NULL,
    roller TEXT NOT NULL,
    client TEXT NOT NULL,
    request TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS rolls (
    id INTEGER PRIMARY KEY,
    created_at REAL NOT NULL,
    finished_at REAL NOT NULL,
    status TEXT NOT NULL,
    roller TEXT NOT NULL,
    client TEXT NOT NULL,
    source TEXT NOT NULL,
    kind TEXT NOT NULL,
    system TEXT,
    request TEXT NOT NULL,
    result TEXT,
    outcome TEXT,
    total TEXT,
    odds TEXT,
    dice TEXT NOT NULL,
    throws TEXT NOT NULL,
    timings TEXT NOT NULL,
    error TEXT,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS rolls_roller ON rolls (roller);
CREATE INDEX IF NOT EXISTS rolls_system ON rolls (system);
CREATE TABLE IF NOT EXISTS head (
    one INTEGER PRIMARY KEY CHECK (one = 1),
    id INTEGER NOT NULL,
    hash TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS photos (
    roll_id INTEGER NOT NULL,
    name TEXT NOT NULL,
    bytes INTEGER NOT NULL,
    pruned INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (roll_id, name)
);
"""

_COLUMNS = (
    "id", "created_at", "finished_at", "status", "roller", "client", "source", "kind", "system", "request",
    "result", "outcome", "total", "odds", "dice", "throws", "timings", "error", "prev_hash",
)  # fmt: skip


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def write_v1_log(data_dir: Path, rolls: int, *, pruned: int = 0) -> dict[int, dict[str, bytes]]:
    """``rolls`` rolls of a throw photo and two die crops each, the first ``pruned`` rolls'
    files pruned (deleted, marked in ``photos``), as version 1 did. Returns each roll's files."""
    photo_dir = data_dir / "photos"
    photo_dir.mkdir(parents=True)
    db = sqlite3.connect(data_dir / "rolls.sqlite3", isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.executescript(V1_SCHEMA)
    prev = "0" * 64
    files: dict[int, dict[str, bytes]] = {}
    for rid in range(1, rolls + 1):
        db.execute(
            "INSERT INTO pending (created_at, state, roller, client, request) VALUES (?, 'rolling', ?, ?, ?)",
            (time.time(), "Ann", "127.0.0.1", _canonical({"notation": "2d6"})),
        )
        data = {"throw-0.jpg": b"\xff\xd8photo" + bytes([rid]), "die-0.jpg": b"\xff\xd8c0" + bytes([rid])}
        data["die-1.jpg"] = b"\xff\xd8c1" + bytes([rid])
        files[rid] = data
        folder = photo_dir / f"{rid:08d}"
        folder.mkdir()
        for name, raw in data.items():
            (folder / name).write_bytes(raw)
        dice = [{"slot": s, "kind": "d6", "face": 1 + s, "die": "red d6", "crop": f"die-{s}.jpg", "throw": 0}
                for s in range(2)]  # fmt: skip
        throws = [
            {
                "index": 0,
                "photo": "throw-0.jpg",
                "photo_sha256": hashlib.sha256(data["throw-0.jpg"]).hexdigest(),
            }
        ]
        row: dict[str, Any] = {
            "id": rid, "created_at": 1.0 * rid, "finished_at": 1.0 * rid + 0.5, "status": "done",
            "roller": "Ann", "client": "127.0.0.1", "source": "sim", "kind": "notation", "system": None,
            "request": _canonical({"notation": "2d6"}), "result": _canonical({"total": 3}), "outcome": None,
            "total": "3", "odds": None, "dice": _canonical(dice), "throws": _canonical(throws),
            "timings": "{}", "error": None, "prev_hash": prev,
        }  # fmt: skip
        row["hash"] = hashlib.sha256(_canonical([row[c] for c in _COLUMNS]).encode()).hexdigest()
        db.execute("BEGIN IMMEDIATE")
        cols = (*_COLUMNS, "hash")
        db.execute(
            f"INSERT INTO rolls ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
            [row[c] for c in cols],
        )
        db.execute(
            "INSERT INTO head (one, id, hash) VALUES (1, ?, ?) "
            "ON CONFLICT (one) DO UPDATE SET id = excluded.id, hash = excluded.hash",
            (rid, row["hash"]),
        )
        for name, raw in data.items():
            db.execute("INSERT INTO photos (roll_id, name, bytes) VALUES (?, ?, ?)", (rid, name, len(raw)))
        db.execute("DELETE FROM pending WHERE id = ?", (rid,))
        db.execute("COMMIT")
        prev = row["hash"]
    for rid in range(1, pruned + 1):
        for name in files[rid]:
            (photo_dir / f"{rid:08d}" / name).unlink()
        db.execute("UPDATE photos SET pruned = 1 WHERE roll_id = ?", (rid,))
    db.close()
    return files

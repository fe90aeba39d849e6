"""The hub's combined log: every roll event it took, from every tower, in SQLite.

Why a database and not memory: the hub keeps the log across its own restarts, and a tower's
chain is picked up where the hub left it (the last seq and hash of each tower). Each event is
stored as it arrived, keyed by (tower, seq), so a repeat can never be a second row; the verdict
of the chain check is stored beside it. The towers' pinned public keys are kept here too
(:mod:`.keys`), so a known tower stays known after a restart. Memory stays bounded: pages read at most
:data:`MAX_PAGE` rows.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

__all__ = ["HUB_DB_NAME", "MAX_PAGE", "MAX_PROBLEMS", "HubStore"]

HUB_DB_NAME = "hub.sqlite3"
MAX_PAGE = 500
#: problems kept (the oldest go first): a flood of bad messages cannot fill the disk
MAX_PROBLEMS = 10_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    tower TEXT NOT NULL,
    seq INTEGER NOT NULL,
    hash TEXT NOT NULL,
    prev_seq INTEGER NOT NULL,
    received_at REAL NOT NULL,
    finished_at REAL,
    roller TEXT,
    verdict TEXT NOT NULL,
    problem TEXT NOT NULL,
    event TEXT NOT NULL,
    PRIMARY KEY (tower, seq)
);
CREATE INDEX IF NOT EXISTS events_received ON events (received_at);
CREATE TABLE IF NOT EXISTS keys (
    tower TEXT PRIMARY KEY,
    key TEXT NOT NULL,
    source TEXT NOT NULL,
    pinned_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS corrections (
    tower TEXT NOT NULL,
    record INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    note TEXT NOT NULL,
    PRIMARY KEY (tower, record)
);
CREATE TABLE IF NOT EXISTS problems (
    n INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    tower TEXT NOT NULL,
    seq INTEGER,
    problem TEXT NOT NULL
);
"""


class HubStore:
    """The combined log in ``data_dir``; thread-safe (one connection behind a lock)."""

    def __init__(self, data_dir: str | Path) -> None:
        self.data_dir = Path(data_dir)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = sqlite3.connect(
            self.data_dir / HUB_DB_NAME, check_same_thread=False, isolation_level=None
        )
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            raise RuntimeError("the hub's log is closed")
        return self._db

    def add(self, event: dict[str, Any], verdict: str, problem: str) -> bool:
        """Store a taken event; False if (tower, seq) is already held (nothing changes)."""
        row = event["row"]
        with self._lock:
            cur = self.db.execute(
                "INSERT OR IGNORE INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    event["tower"],
                    event["seq"],
                    event["hash"],
                    event["prev_seq"],
                    time.time(),
                    row.get("finished_at"),
                    row.get("roller"),
                    verdict,
                    problem,
                    json.dumps(event, separators=(",", ":")),
                ),
            )
            return cur.rowcount == 1

    def add_correction(self, tower: str, seq: int, note: dict[str, Any]) -> bool:
        """Keep a tower's ``correct`` note (checked by the caller) for roll ``seq``; False if held."""
        with self._lock:
            cur = self.db.execute(
                "INSERT OR IGNORE INTO corrections VALUES (?, ?, ?, ?)",
                (tower, int(note["seq"]), seq, json.dumps(note, separators=(",", ":"))),
            )
            return cur.rowcount == 1

    def corrections(self, tower: str, seqs: list[int]) -> dict[int, list[dict[str, Any]]]:
        """The ``correct`` notes held for each of ``seqs`` of ``tower``, in record order."""
        out: dict[int, list[dict[str, Any]]] = {s: [] for s in seqs}
        if not seqs:
            return out
        with self._lock:
            rows = self.db.execute(
                "SELECT seq, note FROM corrections WHERE tower = ? AND seq BETWEEN ? AND ? ORDER BY record",
                (tower, min(seqs), max(seqs)),
            ).fetchall()
        for seq, note in rows:
            if seq in out:
                out[seq].append(json.loads(note))
        return out

    def event(self, tower: str, seq: int) -> dict[str, Any] | None:
        """The stored event of roll ``seq`` of ``tower``, or None."""
        with self._lock:
            r = self.db.execute(
                "SELECT event FROM events WHERE tower = ? AND seq = ?", (tower, seq)
            ).fetchone()
        return None if r is None else dict(json.loads(r[0]))

    def problem(self, tower: str, seq: int | None, problem: str) -> None:
        with self._lock:
            n = self.db.execute(
                "INSERT INTO problems (at, tower, seq, problem) VALUES (?, ?, ?, ?)",
                (time.time(), tower, seq, problem[:500]),
            ).lastrowid
            if n and n % 100 == 0:
                self.db.execute("DELETE FROM problems WHERE n <= ?", (n - MAX_PROBLEMS,))

    def pin(self, tower: str, key: str, source: str) -> None:
        """Pin ``tower``'s public key (``source``: how it came to be trusted)."""
        with self._lock:
            self.db.execute(
                "INSERT OR REPLACE INTO keys VALUES (?, ?, ?, ?)", (tower, key, source, time.time())
            )

    def pins(self) -> list[tuple[str, str, str]]:
        """Every pinned key: tower, key, source."""
        with self._lock:
            rows = self.db.execute("SELECT tower, key, source FROM keys ORDER BY tower").fetchall()
        return [(str(r[0]), str(r[1]), str(r[2])) for r in rows]

    def held_hash(self, tower: str, seq: int) -> str | None:
        with self._lock:
            r = self.db.execute(
                "SELECT hash FROM events WHERE tower = ? AND seq = ?", (tower, seq)
            ).fetchone()
        return None if r is None else str(r[0])

    def tips(self) -> dict[str, tuple[int, str]]:
        """Each tower's last taken roll: seq and hash."""
        with self._lock:
            rows = self.db.execute(
                "SELECT tower, seq, hash FROM events e "
                "WHERE seq = (SELECT MAX(seq) FROM events WHERE tower = e.tower)"
            ).fetchall()
        return {str(r[0]): (int(r[1]), str(r[2])) for r in rows}

    def recent(self, limit: int = 50, *, tower: str | None = None, before: float | None = None) -> list[dict]:
        """The newest events (by arrival), each as stored with its verdict."""
        where, args = [], []
        if tower is not None:
            where.append("tower = ?")
            args.append(tower)
        if before is not None:
            where.append("received_at < ?")
            args.append(before)
        sql = "SELECT * FROM events" + (f" WHERE {' AND '.join(where)}" if where else "")
        sql += " ORDER BY received_at DESC LIMIT ?"
        args.append(max(1, min(int(limit), MAX_PAGE)))
        with self._lock:
            rows = self.db.execute(sql, args).fetchall()
        out = [{**dict(r), "event": json.loads(r["event"])} for r in rows]
        for r in out:  # a page is a few rolls: one lookup each stays cheap
            r["corrections"] = self.corrections(r["tower"], [r["seq"]])[r["seq"]]
        return out

    def problems(self, limit: int = 50) -> list[dict[str, Any]]:
        with self._lock:
            rows = self.db.execute(
                "SELECT * FROM problems ORDER BY n DESC LIMIT ?", (max(1, min(limit, MAX_PAGE)),)
            ).fetchall()
        return [dict(r) for r in rows]

    def count(self, tower: str | None = None) -> int:
        with self._lock:
            if tower is None:
                return int(self.db.execute("SELECT COUNT(*) FROM events").fetchone()[0])
            return int(self.db.execute("SELECT COUNT(*) FROM events WHERE tower = ?", (tower,)).fetchone()[0])

    @property
    def closed(self) -> bool:
        return self._db is None

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def __enter__(self) -> HubStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

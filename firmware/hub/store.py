"""The hub's combined log: every roll event it took, from every tower, in SQLite.

Why a database and not memory: the hub keeps the log across its own restarts, and a tower's
chain is picked up where the hub left it (the last seq and hash of each tower). Each event is
stored as it arrived, keyed by (tower, seq), so a repeat can never be a second row; the verdict
of the chain check is stored beside it. The towers' pinned public keys are kept here too
(:mod:`.keys`), so a known tower stays known after a restart. Memory stays bounded: pages read at most
:data:`MAX_PAGE` rows.

The disk stays bounded too, by a cap on the database's pages in use (``--log-cap-mb``, else
``DICETOWER_HUB_LOG_CAP_MB``, else :data:`DEFAULT_LOG_CAP_MB`; :func:`log_cap_bytes`). Past
:data:`PRUNE_AT` of it, the oldest events (by arrival) are *thinned* to a stub that keeps the
chain's fields (tower, seq, hash, prev_seq, finished_at, roller, verdict) and drops the roll and
its crops; if the stubs alone still pass it, the oldest stubs are deleted, never a tower's last
one, so :meth:`HubStore.tips` and :meth:`HubStore.held_hash` still pick the chains up; then the
oldest problems. Pruning stops at :data:`PRUNE_TO` of the cap. SQLite reuses the freed pages, so
the file stays near the cap; one over it at start (a lowered cap) is rewritten once (``VACUUM``).
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

__all__ = [
    "DEFAULT_LOG_CAP_MB",
    "HUB_DB_NAME",
    "LOG_CAP_ENV",
    "MAX_PAGE",
    "MAX_PROBLEMS",
    "MIN_LOG_CAP_MB",
    "PRUNE_AT",
    "PRUNE_TO",
    "HubStore",
    "log_cap_bytes",
]

HUB_DB_NAME = "hub.sqlite3"
MAX_PAGE = 500
#: problems kept (the oldest go first): a flood of bad messages cannot fill the disk
MAX_PROBLEMS = 10_000
#: the cap on the log when neither ``--log-cap-mb`` nor the environment gives one
DEFAULT_LOG_CAP_MB = 512.0
#: the smallest cap taken: room for the newest events, the towers' tips and their keys
MIN_LOG_CAP_MB = 1.0
#: the environment variable that sets the cap for ``dicetower hub``
LOG_CAP_ENV = "DICETOWER_HUB_LOG_CAP_MB"
#: pruning starts when the pages in use pass this share of the cap ...
PRUNE_AT = 0.9
#: ... and stops at this share
PRUNE_TO = 0.8
#: problems always kept when pruning reaches them
KEEP_PROBLEMS = 100
#: rows thinned or deleted in one step of a prune (the size is measured after each)
PRUNE_BATCH = 200
#: prune steps one add may take; a prune that needs more goes on at the next add
STEPS_PER_ADD = 8
#: the write-ahead log's size, at most (SQLite's default checkpoint of 1000 pages) ...
WAL_LIMIT_BYTES = 4 * 2**20
#: ... and at most this share of the cap, so that a small cap holds the disk's use small too
WAL_CAP_SHARE = 1 / 16
#: the least pages between checkpoints (a smaller WAL checkpoints on nearly every roll)
MIN_WAL_PAGES = 64

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
    thinned INTEGER NOT NULL DEFAULT 0,
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


def log_cap_bytes(mb: float | None = None) -> int:
    """The cap in bytes: ``mb`` when given, else ``$DICETOWER_HUB_LOG_CAP_MB``, else 512 MB.

    Under :data:`MIN_LOG_CAP_MB`, infinite or not a number is a ``ValueError`` naming where it
    came from.
    """
    where = "--log-cap-mb"
    if mb is None:
        text = os.environ.get(LOG_CAP_ENV, "").strip()
        if not text:
            return int(DEFAULT_LOG_CAP_MB * 2**20)
        where = LOG_CAP_ENV
        try:
            mb = float(text)
        except ValueError:
            raise ValueError(f"{where}={text[:40]!r}: not a number of megabytes") from None
    if not math.isfinite(mb) or mb < MIN_LOG_CAP_MB:
        raise ValueError(f"{where} must be a number of megabytes, {MIN_LOG_CAP_MB:g} or more (got {mb})")
    return int(mb * 2**20)


def _stub(tower: str, seq: int, prev_seq: int, digest: str) -> str:
    """What is left of a thinned event: its place in the tower's chain."""
    keep = {"tower": tower, "seq": seq, "prev_seq": prev_seq, "hash": digest, "thinned": True}
    return json.dumps(keep, separators=(",", ":"))


class HubStore:
    """The combined log in ``data_dir``; thread-safe (one connection behind a lock).

    ``cap_bytes``: the database's pages in use are kept under it (:func:`log_cap_bytes`); None
    means no cap.
    """

    def __init__(self, data_dir: str | Path, *, cap_bytes: int | None = None) -> None:
        self.data_dir = Path(data_dir)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.cap_bytes = cap_bytes
        self.thinned = 0  #: events thinned to stubs since the log opened
        self.removed = 0  #: stubs and problems deleted since the log opened
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = sqlite3.connect(
            self.data_dir / HUB_DB_NAME, check_same_thread=False, isolation_level=None
        )
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        columns = {str(r[1]) for r in self._db.execute("PRAGMA table_info(events)")}
        if "thinned" not in columns:  # a log from before the cap: every event in it is whole
            self._db.execute("ALTER TABLE events ADD COLUMN thinned INTEGER NOT NULL DEFAULT 0")
        self._page_size = int(self._db.execute("PRAGMA page_size").fetchone()[0])
        wal = WAL_LIMIT_BYTES if cap_bytes is None else min(WAL_LIMIT_BYTES, int(cap_bytes * WAL_CAP_SHARE))
        wal_pages = max(MIN_WAL_PAGES, wal // self._page_size)
        self._db.execute(f"PRAGMA wal_autocheckpoint={wal_pages}")
        self._db.execute(f"PRAGMA journal_size_limit={wal_pages * self._page_size}")
        self._thinned_to = 0  # every event at or below this rowid is thinned
        self._pruning = False  # past PRUNE_AT, and not yet back to PRUNE_TO
        with self._lock:
            self._prune(max_steps=None)
            if cap_bytes is not None and self._pages() * self._page_size > cap_bytes:
                self._db.execute("VACUUM")  # the cap was lowered: give the disk back once

    def _pages(self) -> int:
        return int(self.db.execute("PRAGMA page_count").fetchone()[0])

    def used_bytes(self) -> int:
        """Bytes of the database's pages in use (the file less its free pages)."""
        with self._lock:
            return self._used()

    def _used(self) -> int:
        free = int(self.db.execute("PRAGMA freelist_count").fetchone()[0])
        return (self._pages() - free) * self._page_size

    def size(self) -> dict[str, Any]:
        """The log's size as the towers page shows it."""
        with self._lock:
            used, pages = self._used(), self._pages()
        return {
            "bytes": used,
            "file_bytes": pages * self._page_size,
            "cap_bytes": self.cap_bytes,
            "thinned": self.thinned,
            "removed": self.removed,
        }

    def _prune(self, max_steps: int | None = STEPS_PER_ADD) -> None:
        """Bring the pages in use under :data:`PRUNE_TO` of the cap, once past :data:`PRUNE_AT`
        (the lock held). Each step removes about what is over, at most :data:`PRUNE_BATCH` rows,
        and the pages are counted again after it; one call takes at most ``max_steps`` steps (the
        next add goes on), so an add never holds the hub's loop for long."""
        cap = self.cap_bytes
        if cap is None:
            return
        used = self._used()
        if not self._pruning and used <= cap * PRUNE_AT:
            return
        self._pruning = True
        steps = 0
        keep: set[tuple[str, int]] | None = None  # the towers' tips, read once a call
        for kind in ("thin", "delete", "problems"):
            while (over := self._used() - int(cap * PRUNE_TO)) > 0:
                if max_steps is not None and steps >= max_steps:
                    return
                steps += 1
                if kind == "thin":
                    done = self._thin_step(over)
                elif kind == "delete":
                    if keep is None:
                        tips = self.db.execute("SELECT tower, MAX(seq) FROM events GROUP BY tower")
                        keep = {(str(t), int(s)) for t, s in tips}
                    done = self._delete_step(over, keep)
                else:
                    done = self._problems_step(over)
                if not done:
                    break
            else:
                self._pruning = False
                return
        self._pruning = False  # nothing more to take: the keys and the tips are what is left

    def _thin_step(self, over: int) -> bool:
        rows = self.db.execute(
            "SELECT rowid, tower, seq, hash, prev_seq, received_at, finished_at, roller, verdict, problem,"
            " LENGTH(event) FROM events WHERE rowid > ? AND thinned = 0 ORDER BY rowid LIMIT ?",
            (self._thinned_to, PRUNE_BATCH),
        ).fetchall()
        if not rows:
            return False
        self.db.execute("BEGIN")
        freed = 0
        for row in rows:
            rowid, tower, seq, digest, prev_seq = row[:5]
            stub = _stub(tower, seq, prev_seq, digest)
            # deleted and written again, not updated: a delete lets SQLite merge the pages it
            # leaves nearly empty, an update in place would leave each one holding a stub
            self.db.execute("DELETE FROM events WHERE rowid = ?", (rowid,))
            self.db.execute(
                "INSERT INTO events (rowid, tower, seq, hash, prev_seq, received_at, finished_at, roller,"
                " verdict, problem, event, thinned) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)",
                (*row[:10], stub),
            )
            self._thinned_to = int(rowid)
            self.thinned += 1
            freed += int(row[10]) - len(stub)
            if freed >= over:
                break
        self.db.execute("COMMIT")
        return True

    def _delete_step(self, over: int, keep: set[tuple[str, int]]) -> bool:
        rows = self.db.execute(
            "SELECT rowid, tower, seq, LENGTH(event) + LENGTH(problem) + 100 FROM events"
            " WHERE thinned = 1 ORDER BY rowid LIMIT ?",
            (PRUNE_BATCH + len(keep),),
        ).fetchall()
        gone, freed = [], 0
        for rowid, tower, seq, length in rows:
            if (str(tower), int(seq)) in keep:
                continue
            gone.append((int(rowid),))
            freed += int(length)
            if freed >= over or len(gone) >= PRUNE_BATCH:
                break
        if not gone:
            return False
        self.db.execute("BEGIN")
        self.db.executemany("DELETE FROM events WHERE rowid = ?", gone)
        self.db.execute("COMMIT")
        self.removed += len(gone)
        return True

    def _problems_step(self, over: int) -> bool:
        found = self.db.execute("SELECT n FROM problems ORDER BY n DESC LIMIT 1 OFFSET ?", (KEEP_PROBLEMS,))
        row = found.fetchone()
        if row is None:
            return False
        cur = self.db.execute(
            "DELETE FROM problems WHERE n IN (SELECT n FROM problems WHERE n <= ? ORDER BY n LIMIT ?)",
            (int(row[0]), PRUNE_BATCH),
        )
        self.removed += cur.rowcount
        return cur.rowcount > 0

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
                "INSERT OR IGNORE INTO events"
                " (tower, seq, hash, prev_seq, received_at, finished_at, roller, verdict, problem, event)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
            added = cur.rowcount == 1
            if added:
                self._prune()
            return added

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

"""The tower's roll log read as an outbox: rows in order, and how far the broker has them.

Why the log and not a queue of its own: the log already holds every finished roll, in order,
durably, while the broker is away or the tower restarts. The outbox remembers one number per
broker and prefix, the highest roll id the broker acknowledged with everything before it
(``mqtt-sent.json`` beside the log), and reads what follows straight from the log. A broker
the log never published to starts at the log's end: a hub asks for the earlier rolls it wants. A roll
published but not yet acknowledged when the tower stops is sent again after the restart: a hub
keys rolls by (tower, seq), so that is a repeat it drops, never a second roll.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..rolllog.chain import CHAINED_COLUMNS, NOTE_COLUMNS
from ..rolllog.schema import DB_NAME
from .wire import MAX_NOTES

__all__ = ["SENT_NAME", "Outbox", "Outgoing"]

#: the file beside the log that records what the broker acknowledged
SENT_NAME = "mqtt-sent.json"
#: brokers and prefixes remembered in it (one line each; the oldest are forgotten past this)
_MAX_KEYS = 32


@dataclass(frozen=True)
class Outgoing:
    """One stored roll to publish: its row as stored, the id before it, the notes between."""

    row: dict[str, Any]
    prev_seq: int
    notes: list[dict[str, Any]]
    #: how many notes lie between (more than ``notes`` holds when they are too many to carry)
    note_count: int = 0

    @property
    def seq(self) -> int:
        return int(self.row["id"])


class Outbox:
    """Rows of the log in ``data_dir`` after a roll id, and the acknowledged mark for ``key``.

    Reads through its own read-only connection, so it never waits on, or writes through, the
    server's. Thread-safe.
    """

    def __init__(self, data_dir: str | Path, key: str) -> None:
        self.data_dir = Path(data_dir)
        self.key = key
        self._lock = threading.Lock()
        path = (self.data_dir / DB_NAME).resolve()
        # read-only but never immutable: the server writes the log while this reads it
        self._db: sqlite3.Connection | None = sqlite3.connect(
            f"file:{quote(str(path))}?mode=ro", uri=True, check_same_thread=False, isolation_level=None
        )
        self._db.row_factory = sqlite3.Row
        known = self._load().get(key)
        if known is None:  # a broker this log never published to: from now on (a hub asks for older rolls)
            known = self.last_seq()
            self._write(known)
        self.acked = known

    def _load(self) -> dict[str, int]:
        try:
            raw = (self.data_dir / SENT_NAME).read_bytes()[: 64 * 1024]
            data = json.loads(raw)
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {str(k): int(v) for k, v in data.items() if isinstance(v, int) and v >= 0}

    def mark_acked(self, seq: int) -> None:
        """Record that the broker holds every roll up to ``seq`` (written atomically)."""
        if seq > self.acked:
            self.acked = seq
            self._write(seq)

    def _write(self, seq: int) -> None:
        data = self._load()
        data.pop(self.key, None)
        data[self.key] = seq
        while len(data) > _MAX_KEYS:
            data.pop(next(iter(data)))
        path = self.data_dir / SENT_NAME
        tmp = path.with_suffix(".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(data, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            raise RuntimeError("the outbox is closed")
        return self._db

    def last_seq(self) -> int:
        """The id of the log's last finished roll (0 when it has none)."""
        with self._lock:
            return int(self.db.execute("SELECT COALESCE(MAX(id), 0) FROM rolls").fetchone()[0])

    def after(self, seq: int, limit: int) -> list[Outgoing]:
        """Up to ``limit`` rows after ``seq``, oldest first, each with the notes before it."""
        cols = ", ".join((*CHAINED_COLUMNS, "hash"))
        note_cols = ", ".join((*NOTE_COLUMNS, "hash"))
        with self._lock:
            db = self.db
            prev = db.execute("SELECT COALESCE(MAX(id), 0) FROM rolls WHERE id <= ?", (seq,)).fetchone()[0]
            rows = db.execute(
                f"SELECT {cols} FROM rolls WHERE id > ? ORDER BY id LIMIT ?", (seq, max(1, limit))
            ).fetchall()
            out = []
            for r in rows:
                span = (prev, r["id"])
                notes = db.execute(
                    f"SELECT {note_cols} FROM notes WHERE after_id >= ? AND after_id < ? "
                    "ORDER BY seq LIMIT ?",
                    (*span, MAX_NOTES + 1),
                ).fetchall()
                count = len(notes)
                if count > MAX_NOTES:  # too many to carry: only their number travels
                    count = db.execute(
                        "SELECT COUNT(*) FROM notes WHERE after_id >= ? AND after_id < ?", span
                    ).fetchone()[0]
                out.append(Outgoing(dict(r), int(prev), [dict(n) for n in notes], int(count)))
                prev = int(r["id"])
        return out

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._db.close()
                self._db = None

    @property
    def closed(self) -> bool:
        return self._db is None

"""Reading the log: rows for the API, exports and fairness, and the files it serves.

:class:`LogReader` opens the database read-only, so ``dicetower log export`` and
``dicetower fairness`` never migrate, repair or create anything; :class:`~.log.RollLog`, the
server's writable log, reads through the same methods. A file is served only if the log holds
its hash and the bytes on disk still have it: a replaced crop is a 404, never shown.
"""

from __future__ import annotations

import csv
import json
import logging
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from .chain import CHAINED_COLUMNS, JSON_COLUMNS, canonical, correction_entry, decode_row, pending_view
from .report import VerifyReport
from .schema import DB_NAME, connect_readonly, log_version
from .store import file_sha256, folder_name
from .verify import verify_log

__all__ = ["MAX_PAGE", "LogReader"]

#: the most rows one page of :meth:`LogReader.list` returns
MAX_PAGE = 200

log = logging.getLogger(__name__)


class LogReader:
    """The roll log in ``data_dir``, opened read-only (``FileNotFoundError`` if there is none).

    Thread-safe: one connection behind a lock, as the server calls it from worker threads.
    """

    def __init__(self, data_dir: str | Path) -> None:
        self.data_dir = Path(data_dir)
        self.photo_dir = self.data_dir / "photos"
        self.path = self.data_dir / DB_NAME
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._table_cache: set[str] | None = None
        self.version = 0
        self._db = self._connect()

    def _connect(self) -> sqlite3.Connection:
        if not self.path.is_file():
            raise FileNotFoundError(f"no roll log in {self.data_dir} ({DB_NAME} is missing)")
        db = connect_readonly(self.path)
        try:
            self.version = log_version(db)
            if self.version == 0:
                raise FileNotFoundError(f"the roll log in {self.data_dir} is empty: run dicetower log verify")
        except BaseException:
            db.close()
            raise
        return db

    # -- resource -------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._db is None

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def __enter__(self) -> LogReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            raise RuntimeError("the roll log is closed")
        return self._db

    # -- rows -----------------------------------------------------------------------------

    def get(self, roll_id: int) -> dict[str, Any] | None:
        """A finished row, or a pending one (``status`` queued/rolling), or None."""
        with self._lock:
            row = self.db.execute("SELECT * FROM rolls WHERE id = ?", (roll_id,)).fetchone()
            if row is not None:
                return self._with_corrections([decode_row(dict(row))])[0]
            p = self.db.execute("SELECT * FROM pending WHERE id = ?", (roll_id,)).fetchone()
        return None if p is None else pending_view(dict(p))

    def pending(self) -> list[dict[str, Any]]:
        with self._lock:
            rows = self.db.execute("SELECT * FROM pending ORDER BY id").fetchall()
        return [pending_view(dict(r)) for r in rows]

    def list(
        self,
        *,
        limit: int = 50,
        before: int | None = None,
        roller: str | None = None,
        system: str | None = None,
    ) -> list[dict[str, Any]]:
        """Finished rolls, newest first; ``before`` pages back from an id."""
        where, args = [], []
        if before is not None:
            where.append("id < ?")
            args.append(before)
        if roller is not None:
            where.append("roller = ?")
            args.append(roller)
        if system is not None:
            where.append("system = ?")
            args.append(system)
        sql = "SELECT * FROM rolls" + (f" WHERE {' AND '.join(where)}" if where else "")
        sql += " ORDER BY id DESC LIMIT ?"
        args.append(max(1, min(int(limit), MAX_PAGE)))
        with self._lock:
            rows = self.db.execute(sql, args).fetchall()
            return self._with_corrections([decode_row(dict(r)) for r in rows])

    def iter_rows(self, *, status: str | None = None) -> Iterator[dict[str, Any]]:
        """Every finished row, oldest first (fetched in pages so memory stays bounded)."""
        last = 0
        while True:
            with self._lock:
                sql = "SELECT * FROM rolls WHERE id > ?" + (" AND status = ?" if status else "")
                args: list[Any] = [last, status] if status else [last]
                rows = self.db.execute(sql + " ORDER BY id LIMIT 500", args).fetchall()
                decoded = self._with_corrections([decode_row(dict(r)) for r in rows])
            if not rows:
                return
            yield from decoded
            last = rows[-1]["id"]

    def note(self, seq: int) -> dict[str, Any] | None:
        """Record ``seq`` of the chain as stored (its hashed columns and ``hash``), or None."""
        with self._lock:
            row = self.db.execute("SELECT * FROM notes WHERE seq = ?", (seq,)).fetchone()
        return None if row is None else dict(row)

    def _with_corrections(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``rows`` each with ``corrections``: the table's ``correct`` notes naming it, in order.

        A correction is written while its roll is the last row, so its note follows that row
        (``after_id``); the body must name the roll too. Called with the lock held.
        """
        if not rows:
            return rows
        ids = [int(r["id"]) for r in rows]
        found: dict[int, list[dict[str, Any]]] = {i: [] for i in ids}
        if "notes" in self._tables():
            cur = self.db.execute(
                "SELECT seq, at, kind, body, hash FROM notes WHERE kind = 'correct' "
                "AND after_id BETWEEN ? AND ? ORDER BY seq",
                (min(ids), max(ids)),
            )
            for note in cur:
                entry = correction_entry(dict(note))  # None for an edited body: log verify names it
                if entry is not None and int(entry["roll"]) in found:
                    found[int(entry["roll"])].append(entry)
        for r in rows:
            r["corrections"] = found[int(r["id"])]
        return rows

    def _tables(self) -> set[str]:
        if self._table_cache is None:
            self._table_cache = {
                str(r[0]) for r in self.db.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")
            }
        return self._table_cache

    def count(self) -> int:
        with self._lock:
            return int(self.db.execute("SELECT COUNT(*) FROM rolls").fetchone()[0])

    # -- files ----------------------------------------------------------------------------

    def photo_path(self, roll_id: int, name: str) -> Path | None:
        """The stored file of a photo the log knows for ``roll_id``, if its bytes still have the
        hash the log holds; None if unknown, pruned, unhashed or changed.

        ``name`` is matched against the names the log recorded, never joined onto a path as given.
        """
        if self.version < 2:
            return None  # a log of version 1 holds no hash for its crops: served after migration
        with self._lock:
            row = self.db.execute(
                "SELECT name, sha256 FROM photos WHERE roll_id = ? AND name = ? AND pruned = 0",
                (roll_id, name),
            ).fetchone()
        if row is None or not row["sha256"]:
            return None
        path = self.photo_dir / folder_name(roll_id) / row["name"]
        try:
            if file_sha256(path) == row["sha256"]:
                return path
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return None
        log.warning("roll %s: %s does not match its hash in the log; not served", roll_id, row["name"])
        return None

    # -- checking and export --------------------------------------------------------------

    def verify(self, **options: Any) -> VerifyReport:
        """:func:`~.verify.verify_log` over this log's folder (its own read-only connection)."""
        return verify_log(self.data_dir, **options)

    def export(self, out: TextIO, fmt: str = "json") -> int:
        """Write every finished row, with the corrections the table made to it, as JSON lines
        (``json``) or ``csv`` (its last column); returns the row count."""
        n = 0
        if fmt == "json":
            for row in self.iter_rows():
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
                n += 1
            return n
        if fmt != "csv":
            raise ValueError(f"export format must be json or csv, not {fmt!r}")
        cols = [*CHAINED_COLUMNS, "hash"]
        writer = csv.writer(out)
        writer.writerow([*cols, "corrections"])
        for row in self.iter_rows():
            writer.writerow(
                [
                    canonical(row.get(c)) if c in JSON_COLUMNS and row.get(c) is not None else row.get(c)
                    for c in cols
                ]
                + [canonical(row.get("corrections") or [])]
            )
            n += 1
        return n

"""The roll log: every roll in SQLite (WAL), chained by hashes, with its photos beside it.

A group trusts a tower when nobody can quietly change what it rolled. Each finished roll is
one append-only row that carries the SHA-256 of the row before it and its own hash over
every column, so :meth:`RollLog.verify` names any row that was edited, deleted or moved.
The ``head`` table repeats the last row's id and hash, so cutting rows off the end is
found too (an editor who rewrites every later hash *and* the head is caught only against
a head hash kept elsewhere: ``dicetower log verify`` prints it for that).

A roll is written twice. When it is accepted it goes into ``pending`` (state ``queued``,
then ``rolling``); when it ends, one transaction appends its ``rolls`` row under the same
id and deletes the pending one. SQLite's WAL makes a committed transaction survive
``kill -9``; whatever is still pending when the log is opened again was in flight at the
crash, and :meth:`RollLog.recover` appends it as a failed roll with that reason, so no roll
is lost silently. Photos are written before the row that names them, with their SHA-256 in
the row; :meth:`RollLog.prune_photos` keeps their total under a cap by deleting the oldest
photos while keeping every row.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import json
import os
import shutil
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

__all__ = [
    "CHAINED_COLUMNS",
    "GENESIS",
    "LogProblem",
    "PhotoFile",
    "RollLog",
    "VerifyReport",
    "default_data_dir",
    "row_hash",
]

#: ``prev_hash`` of the first row
GENESIS = "0" * 64

#: the columns a row's hash covers, in order (``hash`` itself is the only one left out)
CHAINED_COLUMNS: tuple[str, ...] = (
    "id",
    "created_at",
    "finished_at",
    "status",
    "roller",
    "client",
    "source",
    "kind",
    "system",
    "request",
    "result",
    "outcome",
    "total",
    "odds",
    "dice",
    "throws",
    "timings",
    "error",
    "prev_hash",
)

_JSON_COLUMNS = ("request", "result", "odds", "dice", "throws", "timings")

_SCHEMA = """
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

#: the most rows one page of :meth:`RollLog.list` returns
MAX_PAGE = 200


def default_data_dir() -> Path:
    """``$DICETOWER_DATA_DIR``, else ``$XDG_DATA_HOME/dicetower``, else ``~/.local/share/dicetower``."""
    env = os.environ.get("DICETOWER_DATA_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "dicetower"


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def row_hash(row: dict[str, Any]) -> str:
    """SHA-256 over the chained columns of ``row`` (as stored: JSON columns are text)."""
    body = _canonical([row.get(c) for c in CHAINED_COLUMNS])
    return hashlib.sha256(body.encode()).hexdigest()


@dataclass(frozen=True)
class PhotoFile:
    """A photo to store with a roll: ``name`` is a plain file name chosen by the server."""

    name: str
    data: bytes


@dataclass(frozen=True)
class LogProblem:
    """One thing :meth:`RollLog.verify` found wrong, naming the row."""

    row: int
    problem: str

    def __str__(self) -> str:
        return f"row {self.row}: {self.problem}"


@dataclass
class VerifyReport:
    rows: int = 0
    head_id: int | None = None
    head_hash: str = GENESIS
    problems: list[LogProblem] = field(default_factory=list)
    photos_checked: int = 0
    photos_pruned: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems


class RollLog:
    """The SQLite roll log and its photo folder under ``data_dir``.

    Thread-safe: the server calls it from worker threads, so one connection is shared
    behind a lock (SQLite serialises writers anyway; the log's queries are short).
    ``photo_cap_bytes`` bounds the photo folder; ``None`` keeps every photo.
    """

    def __init__(self, data_dir: str | Path, *, photo_cap_bytes: int | None = 512 * 2**20) -> None:
        self.data_dir = Path(data_dir)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.photo_dir = self.data_dir / "photos"
        self.photo_dir.mkdir(exist_ok=True)
        self.path = self.data_dir / "rolls.sqlite3"
        self.photo_cap_bytes = photo_cap_bytes
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        try:
            db.row_factory = sqlite3.Row
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")  # a committed roll survives power loss too
            db.execute("PRAGMA busy_timeout=5000")
            db.executescript(_SCHEMA)
        except BaseException:
            db.close()
            raise
        self._db = db

    # -- resource -------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._db is None

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def __enter__(self) -> RollLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            raise RuntimeError("the roll log is closed")
        return self._db

    # -- writing --------------------------------------------------------------------------

    def accept(self, request: dict[str, Any], *, roller: str, client: str) -> int:
        """Record an accepted request as ``queued``; its id is the roll's id for good."""
        with self._lock:
            cur = self.db.execute(
                "INSERT INTO pending (created_at, state, roller, client, request) "
                "VALUES (?, 'queued', ?, ?, ?)",
                (time.time(), roller, client, _canonical(request)),
            )
            return int(cur.lastrowid or 0)

    def mark_rolling(self, roll_id: int) -> None:
        with self._lock:
            self.db.execute("UPDATE pending SET state = 'rolling' WHERE id = ?", (roll_id,))

    def commit(
        self,
        roll_id: int,
        *,
        status: str,
        source: str,
        result: dict[str, Any] | None = None,
        outcome: str | None = None,
        total: Any = None,
        odds: dict[str, Any] | None = None,
        dice: Sequence[dict[str, Any]] = (),
        throws: Sequence[dict[str, Any]] = (),
        timings: dict[str, float] | None = None,
        error: str | None = None,
        photos: Sequence[PhotoFile] = (),
    ) -> dict[str, Any]:
        """Append the finished (``done``) or ``failed`` roll and drop its pending entry, atomically.

        ``photos`` are written first; ``throws`` entries that name a photo get its SHA-256.
        Returns the row as :meth:`get` would.
        """
        if status not in ("done", "failed"):
            raise ValueError(f"status must be done or failed, not {status!r}")
        digests = self._write_photos(roll_id, photos)
        throws = [dict(t) for t in throws]
        for t in throws:
            name = t.get("photo")
            if name in digests:
                t["photo_sha256"] = digests[name][0]
        dice = [dict(d) for d in dice]
        with self._lock:
            db = self.db
            pending = db.execute("SELECT * FROM pending WHERE id = ?", (roll_id,)).fetchone()
            if pending is None:
                raise KeyError(f"no pending roll {roll_id}")
            db.execute("BEGIN IMMEDIATE")
            try:
                prev = db.execute("SELECT hash FROM head WHERE one = 1").fetchone()
                request = json.loads(pending["request"])
                row: dict[str, Any] = {
                    "id": roll_id,
                    "created_at": pending["created_at"],
                    "finished_at": time.time(),
                    "status": status,
                    "roller": pending["roller"],
                    "client": pending["client"],
                    "source": source,
                    "kind": "check" if "system" in request else "notation",
                    "system": request.get("system"),
                    "request": _canonical(request),
                    "result": None if result is None else _canonical(result),
                    "outcome": outcome,
                    "total": None if total is None else _canonical(total),
                    "odds": None if odds is None else _canonical(odds),
                    "dice": _canonical(dice),
                    "throws": _canonical(throws),
                    "timings": _canonical(timings or {}),
                    "error": error,
                    "prev_hash": prev["hash"] if prev else GENESIS,
                }
                row["hash"] = row_hash(row)
                cols = (*CHAINED_COLUMNS, "hash")
                db.execute(
                    f"INSERT INTO rolls ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                    [row[c] for c in cols],
                )
                db.execute(
                    "INSERT INTO head (one, id, hash) VALUES (1, ?, ?) "
                    "ON CONFLICT (one) DO UPDATE SET id = excluded.id, hash = excluded.hash",
                    (roll_id, row["hash"]),
                )
                for name, (_digest, size) in digests.items():
                    db.execute(
                        "INSERT OR REPLACE INTO photos (roll_id, name, bytes) VALUES (?, ?, ?)",
                        (roll_id, name, size),
                    )
                db.execute("DELETE FROM pending WHERE id = ?", (roll_id,))
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        if photos and self.photo_cap_bytes is not None:
            self.prune_photos()
        return _decode(row)

    def _write_photos(self, roll_id: int, photos: Sequence[PhotoFile]) -> dict[str, tuple[str, int]]:
        out: dict[str, tuple[str, int]] = {}
        if not photos:
            return out
        folder = self.photo_dir / f"{roll_id:08d}"
        folder.mkdir(exist_ok=True)
        for p in photos:
            if not _plain_name(p.name):
                raise ValueError(f"photo name {p.name!r} must be a plain file name")
            tmp = folder / f".{p.name}.tmp"
            with open(tmp, "wb") as fh:
                fh.write(p.data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, folder / p.name)
            out[p.name] = (hashlib.sha256(p.data).hexdigest(), len(p.data))
        return out

    def recover(self) -> list[int]:
        """Append every roll still pending (in flight at a crash) as failed; returns their ids."""
        with self._lock:
            stale = self.db.execute("SELECT id, state FROM pending ORDER BY id").fetchall()
        failed = []
        for row in stale:
            self.commit(
                row["id"],
                status="failed",
                source="",
                error=f"the server stopped while this roll was {row['state']}; it was not finished",
            )
            failed.append(row["id"])
        self._remove_orphan_photos()
        return failed

    def _remove_orphan_photos(self) -> None:
        """Photo folders of rolls that never got a row (a crash between photo and row)."""
        with self._lock:
            known = {r[0] for r in self.db.execute("SELECT DISTINCT roll_id FROM photos")}
            pending = {r[0] for r in self.db.execute("SELECT id FROM pending")}
        for folder in self.photo_dir.iterdir():
            if folder.is_dir() and folder.name.isdigit() and int(folder.name) not in known | pending:
                shutil.rmtree(folder, ignore_errors=True)

    def prune_photos(self) -> int:
        """Delete the oldest rolls' photos until the rest fit the cap; rows stay. Returns photos removed."""
        cap = self.photo_cap_bytes
        if cap is None:
            return 0
        with self._lock:
            sql = "SELECT COALESCE(SUM(bytes), 0) FROM photos WHERE pruned = 0"
            used = self.db.execute(sql).fetchone()[0]
            if used <= cap:
                return 0
            removed = 0
            rows = self.db.execute(
                "SELECT roll_id, name, bytes FROM photos WHERE pruned = 0 ORDER BY roll_id, name"
            ).fetchall()
            for r in rows:  # bounded by the photo count
                if used <= cap:
                    break
                with contextlib.suppress(FileNotFoundError):
                    (self.photo_dir / f"{r['roll_id']:08d}" / r["name"]).unlink()
                self.db.execute(
                    "UPDATE photos SET pruned = 1 WHERE roll_id = ? AND name = ?", (r["roll_id"], r["name"])
                )
                used -= r["bytes"]
                removed += 1
            return removed

    # -- reading --------------------------------------------------------------------------

    def get(self, roll_id: int) -> dict[str, Any] | None:
        """A finished row, or a pending one (``status`` queued/rolling), or None."""
        with self._lock:
            row = self.db.execute("SELECT * FROM rolls WHERE id = ?", (roll_id,)).fetchone()
            if row is not None:
                return _decode(dict(row))
            p = self.db.execute("SELECT * FROM pending WHERE id = ?", (roll_id,)).fetchone()
        return None if p is None else _pending(dict(p))

    def pending(self) -> list[dict[str, Any]]:
        with self._lock:
            rows = self.db.execute("SELECT * FROM pending ORDER BY id").fetchall()
        return [_pending(dict(r)) for r in rows]

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
        return [_decode(dict(r)) for r in rows]

    def iter_rows(self, *, status: str | None = None) -> Iterator[dict[str, Any]]:
        """Every finished row, oldest first (fetched in pages so memory stays bounded)."""
        last = 0
        while True:
            with self._lock:
                sql = "SELECT * FROM rolls WHERE id > ?" + (" AND status = ?" if status else "")
                args: list[Any] = [last, status] if status else [last]
                rows = self.db.execute(sql + " ORDER BY id LIMIT 500", args).fetchall()
            if not rows:
                return
            for r in rows:
                yield _decode(dict(r))
            last = rows[-1]["id"]

    def count(self) -> int:
        with self._lock:
            return int(self.db.execute("SELECT COUNT(*) FROM rolls").fetchone()[0])

    def photo_path(self, roll_id: int, name: str) -> Path | None:
        """The stored file of a photo the log knows for ``roll_id``; None if unknown or pruned.

        ``name`` is matched against the names the log recorded, never joined onto a path as given.
        """
        with self._lock:
            row = self.db.execute(
                "SELECT name FROM photos WHERE roll_id = ? AND name = ? AND pruned = 0", (roll_id, name)
            ).fetchone()
        if row is None:
            return None
        path = self.photo_dir / f"{roll_id:08d}" / row["name"]
        return path if path.is_file() else None

    # -- checking -------------------------------------------------------------------------

    def verify(self) -> VerifyReport:
        """Walk the chain and name every row that was edited, deleted or moved; check photos."""
        report = VerifyReport()
        prev_hash, prev_id = GENESIS, 0
        last_stored = GENESIS
        with self._lock:
            head = self.db.execute("SELECT id, hash FROM head WHERE one = 1").fetchone()
            cur = self.db.execute("SELECT * FROM rolls ORDER BY id")
            rows = iter(cur.fetchmany, [])
            for batch in rows:  # the cursor streams; memory stays one batch
                for r in batch:
                    self._check_row(dict(r), prev_id, prev_hash, report)
                    prev_id, prev_hash = r["id"], r["hash"]
                    last_stored = r["hash"]
                    report.rows += 1
            photos = self.db.execute("SELECT roll_id, name, pruned FROM photos").fetchall()
            hashes = {}
            for r in self.db.execute("SELECT id, throws FROM rolls WHERE throws != '[]'"):
                try:
                    for t in json.loads(r["throws"]):
                        if t.get("photo") and t.get("photo_sha256"):
                            hashes[(r["id"], t["photo"])] = t["photo_sha256"]
                except (ValueError, TypeError, AttributeError):
                    pass  # an edited throws column is already reported by its hash
        if head is None:
            if report.rows:
                report.problems.append(LogProblem(prev_id, "the log's head record is missing"))
        elif (head["id"], head["hash"]) != (prev_id, last_stored):
            if head["id"] > prev_id:
                report.problems.append(
                    LogProblem(head["id"], f"deleted: the log ended at row {head['id']}, now at {prev_id}")
                )
            else:
                report.problems.append(LogProblem(prev_id, "the head record does not match the last row"))
        report.head_id = prev_id or None
        report.head_hash = last_stored
        for p in photos:
            if p["pruned"]:
                report.photos_pruned += 1
                continue
            want = hashes.get((p["roll_id"], p["name"]))
            path = self.photo_dir / f"{p['roll_id']:08d}" / p["name"]
            if want is None:
                continue
            report.photos_checked += 1
            try:
                got = hashlib.sha256(path.read_bytes()).hexdigest()
            except FileNotFoundError:
                report.problems.append(LogProblem(p["roll_id"], f"photo {p['name']} is missing"))
                continue
            if got != want:
                report.problems.append(LogProblem(p["roll_id"], f"photo {p['name']} was changed"))
        return report

    @staticmethod
    def _check_row(row: dict[str, Any], prev_id: int, prev_hash: str, report: VerifyReport) -> None:
        rid = row["id"]
        if row_hash(row) != row["hash"]:
            # its own prev_hash cannot be trusted either, so the row before is not blamed
            report.problems.append(LogProblem(rid, "edited: its contents do not match its hash"))
            if rid > prev_id + 1:
                gone = f"{prev_id + 1}" if rid == prev_id + 2 else f"{prev_id + 1}-{rid - 1}"
                report.problems.append(LogProblem(rid, f"row(s) {gone} before it were deleted"))
            return
        if row["prev_hash"] != prev_hash:
            if rid > prev_id + 1:
                gone = f"{prev_id + 1}" if rid == prev_id + 2 else f"{prev_id + 1}-{rid - 1}"
                report.problems.append(LogProblem(rid, f"row(s) {gone} before it were deleted"))
            elif prev_id:
                report.problems.append(
                    LogProblem(prev_id, f"edited or moved: row {rid} recorded a different hash for it")
                )
            else:
                report.problems.append(LogProblem(rid, "the first row does not start the chain"))

    # -- export ---------------------------------------------------------------------------

    def export(self, out: TextIO, fmt: str = "json") -> int:
        """Write every finished row as JSON lines (``json``) or ``csv``; returns the row count."""
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
        writer.writerow(cols)
        for row in self.iter_rows():
            writer.writerow(
                [_canonical(row[c]) if c in _JSON_COLUMNS and row[c] is not None else row[c] for c in cols]
            )
            n += 1
        return n


def _plain_name(name: str) -> bool:
    return bool(name) and name == os.path.basename(name) and not name.startswith(".") and "\\" not in name


def _decode(row: dict[str, Any]) -> dict[str, Any]:
    out = dict(row)
    for c in (*_JSON_COLUMNS, "total"):
        if isinstance(out.get(c), str):
            out[c] = json.loads(out[c])
    return out


def _pending(row: dict[str, Any]) -> dict[str, Any]:
    request = json.loads(row["request"])
    return {
        "id": row["id"],
        "created_at": row["created_at"],
        "status": row["state"],
        "roller": row["roller"],
        "client": row["client"],
        "kind": "check" if "system" in request else "notation",
        "system": request.get("system"),
        "request": request,
    }

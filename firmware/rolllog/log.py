"""The server's roll log: accepting, finishing and recovering rolls, pruning, a checked start.

A roll is written twice. When it is accepted it goes into ``pending`` (state ``queued``,
then ``rolling``); when it ends, one transaction appends its ``rolls`` row under the same id,
moves the chain's tip and deletes the pending one, and then the head file is rewritten. SQLite's
WAL makes a committed transaction survive ``kill -9``; whatever is still pending when the log
is opened again was in flight at the crash, and :meth:`RollLog.recover` appends it as a failed
roll with that reason, so no roll is lost silently.

Opening checks the end of the log against the head file (cheaply: the last two links), moves
a version 1 log on, and refuses (:class:`~.report.BrokenLogError`) a log that was cut short,
lost its head file or a table, unless told which problems to start with (``accept_broken``):
those are then recorded in the chain, and ids carry on past the highest the head file knew.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .anchor import HEAD_NAME, Head, HeadFileError, read_head, write_head
from .chain import CHAINED_COLUMNS, GENESIS, canonical, decode_row, row_hash
from .migrate import migrate_v1
from .notes import append_note, chain_tip, set_tip
from .prune import MAX_NOTE_FILES, plan_prune, remove_files, sort_photo_dir
from .reading import LogReader
from .report import BrokenLogError
from .schema import TABLES, connect_writable, create_tables, log_version, table_names
from .store import PhotoFile, set_aside, write_files

__all__ = ["DEFAULT_PHOTO_CAP_BYTES", "RollLog"]

#: ``--photo-cap-mb``'s default: the photo folder's bound
DEFAULT_PHOTO_CAP_BYTES = 512 * 2**20

log = logging.getLogger(__name__)


class RollLog(LogReader):
    """The SQLite roll log and its photo folder under ``data_dir``, open for writing.

    ``photo_cap_bytes`` bounds the photo folder (None keeps every photo). ``accept_broken``:
    the problems the caller was told to start with (``--accept-broken-log``); empty, a log
    whose end does not match its head file, or that lost a table, is refused.
    """

    def __init__(
        self,
        data_dir: str | Path,
        *,
        photo_cap_bytes: int | None = DEFAULT_PHOTO_CAP_BYTES,
        accept_broken: Sequence[str] = (),
    ) -> None:
        self.photo_cap_bytes = photo_cap_bytes
        self.accept_broken = tuple(accept_broken)
        super().__init__(data_dir)

    def _connect(self) -> sqlite3.Connection:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.photo_dir.mkdir(exist_ok=True)
        problems: list[str] = []
        try:
            head = read_head(self.data_dir)
        except HeadFileError as exc:
            head = None
            problems.append(str(exc))
        existed = self.path.is_file()
        db = connect_writable(self.path)
        try:
            self._open_checked(db, head, existed, problems)
        except BaseException:
            db.close()
            raise
        return db

    def _open_checked(
        self, db: sqlite3.Connection, head: Head | None, existed: bool, problems: list[str]
    ) -> None:
        version = log_version(db)
        if version == 0 and head is not None and head != Head(0, GENESIS):
            where = "was emptied" if existed else "is missing"
            problems.append(
                f"deleted: {self.path.name} {where}, but {HEAD_NAME} says the log reached row {head.row}"
            )
        if version == 1 and head is not None:
            problems.append(f"a log older than {HEAD_NAME} has one: the database is an older copy")
        missing = [
            t for t in TABLES if version and t not in table_names(db) and (version >= 2 or t != "notes")
        ]
        problems += [f"the {t} table is missing (dropped)" for t in missing]
        if problems and not self.accept_broken:
            self._refuse(problems)
        if version == 0:
            self._in_transaction(db, lambda: create_tables(db))
        elif version == 1:
            self._write_head(migrate_v1(db, self.photo_dir))  # creates what a version 1 log lost
        elif missing:
            self._in_transaction(db, lambda: create_tables(db, missing))
        self.version = 2
        tip, lag = self._check_tip(db, head, problems)
        if problems and not self.accept_broken:
            self._refuse(problems)
        if self.accept_broken:

            def carry_on() -> Head:
                self._carry_on_ids(db, head)
                return append_note(db, "accept", self._accepted())

            self._write_head(self._in_transaction(db, carry_on))
        elif lag or head is None:
            self._write_head(tip)

    def _refuse(self, problems: list[str]) -> None:
        raise BrokenLogError(
            f"the roll log in {self.data_dir} is broken: {problems[0]}"
            + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else "")
            + "; see dicetower log verify, or start with --accept-broken-log to carry on",
            problems,
        )

    def _accepted(self) -> dict[str, Any]:
        return {"problems": list(self.accept_broken)[:MAX_NOTE_FILES], "flag": "--accept-broken-log"}

    def _check_tip(self, db: sqlite3.Connection, head: Head | None, problems: list[str]) -> tuple[Head, bool]:
        """The chain's last link, and whether the head file is one link behind it (a crash)."""
        row = db.execute("SELECT id, hash, prev_hash FROM rolls ORDER BY id DESC LIMIT 1").fetchone()
        note = db.execute(
            "SELECT after_id, hash, prev_hash, kind FROM notes ORDER BY seq DESC LIMIT 1"
        ).fetchone()
        if note is not None and (row is None or note[0] >= row[0]):
            tip, prev, kind = Head(int(note[0]), str(note[1])), str(note[2]), str(note[3])
        elif row is not None:
            tip, prev, kind = Head(int(row[0]), str(row[1])), str(row[2]), "row"
        else:
            tip, prev, kind = Head(0, GENESIS), GENESIS, ""
        if head is None:
            if tip.hash != GENESIS and kind != "migrate":
                problems.append(f"the head file {HEAD_NAME} is missing, but the log has rows")
            return tip, False
        if head.hash == tip.hash:
            return tip, False
        if head.hash == prev:
            return tip, True
        if head.row > tip.row:
            problems.append(f"deleted: the log ended at row {head.row}, now at {tip.row or 'no row'}")
        else:
            problems.append(f"{HEAD_NAME} does not match the end of the log")
        return tip, False

    def _carry_on_ids(self, db: sqlite3.Connection, head: Head | None) -> None:
        """Ids stay unique past rows that are gone: the next id follows the highest ever known."""
        top = max(
            head.row if head else 0,
            int(db.execute("SELECT COALESCE(MAX(id), 0) FROM rolls").fetchone()[0]),
            int(db.execute("SELECT COALESCE(MAX(id), 0) FROM pending").fetchone()[0]),
        )
        if (
            db.execute("UPDATE sqlite_sequence SET seq = MAX(seq, ?) WHERE name = 'pending'", (top,)).rowcount
            == 0
        ):
            db.execute("INSERT INTO sqlite_sequence (name, seq) VALUES ('pending', ?)", (top,))

    @staticmethod
    def _in_transaction(db: sqlite3.Connection, work: Callable[[], Any]) -> Any:
        db.execute("BEGIN IMMEDIATE")
        try:
            result = work()
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return result

    def _write_head(self, head: Head) -> None:
        """After a commit: a failure here leaves the head behind, which the next commit repairs
        and ``log verify`` shows, so the committed roll is not failed for it."""
        try:
            write_head(self.data_dir, head)
        except OSError as exc:
            log.error("could not write %s: %s", HEAD_NAME, exc)

    # -- writing --------------------------------------------------------------------------

    def accept(self, request: dict[str, Any], *, roller: str, client: str) -> int:
        """Record an accepted request as ``queued``; its id is the roll's id for good."""
        with self._lock:
            cur = self.db.execute(
                "INSERT INTO pending (created_at, state, roller, client, request) "
                "VALUES (?, 'queued', ?, ?, ?)",
                (time.time(), roller, client, canonical(request)),
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

        ``photos`` are written first; the row's ``files`` lists each with its SHA-256, and
        ``throws`` entries that name a photo get its SHA-256 too. Returns the row as :meth:`get` would.
        """
        if status not in ("done", "failed"):
            raise ValueError(f"status must be done or failed, not {status!r}")
        files = write_files(self.photo_dir, roll_id, photos)
        digests = {f.name: f.sha256 for f in files}
        throws = [dict(t) for t in throws]
        for t in throws:
            if t.get("photo") in digests:
                t["photo_sha256"] = digests[t["photo"]]
        with self._lock:
            db = self.db
            pending = db.execute("SELECT * FROM pending WHERE id = ?", (roll_id,)).fetchone()
            if pending is None:
                raise KeyError(f"no pending roll {roll_id}")
            request = json.loads(pending["request"])

            def append() -> dict[str, Any]:
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
                    "request": canonical(request),
                    "result": None if result is None else canonical(result),
                    "outcome": outcome,
                    "total": None if total is None else canonical(total),
                    "odds": None if odds is None else canonical(odds),
                    "dice": canonical([dict(d) for d in dice]),
                    "throws": canonical(throws),
                    "timings": canonical(timings or {}),
                    "error": error,
                    "prev_hash": chain_tip(db).hash,
                    "files": canonical([f.to_json() for f in files]),
                }
                row["hash"] = row_hash(row)
                cols = (*CHAINED_COLUMNS, "hash")
                db.execute(
                    f"INSERT INTO rolls ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                    [row[c] for c in cols],
                )
                set_tip(db, Head(roll_id, row["hash"]))
                for f in files:
                    db.execute(
                        "INSERT OR REPLACE INTO photos (roll_id, name, bytes, pruned, sha256) "
                        "VALUES (?, ?, ?, 0, ?)",
                        (roll_id, f.name, f.bytes, f.sha256),
                    )
                db.execute("DELETE FROM pending WHERE id = ?", (roll_id,))
                return row

            row = self._in_transaction(db, append)
            self._write_head(Head(roll_id, row["hash"]))
        if files and self.photo_cap_bytes is not None:
            self.prune_photos()
        return decode_row(row)

    def record(
        self,
        kind: str,
        body: dict[str, Any],
        *,
        check: Callable[[sqlite3.Connection], None] | None = None,
    ) -> Head:
        """Append a note (see :data:`~.chain.NOTE_KINDS`) to the chain; the new tip.

        ``check`` runs inside the same transaction, before the note is written, and refuses it by
        raising: what it reads cannot change before the note is in (a correction's window).
        """

        def append() -> Head:
            if check is not None:
                check(self.db)
            return append_note(self.db, kind, body)

        with self._lock:
            head = self._in_transaction(self.db, append)
            self._write_head(head)
        return head

    def recover(self) -> list[int]:
        """Append every roll still pending (in flight at a crash) as failed; returns their ids."""
        with self._lock:
            stale = self.db.execute("SELECT id, state FROM pending ORDER BY id").fetchall()
        for row in stale:
            self.commit(
                row["id"],
                status="failed",
                source="",
                error=f"the server stopped while this roll was {row['state']}; it was not finished",
            )
        return [row["id"] for row in stale]

    # -- the photo folder -----------------------------------------------------------------

    def prune_photos(self) -> int:
        """Remove the oldest rolls' files until the rest fit the cap; rows and hashes stay, and
        a ``prune`` note records each file. Returns the files removed."""
        cap = self.photo_cap_bytes
        if cap is None:
            return 0
        with self._lock:
            db = self.db
            victims = plan_prune(db, cap)
            for start in range(0, len(victims), MAX_NOTE_FILES):
                chunk = victims[start : start + MAX_NOTE_FILES]

                def mark(chunk: list[Any] = chunk) -> Head:
                    db.executemany(
                        "UPDATE photos SET pruned = 1 WHERE roll_id = ? AND name = ?",
                        [(r, n) for r, n, *_ in chunk],
                    )
                    return append_note(
                        db, "prune", {"cap_bytes": cap, "files": [[r, n, s] for r, n, _b, s in chunk]}
                    )

                self._write_head(self._in_transaction(db, mark))
        remove_files(self.photo_dir, [(r, n) for r, n, *_ in victims])
        return len(victims)

    def tidy_photos(self) -> Path | None:
        """Account for every file under ``photos/`` (at start, after :meth:`recover`): finish
        prunes a crash interrupted, set the rest aside under ``orphans/`` with a note, and record
        that in the chain. Returns the folder files were set aside in, if any."""
        with self._lock:
            rows = self.db.execute("SELECT roll_id, name, pruned, sha256 FROM photos").fetchall()
            pending = {int(r[0]) for r in self.db.execute("SELECT id FROM pending")}
        recorded = {(int(r[0]), str(r[1])): (bool(r[2]), r[3]) for r in rows}
        finish, aside = sort_photo_dir(self.photo_dir, recorded, pending)
        remove_files(self.photo_dir, finish)
        folder = set_aside(self.data_dir, aside)
        if folder is None:
            return None
        for folder_left in {path.parent for path, _why in aside} - {self.photo_dir}:
            with contextlib.suppress(OSError):  # not empty: it holds files the log serves
                folder_left.rmdir()
        listed = [[p.relative_to(self.data_dir).as_posix(), why] for p, why in aside[:MAX_NOTE_FILES]]
        self.record(
            "set-aside",
            {"folder": folder.relative_to(self.data_dir).as_posix(), "files": listed, "count": len(aside)},
        )
        log.warning("set %d file(s) the log does not account for aside in %s", len(aside), folder)
        return folder

"""``log verify``: walk the chain, check the head file, the files and SQLite's own pages.

Read-only by construction: the database is opened with ``mode=ro`` (``immutable=1`` when no
server has it open), nothing is created, repaired or migrated, and the head file is only read.
One read transaction holds the walk, so a log the server is writing is checked as of one
moment. Each problem names its row (or record); any problem fails the check.

What is checked, in order: SQLite's ``integrity_check`` (or ``quick_check``, which skips
matching indexes to their tables); the tables a log of its version must have; every link's own
hash and its link to the one before (rows by id, notes after the row they follow); the ``head``
table and the head file against the chain's end; then every file the chain records.
"""

from __future__ import annotations

import heapq
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from .anchor import HEAD_NAME, Head, HeadFileError, read_head
from .chain import GENESIS, note_hash, row_hash
from .ledger import FileLedger
from .notes import iter_notes
from .report import LogProblem, VerifyReport
from .schema import DB_NAME, connect_readonly, log_version, table_names

__all__ = ["INTEGRITY_CHECKS", "MAX_INTEGRITY_LINES", "verify_log"]

#: SQLite's two page checks: ``quick_check`` is ``integrity_check`` less the index-to-table match
INTEGRITY_CHECKS = ("integrity_check", "quick_check")
#: SQLite messages reported at most; the rest are counted
MAX_INTEGRITY_LINES = 20


class _Link:
    """A row or a note, as the walk needs it."""

    __slots__ = ("hash", "kind", "prev_hash", "record", "row")

    def __init__(
        self, row: int, digest: str, prev_hash: str, record: int | None = None, kind: str = "row"
    ) -> None:
        self.row, self.hash, self.prev_hash, self.record, self.kind = row, digest, prev_hash, record, kind

    def name(self) -> str:
        return f"row {self.row}" if self.record is None else f"record {self.record}"


def verify_log(
    data_dir: str | Path,
    *,
    integrity: str = "integrity_check",
    hash_recent: int | None = None,
    tail_rows: int | None = None,
) -> VerifyReport:
    """Check the log in ``data_dir`` and report every problem; never writes.

    ``hash_recent``: hash the files of only the last N rolls (the others are checked to exist);
    None hashes every file. ``tail_rows``: walk only the chain's last N rows (and the notes after
    them; the first of them is taken as it stands), which bounds the time on a long log; None
    walks it all. Raises FileNotFoundError where there is neither log nor head file.
    """
    if integrity not in INTEGRITY_CHECKS:
        raise ValueError(f"integrity must be one of {', '.join(INTEGRITY_CHECKS)}, not {integrity!r}")
    started = time.monotonic()
    data_dir = Path(data_dir)
    report = VerifyReport(integrity=integrity)
    try:
        head = read_head(data_dir)  # read before the database: a commit in between leaves it behind
    except HeadFileError as exc:
        report.add(None, str(exc))
        head = None
    db_path = data_dir / DB_NAME
    if not db_path.is_file():
        if head is None and not report.problems:
            raise FileNotFoundError(f"no roll log in {data_dir} ({DB_NAME} is missing)")
        if head is not None:
            report.add(
                head.row, f"deleted: {DB_NAME} is missing, but {HEAD_NAME} says the log reached this row"
            )
        return report
    db = connect_readonly(db_path)
    try:
        db.execute("BEGIN")
        _verify_db(db, data_dir, head, report, _Scope(integrity, hash_recent, tail_rows))
    except sqlite3.DatabaseError as exc:
        report.add(None, f"the database cannot be read: {exc}")
    finally:
        db.close()
    report.seconds = time.monotonic() - started
    return report


class _Scope(NamedTuple):
    integrity: str
    hash_recent: int | None
    tail_rows: int | None


def _verify_db(
    db: sqlite3.Connection, data_dir: Path, head: Head | None, report: VerifyReport, scope: _Scope
) -> None:
    integrity = scope.integrity
    found = [str(r[0]) for r in db.execute(f"PRAGMA {integrity}({MAX_INTEGRITY_LINES + 1})")]
    if found != ["ok"]:
        for line in found[:MAX_INTEGRITY_LINES]:
            report.add(None, f"the database fails SQLite's {integrity}: {line}")
        if len(found) > MAX_INTEGRITY_LINES:
            report.add(None, f"the database fails SQLite's {integrity}: more messages than these")
    report.version = version = log_version(db)
    tables = table_names(db)
    required = ("rolls", "head", "photos", "pending") + (("notes",) if version >= 2 else ())
    if version:
        for name in required:
            if name not in tables:
                report.add(None, f"the {name} table is missing (dropped)")
    ledger = FileLedger(report)
    since = 0
    if scope.tail_rows is not None and "rolls" in tables:
        last = int(db.execute("SELECT COALESCE(MAX(id), 0) FROM rolls").fetchone()[0])
        since = max(0, last - scope.tail_rows + 1) if last > scope.tail_rows else 0
    report.from_row = since
    if since and "notes" in tables:  # what the notes before the tail say about the files in it
        for note in iter_notes(db, ("migrate", "accept"), before=since):
            _take_note(note, _Link(int(note["after_id"]), "", "", int(note["seq"])), report, ledger)
    links, seen = _walk(db, tables, report, ledger, since)
    _check_head_table(db, tables, links, report)
    _check_head_file(head, links, seen, version, report)
    report.head_id = links[-1].row if links else None
    report.head_hash = links[-1].hash if links else GENESIS
    if "rolls" in tables:
        last = links[-1].row if links else 0
        hash_after = 0 if scope.hash_recent is None else max(0, last - scope.hash_recent)
        pending = {r[0] for r in db.execute("SELECT id FROM pending")} if "pending" in tables else set()
        ledger.check(
            db, data_dir / "photos", hash_after=hash_after, pending=pending, version=version, since=since
        )


def _links(
    db: sqlite3.Connection, tables: set[str], since: int
) -> Iterator[tuple[tuple[int, int, int], dict[str, Any]]]:
    """Rows by id and notes by seq, each note after the row it follows: the chain's order."""

    def rows() -> Iterator[tuple[tuple[int, int, int], dict[str, Any]]]:
        cur = db.execute("SELECT * FROM rolls WHERE id >= ? ORDER BY id", (since,))
        for batch in iter(lambda: cur.fetchmany(500), []):
            for r in batch:
                yield (int(r["id"]), 0, 0), dict(r)

    def notes() -> Iterator[tuple[tuple[int, int, int], dict[str, Any]]]:
        if "notes" in tables:
            for n in iter_notes(db, after=since):
                yield (int(n["after_id"]), 1, int(n["seq"])), n

    return heapq.merge(rows() if "rolls" in tables else iter(()), notes(), key=lambda item: item[0])


def _walk(
    db: sqlite3.Connection, tables: set[str], report: VerifyReport, ledger: FileLedger, since: int
) -> tuple[list[_Link], dict[str, int]]:
    """Check every link from row ``since`` on; the last two links (what the head checks need)
    and each hash's place."""
    prev: _Link | None = None
    last_seq = 0
    if since and "notes" in tables:
        last_seq = int(
            db.execute("SELECT COALESCE(MAX(seq), 0) FROM notes WHERE after_id < ?", (since,)).fetchone()[0]
        )
    tail: list[_Link] = []
    seen: dict[str, int] = {}
    for (_pos, is_note, _seq), item in _links(db, tables, since):
        if prev is None and since:  # the tail's first link is taken as it stands
            prev = _Link(since - 1 if not is_note else int(item["after_id"]), str(item["prev_hash"]), "")
        if is_note:
            link = _check_note(item, prev, last_seq, report)
            last_seq = int(item["seq"])
            report.records += 1
            _take_note(item, link, report, ledger)
        else:
            link = _check_row(item, prev, report)
            report.rows += 1
            ledger.add_row(item)
        seen[link.hash] = len(seen)
        prev = link
        tail = [*tail[-1:], link]
    return tail, seen


def _take_note(note: dict[str, Any], link: _Link, report: VerifyReport, ledger: FileLedger) -> None:
    """What a note tells the check beyond its link: the problems a start accepted, the files it
    adopted or pruned."""
    if note["kind"] == "accept" and isinstance(note.get("parsed"), dict):
        for text in note["parsed"].get("problems", []):
            report.accepted.append(LogProblem(link.row, str(text), link.record))
    ledger.add_note(note)


def _gone(first: int, last: int) -> str:
    return f"{first}" if first == last else f"{first}-{last}"


def _check_row(row: dict[str, Any], prev: _Link | None, report: VerifyReport) -> _Link:
    rid = int(row["id"])
    link = _Link(rid, str(row["hash"]), str(row["prev_hash"]))
    prev_id, prev_hash = (prev.row, prev.hash) if prev else (0, GENESIS)
    if row_hash(row) != row["hash"]:
        # its own prev_hash cannot be trusted either, so the link before is not blamed
        report.add(rid, "edited: its contents do not match its hash")
        if rid > prev_id + 1:
            report.add(rid, f"row(s) {_gone(prev_id + 1, rid - 1)} before it were deleted")
        return link
    if row["prev_hash"] == prev_hash:
        return link
    if rid > prev_id + 1:
        report.add(rid, f"row(s) {_gone(prev_id + 1, rid - 1)} before it were deleted")
    elif prev is None:
        report.add(rid, "the first row does not start the chain")
    elif prev.record is None:
        report.add(prev.row, f"edited or moved: row {rid} recorded a different hash for it")
    else:
        report.add(
            rid, f"does not chain on from {prev.name()}: a record after it was deleted, or it was edited"
        )
    return link


def _check_note(note: dict[str, Any], prev: _Link | None, last_seq: int, report: VerifyReport) -> _Link:
    seq, after = int(note["seq"]), int(note["after_id"])
    link = _Link(after, str(note["hash"]), str(note["prev_hash"]), seq, str(note["kind"]))
    prev_id, prev_hash = (prev.row, prev.hash) if prev else (0, GENESIS)
    if seq > last_seq + 1:
        report.add(after, f"record(s) {_gone(last_seq + 1, seq - 1)} before it were deleted", seq)
    if note_hash(note) != note["hash"]:
        what = "this correction does" if note["kind"] == "correct" else "its contents do"
        report.add(after, f"edited: {what} not match its hash", seq)
        return link
    if note["prev_hash"] == prev_hash or seq > last_seq + 1:
        return link
    if after > prev_id:
        report.add(after, f"row(s) {_gone(prev_id + 1, after)} before it were deleted", seq)
    elif prev is None:
        report.add(after, "the first record does not start the chain", seq)
    elif prev.record is None:
        report.add(prev.row, f"edited or moved: record {seq} recorded a different hash for it")
    else:
        report.add(after, f"does not chain on from {prev.name()}: it was edited or moved", seq)
    return link


def _ended(row: int, links: list[_Link]) -> str:
    now = f"now at {links[-1].row}" if links and links[-1].row else "now it holds no rows"
    return f"deleted: the log ended at row {row}, {now}"


def _check_head_table(
    db: sqlite3.Connection, tables: set[str], links: list[_Link], report: VerifyReport
) -> None:
    """The ``head`` table is where the server takes the next row's ``prev_hash`` from."""
    if "head" not in tables:
        return
    row = db.execute("SELECT id, hash FROM head WHERE one = 1").fetchone()
    if row is None:
        if links:
            report.add(links[-1].row, "the log's head record is missing")
        return
    tip = links[-1] if links else _Link(0, GENESIS, GENESIS)
    if (int(row[0]), str(row[1])) == (tip.row, tip.hash):
        return
    if int(row[0]) > tip.row:
        report.add(int(row[0]), _ended(int(row[0]), links))
    else:
        report.add(tip.row, "the head record does not match the last row")


def _check_head_file(
    head: Head | None, links: list[_Link], seen: dict[str, int], version: int, report: VerifyReport
) -> None:
    """The head file against the chain's end: equal, or one link behind that link (a crash)."""
    tip = links[-1] if links else None
    if head is None:
        if tip is None:
            return
        if tip.kind == "migrate":
            report.remarks.append(f"{HEAD_NAME} is missing: the server stopped right after migrating the log")
        elif version < 2:
            report.remarks.append(
                f"written before {HEAD_NAME}: the end of the log is checked against the database only"
            )
        else:
            report.add(
                None,
                f"the head file {HEAD_NAME} is missing, but the log has {report.rows} rows: "
                "it was deleted, or the database was copied without it",
            )
        return
    if tip is not None and head.hash == tip.hash:
        if head.row != tip.row:
            report.add(
                None, f"{HEAD_NAME} names row {head.row} but holds the hash of {tip.name()}: it was edited"
            )
        return
    if tip is None and head.hash == GENESIS:
        return
    before = links[-2].hash if len(links) > 1 else GENESIS
    if tip is not None and head.hash == before and tip.prev_hash == before:
        report.remarks.append(
            f"{HEAD_NAME} is one link behind: {tip.name()} was committed and the server stopped before "
            "it wrote the head file; that link chains on from it"
        )
        return
    if tip is None or head.row > tip.row:
        report.add(head.row, _ended(head.row, links))
    elif head.hash in seen:
        behind = len(seen) - 1 - seen[head.hash]
        report.add(
            None,
            f"the log runs {behind} links past {HEAD_NAME}: the head file is an older copy, "
            "or links were added without it",
        )
    else:
        report.add(
            None,
            f"{HEAD_NAME}'s hash is not in the log: links were deleted from its end or "
            "rewritten, or the head file was edited",
        )

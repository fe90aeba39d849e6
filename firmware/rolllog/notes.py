"""Notes: the log's own acts, written into the chain between rolls.

A prune, a migration, a start on a broken log or files set aside change what the log holds
without adding a roll. Each is a note in the chain, after the row that was last, so it can be
neither dropped nor edited unseen, and ``log verify`` can tell a file the pruner removed from
one that went missing.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from typing import Any

from .anchor import Head
from .chain import GENESIS, NOTE_COLUMNS, NOTE_KINDS, canonical, note_hash

__all__ = ["append_note", "chain_tip", "iter_notes", "set_tip"]


def chain_tip(db: sqlite3.Connection) -> Head:
    """The last link as the ``head`` table has it (row 0 and the genesis hash in an empty log)."""
    row = db.execute("SELECT id, hash FROM head WHERE one = 1").fetchone()
    return Head(0, GENESIS) if row is None else Head(int(row[0]), str(row[1]))


def set_tip(db: sqlite3.Connection, head: Head) -> None:
    db.execute(
        "INSERT INTO head (one, id, hash) VALUES (1, ?, ?) "
        "ON CONFLICT (one) DO UPDATE SET id = excluded.id, hash = excluded.hash",
        (head.row, head.hash),
    )


def append_note(db: sqlite3.Connection, kind: str, body: dict[str, Any]) -> Head:
    """Append a note after the chain's tip, inside the caller's transaction; the new tip."""
    if kind not in NOTE_KINDS:
        raise ValueError(f"note kind must be one of {', '.join(NOTE_KINDS)}, not {kind!r}")
    tip = chain_tip(db)
    last = db.execute("SELECT COALESCE(MAX(seq), 0) FROM notes").fetchone()[0]
    note: dict[str, Any] = {
        "seq": int(last) + 1,
        "after_id": tip.row,
        "at": time.time(),
        "kind": kind,
        "body": canonical(body),
        "prev_hash": tip.hash,
    }
    note["hash"] = note_hash(note)
    cols = (*NOTE_COLUMNS, "hash")
    db.execute(
        f"INSERT INTO notes ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
        [note[c] for c in cols],
    )
    head = Head(tip.row, note["hash"])
    set_tip(db, head)
    return head


def iter_notes(
    db: sqlite3.Connection, kinds: tuple[str, ...] = (), *, after: int = 0, before: int | None = None
) -> Iterator[dict[str, Any]]:
    """The notes (of ``kinds``; all by default) written after rows ``after`` to ``before - 1``, in
    order, each body parsed under ``parsed`` (None where it is not JSON: an edit)."""
    where, args = ["after_id >= ?"], [after]
    if kinds:
        where.append(f"kind IN ({', '.join('?' * len(kinds))})")
        args += kinds
    if before is not None:
        where.append("after_id < ?")
        args.append(before)
    cur = db.execute(f"SELECT * FROM notes WHERE {' AND '.join(where)} ORDER BY seq", args)
    for batch in iter(lambda: cur.fetchmany(500), []):
        for r in batch:
            note = dict(r)
            try:
                note["parsed"] = json.loads(note["body"])
            except (TypeError, ValueError):
                note["parsed"] = None
            yield note

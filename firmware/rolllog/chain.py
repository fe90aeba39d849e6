"""The hash chain: what each row and record of the log hashes, and how rows are read back.

The chain is one sequence of *links*: the rows of ``rolls`` (one per finished roll, by id) and
the records of ``notes`` (the log's own acts: a migration, a prune, a start on a broken log,
photos set aside), each placed after the row that was last when it was written. Every link
stores the previous link's hash (``prev_hash``) and its own ``hash``; editing, deleting or
moving one breaks the link after it. Pure functions only: nothing here touches a file.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

__all__ = [
    "CHAINED_COLUMNS",
    "GENESIS",
    "JSON_COLUMNS",
    "NOTE_COLUMNS",
    "NOTE_KINDS",
    "V1_COLUMNS",
    "canonical",
    "correction_entry",
    "decode_row",
    "note_hash",
    "pending_view",
    "row_hash",
]

#: ``prev_hash`` of the first link
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
    "files",
)

#: the columns of a row written before its files were hashed (``files`` is NULL): such a row
#: hashes without ``files``, so setting a newer row's ``files`` to NULL changes its hash
V1_COLUMNS: tuple[str, ...] = CHAINED_COLUMNS[:-1]

#: the columns a note's hash covers, in order
NOTE_COLUMNS: tuple[str, ...] = ("seq", "after_id", "at", "kind", "body", "prev_hash")

#: what a note records: ``migrate`` (the schema moved on; file hashes adopted), ``prune``
#: (photos removed under the cap, their hashes kept), ``accept`` (the server was told to start
#: on a log that does not verify, and what was wrong), ``set-aside`` (files no link accounts
#: for, moved out of the photo folder), ``correct`` (the table said a die of the last roll shows
#: another face: the roll, the slot, the old and new face, who said so; the roll's row is kept)
NOTE_KINDS: tuple[str, ...] = ("migrate", "prune", "accept", "set-aside", "correct")

JSON_COLUMNS: tuple[str, ...] = ("request", "result", "odds", "dice", "throws", "timings", "files")


def canonical(value: Any) -> str:
    """One text per value (sorted keys, no spaces), so a hash never depends on dict order."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def row_hash(row: dict[str, Any]) -> str:
    """SHA-256 over the chained columns of ``row`` (as stored: JSON columns are text).

    A row whose ``files`` is None hashes over :data:`V1_COLUMNS`, as rows were hashed before
    files were; every row written now has ``files`` (``[]`` when it has none).
    """
    columns = V1_COLUMNS if row.get("files") is None else CHAINED_COLUMNS
    body = canonical([row.get(c) for c in columns])
    return hashlib.sha256(body.encode()).hexdigest()


def note_hash(note: dict[str, Any]) -> str:
    """SHA-256 over a note's columns, tagged ``note`` so no note can pass for a row."""
    body = canonical(["note", *(note.get(c) for c in NOTE_COLUMNS)])
    return hashlib.sha256(body.encode()).hexdigest()


def decode_row(row: dict[str, Any]) -> dict[str, Any]:
    """A stored row with its JSON columns parsed, as the API and exports show it."""
    out = dict(row)
    for c in (*JSON_COLUMNS, "total"):
        if isinstance(out.get(c), str):
            out[c] = json.loads(out[c])
    return out


def pending_view(row: dict[str, Any]) -> dict[str, Any]:
    """A ``pending`` entry shaped like a row, its ``status`` queued or rolling."""
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


def correction_entry(note: dict[str, Any]) -> dict[str, Any] | None:
    """A ``correct`` note as a roll lists it: its body (roll, slot, old, new, by, ...) with the
    note's ``record`` (seq), ``at`` and ``hash``; None for another kind, or a body that is not
    a correction (an edit, which ``log verify`` names)."""
    if note.get("kind") != "correct":
        return None
    body = note.get("body")
    try:
        parsed = json.loads(body) if isinstance(body, str) else body
        if not isinstance(parsed, dict):
            return None
        int(parsed["roll"]), int(parsed["slot"]), int(parsed["new"])
    except (TypeError, ValueError, KeyError):
        return None
    return {**parsed, "record": int(note["seq"]), "at": note.get("at"), "hash": note.get("hash")}

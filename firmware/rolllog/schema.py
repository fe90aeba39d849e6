"""The log's tables, their version, and the two ways to open the database.

Version 2 (this one) adds ``rolls.files`` (every file of a roll, hashed into its row),
``photos.sha256`` (the hash a file is served against) and ``notes`` (the log's own acts, in
the chain). A log of version 1 (no ``user_version``) is moved on once by
:func:`~.migrate.migrate_v1`, itself recorded as a note. A table is created only when the
database is new, or when the server is told to start on a broken log: a dropped table never
comes back quietly.

Reading opens the database with ``mode=ro``, and with ``immutable=1`` as well when no
``-wal`` file exists (no server has it open), so a check never writes a byte beside the log
either.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from urllib.parse import quote

__all__ = [
    "DB_NAME",
    "SCHEMA_VERSION",
    "TABLES",
    "LogVersionError",
    "connect_readonly",
    "connect_writable",
    "create_tables",
    "log_version",
    "table_names",
]

DB_NAME = "rolls.sqlite3"
SCHEMA_VERSION = 2

#: each table's definition; ``CREATE TABLE`` is run only for a table that is missing
TABLES: dict[str, str] = {
    "pending": """CREATE TABLE pending (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        created_at REAL NOT NULL,
        state TEXT NOT NULL,
        roller TEXT NOT NULL,
        client TEXT NOT NULL,
        request TEXT NOT NULL
    )""",
    "rolls": """CREATE TABLE rolls (
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
        hash TEXT NOT NULL,
        files TEXT
    )""",
    "head": """CREATE TABLE head (
        one INTEGER PRIMARY KEY CHECK (one = 1),
        id INTEGER NOT NULL,
        hash TEXT NOT NULL
    )""",
    "photos": """CREATE TABLE photos (
        roll_id INTEGER NOT NULL,
        name TEXT NOT NULL,
        bytes INTEGER NOT NULL,
        pruned INTEGER NOT NULL DEFAULT 0,
        sha256 TEXT,
        PRIMARY KEY (roll_id, name)
    )""",
    "notes": """CREATE TABLE notes (
        seq INTEGER PRIMARY KEY,
        after_id INTEGER NOT NULL,
        at REAL NOT NULL,
        kind TEXT NOT NULL,
        body TEXT NOT NULL,
        prev_hash TEXT NOT NULL,
        hash TEXT NOT NULL
    )""",
}

_INDEXES = (
    "CREATE INDEX IF NOT EXISTS rolls_roller ON rolls (roller)",
    "CREATE INDEX IF NOT EXISTS rolls_system ON rolls (system)",
)


class LogVersionError(RuntimeError):
    """The database was written by a newer dicetower than this one."""


def connect_readonly(path: Path) -> sqlite3.Connection:
    """Open ``path`` so that nothing can be written through the connection, nor beside it."""
    immutable = not Path(f"{path}-wal").exists()
    uri = f"file:{quote(str(Path(path).resolve()))}?mode=ro" + ("&immutable=1" if immutable else "")
    db = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None)
    db.row_factory = sqlite3.Row
    return db


def connect_writable(path: Path) -> sqlite3.Connection:
    """The server's connection: WAL, ``synchronous=FULL`` (a committed roll survives power loss)."""
    db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    try:
        db.row_factory = sqlite3.Row
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        db.execute("PRAGMA busy_timeout=5000")
    except BaseException:
        db.close()
        raise
    return db


def table_names(db: sqlite3.Connection) -> set[str]:
    return {r[0] for r in db.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")}


def log_version(db: sqlite3.Connection) -> int:
    """0 for an empty database, 1 for a log written before versions were kept, else its version."""
    version = int(db.execute("PRAGMA user_version").fetchone()[0])
    if version > SCHEMA_VERSION:
        raise LogVersionError(
            f"the roll log is version {version}; this dicetower reads up to {SCHEMA_VERSION}"
        )
    if version == 0:
        return 1 if "rolls" in table_names(db) else 0
    return version


def create_tables(db: sqlite3.Connection, names: list[str] | None = None) -> None:
    """Create the tables ``names`` (default: all that are missing) and the indexes; inside the
    caller's transaction."""
    have = table_names(db)
    for name, sql in TABLES.items():
        if name not in have and (names is None or name in names):
            db.execute(sql)
    if "rolls" in table_names(db):
        for sql in _INDEXES:
            db.execute(sql)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

"""The roll log: every roll in SQLite (WAL), chained by hashes, with its files beside it.

A group trusts a tower when nobody can quietly change what it rolled. Each finished roll is one
append-only row that carries the SHA-256 of the link before it and its own hash over every
column, the SHA-256 of each of its files (the throw photos and die crops the API and overlay
serve) among them; the log's own acts (a prune, a migration, a start on a broken log, files set
aside) are notes in the same chain. ``rolls.head``, beside the database, names the chain's last
link, so rows cut off the end, or a database emptied or swapped for an older copy, are found.
``dicetower log verify`` checks all of it read-only and names each problem's row.

Rooms by job: ``chain`` (what is hashed), ``anchor`` (the head file), ``schema`` and
``migrate`` (tables and versions), ``notes`` (the log's acts), ``store`` (the files), ``log``
(writing), ``reading`` (rows and served files), ``prune`` (the photo folder under its cap and
at start), ``verify`` and ``ledger`` (the check), ``startup`` (the server's checked start).
"""

from .anchor import HEAD_NAME, Head, read_head
from .chain import CHAINED_COLUMNS, GENESIS, row_hash
from .log import DEFAULT_PHOTO_CAP_BYTES, RollLog
from .reading import MAX_PAGE, LogReader
from .report import BrokenLogError, LogProblem, VerifyReport
from .startup import StartCheck, check_log, open_served_log
from .store import ORPHANS_NAME, PhotoFile, default_data_dir
from .verify import verify_log

__all__ = [
    "CHAINED_COLUMNS",
    "DEFAULT_PHOTO_CAP_BYTES",
    "GENESIS",
    "HEAD_NAME",
    "MAX_PAGE",
    "ORPHANS_NAME",
    "BrokenLogError",
    "Head",
    "LogProblem",
    "LogReader",
    "PhotoFile",
    "RollLog",
    "StartCheck",
    "VerifyReport",
    "check_log",
    "default_data_dir",
    "open_served_log",
    "read_head",
    "row_hash",
    "verify_log",
]

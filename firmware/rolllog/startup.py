"""The server's start: the log is checked before a roll is taken, and a broken one is refused.

A server that appends to a log that does not verify makes its later rows look as trustworthy
as the damage before them, and one that deletes the photos it cannot account for destroys the
evidence of what happened. So
:func:`check_log` runs the check ``dicetower log verify --quick`` runs, and refuses
(:class:`~.report.BrokenLogError`) on any problem that no earlier start accepted, unless told
to carry on (``--accept-broken-log``). Then :func:`open_served_log` opens the log, records the
problems it was told to start with as an ``accept`` note, fails the rolls a crash left in
flight, and accounts for every file under ``photos/``: nothing is deleted that the log does not
say was pruned, the rest is set aside under ``orphans/``.

The check is bounded, so a long log still starts in about a second on a 2-core machine: SQLite's
``integrity_check``, the hash of every link of the chain's last :data:`START_TAIL_ROWS` rows (the
whole chain of a log no longer than that) and the head file against its end, the presence of
those rolls' files and the bytes of the last :data:`START_HASH_RECENT` rolls' files (the server
also hashes each file as it serves it). ``dicetower log verify`` checks everything.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .log import DEFAULT_PHOTO_CAP_BYTES, RollLog
from .report import BrokenLogError, VerifyReport
from .verify import verify_log

__all__ = [
    "START_HASH_RECENT",
    "START_INTEGRITY",
    "START_TAIL_ROWS",
    "StartCheck",
    "check_log",
    "open_served_log",
]

#: rolls whose files' bytes the start-up check hashes (older files are checked to exist)
START_HASH_RECENT = 200
#: rows of the chain's end the start-up check walks (10,000 rows: 1.2 s on a 2-core x86-64)
START_TAIL_ROWS = 10_000
#: SQLite's page check at start: ``integrity_check`` costs 0.08 s on a 10,000-row log
START_INTEGRITY = "integrity_check"


@dataclass(frozen=True)
class StartCheck:
    """What the check before a start found: the report (None for a new log) and the problems
    no earlier start accepted, with whether the server was told to carry on over them."""

    report: VerifyReport | None
    problems: tuple[str, ...] = ()
    accept_broken: bool = False

    @property
    def carried_over(self) -> tuple[str, ...]:
        """The problems the server starts with (recorded in the chain as it opens the log)."""
        return self.problems if self.accept_broken else ()


def check_log(
    data_dir: str | Path,
    *,
    accept_broken: bool = False,
    integrity: str = START_INTEGRITY,
    hash_recent: int | None = START_HASH_RECENT,
    tail_rows: int | None = START_TAIL_ROWS,
) -> StartCheck:
    """Check the log in ``data_dir`` before serving it; raises BrokenLogError unless
    ``accept_broken`` when it has a problem that no earlier start accepted."""
    try:
        report = verify_log(data_dir, integrity=integrity, hash_recent=hash_recent, tail_rows=tail_rows)
    except FileNotFoundError:
        return StartCheck(None, (), accept_broken)  # no log yet: the server starts one
    earlier = {p.problem for p in report.accepted}
    new = tuple(str(p) for p in report.problems if str(p) not in earlier)
    if new and not accept_broken:
        more = f" (and {len(new) - 1} more)" if len(new) > 1 else ""
        raise BrokenLogError(
            f"the roll log in {data_dir} does not verify: {new[0]}{more}. See each problem with "
            f"'dicetower log verify --data {data_dir}'; to serve anyway (the problems are recorded "
            "in the log), start with --accept-broken-log",
            list(new),
        )
    return StartCheck(report, new, accept_broken)


def open_served_log(
    data_dir: str | Path, check: StartCheck, *, photo_cap_bytes: int | None = DEFAULT_PHOTO_CAP_BYTES
) -> RollLog:
    """Open the checked log for the server: record what it starts with, fail the rolls left in
    flight, set aside files the log does not account for, and prune to the cap."""
    log = RollLog(data_dir, photo_cap_bytes=photo_cap_bytes, accept_broken=check.carried_over)
    try:
        log.recover()
        log.tidy_photos()
        log.prune_photos()
    except BaseException:
        log.close()
        raise
    return log

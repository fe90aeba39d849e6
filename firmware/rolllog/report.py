"""What a check of the log found: each problem with the row (or record) it concerns."""

from __future__ import annotations

from dataclasses import dataclass, field

from .chain import GENESIS

__all__ = ["BrokenLogError", "LogProblem", "VerifyReport"]


class BrokenLogError(RuntimeError):
    """The log does not verify, and the server was not told to start on it anyway.

    ``problems`` are the lines ``log verify`` would print for it.
    """

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.problems = list(problems or [message])


@dataclass(frozen=True)
class LogProblem:
    """One thing wrong with the log, naming its row, or its record (a note, after ``row``).

    ``row`` is None for the log as a whole (a damaged page, a missing table or head file).
    """

    row: int | None
    problem: str
    record: int | None = None

    def __str__(self) -> str:
        if self.record is not None:
            return f"record {self.record} (after row {self.row}): {self.problem}"
        return self.problem if self.row is None else f"row {self.row}: {self.problem}"


@dataclass
class VerifyReport:
    """The result of :func:`~.verify.verify_log`; ``ok`` only when nothing is wrong.

    ``accepted`` are problems a start on a broken log recorded (``accept`` notes): the log is
    still not whole, so they fail it too. ``remarks`` are states that are sound but worth
    saying (a head file one link behind after a crash, a log older than the head file).
    """

    version: int = 0
    #: the first row walked: 0 for the whole chain, else where a check of its tail began
    from_row: int = 0
    rows: int = 0
    records: int = 0
    head_id: int | None = None
    head_hash: str = GENESIS
    problems: list[LogProblem] = field(default_factory=list)
    accepted: list[LogProblem] = field(default_factory=list)
    remarks: list[str] = field(default_factory=list)
    files_checked: int = 0
    files_unchecked: int = 0
    files_pruned: int = 0
    files_unhashed: int = 0
    files_unrecorded: int = 0
    integrity: str = ""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.problems and not self.accepted

    def add(self, row: int | None, problem: str, record: int | None = None) -> None:
        found = LogProblem(row, problem, record)
        if found not in self.problems:
            self.problems.append(found)

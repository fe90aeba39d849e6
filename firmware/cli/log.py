"""``dicetower log verify|export``: check the roll log's hash chain, or export it.

``verify`` exits 1 and names every row that was edited, deleted or moved (and any photo
that no longer matches its hash); ``export --csv|--json`` writes every row to stdout or
``--out FILE``, with control characters in stored fields escaped (JSON escapes, which read back
to the same text; in CSV as error messages show them), so no field acts on the terminal.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..server.rolllog import RollLog

__all__ = ["open_roll_log", "register", "run_export", "run_verify"]


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "log", help="verify or export the roll log", description=__doc__.split("\n\n")[1]
    )
    sub = p.add_subparsers(dest="log_command", metavar="ACTION", required=True)
    v = sub.add_parser("verify", help="check the hash chain; names any edited, deleted or moved row")
    v.add_argument("--data", type=Path, default=None, help="data directory (DICETOWER_DATA_DIR)")
    v.set_defaults(func=run_verify)
    e = sub.add_parser("export", help="write every roll as CSV or JSON lines")
    e.add_argument("--data", type=Path, default=None, help="data directory (DICETOWER_DATA_DIR)")
    fmt = e.add_mutually_exclusive_group()
    fmt.add_argument("--csv", dest="format", action="store_const", const="csv", help="CSV with a header row")
    fmt.add_argument(
        "--json", dest="format", action="store_const", const="json", help="one JSON object a line"
    )
    e.add_argument("--out", type=Path, default=None, help="file to write (default stdout)")
    e.set_defaults(func=run_export, format="json")


def open_roll_log(data: Path | None) -> RollLog:
    """The roll log in ``data`` (default: the data directory); an error if there is none yet."""
    from ..server.rolllog import RollLog, default_data_dir

    path = data or default_data_dir()
    if not (path / "rolls.sqlite3").is_file():
        raise FileNotFoundError(f"no roll log in {path} (rolls.sqlite3 is missing)")
    return RollLog(path, photo_cap_bytes=None)


def run_verify(args: argparse.Namespace) -> int:
    with open_roll_log(args.data) as log:
        report = log.verify()
    for problem in report.problems:
        print(f"dicetower: log: {problem}", file=sys.stderr)
    status = "ok" if report.ok else f"{len(report.problems)} problem(s)"
    print(
        f"{status}: {report.rows} rows, head row {report.head_id or '-'} hash {report.head_hash}; "
        f"{report.photos_checked} photos checked, {report.photos_pruned} pruned"
    )
    return 0 if report.ok else 1


def run_export(args: argparse.Namespace) -> int:
    from .output import EscapedWriter

    as_json = args.format == "json"
    with open_roll_log(args.data) as log:
        if args.out is None:
            n = log.export(EscapedWriter(sys.stdout, json_escapes=as_json), args.format)
        else:
            with open(args.out, "w", newline="", encoding="utf-8") as fh:
                n = log.export(EscapedWriter(fh, json_escapes=as_json), args.format)
    print(f"exported {n} rolls", file=sys.stderr)
    return 0

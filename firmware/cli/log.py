"""``dicetower log verify|export|examples``: check the roll log's hash chain, export it, or write the
table's labelled examples (``table_examples.py``).

``verify`` exits 1 and names every row that was edited, deleted or moved, every file that no
longer matches its hash, a head file that does not match the log's end, and any page SQLite
finds damaged; it opens the log read-only and never changes it. ``export --csv|--json`` writes
every row to stdout or ``--out FILE``, with control characters in stored fields escaped (JSON
escapes, which read back to the same text; in CSV as error messages show them), so no field
acts on the terminal.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from . import COMMANDS

if TYPE_CHECKING:
    from ..rolllog import LogReader, VerifyReport

__all__ = ["format_report", "open_roll_log", "register", "run_examples", "run_export", "run_verify"]


EXAMPLES = """\
examples:
  dicetower log verify                          check the roll log in the data directory (read-only)
  dicetower log verify --data ./rolls --quick   the server's start-up check of ./rolls
  dicetower log export --csv --out rolls.csv    every roll as CSV

Run 'dicetower log ACTION --help' for an action's options and examples.
"""

VERIFY_EXAMPLES = """\
examples:
  dicetower log verify                  the whole log in the data directory (DICETOWER_DATA_DIR)
  dicetower log verify --data ./rolls   the log dicetower serve --data ./rolls keeps
  dicetower log verify --quick          the server's start-up check: the recent rows and files
"""

EXPORT_EXAMPLES = """\
examples:
  dicetower log export                          one JSON object a line, to stdout
  dicetower log export --csv --out rolls.csv    CSV with a header row
  dicetower log export --data ./rolls --json --out rolls.jsonl
"""


EXAMPLES_EXAMPLES = """\
examples:
  dicetower log examples --out table-dice          the dice the table typed or corrected, labelled
  dicetower log examples --out all --confirmed     every tower roll, the table's faces where it gave one
  dicetower teach fit table-dice --out my-reader   fit a reader on them (docs/teach.md)
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    raw = argparse.RawDescriptionHelpFormatter
    p = subparsers.add_parser(
        "log",
        help=COMMANDS["log"],
        description="Check the roll log's hash chain (verify), export every roll (export), or write the\n"
        "dice the table typed or corrected as a labelled folder (examples).",
        epilog=EXAMPLES,
        formatter_class=raw,
    )
    sub = p.add_subparsers(dest="log_command", metavar="ACTION", required=True)
    v = sub.add_parser(
        "verify",
        help="check the hash chain, head file, files and pages; names each problem's row (read-only)",
        description="Check the roll log: exit 1 naming every row that was edited, deleted or moved, every\n"
        "file that no longer matches its hash, a head file that does not match the log's end, and\n"
        "any page SQLite finds damaged. The log is opened read-only and never changed.",
        epilog=VERIFY_EXAMPLES,
        formatter_class=raw,
    )
    v.add_argument("--data", type=Path, default=None, help="data directory (DICETOWER_DATA_DIR)")
    v.add_argument(
        "--quick",
        action="store_true",
        help="the server's start-up check: the chain's last 10000 rows, the last 200 rolls' files hashed",
    )
    v.set_defaults(func=run_verify)
    e = sub.add_parser(
        "export",
        help="write every roll as CSV or JSON lines",
        description="Write every roll to stdout or --out FILE, with control characters in stored fields\n"
        "escaped (JSON escapes, which read back to the same text; in CSV as error messages show\n"
        "them), so no field acts on the terminal.",
        epilog=EXPORT_EXAMPLES,
        formatter_class=raw,
    )
    e.add_argument("--data", type=Path, default=None, help="data directory (DICETOWER_DATA_DIR)")
    fmt = e.add_mutually_exclusive_group()
    fmt.add_argument("--csv", dest="format", action="store_const", const="csv", help="CSV with a header row")
    fmt.add_argument(
        "--json", dest="format", action="store_const", const="json", help="one JSON object a line (default)"
    )
    e.add_argument("--out", type=Path, default=None, help="file to write (default stdout)")
    e.set_defaults(func=run_export, format="json")
    x = sub.add_parser(
        "examples",
        help="the photos the table typed or corrected a die of, labelled with its faces, for teach fit",
        description="Write a labelled folder (manifest.jsonl, images/, crops/, table.jsonl) of the rolls\n"
        "whose dice the table typed or corrected, each die with the face the table settled on; with\n"
        "--confirmed, every other finished tower roll too. dicetower teach fit and eval read it.",
        epilog=EXAMPLES_EXAMPLES,
        formatter_class=raw,
    )
    x.add_argument("--data", type=Path, default=None, help="data directory (DICETOWER_DATA_DIR)")
    x.add_argument("--out", type=Path, required=True, help="a new folder to write")
    x.add_argument("--confirmed", action="store_true", help="also the rolls nobody corrected (confirmed)")
    x.set_defaults(func=run_examples)


def open_roll_log(data: Path | None) -> LogReader:
    """The roll log in ``data`` (default: the data directory), read-only; an error if there is none."""
    from ..rolllog import LogReader, default_data_dir

    return LogReader(data or default_data_dir())


def format_report(report: VerifyReport) -> str:
    """The summary line ``log verify`` prints on stdout."""
    status = "ok" if report.ok else f"{len(report.problems) + len(report.accepted)} problem(s)"
    files = f"{report.files_checked} files checked"
    for count, what in (
        (report.files_unchecked, "present (not hashed)"),
        (report.files_pruned, "pruned"),
        (report.files_unhashed, "without a hash"),
        (report.files_unrecorded, "unrecorded"),
    ):
        if count or what == "pruned":
            files += f", {count} {what}"
    rows = f"{report.rows} rows" + (f" from row {report.from_row}" if report.from_row else "")
    return (
        f"{status}: {rows}, {report.records} records, head row {report.head_id or '-'} "
        f"hash {report.head_hash}; {files}; {report.integrity} in {report.seconds:.1f} s"
    )


def run_verify(args: argparse.Namespace) -> int:
    from ..rolllog import default_data_dir, verify_log
    from ..rolllog.startup import START_HASH_RECENT, START_INTEGRITY, START_TAIL_ROWS

    quick = {"integrity": START_INTEGRITY, "hash_recent": START_HASH_RECENT, "tail_rows": START_TAIL_ROWS}
    from .output import escape_controls

    report = verify_log(args.data or default_data_dir(), **(quick if args.quick else {}))
    # hashes, kinds and names come from the database: a forged one must not act on the terminal
    for problem in report.problems:
        print(f"dicetower: log: {escape_controls(str(problem))}", file=sys.stderr)
    for problem in report.accepted:
        shown = escape_controls(str(problem))
        print(f"dicetower: log: {shown} (the server was told to start with this)", file=sys.stderr)
    print(escape_controls(format_report(report)))
    for remark in report.remarks:
        print(f"  note: {escape_controls(str(remark))}")
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


def run_examples(args: argparse.Namespace) -> int:
    from ..table_examples import write_examples

    with open_roll_log(args.data) as log:
        counts = write_examples(log, args.out, confirmed=args.confirmed)
    print(
        f"wrote {counts.photos} photos: {counts.typed} dice typed by the table, {counts.corrected}"
        f" corrected, {counts.confirmed} confirmed ({counts.skipped} without a photo or box left out)"
        f" to {args.out}"
    )
    return 0

"""``dicetower fairness [--data DIR] [--json] [--bias 0.1]``: is each physical die fair?

Per die in the roll log: counts per face, χ² p-value, Wilson 95 % intervals, rolls needed
to catch a face that is ``--bias`` more likely, serial correlation, re-throws, and reject
rates per look and per face (from the camera's truth where known, else apparent).
The same figures are on the server's ``/fairness`` page.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from . import COMMANDS

__all__ = ["register", "run"]

EXAMPLES = """\
examples:
  dicetower fairness                         every die in the roll log of the data directory
  dicetower fairness --data ./rolls --json   the log dicetower serve --data ./rolls keeps, as JSON
  dicetower fairness --bias 0.05             size the test to catch a face 5 % more likely
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "fairness",
        help=COMMANDS["fairness"],
        description="Per die in the roll log: counts per face, chi-squared p-value, Wilson 95 % intervals,\n"
        "rolls needed to catch a face that is --bias more likely, serial correlation, re-throws,\n"
        "and reject rates per look and per face. The server's /fairness page shows the same.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--data", type=Path, default=None, help="data directory (DICETOWER_DATA_DIR)")
    p.add_argument("--bias", type=float, default=0.1, help="bias to size the test for (default 0.1 = +10 %%)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..server.fairness import fairness_from_rows, format_fairness
    from .log import open_roll_log

    with open_roll_log(args.data) as log:
        stats = fairness_from_rows(log.iter_rows(), args.bias)
    if args.json:
        print(json.dumps({"dice": [s.to_json() for s in stats]}, indent=2))
    else:
        print(format_fairness(stats))
    return 0

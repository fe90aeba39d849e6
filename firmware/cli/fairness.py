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

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "fairness",
        help="fairness statistics per physical die, from the roll log",
        description=__doc__.split("\n\n")[1],
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

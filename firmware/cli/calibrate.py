"""``dicetower calibrate DIR [DIR...] --out MODELS``: the reader's thresholds, chosen on your own photos.

The rule and why it exists are in :mod:`dicetower.vision.eval.calibrate`; this module runs it and
prints what it chose. The folder it writes is read with ``--models`` (``dicetower eval``,
``dicetower read``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ...vision.detector import DetectorError
from ...vision.eval.calibrate import (
    ThresholdCalibrationError,
    calibrate,
    check_out,
    check_price,
    read_answers,
    write_card,
)
from ...vision.faces.pips import ReaderModelError
from ...vision.faces.thresholds import MAX_REJECT, WRONG_COST
from ...vision.reader import open_reader
from ...vision.view import View
from . import COMMANDS
from .arguments import positive_int
from .eval import check_labelled_folders, check_scored

__all__ = ["register", "run"]

EXAMPLES = """\
examples:
  dicetower calibrate recordings/ --out my-reader
  dicetower eval more-recordings/ --models my-reader
  dicetower calibrate ../shared/datasets/byler-d6 --split val --errata vision/training/errata --out byler
"""


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "calibrate",
        help=COMMANDS["calibrate"],
        description="Read every labelled d6 photo of the folders as the tower reads them, choose how sure "
        "the reader must be of each face (one reject rate for every face, one wrong face priced as "
        "--wrong-cost re-rolls), and write a model folder for --models. The network is not changed.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("folders", nargs="+", metavar="DIR", type=Path, help="folder with manifest.jsonl")
    p.add_argument("--out", required=True, metavar="MODELS", type=Path, help="model folder to write")
    p.add_argument("--models", metavar="DIR", type=Path, help="calibrate these models (default: shipped)")
    p.add_argument("--split", choices=("train", "val", "test"), help="only photos of this split")
    p.add_argument("--limit", metavar="N", type=positive_int, help="read N photos per folder, spread evenly")
    p.add_argument(
        "--errata", metavar="DIR", type=Path, help="correct labels first (as dicetower eval --errata)"
    )
    p.add_argument(
        "--wrong-cost",
        type=float,
        default=WRONG_COST,
        metavar="N",
        help="re-rolls one wrong face is worth (default %(default)g)",
    )
    p.add_argument(
        "--max-reject",
        type=float,
        default=MAX_REJECT,
        metavar="R",
        help="highest share of right answers to give up (default %(default)g)",
    )
    p.add_argument(
        "--view",
        choices=[v.value for v in View],
        help="choose thresholds for frames the camera saw this way only (top_down: the dice's boxes"
        " square, as from a camera near straight down; see dicetower.vision.view); every other frame"
        " keeps the card's thresholds",
    )
    p.add_argument("--force", action="store_true", help="write into a folder that holds other files")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    check_labelled_folders(args.folders, args.errata)
    check_out(args.out, args.models, args.force)
    check_price(args.wrong_cost, args.max_reject)  # before any photo is read
    try:
        reader = open_reader(args.models)
    except (FileNotFoundError, ReaderModelError, DetectorError) as exc:
        raise ThresholdCalibrationError(str(exc)) from None
    answers = read_answers(reader, args.folders, split=args.split, errata_dir=args.errata, limit=args.limit)
    check_scored(Path(", ".join(map(str, args.folders))), answers.photos, answers.errors, [])
    view = None if args.view is None else View(args.view)
    current = {str(v): reader.faces.thresholds_for(v) for v in View}  # what each view reads with today
    result = calibrate(
        answers, wrong_cost=args.wrong_cost, max_reject=args.max_reject, view=view, current=current
    )
    provenance = {
        "folders": list(answers.folders),
        "split": args.split,
        "errata": None if args.errata is None else args.errata.name,
        "photos": answers.photos,
        "dice": len(answers.labels),
        "base": "shipped" if args.models is None else args.models.name,
    }
    if view is not None:
        provenance["view_dice"] = result.stats["dice"]
    written = write_card(reader, args.models, args.out, result, provenance)
    summary = {
        "out": str(args.out),
        "written": written,
        "view": args.view,
        "reject_rate": result.stats["reject_rate_target"],
        "thresholds": {str(f): v for f, v in result.thresholds.items()},
        "in_sample": {
            name: {"right": r, "wrong": w, "rejected": rej} for name, (r, w, rej) in result.outcomes.items()
        },
        "missed": answers.missed,
        "errors": answers.errors,
        **{k: provenance[k] for k in ("photos", "dice")},
    }
    if args.json:
        print(json.dumps(summary))
        return 0
    seen = (
        "" if view is None else f" ({result.stats['dice']} in frames seen {view}; the others keep the card's)"
    )
    print(
        f"calibrated on {summary['dice']} dice in {summary['photos']} photos{seen}: reject rate "
        f"{summary['reject_rate']:g}, thresholds "
        + "  ".join(f"{f}: {v:.3f}" for f, v in summary["thresholds"].items())
    )
    for name, c in summary["in_sample"].items():
        print(f"  {name}: right {c['right']}, wrong {c['wrong']}, rejected {c['rejected']} (on these photos)")
    if answers.missed or answers.errors:
        print(f"  not located (no threshold changes them): {answers.missed}; unread photos: {answers.errors}")
    print(f"wrote {args.out}: {', '.join(written)}")
    print(f"judge it on other photos: dicetower eval DIR --models {args.out}")
    return 0

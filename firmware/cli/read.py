"""``dicetower read IMAGE``: read the dice in one photo and print them (or JSON)."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import cv2

from ...vision.imageio import ImageError, load_image, load_image_info
from ...vision.reader import ReaderSpecError, import_reader, open_reader
from ...vision.reading import DiceReader, Reading, ReadStatus
from . import COMMANDS
from .output import escape_controls

__all__ = ["format_reading", "register", "run"]

EXAMPLES = """\
examples:
  dicetower read roll.jpg
  dicetower read roll.jpg --reference empty-tray.jpg --annotate roll-read.png
  dicetower read roll.jpg --json
  dicetower read roll.jpg --models my-reader      # a folder written by dicetower calibrate
  dicetower read roll.jpg --taught my-dice        # the dice a taught model knows by their own reader
"""


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "read",
        help=COMMANDS["read"],
        description="Find the dice in a photo and read their faces; unreadable dice come with a reason.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("image", type=Path, metavar="IMAGE", help="photo (JPEG, PNG, BMP, ...)")
    p.add_argument("--json", action="store_true", help="print the reading as JSON")
    p.add_argument("--annotate", metavar="OUT.png", type=Path, help="write the photo with the reading drawn")
    p.add_argument("--reference", metavar="EMPTY", type=Path, help="photo of the empty tray, same light")
    p.add_argument(
        "--models",
        metavar="DIR",
        type=Path,
        help="read with the d6_reader.onnx/.json and/or detector.onnx in DIR (e.g. from dicetower calibrate)",
    )
    p.add_argument(
        "--numerals",
        action="store_true",
        help="also read numeral d6, d10, d10t and d20 (pip d6 only without it)",
    )
    p.add_argument(
        "--taught",
        metavar="MODEL",
        type=Path,
        help="read the dice a taught model knows with their own reader (dicetower teach fit), "
        "the others with the general reader",
    )
    p.add_argument("--reader", metavar="MODULE:NAME", help=argparse.SUPPRESS)
    p.set_defaults(func=run)


def format_reading(reading: Reading) -> str:
    """One line with the faces, then one line per die."""
    if not reading.dice:
        return "no dice found (empty tray)"
    faces = " ".join(str(f) for f in reading.faces)
    head = f"{len(reading.dice)} dice: {faces or '-'}"
    if reading.unreadable:
        head += f" ({len(reading.unreadable)} unreadable)"
    lines = [head]
    for d in sorted(reading.dice, key=lambda d: (d.box[1], d.box[0])):
        x, y, w, h = (round(v) for v in d.box)
        if d.status is ReadStatus.READ:
            what = f"{d.kind} {d.face}"
        else:
            what = f"{d.kind} unreadable ({d.reason.text if d.reason else '?'})"
        colour = f" {d.colour}" if d.colour else ""
        lines.append(f"  {what:<28} at {x},{y} {w}x{h}{colour} confidence {d.confidence:.2f}")
    return "\n".join(lines)


def _open_reader(args: argparse.Namespace) -> DiceReader:
    if args.reader is not None:
        return import_reader(args.reader)
    if args.taught is not None:
        from ...vision.taught.reader import open_taught_reader

        return open_taught_reader(args.taught, models=args.models, numerals=args.numerals or None)
    return open_reader(args.models, numerals=args.numerals)


def _format_taught(model: Path, taught: list[tuple[str, float]]) -> str:
    """Which dice the taught model read: ``taught (my-dice): 2 dice, white d6 2``."""
    counts: dict[str, int] = {}
    for die, _conf in taught:
        counts[die] = counts.get(die, 0) + 1
    read = ", ".join(f"{die} {n}" for die, n in counts.items()) or "none of its dice found"
    # the dice's ids and the model's path come from the card and the command line
    line = f"taught ({model}): {len(taught)} dice by their own reader; {read}; the rest by the general reader"
    return escape_controls(line)


def run(args: argparse.Namespace) -> int:
    if args.annotate is not None and args.annotate.suffix.lower() not in (".png", ".jpg", ".jpeg", ".bmp"):
        raise ImageError(f"{args.annotate}: --annotate needs a .png, .jpg or .bmp file name")
    info = load_image_info(args.image)
    reference = load_image(args.reference) if args.reference is not None else None
    if args.reader is not None and args.models is not None:
        raise ReaderSpecError(
            "--models and --reader cannot be combined: --models sets the built-in reader's files"
        )
    if args.reader is not None and args.taught is not None:
        raise ReaderSpecError(
            "--taught and --reader cannot be combined: --taught reads with the built-in reader"
        )
    reader = _open_reader(args)
    start = time.perf_counter()
    reading = reader.read(info.frame, reference)
    ms = (time.perf_counter() - start) * 1000.0
    taught = getattr(reader, "last_taught", None)
    if args.json:
        data = reading.to_json()
        data["image"] = str(args.image)
        data["load_scale"] = info.scale
        data["read_ms"] = round(ms, 2)
        if taught is not None:  # which dice the taught reader read, in its order
            data["taught"] = [{"die": die, "confidence": round(c, 4)} for die, c in taught]
        print(json.dumps(data))
    else:
        print(format_reading(reading))
        if taught is not None:
            print(_format_taught(args.taught, taught))
    if args.annotate is not None:
        from ...vision.eval.annotate import annotate_reading

        if not cv2.imwrite(str(args.annotate), annotate_reading(info.frame, reading)):
            raise ImageError(f"{args.annotate}: could not write the annotated photo")
    return 0

"""``dicetower record OUT --rolls N [--tower sim|replay|config]``: N throws into a dataset folder.

The folder is in the format of ``../shared/datasets`` (``manifest.jsonl`` plus ``images/``),
so ``dicetower eval`` scores it and ``--tower replay --replay OUT`` plays it back. Each line
holds the photo the tower read and the truth the camera knows (the simulated and replay
cameras know it); a real camera's lines have an empty ``dice`` list, to be labelled. The
empty-tray reference is written once as ``images/empty.png`` and named by every line.

Nothing is half-written: each photo goes in through a temporary file, and its manifest line
is appended (and flushed) only after it, so a crash leaves a shorter, complete folder.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import COMMANDS
from .tower import add_tower_arguments, opened_tower

__all__ = ["MAX_ROLLS", "register", "run"]

EXAMPLES = """\
examples:
  dicetower record recorded --rolls 20 --tower sim --sim-seed 1   20 simulated throws, with the truth
  dicetower record my-photos --rolls 50                 the real tower: 50 photos to label
  dicetower eval recorded                               score the reader on them
  dicetower roll 3d6 --tower replay --replay recorded   play them back as a tower
"""

#: Most throws one ``record`` run makes.
MAX_ROLLS = 100_000


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "record",
        help=COMMANDS["record"],
        description="Throw the tray N times and write the photos and a manifest.jsonl in the shared format.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("out", help="a new (or empty) folder")
    p.add_argument("--rolls", type=int, required=True, metavar="N", help=f"throws to record, 1..{MAX_ROLLS}")
    add_tower_arguments(p, default="config", throws=False)  # the photos go in OUT
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import cv2

    from ...rules.errors import printable
    from ...vision.manifest import write_manifest_line
    from ..errors import ThrowFailedError
    from ..records import write_atomic

    if not 1 <= args.rolls <= MAX_ROLLS:
        raise ValueError(f"--rolls must be 1..{MAX_ROLLS}, got {args.rolls}")
    out = Path(args.out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise FileExistsError(f"{out} exists and is not an empty folder; record into a new one")
    with opened_tower(args) as tower:
        if tower.calibration is None:
            raise ValueError("the camera is not calibrated: run 'dicetower tower calibrate' first")
        images = out / "images"
        images.mkdir(parents=True, exist_ok=True)
        _, png = cv2.imencode(".png", tower.calibration.reference)
        write_atomic(images / "empty.png", png.tobytes())
        written = failed = 0
        with open(out / "manifest.jsonl", "a", encoding="utf-8") as manifest:
            for n in range(1, args.rolls + 1):
                try:
                    record = tower.throw(reason=f"record {n}")
                except ThrowFailedError as exc:
                    failed += 1
                    print(f"throw {n}: failed ({exc.reason}): {printable(str(exc))}", file=sys.stderr)
                    if hasattr(tower.camera, "return_dice"):
                        tower.camera.return_dice()
                    continue
                name = f"images/roll-{n:05d}.jpg"
                write_atomic(out / name, record.photo)
                write_manifest_line(manifest, name, list(record.truth or ()), reference="images/empty.png")
                manifest.flush()
                written += 1
    truth = "with the camera's truth" if tower.camera.truth is not None else "unlabelled (dice: [])"
    print(f"{printable(str(out))}: {written} photos {truth}; {failed} throws failed")
    return 0 if written else 1

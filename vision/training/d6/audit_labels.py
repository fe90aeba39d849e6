"""List the labels the face reader confidently disagrees with, for a person to look at.

Why: a wrong label in a test split counts as a wrong read however good the reader is, and in
a train split it teaches the wrong face. Nobody can look at 1,500 dice closely, but the few
hundred crops where the reader and the label disagree can be looked at, and a person's verdict
on each goes into an errata file (:mod:`dicetower.vision.eval.errata`) that ``dicetower eval
--errata`` and the trainers can use.

What it does: every labelled d6 of the folder (all splits, or ``--split``) is cut out at its
*labelled* box, as training cuts it (:func:`~dicetower.vision.training.d6.data.training_box`: a
no-box photo's one die is found, matteop65's pip-area boxes are enlarged), and read by the
shipped reader (or ``--models``). A die whose most likely face is not its label, with
probability at least ``--min-confidence``, is listed, with a contact sheet of zoomed crops
numbered as the list is. The listing is a to-do list, not a verdict: the person decides, and
the reader is right only where the photo says so.

Bias, stated: only disagreements are looked at, so an audit can only move the reader's score
up. Labels the reader agrees with are not checked, and a wrong label it agrees with stays
wrong. Report scores against the published labels first, and against the errata second.

Run::

    .venv/bin/python -m dicetower.vision.training.d6.audit_labels ../shared/datasets/byler-d6 \\
        --sheet byler_audit.png --errata vision/training/errata
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from ...eval.errata import ErrataError, errata_for
from ...eval.splits import SPLITS, split_of
from ...faces.pips import D6Reader, ReaderModelError
from ...imageio import ImageError, load_image
from ...manifest import read_manifest
from .data import training_box

__all__ = ["Disagreement", "contact_sheet", "disagreements", "main"]

#: Crops on one contact sheet, at most (a sheet is for a person: more would not be looked at).
MAX_SHEET = 120
#: Zoomed crop side on the sheet, and how much of the die's surroundings it shows.
TILE = 200
TILE_CONTEXT = 1.5


@dataclass(frozen=True)
class Disagreement:
    image: str  #: the manifest's image field
    die: int  #: 0-based position in the photo's dice
    split: str
    label: int
    read: int  #: the reader's most likely face
    probability: float  #: of ``read``
    box: tuple[float, float, float, float]  #: the crop's box, in photo pixels

    def to_json(self) -> dict[str, object]:
        return {
            "image": self.image,
            "die": self.die,
            "split": self.split,
            "label": self.label,
            "read": self.read,
            "probability": round(self.probability, 4),
        }


def disagreements(
    folder: Path,
    reader: D6Reader,
    *,
    split: str | None = None,
    min_confidence: float = 0.5,
    skip: set[tuple[str, int]] | None = None,
) -> list[Disagreement]:
    """The labelled d6 of ``folder`` the reader reads as another face (see the module docstring).

    ``skip``: (image, die) pairs already audited, left out.
    """
    name = folder.resolve().name
    skip = skip or set()
    out = []
    for entry in read_manifest(folder):
        part = split_of(name, entry.relpath)
        if split is not None and part != split:
            continue
        dice = [
            (i, d)
            for i, d in enumerate(entry.dice)
            if d.die == "d6" and not d.cocked and (entry.relpath, i) not in skip
        ]
        if not dice:
            continue
        try:
            frame = load_image(entry.image)
        except ImageError as exc:
            print(f"skipped: {exc}", file=sys.stderr)
            continue
        boxes = [training_box(name, frame, d) for _, d in dice]
        probs = reader.probabilities(reader.crops(frame, boxes))
        for (i, d), box, p in zip(dice, boxes, probs, strict=True):
            face = int(np.argmax(p[1:])) + 1
            if face != d.face and float(p[face]) >= min_confidence:
                out.append(Disagreement(entry.relpath, i, part, d.face, face, float(p[face]), box))
    return out


def contact_sheet(folder: Path, items: list[Disagreement], columns: int = 6) -> np.ndarray:
    """Zoomed crops of ``items``, numbered as listed, with label and reading, for a person."""
    tiles = []
    for n, item in enumerate(items[:MAX_SHEET]):
        frame = load_image(folder / item.image)
        x, y, w, h = item.box
        side = max(w, h) * TILE_CONTEXT
        cx, cy = x + w / 2, y + h / 2
        s = TILE / side
        m = np.array([[s, 0, TILE / 2 - cx * s], [0, s, TILE / 2 - cy * s]], np.float64)
        tile = cv2.warpAffine(frame, m, (TILE, TILE), flags=cv2.INTER_CUBIC, borderMode=cv2.BORDER_REPLICATE)
        text = f"#{n} label {item.label} read {item.read} {item.probability:.2f}"
        cv2.putText(tile, text, (3, 14), cv2.FONT_HERSHEY_SIMPLEX, 0.42, (0, 0, 0), 3)
        cv2.putText(tile, text, (3, 14), cv2.FONT_HERSHEY_SIMPLEX, 0.42, (0, 255, 0), 1)
        tiles.append(tile)
    if not tiles:
        return np.zeros((TILE, TILE, 3), np.uint8)
    while len(tiles) % columns:
        tiles.append(np.zeros_like(tiles[0]))
    rows = [np.hstack(tiles[i : i + columns]) for i in range(0, len(tiles), columns)]
    return np.vstack(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path, help="a labelled folder (manifest.jsonl)")
    ap.add_argument("--split", choices=SPLITS, help="only this split (default: all)")
    ap.add_argument("--min-confidence", type=float, default=0.5, help="list reads at least this sure")
    ap.add_argument("--models", type=Path, help="reader files to use (default: the shipped reader)")
    ap.add_argument("--errata", type=Path, help="leave out dice this errata folder already corrects")
    ap.add_argument("--sheet", type=Path, help=f"write a contact sheet PNG of the first {MAX_SHEET}")
    args = ap.parse_args(argv)
    if not (args.folder / "manifest.jsonl").is_file():
        ap.error(f"{args.folder}: no manifest.jsonl")
    if not 0.0 <= args.min_confidence <= 1.0:
        ap.error("--min-confidence is a probability, 0 to 1")
    if args.errata is not None and not args.errata.is_dir():
        ap.error(f"--errata {args.errata}: no such folder")
    try:
        done = {(e.image, e.die) for e in errata_for(args.folder, args.errata)} if args.errata else set()
        reader = D6Reader(args.models)
    except (ErrataError, ReaderModelError) as exc:
        ap.error(str(exc))
    found = disagreements(
        args.folder, reader, split=args.split, min_confidence=args.min_confidence, skip=done
    )
    for n, item in enumerate(found):
        print(json.dumps({"n": n, **item.to_json()}))
    counts = {s: sum(1 for f in found if f.split == s) for s in SPLITS}
    print(f"{len(found)} disagreements {counts}; {len(done)} already in errata", file=sys.stderr)
    if args.sheet is not None:
        args.sheet.parent.mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(args.sheet), contact_sheet(args.folder, found))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

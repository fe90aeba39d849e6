"""Benchmark: how near a read die's reported position is to where a person marked it.

    .venv/bin/python bench/face_centres.py [--dataset matteop65-d6-wood] [--split test]

For every labelled die the shipped reader reads right, the distance from the label's box centre
to the read die's face centre (``DieReading.face_centre``, from its pips: ``vision/faces/topface.py``)
and, side by side, to its box centre (the baseline: where the die's outline is), in die sides
(the read box's longer side), median and 90th percentile over the dice with a face centre.
``matteop65-d6-wood`` boxes the pip area of the face, so there the label's centre is the face's
centre; on datasets that box whole dice it is the outline's. Photos come from
``<repo>/../shared/datasets``.
"""

from __future__ import annotations

import argparse
import math
import statistics
from pathlib import Path

import cv2
from dicetower.vision.eval.evaluate import evaluate_folder, select_entries
from dicetower.vision.reader import open_reader

__all__ = ["main", "placement"]

DATASETS = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"


def _percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[round(p * (len(ordered) - 1))]


def placement(folder: Path, split: str | None) -> dict[str, float]:
    """Counts and distances (die sides) of face and box centres to the label centres of ``folder``."""
    to_face, to_box, right = [], [], 0
    entries = select_entries(folder, split=split, kinds=["d6"])
    for result in evaluate_folder(folder, open_reader(), entries=entries):
        for s in result.scored:
            if s.outcome.value != "correct" or s.read is None:
                continue
            right += 1
            if s.read.face_centre is None:
                continue
            lx, ly = s.box[0] + s.box[2] / 2, s.box[1] + s.box[3] / 2
            side = max(s.read.box[2], s.read.box[3])
            to_face.append(math.dist(s.read.face_centre, (lx, ly)) / side)
            to_box.append(math.dist(s.read.centre, (lx, ly)) / side)
    if not to_face:
        return {"right": right, "with_face_centre": 0}
    return {
        "right": right,
        "with_face_centre": len(to_face),
        "face_median": statistics.median(to_face),
        "face_p90": _percentile(to_face, 0.9),
        "box_median": statistics.median(to_box),
        "box_p90": _percentile(to_box, 0.9),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", default="matteop65-d6-wood", help="a folder of ../shared/datasets")
    ap.add_argument("--split", default="test", choices=["train", "val", "test", "all"])
    args = ap.parse_args(argv)
    folder = DATASETS / args.dataset
    if not (folder / "manifest.jsonl").is_file():
        ap.error(f"{folder}: no manifest (the shared datasets sit beside the checkout)")
    cv2.setNumThreads(1)
    p = placement(folder, None if args.split == "all" else args.split)
    found = p["with_face_centre"]
    print(f"{args.dataset} ({args.split}): {p['right']} dice read right, {found} with a face centre")
    if p["with_face_centre"]:
        print("distance to the label's centre, in die sides   median    p90")
        print(f"  face centre (pips)                          {p['face_median']:6.3f} {p['face_p90']:6.3f}")
        print(f"  box centre (baseline)                       {p['box_median']:6.3f} {p['box_p90']:6.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

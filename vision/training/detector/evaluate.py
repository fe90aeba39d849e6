"""Measure :func:`~dicetower.vision.locate.locate_dice` on the shared datasets' val/test splits.

A detection matches a labelled die when its centre lies within half the labelled die's
size (the longer box side) of the label's centre; each detection matches at most one
label (greedy, nearest first). No-box photos are one die filling the photo. matteop65's
boxes cover the pip area only, so its label size is scaled by ``MATTEO_BODY_SCALE`` (the
pip area of a 1 is a single pip). Times are per photo on one core
(``cv2.setNumThreads(1)``), image decoding excluded.

Run::

    .venv/bin/python -m dicetower.vision.training.detector.evaluate --split val
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import cv2
import numpy as np
from dicetower.vision.detector import MODEL_PATH, DieDetector
from dicetower.vision.locate import locate_dice
from dicetower.vision.training.detector.data import MATTEO_BODY_SCALE, split_photos

__all__ = ["DEFAULT_DATASETS", "evaluate", "main", "match"]

DEFAULT_DATASETS = ("byler-d6", "epanemu-dice3", "matteop65-d6-wood", "tomitomi3-gray-d6", "rsandrini-d20")


def match(labels: list[tuple[float, float, float]], dets: list[tuple[float, float]]) -> int:
    """How many labels (cx, cy, radius) are matched one-to-one by detection centres."""
    pairs = []
    for i, (lx, ly, r) in enumerate(labels):
        for j, (dx, dy) in enumerate(dets):
            d = math.hypot(dx - lx, dy - ly)
            if d <= r:
                pairs.append((d, i, j))
    pairs.sort()
    used_l, used_d = set(), set()
    for _, i, j in pairs:
        if i not in used_l and j not in used_d:
            used_l.add(i)
            used_d.add(j)
    return len(used_l)


def evaluate(
    name: str, split: str, detector: DieDetector, limit: int = 100_000, failures: list | None = None
) -> dict[str, float]:
    n_lab = n_det = n_match = photos = 0
    times = []
    for rel, entry, image in split_photos(name, split):
        if photos >= limit:
            break
        h, w = image.shape[:2]
        labels = []
        for die in entry.dice:
            x, y, bw, bh = die.box if die.box is not None else (0.0, 0.0, float(w), float(h))
            side = max(bw, bh) * (MATTEO_BODY_SCALE if name.startswith("matteop65") else 1.0)
            labels.append((x + bw / 2, y + bh / 2, side / 2))
        t = time.perf_counter()
        cands = locate_dice(image, detector=detector)
        times.append(time.perf_counter() - t)
        dets = [c.centre for c in cands]
        m = match(labels, dets)
        if failures is not None and (m < len(labels) or m < len(dets)):
            failures.append({"image": rel, "labels": len(labels), "dets": len(dets), "matched": m})
        n_lab += len(labels)
        n_det += len(dets)
        n_match += m
        photos += 1
    return {
        "photos": photos,
        "dice": n_lab,
        "detections": n_det,
        "recall": n_match / max(n_lab, 1),
        "precision": n_match / max(n_det, 1),
        "median_ms": 1000 * float(np.median(times)) if times else 0.0,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Recall/precision/ms of locate_dice per dataset split.")
    ap.add_argument("--split", default="val", choices=["train", "val", "test"])
    ap.add_argument("--datasets", nargs="*", default=list(DEFAULT_DATASETS))
    ap.add_argument("--model", type=Path, default=MODEL_PATH)
    ap.add_argument("--threshold", type=float, default=None)
    ap.add_argument("--limit", type=int, default=100_000, help="photos per dataset at most")
    ap.add_argument("--failures", type=Path, default=None, help="write missed/extra photos as JSON lines")
    args = ap.parse_args(argv)
    cv2.setNumThreads(1)
    det = (
        DieDetector(args.model)
        if args.threshold is None
        else DieDetector(args.model, threshold=args.threshold)
    )
    fails: list = []
    print(f"model {args.model} threshold {det.threshold} split {args.split}")
    print(f"{'dataset':20s} {'photos':>6s} {'dice':>5s} {'dets':>5s} {'recall':>7s} {'prec':>7s} {'ms':>6s}")
    for name in args.datasets:
        r = evaluate(name, args.split, det, args.limit, fails)
        print(
            f"{name:20s} {r['photos']:6d} {r['dice']:5d} {r['detections']:5d} "
            f"{100 * r['recall']:6.2f}% {100 * r['precision']:6.2f}% {r['median_ms']:6.1f}"
        )
    if args.failures is not None:
        args.failures.write_text("".join(json.dumps(f) + "\n" for f in fails), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

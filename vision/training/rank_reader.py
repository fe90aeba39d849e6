"""Compare face readers on the labelled boxes: best guess, accepted answers, and right answers at equal risk.

Run::

    .venv/bin/python -m dicetower.vision.training.rank_reader [MODEL_DIR ...] [--split val]

For each reader (default: the shipped one) and each hard d6 dataset it reads the labelled boxes
(cut as ``eval_reader --mode gt`` cuts them) and prints: how often the most likely face is right
(``best``), how many answers the reader's own thresholds accept right and wrong, and how many
right answers come before the 1st, 2nd, 3rd and 5th wrong one when all answers are sorted by
confidence (``right at <=0/1/2/4 wrong``).

Why the last figure: two readers calibrated on the same val split can differ only in where their
thresholds fell. Counting right answers at an equal number of wrong ones compares how well each
ranks its answers, whatever the thresholds (BENCHMARKS.md, session 7).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..evaluate import select_entries
from ..imageio import load_image_info
from ..pips import D6Reader
from .eval_reader import _gt_candidates

__all__ = ["main", "right_before_wrong"]

DATASETS = ("byler-d6", "epanemu-dice3", "matteop65-d6-wood")
WRONG_ALLOWED = (0, 1, 2, 4)


def right_before_wrong(
    conf: np.ndarray, right: np.ndarray, allowed: Sequence[int] = WRONG_ALLOWED
) -> list[int]:
    """Right answers among the most confident ones, taken until more than ``k`` are wrong, per ``k``."""
    order = np.argsort(-np.asarray(conf, np.float64), kind="stable")
    ok = np.asarray(right, bool)[order]
    rights, wrongs = np.cumsum(ok), np.cumsum(~ok)
    out = []
    for k in allowed:
        within = np.flatnonzero(wrongs <= k)
        out.append(int(rights[within[-1]]) if len(within) else 0)
    return out


def rank_dataset(reader: D6Reader, folder: Path, split: str) -> dict[str, object]:
    """The figures of one dataset's labelled boxes for one reader."""
    conf: list[float] = []
    right: list[bool] = []
    accepted_right = accepted_wrong = 0
    for entry in select_entries(folder, split=split, kinds=["d6"]):
        info = load_image_info(entry.image)
        cands = _gt_candidates(folder.name, entry, info.frame, info.scale)
        crops = reader.crops(info.frame, [c.box for c in cands])
        probs = reader.probabilities(crops)
        for die, p, crop in zip(entry.dice, probs, crops, strict=True):
            face = int(np.argmax(p[1:]) + 1)
            conf.append(float(p[face]))
            right.append(face == die.face)
            read = reader.decide(p, crop)
            accepted_right += read.face == die.face
            accepted_wrong += read.face is not None and read.face != die.face
    return {
        "dice": len(right),
        "best": int(np.sum(right)),
        "accepted_right": accepted_right,
        "accepted_wrong": accepted_wrong,
        "right_at_wrong": right_before_wrong(np.array(conf), np.array(right, bool)),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dirs", nargs="*", type=Path, help="reader model folders (default: the shipped one)")
    ap.add_argument("--datasets", type=Path, default=Path("../shared/datasets"))
    ap.add_argument("--split", choices=("train", "val", "test"), default="val")
    args = ap.parse_args(argv)
    missing = [str(d) for d in args.dirs if not (d / "d6_reader.onnx").is_file()]
    if missing:
        ap.error(f"no d6_reader.onnx in: {', '.join(missing)}")
    if not any((args.datasets / name).is_dir() for name in DATASETS):
        ap.error(f"{args.datasets}: none of {', '.join(DATASETS)} is there")
    for model_dir in args.dirs or [None]:
        reader = D6Reader(model_dir)
        for name in DATASETS:
            folder = args.datasets / name
            if not folder.is_dir():
                continue
            r = rank_dataset(reader, folder, args.split)
            wrong = "/".join(str(v) for v in r["right_at_wrong"])  # type: ignore[union-attr]
            print(
                f"{model_dir or 'shipped'} {name} {args.split}: {r['dice']} dice, best {r['best']}, "
                f"accepted {r['accepted_right']} right {r['accepted_wrong']} wrong, "
                f"right at <=0/1/2/4 wrong {wrong}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

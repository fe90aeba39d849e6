"""Out-of-fold figures for the upright reader's real fine-tune, over the rsandrini-d20 train videos.

Why: the val split holds two videos (one oblique), so a choice made on it is coarse. Here the
train videos are dealt into ``--folds`` folds (sorted, every ``k``-th video); for each fold the
drawings-only network (``--base``) is fine-tuned as the shipped one is (:mod:`.real`'s
upright crops, :func:`.train.train`) on the other folds' videos only, and the fold's own
videos are read by :class:`~dicetower.vision.faces.glyphs.GlyphReader` with that network, at each of
``--thresholds``. Every train photo is then read by a network that never saw its video: one
figure over sixteen videos. Printed as one JSON line: right and wrong at each threshold, and
top-1 per video.

    python -m dicetower.vision.training.glyphs.folds --base runs/glyphs3/model --data runs/glyphs3 \\
        --out runs/glyph_folds
"""

from __future__ import annotations

import argparse
import json
import shutil
from collections import Counter
from pathlib import Path

import cv2
import numpy as np

from ...eval.splits import d20_split, d20_splits
from ...faces.glyphs import GlyphReader
from ..single_die_box import boxes_for
from .real import real_upright, video_of
from .train import export, train

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--datasets", type=Path, default=Path("../shared/datasets"))
    p.add_argument(
        "--base", type=Path, default=Path("runs/glyphs3/model"), help="drawings-only network, .pt and card"
    )
    p.add_argument("--data", type=Path, default=Path("runs/glyphs3"), help="the drawings it was trained on")
    p.add_argument("--out", type=Path, default=Path("runs/glyph_folds"))
    p.add_argument("--folds", type=int, default=3)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--extra-weight", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--every", type=int, default=2, help="read every n-th held-out photo")
    p.add_argument("--thresholds", default="0.85,0.88,0.9,0.93,0.95")
    a = p.parse_args(argv)
    if not 2 <= a.folds <= 16:
        p.error("--folds must be 2-16")
    thresholds = [float(t) for t in a.thresholds.split(",") if t]
    if not thresholds or not all(0.0 < t <= 1.0 for t in thresholds):
        p.error("--thresholds are numbers in (0, 1], comma-separated")
    cv2.setNumThreads(1)
    folder = a.datasets / "rsandrini-d20"
    rows = [json.loads(line) for line in (folder / "manifest.jsonl").read_text().splitlines() if line.strip()]
    splits = d20_splits((r["image"], r["dice"][0]["face"]) for r in rows)
    train_rows = [r for r in rows if d20_split(splits, r["image"], r["dice"][0]["face"]) == "train"]
    videos = sorted({video_of(r["image"], r["dice"][0]["face"]) for r in train_rows})
    fold_of = {v: i % a.folds for i, v in enumerate(videos)}
    finder = GlyphReader(a.base)
    x, y, crop_videos = real_upright(a.datasets, finder, "train", 3, 0.2, seed=30_000_000)
    boxes = boxes_for(folder)
    counts = {t: Counter() for t in thresholds}
    per_video: dict[str, Counter[str]] = {}
    for k in range(a.folds):
        fold_dir = a.out / f"fold{k}"
        fold_dir.mkdir(parents=True, exist_ok=True)
        keep = np.array([fold_of[v] != k for v in crop_videos], bool)
        np.savez(fold_dir / "real.npz", x=x[keep], y=y[keep])
        model = train(
            a.data,
            a.epochs,
            128,
            a.lr,
            0,
            a.threads,
            extra=[fold_dir / "real.npz"],
            extra_weight=[a.extra_weight],
            resume=a.base / "glyph_reader.pt",
        )
        export(model, fold_dir / "glyph_reader.onnx")
        shutil.copyfile(a.base / "glyph_reader.json", fold_dir / "glyph_reader.json")
        reader = GlyphReader(fold_dir)
        held = [r for r in train_rows if fold_of[video_of(r["image"], r["dice"][0]["face"])] == k]
        for r in held[:: a.every]:
            box = boxes.get(r["image"])
            frame = cv2.imread(str(folder / r["image"]))
            if box is None or frame is None:
                continue
            face = int(r["dice"][0]["face"])
            video = video_of(r["image"], face)
            for t in thresholds:  # the reader tries its off-centre places only below its threshold
                reader.threshold = t
                read = reader.read(frame, [box], ["d20"])[0]
                outcome = "unsure" if read.face is None else "right" if read.face == face else "wrong"
                counts[t][outcome] += 1
            per_video.setdefault(video, Counter())["top1" if read.best == face else "other"] += 1
    out = {
        "figure": "glyphs-d20-out-of-fold",
        "videos": len(videos),
        "folds": a.folds,
        "photos": sum(counts[thresholds[0]].values()),
        "by_threshold": {str(t): dict(c) for t, c in counts.items()},
        "top1_per_video": {v: f"{c['top1']}/{sum(c.values())}" for v, c in sorted(per_video.items())},
    }
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

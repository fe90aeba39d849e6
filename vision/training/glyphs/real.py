"""Upright crops of real d20 numerals from the ``rsandrini-d20`` train videos, to fine-tune the glyph reader.

Why: the drawings teach numeral shapes; real dice add their fonts, inks, speckle and light. A
real photo's upright turn is not labelled, so it is found: the shipped reader's turn search
(every centre and turn it tries) is asked for the *labelled* face, and the crop where that face
is likeliest is taken as upright, when its probability reaches ``--min-p`` (else the photo is
left out: the search did not find the numeral). Each kept photo gives ``--turns`` crops at that
turn +-10 degrees (class: the face) and, unless the numeral reads alike half turned, one at the
half turn +-30 degrees (class ``none``). Only the train videos of ``splits.d20_splits`` are
used; val and test videos stay unseen.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import cv2
import numpy as np

from ...eval.splits import background_of, d20_split, d20_splits
from ...faces.glyphs import OFF_CENTRE_WEIGHT, TEXTS, GlyphReader, central_crops
from ..single_die_box import boxes_for
from .data import HALF_TURN_ALIKE

__all__ = ["main", "real_upright", "video_of"]


def real_upright(
    datasets: Path, reader: GlyphReader, split: str, turns: int, min_p: float, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(x uint8 (n, S, S), y int16 (n,), video str (n,))`` upright real crops of ``split``.

    ``video`` names each crop's video (``background#face``), for splits by video
    (:mod:`.folds`). Module docstring: how the upright turn is found.
    """
    folder = datasets / "rsandrini-d20"
    rows = [json.loads(line) for line in (folder / "manifest.jsonl").read_text().splitlines() if line.strip()]
    boxes = boxes_for(folder)
    splits = d20_splits((r["image"], r["dice"][0]["face"]) for r in rows)
    rng = np.random.default_rng(seed)
    xs: list[np.ndarray] = []
    ys: list[int] = []
    vs: list[str] = []
    angles = np.arange(0.0, 360.0, reader.step)
    for r in rows:
        face = int(r["dice"][0]["face"])
        box = boxes.get(r["image"])
        if box is None or d20_split(splits, r["image"], face) != split:
            continue
        frame = cv2.imread(str(folder / r["image"]))
        if frame is None:
            continue
        text = str(face)
        col = 1 + TEXTS.index(text)
        side = max(box[2], box[3])
        best = (-1.0, box, 0.0)
        for k, (dx, dy) in enumerate(reader.centres):
            b = (box[0] + dx * side, box[1] + dy * side, box[2], box[3])
            p = reader.probabilities(central_crops(frame, b, angles, reader.share))[:, col]
            p = p * (OFF_CENTRE_WEIGHT if k else 1.0)
            i = int(np.argmax(p))
            if p[i] > best[0]:
                best = (float(p[i]), b, float(angles[i]))
        if best[0] < min_p:
            continue
        _p, b, angle = best
        jitter = rng.uniform(-10, 10, turns)
        video = video_of(r["image"], face)
        xs.append(central_crops(frame, b, angle + jitter, reader.share))
        ys.extend([col] * turns)
        vs.extend([video] * turns)
        if text not in HALF_TURN_ALIKE:
            xs.append(central_crops(frame, b, np.array([angle + 180.0 + rng.uniform(-30, 30)]), reader.share))
            ys.append(0)
            vs.append(video)
    x = np.concatenate(xs) if xs else np.zeros((0, 48, 48), np.uint8)
    return x, np.array(ys, np.int16), np.array(vs, dtype=str)


def video_of(relpath: str, face: int) -> str:
    """The video a ``rsandrini-d20`` photo belongs to: its background and face."""
    return f"{background_of(relpath)}#{face}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--datasets", type=Path, default=Path("../shared/datasets"))
    p.add_argument("--out", type=Path, default=Path("runs/glyphs_real"))
    p.add_argument("--turns", type=int, default=3)
    p.add_argument("--min-p", type=float, default=0.2)
    p.add_argument(
        "--models", type=Path, default=None, help="the glyph reader that finds upright (default: shipped)"
    )
    a = p.parse_args(argv)
    cv2.setNumThreads(1)
    reader = GlyphReader(a.models)
    a.out.mkdir(parents=True, exist_ok=True)
    x, y, _videos = real_upright(a.datasets, reader, "train", a.turns, a.min_p, seed=30_000_000)
    np.savez(a.out / "train.npz", x=x, y=y)
    print(f"train: {len(y)} real crops, {int((y == 0).sum())} none", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

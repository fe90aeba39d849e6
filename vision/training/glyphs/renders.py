"""Upright crops of rendered numeral dice (d6n, d10, d10t, d20), to fine-tune the glyph reader.

Why: the flat drawings teach numeral shapes, the real rsandrini-d20 crops real d20 light; the
renderer adds what neither has: d10 and tens-die faces, numeral d6, translucent and marbled
bodies, the neighbouring faces' numerals at the edge of the crop, and the top face's own
foreshortening. The renderer knows where the top numeral lies and which turn stands it upright
(:class:`~dicetower.vision.synth.numerals.TopFace`), so no search is needed: each die gives
``--turns`` crops at that turn +-10 degrees (class: its numeral) centred near the numeral (off by
up to ``--shift`` of the box's side, as the reader's centres are), and, unless the numeral reads
alike half turned, one at the half turn +-30 degrees (class ``none``). Seeds start at
:data:`SEED`, far from the renders :mod:`..numerals.evaluate` scores (``TEST_SEED``).
"""

from __future__ import annotations

import argparse
from multiprocessing import Pool
from pathlib import Path

import cv2
import numpy as np

from ...faces.glyphs import CENTRAL, GLYPH_INPUT, TEXTS, central_crops
from ...kinds import KINDS
from ...synth.numerals import render_crop_top
from .data import HALF_TURN_ALIKE

__all__ = ["SEED", "face_text", "main", "render_upright"]

#: First renderer seed used here (numeral training uses 1 000 000 +, its val 2 000 000 +, the
#: held-out renders 3 000 000 +).
SEED = 5_000_000
#: Share of each kind among the dice drawn (more faces, more dice).
KIND_WEIGHTS = {"d6n": 1.0, "d10": 2.0, "d10t": 2.0, "d20": 4.0}


def face_text(kind: str, face: int) -> str:
    """The numeral printed for ``face`` on ``kind`` (the tens die's 0 reads ``00``)."""
    return "00" if kind == "d10t" and face == 0 else str(face)


def _one(args: tuple[int, int, float, float]) -> tuple[np.ndarray, np.ndarray]:
    seed, turns, shift, share = args
    rng = np.random.default_rng(seed + 7)
    kinds = list(KIND_WEIGHTS)
    p = np.array([KIND_WEIGHTS[k] for k in kinds])
    kind = str(rng.choice(kinds, p=p / p.sum()))
    face = int(rng.choice(KINDS[kind].faces))
    frame, box, top = render_crop_top(seed, kind, face)
    side = max(box[2], box[3])
    cx, cy = np.array(top.centre) + rng.uniform(-shift, shift, 2) * side
    at = (cx - box[2] / 2, cy - box[3] / 2, box[2], box[3])
    text = face_text(kind, face)
    angles = list(top.upright + rng.uniform(-10, 10, turns))
    ys = [1 + TEXTS.index(text)] * turns
    if text not in HALF_TURN_ALIKE:
        angles.append(top.upright + 180.0 + float(rng.uniform(-30, 30)))
        ys.append(0)
    return central_crops(frame, at, np.array(angles), share), np.array(ys, np.int16)


def _init() -> None:
    cv2.setNumThreads(1)


def render_upright(
    seed0: int, n: int, *, turns: int = 2, shift: float = 0.05, share: float = CENTRAL, workers: int = 2
) -> tuple[np.ndarray, np.ndarray]:
    """``(x uint8 (m, S, S), y int16 (m,))`` from ``n`` rendered dice of seeds ``seed0 ...``."""
    jobs = [(seed0 + i, turns, shift, share) for i in range(n)]
    if workers > 1:
        with Pool(workers, initializer=_init) as pool:
            out = pool.map(_one, jobs, chunksize=64)
    else:
        _init()
        out = [_one(j) for j in jobs]
    if not out:
        return np.zeros((0, GLYPH_INPUT, GLYPH_INPUT), np.uint8), np.zeros(0, np.int16)
    return np.concatenate([o[0] for o in out]), np.concatenate([o[1] for o in out])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--out", type=Path, default=Path("runs/glyphs_renders"))
    p.add_argument("-n", type=int, default=20000, help="rendered dice")
    p.add_argument("--turns", type=int, default=2)
    p.add_argument("--shift", type=float, default=0.05, help="largest centre error, share of the box side")
    p.add_argument("--share", type=float, default=CENTRAL, help="the middle cut, share of the box side")
    p.add_argument("--workers", type=int, default=2)
    a = p.parse_args(argv)
    if not 0.0 <= a.shift <= 0.3 or not 0.2 <= a.share <= 1.5 or a.n < 0 or a.turns < 1:
        p.error("need -n >= 0, --turns >= 1, --shift 0-0.3, --share 0.2-1.5")
    cv2.setNumThreads(1)
    a.out.mkdir(parents=True, exist_ok=True)
    x, y = render_upright(SEED, a.n, turns=a.turns, shift=a.shift, share=a.share, workers=a.workers)
    np.savez(a.out / "train.npz", x=x, y=y)
    print(f"train: {len(y)} rendered crops from {a.n} dice, {int((y == 0).sum())} none", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

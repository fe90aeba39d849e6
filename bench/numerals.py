"""Benchmark: ms per die crop on one core, the numeral reader beside the pip-d6 reader.

    OMP_NUM_THREADS=1 .venv/bin/python bench/numerals.py [--dice 1 10 25] [--repeat 30] [--json]

Crops are rendered mixed dice (``dicetower.vision.synth.numerals``: timings only, never an
accuracy claim). Each reader is handed the same frame and boxes, cuts its own crops and reads
them (the cut is part of the per-die cost); OpenCV runs on one thread, both readers are warmed
up once, and calls alternate reader by reader. Printed: the median ms per call and per die for
1, 10 and 25 dice, and each model's file size. The pip reader (``D6Reader``, the shipped model)
is the named baseline: the numeral reader runs beside it on every die when kinds are on, and
the upright-numeral reader (``GlyphReader``: 16 or 24 turns of the die's middle) on every die the
numeral reader names a numeral kind; beside it, as its baseline, the same reader reading every
turn (the card's ``coarse`` off).

A second table times whole frames (``FrameReader.read`` with kinds on, the empty tray given)
with the die-body search (``FrameReader.with_bodies``) and, as its baseline, without it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import cv2
import numpy as np
from dicetower.vision.faces.glyphs import GlyphReader
from dicetower.vision.faces.numerals import NumeralReader
from dicetower.vision.faces.pips import D6Reader
from dicetower.vision.kinds import DRAWN_KINDS, KINDS
from dicetower.vision.reader import FrameReader
from dicetower.vision.synth.numerals import TrayDie, render_tray

MODELS = Path(__file__).resolve().parents[1] / "vision" / "models"


#: The kind the glyph reader is told per drawn kind (it reads a pip d6's box as a numeral d6).
_GLYPH_KIND = {"d6": "d6n", "d6n": "d6n", "d10": "d10", "d10t": "d10t", "d20": "d20"}


def _tray(n: int) -> tuple[np.ndarray, list[tuple[float, float, float, float]]]:
    rng = np.random.default_rng(n)
    dice = [
        TrayDie(k, int(rng.choice(KINDS[k].faces)))
        for k in (DRAWN_KINDS[i % len(DRAWN_KINDS)] for i in range(n))
    ]
    frame, _ref, labels = render_tray(n, dice, (960, 960) if n > 12 else (640, 640))
    return frame, [d.box for d in labels if d.box is not None]


def _glyph_kinds(n: int) -> list[str]:
    return [_GLYPH_KIND[DRAWN_KINDS[i % len(DRAWN_KINDS)]] for i in range(n)]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--dice", type=int, nargs="+", default=[1, 10, 25])
    p.add_argument("--repeat", type=int, default=30)
    p.add_argument("--json", action="store_true")
    a = p.parse_args(argv)
    cv2.setNumThreads(1)
    numerals, pips, glyphs, every_turn = NumeralReader(), D6Reader(), GlyphReader(), GlyphReader()
    every_turn.coarse = False
    readers = {
        "numeral_reader": lambda f, b: numerals.read_crops(numerals.crops(f, b)),
        "glyph_reader": lambda f, b: glyphs.read(f, b, _glyph_kinds(len(b))),
        "glyph, every turn": lambda f, b: every_turn.read(f, b, _glyph_kinds(len(b))),
        "d6_reader (baseline)": lambda f, b: pips.read_crops(pips.crops(f, b)),
    }
    rows = []
    for n in a.dice:
        frame, boxes = _tray(n)
        times: dict[str, list[float]] = {k: [] for k in readers}
        for fn in readers.values():
            fn(frame, boxes)
        for _ in range(a.repeat):
            for name, fn in readers.items():
                t = time.perf_counter()
                fn(frame, boxes)
                times[name].append((time.perf_counter() - t) * 1000.0)
        for name, ts in times.items():
            med = statistics.median(ts)
            rows.append(
                {
                    "reader": name,
                    "dice": len(boxes),
                    "ms_call": round(med, 3),
                    "ms_die": round(med / len(boxes), 3),
                }
            )
    frames = []
    for n in a.dice:
        rng = np.random.default_rng(100 + n)
        dice = [
            TrayDie(k, int(rng.choice(KINDS[k].faces)))
            for k in (DRAWN_KINDS[i % len(DRAWN_KINDS)] for i in range(n))
        ]
        frame, ref, _labels = render_tray(100 + n, dice, (960, 960) if n > 12 else (640, 640))
        with_bodies = FrameReader(numerals=numerals)
        without = FrameReader(numerals=numerals)
        without.with_bodies = lambda _f, c, *_a, **_k: list(c)  # type: ignore[method-assign]
        ts: dict[str, list[float]] = {"with bodies": [], "without bodies (baseline)": []}
        for r in (with_bodies, without):
            r.read(frame, ref)
        for _ in range(max(3, a.repeat // 3)):
            for name, r in (("with bodies", with_bodies), ("without bodies (baseline)", without)):
                t = time.perf_counter()
                r.read(frame, ref)
                ts[name].append((time.perf_counter() - t) * 1000.0)
        for name, v in ts.items():
            frames.append({"frame": name, "dice": n, "ms_frame": round(statistics.median(v), 2)})
    sizes = {
        f.name: round(f.stat().st_size / 1e6, 3)
        for f in (MODELS / "numeral_reader.onnx", MODELS / "glyph_reader.onnx", MODELS / "d6_reader.onnx")
    }
    if a.json:
        print(json.dumps({"rows": rows, "frames": frames, "model_mb": sizes}))
        return 0
    print(f"{'reader':<22} {'dice':>5} {'ms/call':>9} {'ms/die':>8}")
    for r in rows:
        print(f"{r['reader']:<22} {r['dice']:>5} {r['ms_call']:>9.3f} {r['ms_die']:>8.3f}")
    print(f"\n{'whole frame, kinds on':<26} {'dice':>5} {'ms/frame':>9}")
    for r in frames:
        print(f"{r['frame']:<26} {r['dice']:>5} {r['ms_frame']:>9.2f}")
    print("model sizes (MB):", ", ".join(f"{k} {v}" for k, v in sizes.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Benchmark: the smallest die, in pixels, the reader reads as well as a full-size one, per kind.

    .venv/bin/python bench/imaging_budget.py [--trays 25] [--real-every 3] [--json]

Why: a tower's camera height and lens decide how many pixels a die spans, and a d20's numerals
need more of them than a d6's pips. This measures, per kind, how the reader does as dice shrink:

1. **Renders** (every kind: pip d6, d10, d10t, d20): ``--trays`` trays of four dice of the kind,
   drawn as the simulated camera draws them (the tower's tray, the ring light, 640 x 480; dice
   in the sim's colours), the camera farther away each step, so the dice are smaller in the same
   frame. Read with the empty-tray reference, by the reader a tray of that kind gets (pip d6:
   the d6 reader; the others: kinds on), its refusal below the budget off: what this measures
   is what the reader makes of small dice, which the budget then refuses.
2. **Real photos**, downscaled: ``byler-d6``'s test split (top-down, several d6 a photo) and
   every ``--real-every``-th photo of ``rsandrini-d20``'s held-back videos (one d20 a photo,
   its box found by ``single_die_box``, cached in ``runs/single_die_boxes/``: the first run
   finds them all, some minutes), each scaled so its dice are the step's size. A photo
   is never scaled up: its full size is the largest step it takes part in.

A die's size is the longer side of its labelled box, in frame pixels (the row's median). Each
row prints right / wrong / unreadable (rejected or missed) with the 95 % interval of the right
rate and the upper bound of the wrong rate (:mod:`dicetower.vision.eval.intervals`, photo by
photo). The minimum per kind (:func:`minimum`): the smallest size from which every larger size
keeps at least 95 % of the full-size right rate (the full size: the largest row with at least
half the most dice any row has), with a wrong rate no higher than the full-size
rate's 95 % upper bound; where the full size reads under half its dice right, the wrong reads
alone judge (a 5 % loss of a quarter is a die or two). Where renders and real photos both
exist, the larger of the two.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np
from dicetower.firmware.cameras.sim import TOWER
from dicetower.vision.eval.evaluate import score_photo, select_entries
from dicetower.vision.eval.intervals import rate_interval, rate_upper
from dicetower.vision.eval.splits import d20_split, d20_splits
from dicetower.vision.kinds import KINDS
from dicetower.vision.manifest import LabelledDie, ManifestEntry
from dicetower.vision.reader import FrameReader, open_reader
from dicetower.vision.synth import SceneStyle, render_scene
from dicetower.vision.synth.numerals import NUMERAL_COLOURS, NumeralStyle, TrayDie, render_tray

DATASETS = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"
SIZE = (640, 480)
#: Die sizes (px, the box's longer side) each kind is measured at, largest first (the full size).
STEPS: dict[str, tuple[int, ...]] = {
    "d6": (88, 64, 48, 40, 32, 26, 20, 16, 12),
    "d10": (80, 64, 56, 48, 40, 32, 24),
    "d10t": (80, 64, 56, 48, 40, 32, 24),
    "d20": (96, 80, 64, 56, 48, 40, 32, 24),
}
#: A size keeps the reading when its right rate is at least this share of the full size's.
KEEP = 0.95
#: Below this full-size right rate only the wrong reads judge a size (:func:`minimum`).
LOW_RATE = 0.5
#: Renders: box side per drawn side (a pip d6's box is its face turned at any angle).
_BOX_PER_SIDE = {"d6": 1.27, "d10": 0.97, "d10t": 0.97, "d20": 0.97}


@dataclass
class Row:
    """One kind at one size: what the reader made of its dice."""

    source: str
    kind: str
    step: int
    sizes: list[float] = field(default_factory=list)
    right: list[int] = field(default_factory=list)  #: per photo
    wrong: list[int] = field(default_factory=list)
    dice: list[int] = field(default_factory=list)

    def add(self, entry: ManifestEntry, reading: object, scale: float) -> None:
        result = score_photo(entry, reading, scale)  # type: ignore[arg-type]
        scored = [s for s in result.scored if s.label.die == self.kind]
        self.sizes += [max(s.box[2], s.box[3]) for s in scored]
        self.right.append(sum(s.outcome.value == "correct" for s in scored))
        self.wrong.append(sum(s.outcome.value == "wrong" for s in scored))
        self.dice.append(len(scored))

    def figures(self) -> dict[str, float | int]:
        n = sum(self.dice)
        right, wrong = sum(self.right), sum(self.wrong)
        lo, hi = rate_interval(self.right, self.dice) if n else (0.0, 0.0)
        return {
            "px": round(statistics.median(self.sizes), 1) if self.sizes else 0.0,
            "dice": n,
            "right": right,
            "wrong": wrong,
            "unreadable": n - right - wrong,
            "right_rate": right / n if n else 0.0,
            "right_lo": lo,
            "right_hi": hi,
            "wrong_rate": wrong / n if n else 0.0,
            "wrong_upper": rate_upper(self.wrong, self.dice) if n else 1.0,
        }


def minimum(rows: Sequence[dict[str, float | int]]) -> float | None:
    """The smallest ``px`` from which every larger row keeps the full size's reading (module docstring).

    ``rows`` are :meth:`Row.figures`, any order; the largest ``px`` is the full size. None when
    no row has dice.
    """
    rows = sorted((r for r in rows if r["dice"]), key=lambda r: -float(r["px"]))
    if not rows:
        return None
    # the full size: the largest row holding at least half the photos' dice (a real photo set has
    # few dice as large as its largest step)
    most = max(int(r["dice"]) for r in rows)
    rows = rows[next(i for i, r in enumerate(rows) if int(r["dice"]) >= most / 2) :]
    full = rows[0]
    # a full size that reads under half its dice right (real d20 photos at 45 degrees: a quarter)
    # cannot show a 5 % loss: that is a die or two, under the noise; its wrong reads still can
    judge_right = float(full["right_rate"]) >= LOW_RATE
    best = float(full["px"])
    for r in rows:
        keeps = not judge_right or float(r["right_rate"]) >= KEEP * float(full["right_rate"])
        if not keeps or float(r["wrong_rate"]) > float(full["wrong_upper"]):
            break
        best = float(r["px"])
    return best


def _render_rows(trays: int, readers: dict[str, FrameReader]) -> list[Row]:
    rows = []
    names = [c for c in NUMERAL_COLOURS if c not in ("black", "grey")]
    for kind, steps in STEPS.items():
        for step in steps:
            row = Row("renders", kind, step)
            side = step / _BOX_PER_SIDE[kind] * SIZE[0] / min(SIZE)  # the renderers' 640 px unit
            for t in range(trays):
                seed = 7_000_000 + 1000 * step + t
                rng = np.random.default_rng(seed)
                if kind == "d6":
                    style = SceneStyle(
                        die_size=(side, side), body="white", wild_die=t % 2 == 0, pip_shape="round",
                        blur=0.0, noise=1.0, perspective=0.0, parallax=0.0, shadows=True, tower=TOWER,
                    )  # fmt: skip
                    frame, ref, labels = render_scene(seed, 4, SIZE, style=style)
                else:
                    style_n = NumeralStyle(blur=0.0, noise=1.0, perspective=0.0, tilt=10.0, tower=TOWER)
                    dice = []
                    for _ in range(4):  # a face, then a colour, die by die
                        face = int(rng.choice(KINDS[kind].faces))
                        dice.append(TrayDie(kind, face, str(rng.choice(names)), "solid", side=side))
                    frame, ref, labels = render_tray(seed, dice, SIZE, style=style_n)
                entry = ManifestEntry(Path(f"{kind}_{step}_{t}.png"), tuple(labels), t + 1)
                row.add(entry, readers[kind].read(frame, ref), 1.0)
            rows.append(row)
            _progress(row)
    return rows


def _scaled(frame: np.ndarray, f: float) -> np.ndarray:
    w, h = frame.shape[1], frame.shape[0]
    return cv2.resize(frame, (max(8, round(w * f)), max(8, round(h * f))), interpolation=cv2.INTER_AREA)


def _real_rows(every: int, readers: dict[str, FrameReader]) -> list[Row]:
    rows: list[Row] = []
    byler = DATASETS / "byler-d6"
    if byler.is_dir():
        entries = select_entries(byler, split="test", kinds=["d6"])
        photos = []
        for e in entries:
            frame = cv2.imread(str(byler / e.relpath))
            sides = [max(d.box[2], d.box[3]) for d in e.dice if d.box is not None]
            if frame is not None and sides:
                photos.append((e, frame, statistics.median(sides)))
        rows += _scaled_rows("byler-d6", "d6", photos, readers["d6"])
    d20 = DATASETS / "rsandrini-d20"
    if d20.is_dir():
        from dicetower.vision.training.single_die_box import boxes_for

        entries = select_entries(d20, kinds=["d20"])
        splits = d20_splits((e.relpath, e.dice[0].face) for e in entries)
        held = [e for e in entries if d20_split(splits, e.relpath, e.dice[0].face) == "test"][::every]
        boxes = boxes_for(d20)
        photos = []
        for e in held:
            box = boxes.get(e.relpath)
            frame = cv2.imread(str(d20 / e.relpath))
            if box is None or frame is None:
                continue
            die = LabelledDie("d20", e.dice[0].face, tuple(float(v) for v in box))
            photos.append((ManifestEntry(e.image, (die,), e.line, e.relpath), frame, max(box[2], box[3])))
        rows += _scaled_rows("rsandrini-d20", "d20", photos, readers["d20"])
    return rows


def _scaled_rows(source: str, kind: str, photos: list, reader: FrameReader) -> list[Row]:
    rows = []
    for step in STEPS[kind]:
        row = Row(source, kind, step)
        for entry, frame, side in photos:
            if side < 0.95 * step:  # never scaled up
                continue
            f = min(1.0, step / side)
            row.add(entry, reader.read(_scaled(frame, f)), f)
        if row.dice:
            rows.append(row)
            _progress(row)
    return rows


def _progress(row: Row) -> None:
    f = row.figures()
    print(
        f"{row.source:<14} {row.kind:<5} {f['px']:>6.1f} px  {f['dice']:>4} dice  right {f['right']:>4}"
        f" ({100 * f['right_rate']:5.1f} %, {100 * f['right_lo']:5.1f}-{100 * f['right_hi']:5.1f})"
        f"  wrong {f['wrong']:>3} (≤ {100 * f['wrong_upper']:4.1f} %)  unreadable {f['unreadable']:>4}",
        flush=True,
    )


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trays", type=int, default=25, help="rendered trays of four dice per kind and size")
    ap.add_argument("--real-every", type=int, default=3, help="every Nth held-back d20 photo")
    ap.add_argument("--no-real", action="store_true", help="renders only")
    ap.add_argument("--json", action="store_true", help="also print every row as one JSON line")
    args = ap.parse_args(argv)
    if not 1 <= args.trays <= 1000 or not 1 <= args.real_every <= 100:
        ap.error("--trays must be 1..1000 and --real-every 1..100")
    pips = open_reader()
    numerals = open_reader(numerals=True)
    for reader in (pips, numerals):
        reader.budget = False  # measure what the reader reads, not the refusal this sets
    readers = {"d6": pips, "d10": numerals, "d10t": numerals, "d20": numerals}
    print("source         kind    size   dice  right (rate, 95 % interval)  wrong (upper)  unreadable")
    rows = _render_rows(args.trays, readers)
    if not args.no_real:
        rows += _real_rows(args.real_every, readers)
    print("\nminimum die size per kind (px, the box's longer side, rounded up):")
    for kind in STEPS:
        found = {
            src: minimum([r.figures() for r in rows if r.kind == kind and r.source == src])
            for src in dict.fromkeys(r.source for r in rows if r.kind == kind)
        }
        known = [v for v in found.values() if v is not None]
        chosen = math.ceil(max(known)) if known else None  # the kinds table's min_px
        parts = ", ".join(f"{src} {v}" for src, v in found.items())
        print(f"  {kind:<5} {chosen} ({parts}; vision/kinds.py has {KINDS[kind].min_px:g})")
    if args.json:
        for r in rows:
            print(json.dumps({"source": r.source, "kind": r.kind, "step": r.step, **r.figures()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Score the upright-numeral reader on real d20 photos: the die's box given, the face read by turning.

``rsandrini-d20`` photos of one split (``splits.d20_splits``; the network never sees a real
photo, so ``train`` and ``val`` videos both measure it; ``test`` is read once per shipped
model), each die's box from :mod:`.single_die_box`. Printed as one JSON line: top-1 with its
95 % interval (exact binomial, per photo; the videos are few, so the per-video list is beside it),
and right / wrong / unsure at the reader's own threshold.

    python -m dicetower.vision.training.glyphs.evaluate --split val [--models DIR] [--share 0.6] \
        [--ink d10,d10t]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import cv2

from ...eval.intervals import binomial_bounds
from ...eval.splits import background_of, d20_split, d20_splits
from ...faces.glyphs import GlyphModelError, GlyphReader
from ...models import shipped_dir
from ..single_die_box import boxes_for

__all__ = ["main"]


_GRID = (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.93, 0.95, 0.97, 0.98, 0.99)


def _threshold(scored: list[tuple[float, bool]], wrong_rate: float) -> float:
    """The lowest threshold of the grid whose sure reads are wrong at most ``wrong_rate`` of the time."""
    for t in _GRID:
        read = [ok for c, ok in scored if c >= t]
        if sum(not ok for ok in read) <= wrong_rate * max(1, len(read)):
            return t
    return _GRID[-1]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--datasets", type=Path, default=Path("../shared/datasets"))
    p.add_argument("--split", choices=("train", "val", "test", "dev"), default="val")
    p.add_argument("--models", type=Path, default=None)
    p.add_argument(
        "--share", type=float, default=None, help="the middle of the box read (default: the card's)"
    )
    p.add_argument("--step", type=float, default=None, help="degrees between turns (default: the card's)")
    p.add_argument("--offset", type=float, default=None, help="off-centre tries (default: the card's)")
    p.add_argument(
        "--ink",
        default=None,
        help="kinds whose numeral's own centre is tried, comma-separated, or none (default: the card's)",
    )
    p.add_argument(
        "--ink-kind-confidence",
        type=float,
        default=None,
        help="least kind confidence for the numeral's own centre (default: the card's)",
    )
    p.add_argument(
        "--coarse",
        choices=("on", "off"),
        default=None,
        help="search the turns coarse first (default: the card's)",
    )
    p.add_argument("--every", type=int, default=1, help="every n-th photo (a quick look)")
    p.add_argument(
        "--write-card",
        action="store_true",
        help="set the card's share and threshold (lowest with wrong reads <= --wrong-rate); not on test",
    )
    p.add_argument("--wrong-rate", type=float, default=0.003)
    a = p.parse_args(argv)
    if a.write_card and a.split == "test":
        p.error("--write-card chooses on train, val or dev, never on test")
    cv2.setNumThreads(1)
    folder = a.datasets / "rsandrini-d20"
    rows = [json.loads(line) for line in (folder / "manifest.jsonl").read_text().splitlines() if line.strip()]
    boxes = boxes_for(folder)
    splits = d20_splits((r["image"], r["dice"][0]["face"]) for r in rows)
    reader = GlyphReader(a.models)
    try:  # the reader's own setters refuse a nonsense value, in the card's words
        if a.share is not None:
            reader.share = a.share
        if a.step is not None:
            reader.step = a.step
        if a.offset is not None:
            reader.offset = a.offset
        if a.ink_kind_confidence is not None:
            reader.ink_kind_confidence = a.ink_kind_confidence
        if a.coarse is not None:
            reader.coarse = a.coarse == "on"
        if a.ink is not None:
            reader.ink = tuple(k for k in a.ink.split(",") if k and k != "none")
    except GlyphModelError as exc:
        p.error(str(exc))
    wanted = ("train", "val") if a.split == "dev" else (a.split,)
    top1 = sure_right = sure_wrong = n = 0
    scored: list[tuple[float, bool]] = []
    videos: dict[str, Counter[str]] = {}
    for r in rows[:: a.every]:
        face = int(r["dice"][0]["face"])
        box = boxes.get(r["image"])
        if box is None or d20_split(splits, r["image"], face) not in wanted:
            continue
        frame = cv2.imread(str(folder / r["image"]))
        if frame is None:
            continue
        read = reader.read(frame, [box], ["d20"])[0]
        n += 1
        ok = read.best == face
        top1 += ok
        sure_right += read.face == face
        sure_wrong += read.face is not None and read.face != face
        scored.append((read.confidence, ok))
        key = f"{background_of(r['image'])}{face}"
        videos.setdefault(key, Counter())["right" if ok else "wrong"] += 1
    lo, hi = binomial_bounds(top1, n)
    if a.write_card:
        threshold = _threshold(scored, a.wrong_rate)
        card_path = (a.models or shipped_dir()) / "glyph_reader.json"
        card = json.loads(card_path.read_text(encoding="utf-8"))
        card.update(
            share=reader.share,
            step=reader.step,
            offset=reader.offset,
            coarse=reader.coarse,
            ink=list(reader.ink),
            ink_kind_confidence=reader.ink_kind_confidence,
            threshold=threshold,
            calibration={
                "command": "python -m dicetower.vision.training.glyphs.evaluate "
                + " ".join(sys.argv[1:] if argv is None else argv),
                "photos": n,
                "read": sum(c >= threshold for c, _ in scored),
                "wrong": sum(c >= threshold and not ok for c, ok in scored),
            },
        )
        card_path.write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
        reader.threshold = threshold
        sure_right = sum(c >= threshold and ok for c, ok in scored)
        sure_wrong = sum(c >= threshold and not ok for c, ok in scored)
    print(
        json.dumps(
            {
                "figure": "glyphs-d20-boxed",
                "split": a.split,
                "photos": n,
                "top1": round(top1 / max(n, 1), 4),
                "top1_interval": [round(lo, 4), round(hi, 4)],
                "sure_right": sure_right,
                "sure_wrong": sure_wrong,
                "share": reader.share,
                "step": reader.step,
                "offset": reader.offset,
                "coarse": reader.coarse,
                "ink": list(reader.ink),
                "ink_kind_confidence": reader.ink_kind_confidence,
                "threshold": reader.threshold,
                "per_video": {k: f"{c['right']}/{sum(c.values())}" for k, c in sorted(videos.items())},
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

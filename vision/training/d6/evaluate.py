"""Measure the d6 face reader per dataset split: with labelled boxes, and end to end.

Run::

    .venv/bin/python -m dicetower.vision.training.d6.evaluate --split val --mode gt
    .venv/bin/python -m dicetower.vision.training.d6.evaluate --split test --mode e2e
    .venv/bin/python -m dicetower.vision.training.d6.evaluate --split val --mode e2e \
        --model-dir runs/reader --detector-input 384      # compare models and detector sizes on val

``gt`` hands the reader the labelled boxes (matteop65's pip-area boxes enlarged to the die, the
whole-photo tomitomi3 die located as in training), so it measures the face reader alone; ``e2e``
runs the detector too (:meth:`~dicetower.vision.reader.FrameReader.read`) and matches by centre
like ``dicetower eval``.
Per dataset it prints correct / confidently wrong / rejected / missed shares of the labelled
dice, the per-face reject-rate ratio (rates floored at 1 %, as eval does) and the read time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import Counter
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from ...detector import DieDetector
from ...eval.evaluate import REJECT_RATE_FLOOR, Outcome, score_photo, select_entries
from ...imageio import ImageError, load_image_info
from ...locate import DieCandidate, locate_dice
from ...reader import FrameReader
from .data import D6_DATASETS, enlarged_box, tomitomi_box

__all__ = ["evaluate_dataset", "main", "speed"]


def gt_candidates(dataset: str, entry: Any, frame: np.ndarray, scale: float) -> list[DieCandidate]:
    out = []
    for d in entry.dice:
        if d.box is None:
            box = tomitomi_box(frame)
        else:
            box = enlarged_box(dataset, tuple(v * scale for v in d.box), d.face)
        out.append(DieCandidate(box=tuple(float(v) for v in box)))  # type: ignore[arg-type]
    return out


def evaluate_dataset(
    reader: FrameReader, folder: Path, split: str | None, mode: str, limit: int | None = None
) -> dict[str, Any]:
    """Score one dataset folder; returns the figures as a JSON-able dict."""
    name = folder.name
    entries = select_entries(folder, split=split, limit=limit, kinds=["d6"])
    outcomes: Counter[str] = Counter()
    per_face: dict[int, Counter[str]] = {f: Counter() for f in range(1, 7)}
    times: list[float] = []
    confusion: Counter[tuple[int, str]] = Counter()
    reasons: Counter[str] = Counter()
    false_positives = 0
    for entry in entries:
        try:
            info = load_image_info(entry.image)
        except ImageError:
            for d in entry.dice:
                outcomes[Outcome.MISSED.value] += 1
                per_face[d.face]["missed"] += 1
            continue
        t0 = time.perf_counter()
        if mode == "gt":
            cands = gt_candidates(name, entry, info.frame, info.scale)
            dice, _t = reader.read_candidates(info.frame, cands)
            # Score by box: each candidate is its label's own box. The frame reader drops a
            # candidate it is sure is no die, so a labelled die can come back as nothing: missed.
            by_box = {tuple(r.box): r for r in dice}
            scored_outcomes = []
            for d, c in zip(entry.dice, cands, strict=True):
                r = by_box.get(tuple(float(v) for v in c.box))
                if r is None:
                    o = Outcome.MISSED
                elif r.face is None:
                    o = Outcome.REJECTED
                elif r.face == d.face:
                    o = Outcome.CORRECT
                else:
                    o = Outcome.WRONG
                scored_outcomes.append((d, r, o))
        else:
            reading = reader.read(info.frame)
            res = score_photo(entry, reading, info.scale)
            scored_outcomes = [(s.label, s.read, s.outcome) for s in res.scored]
            false_positives += len(res.false_positives)
        times.append((time.perf_counter() - t0) * 1000.0)
        for d, r, o in scored_outcomes:
            outcomes[o.value] += 1
            per_face[d.face][o.value] += 1
            confusion[(d.face, str(r.face) if o in (Outcome.CORRECT, Outcome.WRONG) and r else o.value)] += 1
            if o is Outcome.REJECTED and r is not None and r.reason is not None:
                reasons[r.reason.value] += 1
    n = sum(outcomes.values())
    rates = {}
    for f, c in per_face.items():
        tot = sum(c.values())
        if tot:
            rates[f] = c["rejected"] / tot
    floored = [max(r, REJECT_RATE_FLOOR) for r in rates.values()]
    return {
        "dataset": name,
        "split": split,
        "mode": mode,
        "photos": len(entries),
        "dice": n,
        "correct": outcomes["correct"] / n if n else 0.0,
        "wrong": outcomes["wrong"] / n if n else 0.0,
        "rejected": outcomes["rejected"] / n if n else 0.0,
        "missed": outcomes["missed"] / n if n else 0.0,
        "false_positives": false_positives if mode == "e2e" else None,
        "reject_ratio": (max(floored) / min(floored)) if len(floored) > 1 else 1.0,
        "reject_rate_per_face": {f: round(r, 4) for f, r in rates.items()},
        "reasons": dict(reasons),
        "median_ms": statistics.median(times) if times else 0.0,
        "wrong_pairs": {f"{a}->{b}": v for (a, b), v in confusion.items() if b.isdigit() and int(b) != a},
    }


def speed(reader: FrameReader, folder: Path, repeats: int = 30) -> dict[str, float]:
    """Median ms of the reader's own part (crop + model + colour) on the photo with most dice."""
    entries = select_entries(folder, kinds=["d6"])
    entry = max(entries, key=lambda e: len(e.dice))
    info = load_image_info(entry.image)
    cands = gt_candidates(folder.name, entry, info.frame, info.scale)
    runs, cpu = [], []
    for _ in range(max(1, min(repeats, 1000))):
        c0 = time.process_time()
        runs.append(reader.read_candidates(info.frame, cands)[1])
        cpu.append((time.process_time() - c0) * 1000.0)
    out = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    # CPU time of this (single-threaded) process: wall time on a shared machine mostly
    # measures the other jobs.
    out["cpu_total"] = statistics.median(cpu)
    out["dice"] = float(len(cands))
    out["total"] = statistics.median(sum(r.values()) for r in runs)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", type=Path, default=Path("../shared/datasets"))
    ap.add_argument("--split", choices=["train", "val", "test", "all"], default="val")
    ap.add_argument("--mode", choices=["gt", "e2e"], default="gt")
    ap.add_argument("--only", nargs="*", default=list(D6_DATASETS))
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--model-dir", type=Path, default=None)
    ap.add_argument(
        "--detector-input",
        type=int,
        default=None,
        help="run the detector at this square size instead of its model card's (e2e only)",
    )
    ap.add_argument("--speed", action="store_true", help="time the reader on the most crowded byler photo")
    args = ap.parse_args(argv)
    cv2.setNumThreads(1)
    locate = None
    if args.detector_input is not None:
        if not 64 <= args.detector_input <= 1024:
            ap.error("--detector-input must be between 64 and 1024")
        detector = DieDetector()
        detector.input_size = args.detector_input

        def locate(frame: np.ndarray, reference: Any, tray: Any) -> list[DieCandidate]:
            return locate_dice(frame, reference=reference, tray=tray, detector=detector)

    reader = FrameReader(args.model_dir, locate=locate)
    if args.speed:
        print(json.dumps({k: round(v, 3) for k, v in speed(reader, args.datasets / "byler-d6").items()}))
        return 0
    split = None if args.split == "all" else args.split
    for name in args.only:
        folder = args.datasets / name
        if not folder.is_dir():
            continue
        r = evaluate_dataset(reader, folder, split, args.mode, args.limit)
        print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

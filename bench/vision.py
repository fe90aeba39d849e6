"""Benchmark: median ms per 640x640 photo on one core, our reader vs the classic baseline.

    .venv/bin/python bench/vision.py [--photos 5] [--repeat 5] [--synth] [--json] [--previous REV]

Photos: real ``byler-d6`` photos (640x640, 1-25 dice a photo) with exactly 1, 10 and 25
dice (up to ``--photos`` of each; the nearest count when none has it exactly), read from
``<repo>/../shared/datasets``. Without the datasets (or with ``--synth``) rendered scenes
from ``dicetower.vision.synth`` are used instead, and the table says so: synthetic figures
are timings only, never an accuracy claim.

Both readers see the SAME decoded frames, timed alternately read by read; OpenCV runs on
one thread (``cv2.setNumThreads(1)``) and each reader is warmed up once before timing
(model loading is not a per-photo cost). Time is the ``read`` call only, the median over
photos x repeats. Accuracy columns score each reader's output against the labels with
the eval matching rule (``dicetower.vision.eval.evaluate``).

``--previous REV`` adds a third reader: the same pipeline as of git commit ``REV`` (a
temporary worktree, run in a worker process, timed by the worker and interleaved read by
read with the other two; see ``bench/previous_version.py``), so a change is measured against
the version before it in one run.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from dicetower.vision.eval.baseline import ClassicReader
from dicetower.vision.eval.evaluate import FolderReport, score_photo
from dicetower.vision.imageio import load_image
from dicetower.vision.manifest import ManifestEntry, read_manifest
from dicetower.vision.reader import open_reader
from dicetower.vision.reading import DiceReader
from dicetower.vision.synth import render_scene

__all__ = ["BUCKETS", "main"]

BUCKETS = (1, 10, 25)
DATASET = Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "byler-d6"
READERS: dict[str, Callable[[], DiceReader]] = {"ours": open_reader, "classic": ClassicReader}
PREVIOUS = "previous_version.py"


@dataclass
class Photo:
    entry: ManifestEntry
    frame: np.ndarray


@dataclass
class Cell:
    ms: list[float] = field(default_factory=list)
    report: FolderReport = field(default_factory=lambda: FolderReport("bench"))
    error: str | None = None


def real_photos(per_bucket: int) -> dict[int, list[Photo]]:
    """Byler photos with exactly (else nearest to) 1, 10 and 25 dice."""
    entries = list(read_manifest(DATASET))
    chosen: dict[int, list[Photo]] = {}
    for n in BUCKETS:
        best = min(abs(len(e.dice) - n) for e in entries)
        picked = [e for e in entries if abs(len(e.dice) - n) == best][:per_bucket]
        chosen[n] = [Photo(e, load_image(e.image)) for e in picked]
    return chosen


def synth_photos(per_bucket: int) -> dict[int, list[Photo]]:
    chosen: dict[int, list[Photo]] = {}
    for n in BUCKETS:
        chosen[n] = []
        for i in range(per_bucket):
            frame, _, labels = render_scene(1000 * n + i, n, (640, 640))
            chosen[n].append(Photo(ManifestEntry(Path(f"synth_{n}_{i}.png"), tuple(labels), i + 1), frame))
    return chosen


def run_readers(readers: dict[str, DiceReader], photos: list[Photo], repeat: int) -> dict[str, Cell]:
    """Time every reader on every photo, interleaved read by read.

    Why interleaved: this machine's speed drifts by tens of percent over a minute (other
    jobs, clock changes); timing one reader's whole run and then the other's let a slow
    phase land on one side only. Alternating per read puts both under the same conditions.
    """
    cells = {name: Cell() for name in readers}
    for photo in photos:
        last: dict[str, Any] = {}
        for _ in range(repeat):
            for name, reader in readers.items():
                start = time.perf_counter()
                last[name] = reader.read(photo.frame, None)
                ms = (time.perf_counter() - start) * 1000.0
                # A reader in another process reports its own time for the same span.
                inner = getattr(reader, "last_ms", None)
                cells[name].ms.append(ms if inner is None else inner)
        for name in readers:
            cells[name].report.add(score_photo(photo.entry, last[name]))
    return cells


def _load(make: Callable[[], DiceReader], frame: np.ndarray) -> tuple[DiceReader | None, str | None]:
    """Build and warm up a reader; return (reader, None) or (None, why it cannot run)."""
    try:
        reader = make()
        reader.read(frame, None)
    except Exception as exc:  # report a missing model instead of aborting the other column
        return None, f"{type(exc).__name__}: {exc}"
    return reader, None


def _cell_json(cell: Cell) -> dict[str, Any] | None:
    if cell.error:
        return None
    d = cell.report.to_json()
    keys = ("dice", "correct", "wrong", "rejected", "missed", "false_positives")
    return {"median_ms": round(statistics.median(cell.ms), 2), **{k: d[k] for k in keys}}


def _fmt_cell(cell: Cell) -> tuple[str, str]:
    if cell.error:
        return "n/a", "n/a"
    d = cell.report.to_json()
    ms = f"{statistics.median(cell.ms):.1f}"
    return ms, f"{d['correct']}/{d['dice']} ({100 * d['accuracy']:.1f}%) wrong {d['wrong']}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--photos", type=int, default=5, help="photos per dice count (default 5)")
    parser.add_argument("--repeat", type=int, default=5, help="timed reads per photo (default 5)")
    parser.add_argument("--synth", action="store_true", help="use rendered scenes even if datasets exist")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    parser.add_argument(
        "--models", metavar="DIR", type=Path, help="time our reader on the models in DIR (as dicetower eval)"
    )
    parser.add_argument(
        "--previous", metavar="REV", help="also time this git commit's reader (e.g. HEAD~1), side by side"
    )
    args = parser.parse_args(argv)
    if not 1 <= args.photos <= 50 or not 1 <= args.repeat <= 20:
        parser.error("--photos must be 1..50 and --repeat 1..20")
    if args.previous is None:
        return _run(args, None)
    spec = importlib.util.spec_from_file_location("previous_version", Path(__file__).with_name(PREVIOUS))
    assert spec is not None and spec.loader is not None
    prev = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(prev)
    try:
        with prev.PreviousVersion(args.previous) as previous:
            return _run(args, previous)
    except prev.PreviousVersionError as exc:
        print(f"previous version: {exc}", file=sys.stderr)
        return 1


def _run(args: argparse.Namespace, previous: Any) -> int:
    cv2.setNumThreads(1)
    use_real = DATASET.is_dir() and not args.synth
    photos = real_photos(args.photos) if use_real else synth_photos(args.photos)
    source = "byler-d6 (real photos)" if use_real else "synthetic scenes (timing only; no accuracy claim)"
    first = photos[BUCKETS[0]][0].frame
    makers = {**READERS, "ours": lambda: open_reader(args.models)}
    readers: dict[str, tuple[DiceReader | None, str | None]] = {
        name: _load(make, first) for name, make in makers.items()
    }
    if previous is not None:
        previous.read(first, None)  # warm its models too
        readers[f"previous {args.previous}"] = (previous, None)
    runnable = {name: reader for name, (reader, _) in readers.items() if reader is not None}
    results: dict[int, dict[str, Cell]] = {}
    for n, group in photos.items():
        timed = run_readers(runnable, group, args.repeat)
        results[n] = {
            name: timed[name] if read is not None else Cell(error=error)
            for name, (read, error) in readers.items()
        }
    print(f"photos: {source}; 640x640; cv2.setNumThreads(1); median of photos x {args.repeat} reads")
    names = list(readers)  # ours, classic[, previous REV]
    header = f"{'dice':>4} {'photos':>6} {'counts':>8} | " + " ".join(f"{n + ' ms':>14}" for n in names)
    header += " | " + " ".join(f"{n + ' correct':<30}" for n in names)
    print(header)
    print("-" * len(header))
    for n, cells in results.items():
        counts = ",".join(str(c) for c in sorted({len(p.entry.dice) for p in photos[n]}))
        shown = [_fmt_cell(cells[name]) for name in names]
        print(
            f"{n:>4} {len(photos[n]):>6} {counts:>8} | "
            + " ".join(f"{ms:>14}" for ms, _ in shown)
            + " | "
            + " ".join(f"{acc:<30}" for _, acc in shown)
        )
    for name, (_, error) in readers.items():
        if error:
            print(f"{name} reader unavailable: {error}", file=sys.stderr)
    if args.json:
        out = {
            "source": source,
            "buckets": {
                str(n): {name: _cell_json(c) for name, c in cells.items()} for n, cells in results.items()
            },
            "errors": {name: error for name, (_, error) in readers.items() if error},
        }
        print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Dice found, missed and falsely found per real set, with and without an empty tray to compare against.

The reading path finds dice by what differs from the empty tray when it has one
(:func:`~dicetower.vision.locate.locate_dice`). None of the real sets in ``../shared/datasets``
comes with an empty-tray photo, so each set's photos are read in capture order
(:func:`~dicetower.vision.training.taught.protocol.capture_order`) four ways by the general
reader (kinds on where the set holds numeral dice):

- ``none``: no empty tray (the detector alone, and the tray told from the frame's border);
- ``photo``: each line's empty-tray photo (``reference``), for a set that has them;
- ``all``: one per-pixel median of the set's photos, as ``teach fit`` derives a tray when it has
  no photo (:func:`~dicetower.vision.taught.tray.median_tray`, 31 photos spread evenly);
- ``running``: the running median of the 15 photos before each one
  (:class:`~dicetower.vision.running_tray.RunningTrayReader`; the tower's tray reader picks the
  same median when its calibration photo's light no longer holds), which gives none while it
  cannot be the tray (too few photos, a spot under a die in nearly all of them, a moving camera,
  another scene).

Scoring is ``dicetower eval``'s (:mod:`dicetower.vision.eval.evaluate`): a label is *found*
when a read die matches it (read right, wrong or unreadable), *missed* otherwise; a read die
matching no label is a *false find*. One JSON line per set and way::

    python -m dicetower.vision.training.found --sets byler-d6,matteop65-d6-wood
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..eval.evaluate import FolderReport, evaluate_folder
from ..eval.intervals import binomial_bounds
from ..imageio import ImageError, load_image
from ..manifest import ManifestEntry, read_manifest
from ..reader import open_reader
from ..reading import DiceReader, Reading
from ..running_tray import RECENT_THROWS, RunningTrayReader
from ..taught.tray import MEDIAN_PHOTOS, median_tray
from .taught.protocol import capture_order

__all__ = ["SETS", "WAYS", "FixedTrayReader", "found_line", "main", "set_median"]

#: The labelled real sets whose dice have places (``lurig-kinds`` has kinds only).
SETS = (
    "byler-d6",
    "matteop65-d6-wood",
    "epanemu-dice3",
    "tomitomi3-gray-d6",
    "skovy-d6-crops",
    "rsandrini-d20",
)
WAYS = ("none", "photo", "all", "running")


class FixedTrayReader:
    """Reads every frame against one empty tray (of the frame's size; none for other sizes)."""

    def __init__(self, reader: DiceReader, tray: np.ndarray | None) -> None:
        self.reader, self.tray = reader, tray

    def read(
        self, frame: np.ndarray, reference: np.ndarray | None = None, tray: np.ndarray | None = None
    ) -> Reading:
        fits = self.tray is not None and self.tray.shape == frame.shape
        return self.reader.read(frame, self.tray if fits else None, tray)


class _NoTrayReader:
    """Reads every frame with no empty tray, whatever the manifest gives."""

    def __init__(self, reader: DiceReader) -> None:
        self.reader = reader

    def read(
        self, frame: np.ndarray, reference: np.ndarray | None = None, tray: np.ndarray | None = None
    ) -> Reading:
        return self.reader.read(frame, None, tray)


def set_median(entries: Sequence[ManifestEntry]) -> np.ndarray | None:
    """The per-pixel median of ``MEDIAN_PHOTOS`` of the photos, spread evenly (as fit derives a tray)."""
    step = max(1, len(entries) // MEDIAN_PHOTOS)
    frames = []
    for e in list(entries)[::step][:MEDIAN_PHOTOS]:
        try:
            frames.append(load_image(e.image))
        except ImageError:
            continue
    return median_tray(frames)


def found_line(folder: Path, entries: list[ManifestEntry], way: str, reader: DiceReader) -> dict[str, Any]:
    """Read ``entries`` (in capture order) one ``way`` and count the dice found, missed and false."""
    sources: dict[str, int] = {}
    if way == "none":
        wrapped: DiceReader = _NoTrayReader(reader)
    elif way == "all":
        wrapped = FixedTrayReader(reader, set_median(entries))
    elif way == "running":
        wrapped = RunningTrayReader(reader, RECENT_THROWS)
    else:
        wrapped = reader
    t0 = time.perf_counter()
    report = FolderReport(folder.name)
    for result in evaluate_folder(folder, wrapped, entries=entries):
        report.add(result)
    if isinstance(wrapped, RunningTrayReader):
        sources = dict(wrapped.choice.counts)
    d = report.to_json()
    found = d["dice"] - d["missed"]
    lo, hi = binomial_bounds(found, d["dice"]) if d["dice"] else (0.0, 1.0)
    line = {
        "set": folder.name,
        "way": way,
        "photos": d["photos"],
        "dice": d["dice"],
        "found": found,
        "found_interval": [round(lo, 4), round(hi, 4)],
        "missed": d["missed"],
        "false_finds": d["false_positives"],
        "false_finds_read": d["false_positives_read"],
        "correct": d["correct"],
        "wrong": d["wrong"],
        "rejected": d["rejected"],
        "seconds": round(time.perf_counter() - t0, 1),
    }
    if sources:
        line["trays"] = sources
    return line


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m dicetower.vision.training.found",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--datasets", type=Path, default=Path("../shared/datasets"))
    ap.add_argument("--sets", default=",".join(SETS), help="comma-separated set names")
    ap.add_argument("--ways", default=",".join(WAYS), help=f"comma-separated, of {', '.join(WAYS)}")
    ap.add_argument("--limit", type=int, help="the first N photos of each set, in capture order")
    a = ap.parse_args(argv)
    ways = [w for w in a.ways.split(",") if w]
    unknown = sorted(set(ways) - set(WAYS))
    if unknown:
        ap.error(f"--ways: unknown {', '.join(unknown)}; known: {', '.join(WAYS)}")
    readers: dict[bool, DiceReader] = {}
    for name in [s for s in a.sets.split(",") if s]:
        folder = a.datasets / name
        if not (folder / "manifest.jsonl").is_file():
            print(f"found: {folder}: no manifest.jsonl; skipped", file=sys.stderr)
            continue
        entries = capture_order(name, [e for e in read_manifest(folder) if e.dice])
        if a.limit is not None:
            entries = entries[: a.limit]
        numerals = any(d.die != "d6" for e in entries for d in e.dice)
        if numerals not in readers:
            readers[numerals] = open_reader(numerals=numerals)
        for way in ways:
            if way == "photo" and not any(e.reference is not None for e in entries):
                print(json.dumps({"set": name, "way": way, "skipped": "no empty-tray photo"}), flush=True)
                continue
            print(json.dumps(found_line(folder, entries, way, readers[numerals])), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Benchmark: where a crowded photo's time goes, step by step, in ms per photo on one core.

    .venv/bin/python bench/vision_stages.py [--dice 25] [--repeat 6]

Reads the real ``byler-d6`` photos with exactly ``--dice`` dice (up to 5) through the shipped
:class:`dicetower.vision.reader.FrameReader` and times each step by wrapping it: the detector's
network and its pre/post-processing (``locate``), cutting the crops, their grey planes, building
the blob, the reader network's first and extra looks, the per-die decisions, the unfamiliar-die
check, the colour names and the read faces' centres (``vision.faces.topface``). The wrapped
call is the product's own code; only the timers are added, so the sum is a little above the
plain read (the total line is timed without wrappers first). Use it next to ``bench/vision.py``
to see what a change moved, on the same machine phase: run it on both commits in one sitting.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
from dicetower.vision import locate as locate_module
from dicetower.vision import reader as reader_module
from dicetower.vision.faces import pips
from dicetower.vision.imageio import load_image
from dicetower.vision.manifest import read_manifest
from dicetower.vision.reader import FrameReader

__all__ = ["main"]

DATASET = Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "byler-d6"


def _timed(totals: dict[str, float], key: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            totals[key] += time.perf_counter() - t0

    return wrapper


class _TimedNet:
    """A cv2.dnn net whose ``forward`` is timed (cv2 objects do not take new attributes)."""

    def __init__(self, net: Any, totals: dict[str, float], key: str) -> None:
        self.setInput = net.setInput
        self.forward = _timed(totals, key, net.forward)


class _TimedFamiliar:
    """The familiarity statistics with their per-frame check timed (the dataclass is frozen)."""

    def __init__(self, familiar: Any, totals: dict[str, float]) -> None:
        self.unfamiliar = _timed(totals, "unfamiliar-die check", familiar.unfamiliar)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dice", type=int, default=25, help="dice per photo (1-100)")
    ap.add_argument("--repeat", type=int, default=6, help="reads of each photo (1-1000)")
    args = ap.parse_args(argv)
    if not (1 <= args.dice <= 100 and 1 <= args.repeat <= 1000):
        ap.error("--dice must be 1-100 and --repeat 1-1000")
    if not (DATASET / "manifest.jsonl").is_file():
        ap.error(f"{DATASET}: no manifest (the shared datasets sit beside the checkout)")
    entries = [e for e in read_manifest(DATASET) if len(e.dice) == args.dice][:5]
    if not entries:
        ap.error(f"no byler-d6 photo has exactly {args.dice} dice")
    cv2.setNumThreads(1)
    frames = [load_image(e.image) for e in entries]
    reader = FrameReader()
    for frame in frames:  # warm-up: model loading and first-shape allocation are not per photo
        reader.read(frame)
    plain = []
    for _ in range(args.repeat):
        for frame in frames:
            t0 = time.perf_counter()
            reader.read(frame)
            plain.append((time.perf_counter() - t0) * 1000.0)

    totals: dict[str, float] = defaultdict(float)
    detector = locate_module._default_detector()  # process-wide: unwrapped again below
    real_net = detector._net
    detector._net = _TimedNet(real_net, totals, "detector network")
    faces = reader.faces
    faces._forward_features = _timed(totals, "reader network, first look", faces._forward_features)
    if faces.familiar is not None:
        faces.familiar = _TimedFamiliar(faces.familiar, totals)  # type: ignore[assignment]
    faces._forward_again = _timed(totals, "reader network, extra looks", faces._forward_again)
    faces.crops_mapped = _timed(totals, "crops", faces.crops_mapped)
    faces.decide = _timed(totals, "decisions", faces.decide)
    reader._locate = _timed(totals, "locate (detector and its steps)", reader._locate)
    saved = (pips.to_blob, reader_module.die_colours, reader_module.crop_greys, reader_module.face_centres)
    pips.to_blob = _timed(totals, "blob", pips.to_blob)
    reader_module.die_colours = _timed(totals, "colour names", reader_module.die_colours)
    reader_module.crop_greys = _timed(totals, "crop greys", reader_module.crop_greys)
    reader_module.face_centres = _timed(totals, "face centres", reader_module.face_centres)
    try:
        for _ in range(args.repeat):
            for frame in frames:
                reader.read(frame)
    finally:
        pips.to_blob, reader_module.die_colours, reader_module.crop_greys, reader_module.face_centres = saved
        detector._net = real_net
    reads = args.repeat * len(frames)
    print(f"{len(frames)} byler-d6 photos with {args.dice} dice x {args.repeat} reads, one thread")
    print(f"  {'read, unwrapped (median)':34s} {statistics.median(plain):7.2f} ms")
    for key, seconds in totals.items():
        print(f"  {key:34s} {seconds / reads * 1000.0:7.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

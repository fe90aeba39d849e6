"""How long a taught model takes to read one die, on one core, beside the general reader.

For each photo of FOLDER (a labelled folder, e.g. one ``dicetower record`` wrote), every
labelled die is read at its box by its taught die's reader (``TaughtModel.read``, which is what
reading a taught die costs once it is located), and the same boxes by the general readers a
tower would use for those kinds: the pip reader for a d6, the numeral network and the
upright-numeral reader for the others. Median ms per die, by kind; one thread.

    OMP_NUM_THREADS=1 .venv/bin/python bench/taught_speed.py runs/bench-teach/model runs/bench-teach/read
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    import cv2
    from dicetower.vision.faces.glyphs import GlyphReader
    from dicetower.vision.faces.numerals import NumeralReader
    from dicetower.vision.faces.pips import D6Reader
    from dicetower.vision.imageio import load_image
    from dicetower.vision.manifest import read_manifest
    from dicetower.vision.taught.model import TaughtModel

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", type=Path)
    ap.add_argument("folder", type=Path)
    ap.add_argument("--photos", type=int, default=40)
    ap.add_argument(
        "--reader",
        choices=("card", "head", "fitted"),
        default="card",
        help="the taught reader timed: the card's choice per die, or every die's head or fitted reader",
    )
    a = ap.parse_args(argv)
    cv2.setNumThreads(1)
    model = TaughtModel(a.model)
    pips, numerals, glyphs = D6Reader(), NumeralReader(), GlyphReader()
    taught_ms: dict[str, list[float]] = defaultdict(list)
    general_ms: dict[str, list[float]] = defaultdict(list)
    for entry in list(read_manifest(a.folder))[: a.photos]:
        frame = load_image(entry.image)
        for d in entry.dice:
            if d.box is None:
                continue
            taught = next(
                (t for t in model.dice if t.kind == d.die and (not t.colour or t.colour == d.colour)), None
            )
            if taught is None:
                taught = next((t for t in model.dice if t.kind == d.die), None)
            if taught is None:
                continue
            reader = None if a.reader == "card" else a.reader
            if reader == "fitted" and not model.has_fitted(taught):
                continue
            t0 = time.perf_counter()
            model.read(taught, frame, [d.box], reader=reader)
            taught_ms[d.die].append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            if d.die == "d6":
                pips.read_crops(pips.crops(frame, [d.box]))
            else:
                read = numerals.read_crops(numerals.crops(frame, [d.box]))
                glyphs.read(frame, [d.box], [read[0].kind or d.die])
            general_ms[d.die].append((time.perf_counter() - t0) * 1000)
    print("| kind | dice | taught reader, ms/die | general reader, ms/die (baseline) |")
    print("|---|---:|---:|---:|")
    for kind in sorted(taught_ms):
        t, g = statistics.median(taught_ms[kind]), statistics.median(general_ms[kind])
        print(f"| {kind} | {len(taught_ms[kind])} | {t:.2f} | {g:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""How long a taught model takes to read one die, on one core, beside the general reader.

For each photo of FOLDER (a labelled folder, e.g. one ``dicetower record`` wrote), every
labelled die is read at its box by its taught die's reader (``TaughtModel.read``, which is what
reading a taught die costs once it is located), and the same boxes by the general readers a
tower would use for those kinds: the pip reader for a d6, the numeral network and the
upright-numeral reader for the others. Median ms per die, by kind and by the network its taught
die reads with (a numeral die's is chosen by its fit: the numeral network reads the whole die
once, the upright-numeral network searches the turns); one thread. ``--previous REV`` then runs
the same command with an earlier commit's code on the same model and photos, one after the other.

    OMP_NUM_THREADS=1 .venv/bin/python bench/taught_speed.py runs/bench-teach/model runs/bench-teach/read
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


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
    ap.add_argument("--previous", metavar="REV", help="an earlier commit's code, run after this tree's")
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
    taught_ms: dict[tuple[str, str], list[float]] = defaultdict(list)
    general_ms: dict[tuple[str, str], list[float]] = defaultdict(list)
    for entry in list(read_manifest(a.folder))[: a.photos]:
        frame = load_image(entry.image)
        height, width = frame.shape[:2]
        for d in entry.dice:
            # a die without a box (a photo of one die, as rsandrini-d20's) is read at the whole photo:
            # what a read costs does not depend on where its box lies
            box = d.box if d.box is not None else (0.0, 0.0, float(width), float(height))
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
            key = (d.die, "fitted" if (reader or taught.reader) == "fitted" else str(taught.network))
            t0 = time.perf_counter()
            model.read(taught, frame, [box], reader=reader)
            taught_ms[key].append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            if d.die == "d6":
                pips.read_crops(pips.crops(frame, [box]))
            else:
                read = numerals.read_crops(numerals.crops(frame, [box]))
                glyphs.read(frame, [box], [read[0].kind or d.die])
            general_ms[key].append((time.perf_counter() - t0) * 1000)
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    print("| kind | taught network | dice | taught reader, ms/die | general reader, ms/die (baseline) |")
    print("|---|---|---:|---:|---:|")
    for key in sorted(taught_ms):
        t, g = statistics.median(taught_ms[key]), statistics.median(general_ms[key])
        print(f"| {key[0]} | {key[1]} | {len(taught_ms[key])} | {t:.2f} | {g:.2f} |")
    if a.previous:
        from previous_version import Checkout

        with Checkout(a.previous) as checkout:
            print(f"previous {a.previous}:", flush=True)
            args = [str(a.model), str(a.folder), "--photos", str(a.photos)]  # --reader: this tree's only
            subprocess.run([sys.executable, __file__, *args], env=checkout.env(), check=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

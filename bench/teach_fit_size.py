"""Peak memory and time of ``dicetower teach fit`` on N rolls of the simulated tower's dice, beside a commit.

The folder is N rolls of the tray ``bench/teach.py`` teaches (a blue d20, a white d10, a red
d10t, two white d6), rendered at the tower camera's 640 x 480 and labelled with the truth
(boxes, faces, colours), as a teach folder is once named. Each side runs the fit in its own
process under ``/usr/bin/time -v``: its peak resident memory and its wall time, one after the
other on the same folder (the machine's load is printed beside them).

    nice .venv/bin/python bench/teach_fit_size.py --rolls 700 --work runs/fit-size --previous daa36f1
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from previous_version import Checkout

#: The tray bench/teach.py teaches: (kind, colour) per die.
TRAY = [("d20", "blue"), ("d10", "white"), ("d10t", "red"), ("d6", "white"), ("d6", "white")]


def make_folder(folder: Path, rolls: int, seed: int = 7) -> None:
    """``rolls`` labelled photos of :data:`TRAY` (skipped when the folder already holds them)."""
    import cv2
    import numpy as np
    from dicetower.vision.kinds import KINDS
    from dicetower.vision.manifest import LabelledDie, write_manifest_line
    from dicetower.vision.synth.numerals import NumeralStyle, TrayDie, random_look, render_tray
    from dicetower.vision.synth.solids import face_values

    manifest = folder / "manifest.jsonl"
    if manifest.is_file() and len(manifest.read_text().splitlines()) == rolls:
        return
    style = NumeralStyle(
        tray=(118, 118, 118), blur=0.0, noise=0.0, perspective=0.0, light=0.0, grain=0.0, tilt=10.0
    )
    rng = np.random.default_rng(seed)
    looks = []
    for n, (kind, colour) in enumerate(TRAY):
        look = random_look(np.random.default_rng(zlib.crc32(f"{kind} {colour}".encode())), colour, "solid")
        looks.append((look, tuple(int(v) for v in face_values(kind, np.random.default_rng(n)))))
    (folder / "images").mkdir(parents=True, exist_ok=True)
    with open(manifest, "w", encoding="utf-8") as fh:
        for r in range(rolls):
            dice = []
            for (kind, colour), (look, values) in zip(TRAY, looks, strict=True):
                faces = KINDS[kind].faces
                face = faces[int(rng.integers(len(faces)))]
                dice.append(TrayDie(kind, face, colour, "solid", False, look, values, 70.0))
            frame, _ref, labels = render_tray(seed * 100_000 + r, dice, (640, 480), style=style)
            name = f"images/roll-{r + 1:05d}.png"
            cv2.imwrite(str(folder / name), frame)
            named = [
                LabelledDie(d.die, d.face, d.box, colour=c) for d, (_k, c) in zip(labels, TRAY, strict=True)
            ]
            write_manifest_line(fh, name, named)


def fit(env: dict[str, str], folder: Path, out: Path) -> dict[str, float | int]:
    """Run the fit in a process of its own; its peak RSS (MB), wall seconds and exit status."""
    code = (
        "import sys\nfrom dicetower.firmware.cli import main\n"
        "argv = ['teach', 'fit', sys.argv[1], '--out', sys.argv[2], '--force', '--max-wrong', '1']\n"
        "raise SystemExit(main(argv))"
    )
    done = subprocess.run(
        ["/usr/bin/time", "-v", sys.executable, "-c", code, str(folder), str(out)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", done.stderr)
    seconds = 0.0
    if wall:
        for part in wall.group(1).split(":"):
            seconds = seconds * 60 + float(part)
    if done.returncode != 0:
        print(done.stderr[-2000:], file=sys.stderr)
    return {
        "rss_mb": round(int(rss.group(1)) / 1024) if rss else -1,
        "seconds": round(seconds),
        "rc": done.returncode,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rolls", type=int, default=700)
    ap.add_argument("--work", type=Path, default=Path("runs/fit-size"))
    ap.add_argument("--previous", metavar="REV", help="an earlier commit to run beside this tree")
    a = ap.parse_args(argv)
    folder = a.work / f"teach-{a.rolls}"
    make_folder(folder, a.rolls)
    sides = [("this tree", None)] + ([(f"previous {a.previous}", a.previous)] if a.previous else [])
    for name, rev in sides:
        with Checkout(rev) as checkout:
            load = os.getloadavg()[0]
            got = fit(checkout.env(), folder, a.work / f"model-{rev or 'this'}")
        print(
            f"{name}: {a.rolls} rolls, peak RSS {got['rss_mb']} MB, {got['seconds']} s,"
            f" load {load:.1f} at start, rc {got['rc']}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
